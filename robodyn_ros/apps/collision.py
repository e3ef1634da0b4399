"""``robodyn-ros collision calibrate BAG --urdf FILE``: collision thresholds from a collision-free
recording of normal operation (doc/collisions.md): the momentum observer's residual along the bag's
joint states with the URDF's model, the tightest line a_i + b_i |q̇_i| above it per joint
(``control.collision.fit_thresholds``), times a margin, written as the parameter file
computed_torque_controller loads (``--params-file``).

The bag is read as identification reads it (``identification.bag``: MCAP or sqlite3, the joint
states' effort as the torque applied, or the controller's commands with ``--effort-topic``).
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import sys

import numpy as np

from ..control.collision import (FLOOR_FRACTION, MARGIN, NODE, Thresholds, effort_floor,
                                 fit_thresholds, residuals, thresholds_yaml)
from ..dynamics.model import RobotModel
from ..identification.bag import BagError, read_joint_states


@dataclasses.dataclass(frozen=True)
class Calibration:
    """What ``calibrate`` found: the thresholds, the residuals they were fitted to, the recording,
    ``fitted``: the thresholds before the floor raised them, and ``floor`` the floor per joint."""
    thresholds: Thresholds
    residuals: np.ndarray
    recording: object
    fitted: Thresholds
    floor: np.ndarray

    @property
    def floored(self) -> list[str]:
        """The joints whose static threshold is the floor, above what their residual needed."""
        return [name for name, a, fit in zip(self.thresholds.joint_names, self.thresholds.static,
                                              self.fitted.static) if a > fit]

    def yaml(self, node: str = NODE) -> str:
        return thresholds_yaml(self.thresholds, node)


def calibrate(bag_path, urdf, *, gain=50.0, margin=MARGIN, velocity_term=True, floor=None, friction=True,
              topic="/joint_states", effort_topic=None, root_link=None, tip_link=None,
              min_samples=100) -> Calibration:
    """Thresholds from a collision-free rosbag2 recording (read as identification reads it,
    ``identification.bag.read_joint_states``) and the arm's URDF: the residual along it with the
    URDF's model, then ``fit_thresholds``. The torque is the joint states' effort (held over the
    step that ends at each state) or, with ``effort_topic``, the controller's commands.
    ``floor``: the least static threshold, N m (one value or one per joint); None: the drive's,
    ``FLOOR_FRACTION`` of each joint's effort limit (``control.collision.effort_floor``)."""
    model = RobotModel.from_urdf(urdf, root_link=root_link, tip_link=tip_link)
    recording = read_joint_states(bag_path, model.joint_names, topic=topic,
                                  effort_topic=effort_topic, min_samples=min_samples)
    if recording.velocity is None or recording.effort is None:
        missing = [f for f in ("velocity", "effort") if getattr(recording, f) is None]
        hint = "" if effort_topic else "; effort_topic gives the controller's commands"
        raise BagError(f"{bag_path}: the joint states on {topic} carry no "
                       f"{' and no '.join(missing)} (the observer needs q, q̇ and the torque{hint})")
    r = residuals(model, recording.t, recording.position, recording.velocity, recording.effort,
                  gain, friction=friction, torque="command" if effort_topic else "held")
    floor = effort_floor(model) if floor is None else np.asarray(floor, dtype=float)
    if floor.size not in (1, model.dof):
        raise ValueError(f"floor: {floor.size} values for the {model.dof} joints "
                         f"({', '.join(model.joint_names)}): give one, or one per joint")
    floor = np.broadcast_to(floor, (model.dof,))
    fitted = fit_thresholds(model.joint_names, r, recording.velocity, gain, margin, velocity_term)
    thresholds = fit_thresholds(model.joint_names, r, recording.velocity, gain, margin,
                                velocity_term, floor)
    return Calibration(thresholds, r, recording, fitted, floor)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robodyn-ros collision", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="calibrate")
    cal = verbs.add_parser("calibrate", help="thresholds from a collision-free bag")
    cal.add_argument("bag", help="rosbag2 directory or file (MCAP or sqlite3)")
    cal.add_argument("--urdf", required=True, help="the arm's URDF")
    cal.add_argument("-o", "--output", help="the parameter file to write (default: stdout)")
    cal.add_argument("--gain", type=float, default=50.0, help="the observer's K_O, 1/s (50)")
    cal.add_argument("--margin", type=float, default=MARGIN,
                     help=f"factor over the recording's envelope (default {MARGIN:g})")
    cal.add_argument("--floor", type=float, nargs="+", metavar="N_M",
                     help="least static threshold, N m: one value, or one per joint (default: "
                     f"{100 * FLOOR_FRACTION:g} %% of each joint's effort limit in the URDF, what a "
                     "drive's torque is known to at rest; doc/collisions.md)")
    cal.add_argument("--static", action="store_true", help="no velocity term: a_i only")
    cal.add_argument("--no-friction", dest="friction", action="store_false",
                     help="the model's friction left out (a plant without friction)")
    cal.add_argument("--topic", default="/joint_states")
    cal.add_argument("--effort-topic", help="the controller's command topic, when the joint "
                     "states carry no effort")
    cal.add_argument("--root-link")
    cal.add_argument("--tip-link")
    args = parser.parse_args(argv)
    floor = None if args.floor is None else args.floor[0] if len(args.floor) == 1 else args.floor
    try:
        result = calibrate(args.bag, args.urdf, gain=args.gain, margin=args.margin,
                           velocity_term=not args.static, floor=floor, friction=args.friction,
                           topic=args.topic, effort_topic=args.effort_topic,
                           root_link=args.root_link, tip_link=args.tip_link)
    except (BagError, ValueError, OSError) as exc:
        print(f"robodyn-ros collision calibrate: {exc}", file=sys.stderr)
        return 2
    print_table(result, args)
    text = result.yaml(NODE)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"written: {args.output} (ros2 run ... --ros-args --params-file {args.output})",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def print_table(result, args) -> None:
    """The recording, each joint's residual and thresholds (fitted, and as written), and a word on
    the joints the floor decides (stderr: stdout may be the parameter file)."""
    t = result.thresholds
    peak = np.abs(result.residuals).max(axis=0)
    say = functools.partial(print, file=sys.stderr)
    say(f"{len(result.recording.t)} states, {result.recording.t[-1] - result.recording.t[0]:.1f} s; "
        f"K_O = {args.gain:g} 1/s, margin {args.margin:g}")
    say(f"{'joint':12s}{'max |r| (N m)':>15s}{'fitted a':>10s}{'floor':>8s}{'a (N m)':>10s}"
        f"{'b (N m s/rad)':>15s}")
    for row in zip(t.joint_names, peak, result.fitted.static, result.floor, t.static,
                   t.per_velocity):
        say("{:12s}{:>15.4g}{:>10.4g}{:>8.3g}{:>10.4g}{:>15.4g}".format(*row))
    if result.floored:
        say(f"robodyn-ros collision calibrate: note: {', '.join(result.floored)}: the recording "
            "loads them less than the floor, so their a is the floor ("
            + ("--floor" if args.floor else f"{100 * FLOOR_FRACTION:g} % of the effort limit: "
               "what a drive's torque is known to at rest")
            + "); a recording that loads them more, or a real one with its noise, fits them")
    unlimited = [n for n, f in zip(t.joint_names, result.floor) if f == 0.0]
    if unlimited and args.floor is None:
        say(f"robodyn-ros collision calibrate: warning: {', '.join(unlimited)}: no effort limit "
            "in the URDF, so no floor: their thresholds are what the recording showed; give "
            "--floor (N m) for what their drives are known to")


if __name__ == "__main__":
    sys.exit(main())
