"""Collision thresholds from a recording of normal operation without collisions:
robodyn-ros collision calibrate BAG --urdf URDF -o thresholds.yaml (doc/collisions.md).

The momentum observer's residual is computed along the bag's joint states with the URDF's model;
per joint, the tightest line a + b |q̇| above it, times a margin, is the threshold; they are
written as the parameter file computed_torque_controller loads (--params-file).

The bag is read as robodyn-ros identify reads it (MCAP or sqlite3): the joint states' effort as
the torque applied or, with --effort-topic, the controller's commands.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

from ..control.collision import (MARGIN, NODE, Thresholds, fit_thresholds, residuals,
                                 thresholds_yaml)
from ..dynamics.model import RobotModel
from ..identification.bag import BagError, read_joint_states
from .commands import refuse


@dataclasses.dataclass(frozen=True)
class Calibration:
    """What ``calibrate`` found: the thresholds, the residuals they were fitted to, the recording."""
    thresholds: Thresholds
    residuals: np.ndarray
    recording: object

    def yaml(self, node: str = NODE) -> str:
        return thresholds_yaml(self.thresholds, node)


def calibrate(bag_path, urdf, *, gain=50.0, margin=MARGIN, velocity_term=True, floor=0.0, friction=True,
              topic="/joint_states", effort_topic=None, root_link=None, tip_link=None,
              min_samples=100) -> Calibration:
    """Thresholds from a collision-free rosbag2 recording (read as identification reads it,
    ``identification.bag.read_joint_states``) and the arm's URDF: the residual along it with the
    URDF's model, then ``fit_thresholds``. The torque is the joint states' effort (held over the
    step that ends at each state) or, with ``effort_topic``, the controller's commands."""
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
    thresholds = fit_thresholds(model.joint_names, r, recording.velocity, gain, margin,
                                velocity_term, floor)
    return Calibration(thresholds, r, recording)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robodyn-ros collision", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="calibrate",
                                  help="the one verb: calibrate")
    cal = verbs.add_parser("calibrate", help="thresholds from a collision-free bag",
                           description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cal.add_argument("bag", metavar="BAG", help="rosbag2 directory or file (MCAP or sqlite3)")
    cal.add_argument("--urdf", required=True, metavar="FILE", help="the arm's URDF")
    cal.add_argument("-o", "--output", metavar="FILE",
                     help="the parameter file to write (default: stdout)")
    cal.add_argument("--gain", type=float, default=50.0,
                     help="the momentum observer's gain, 1/s (default 50)")
    cal.add_argument("--margin", type=float, default=MARGIN,
                     help=f"factor over the recording's envelope (default {MARGIN:g})")
    cal.add_argument("--floor", type=float, default=0.0,
                     help="least static threshold, N m (for joints the recording barely loads)")
    cal.add_argument("--static", action="store_true", help="no velocity term: a only")
    cal.add_argument("--no-friction", dest="friction", action="store_false",
                     help="the model's friction left out (a plant without friction)")
    cal.add_argument("--topic", default="/joint_states", help="the joint states' topic "
                     "(default: %(default)s)")
    cal.add_argument("--effort-topic", metavar="TOPIC", help="the controller's command topic, "
                     "when the joint states carry no effort")
    cal.add_argument("--root-link", metavar="LINK",
                     help="first link of the chain (default: the URDF's root)")
    cal.add_argument("--tip-link", metavar="LINK",
                     help="last link of the chain (default: the single leaf)")
    args = parser.parse_args(argv)
    try:
        result = calibrate(args.bag, args.urdf, gain=args.gain, margin=args.margin,
                           velocity_term=not args.static, floor=args.floor, friction=args.friction,
                           topic=args.topic, effort_topic=args.effort_topic,
                           root_link=args.root_link, tip_link=args.tip_link)
    except (BagError, ValueError, OSError) as exc:
        return refuse("robodyn-ros collision calibrate", exc)
    t = result.thresholds
    peak = np.abs(result.residuals).max(axis=0)
    print(f"{len(result.recording.t)} states, {result.recording.t[-1] - result.recording.t[0]:.1f} s; "
          f"K_O = {args.gain:g} 1/s, margin {args.margin:g}", file=sys.stderr)
    print(f"{'joint':12s}{'max |r| (N m)':>15s}{'a (N m)':>12s}{'b (N m s/rad)':>15s}", file=sys.stderr)
    for name, r, a, b in zip(t.joint_names, peak, t.static, t.per_velocity):
        print(f"{name:12s}{r:>15.4g}{a:>12.4g}{b:>15.4g}", file=sys.stderr)
    text = result.yaml(NODE)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"written: {args.output} (ros2 run ... --ros-args --params-file {args.output})",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
