"""Collision thresholds from a recording of normal operation without collisions:
robodyn-ros collision calibrate BAG --urdf URDF -o thresholds.yaml (doc/collisions.md).

The momentum observer's residual is computed along the bag's joint states with the URDF's model;
per joint, the tightest line a + b |q̇| above it, times a margin, is the threshold; they are
written as the parameter file computed_torque_controller loads (--params-file).

The bag is read as robodyn-ros identify reads it (MCAP or sqlite3): the joint states' effort as
the torque applied or, with --effort-topic, the controller's commands. An arm whose joint states
carry motor currents (a UR through ur_robot_driver) gives --drive-gains, as identify takes it:
the currents times their drive gains are the torques, the thresholds are in N m, and the file
also sets the controller's drives file (the one given, or one written beside it) and
collision_torque: measured.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from pathlib import Path

import numpy as np

from ..control.collision import (FLOOR_FRACTION, MARGIN, NODE, Thresholds, effort_floor,
                                 fit_thresholds, residuals, thresholds_yaml)
from ..dynamics.drives import JointDrives
from ..dynamics.model import RobotModel
from ..identification.bag import BagError, read_joint_states
from ..identification.efforts import implausible_efforts
from .commands import check_outputs, refuse
from .identify_currents import torques_of


@dataclasses.dataclass(frozen=True)
class Calibration:
    """What ``calibrate`` found: the thresholds, the residuals they were fitted to, the recording,
    ``fitted``: the thresholds before the floor raised them, ``floor`` the floor per joint,
    ``drives`` what the efforts were (the model's joint order) and ``warning`` a line saying the
    efforts, as torques, are implausible for the model (None: plausible)."""
    thresholds: Thresholds
    residuals: np.ndarray
    recording: object
    fitted: Thresholds
    floor: np.ndarray
    drives: JointDrives
    warning: str | None = None

    @property
    def floored(self) -> list[str]:
        """The joints whose static threshold is the floor, above what their residual needed."""
        return [name for name, a, fit in zip(self.thresholds.joint_names, self.thresholds.static,
                                              self.fitted.static) if a > fit]

    def yaml(self, node: str = NODE, drives_file=None) -> str:
        """The controller's parameter file: the thresholds and, for currents, the drives file
        (``drives_file``: the one given, or one written, ``JointDrives.save``; by joint name, so
        the controller's ``joints`` may be in any order) and the measured torque they were
        calibrated on."""
        extra = {}
        if self.drives.measures_currents.any():
            if drives_file is None:
                raise ValueError("the efforts are currents: the parameter file names a drives file")
            extra = {"drives_file": str(Path(drives_file).resolve()), "collision_torque": "measured"}
        return thresholds_yaml(self.thresholds, node, extra)


def calibrate(bag_path, urdf, *, gain=50.0, margin=MARGIN, velocity_term=True, floor=None, friction=True,
              topic="/joint_states", effort_topic=None, root_link=None, tip_link=None,
              min_samples=100, drive_gains=None, model=None) -> Calibration:
    """Thresholds from a collision-free rosbag2 recording (read as identification reads it,
    ``identification.bag.read_joint_states``) and the arm's URDF: the residual along it with the
    URDF's model, then ``fit_thresholds``. The torque is the joint states' effort (held over the
    step that ends at each state) or, with ``effort_topic``, the controller's commands.
    ``floor``: the least static threshold, N m (one value or one per joint); None: the drive's,
    ``FLOOR_FRACTION`` of each joint's effort limit (``control.collision.effort_floor``).
    ``drive_gains``: what the joint states' efforts are, as identify's ``--drive-gains`` (a drives
    file, or one gain per joint: currents); None: torques. ``model``: the arm's model, instead of
    the URDF's (an identified one, with its friction)."""
    if model is None:
        model = RobotModel.from_urdf(urdf, root_link=root_link, tip_link=tip_link)
    drives = JointDrives.torques_measured(model.joint_names)
    if drive_gains is not None:
        if effort_topic:
            raise ValueError("--drive-gains converts the joint states' efforts; the commands of "
                             "--effort-topic are torques already: give one or the other")
        drives = JointDrives.parse(drive_gains, model.joint_names).in_order(model.joint_names)
        if drives.unknown:   # said before the bag is read
            raise ValueError(f"--drive-gains {drive_gains}: the drive gains of {drives.unknown} are "
                             "unknown: give them, or the drives file identify writes (NAME.drives.yaml)")
    recording = read_joint_states(bag_path, model.joint_names, topic=topic,
                                  effort_topic=effort_topic, min_samples=min_samples)
    if recording.velocity is None or recording.effort is None:
        missing = [f for f in ("velocity", "effort") if getattr(recording, f) is None]
        hint = "" if effort_topic else "; effort_topic gives the controller's commands"
        raise BagError(f"{bag_path}: the joint states on {topic} carry no "
                       f"{' and no '.join(missing)} (the observer needs q, q̇ and the torque{hint})")
    if drives.measures_currents.any():   # the joint states' currents as torques, in model order
        recording = dataclasses.replace(recording, effort=torques_of(drives, recording, model))
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
    return Calibration(thresholds, r, recording, fitted, floor, drives,
                       None if effort_topic else implausible_efforts(model, recording))


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
    cal.add_argument("--floor", type=float, nargs="+", metavar="N_M",
                     help="least static threshold, N m: one value, or one per joint (default: "
                     f"{100 * FLOOR_FRACTION:g} %% of each joint's effort limit in the URDF, what a "
                     "drive's torque is known to at rest; doc/collisions.md)")
    cal.add_argument("--static", action="store_true", help="no velocity term: a only")
    cal.add_argument("--drive-gains", metavar="FILE|G1,...,Gn", help="when the joint states' "
                     "efforts are motor currents: a drives file (what identify writes beside an "
                     "identified URDF) or one gain per joint (N m/A); the thresholds are then in "
                     "N m, and the file sets the controller's drive gains too (default: efforts in "
                     "N m)")
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
    check_outputs(cal, {"-o": args.output})
    given = args.drive_gains is not None and not _numbers(args.drive_gains)   # a drives file
    if args.drive_gains is not None and not given and not args.output:
        parser.error("--drive-gains as values needs -o: the drives file the controller reads is "
                     "written beside it (or give a drives file)")
    floor = None if args.floor is None else args.floor[0] if len(args.floor) == 1 else args.floor
    try:
        result = calibrate(args.bag, args.urdf, gain=args.gain, margin=args.margin,
                           velocity_term=not args.static, floor=floor, friction=args.friction,
                           topic=args.topic, effort_topic=args.effort_topic,
                           root_link=args.root_link, tip_link=args.tip_link,
                           drive_gains=args.drive_gains)
    except (BagError, ValueError, OSError) as exc:
        return refuse("robodyn-ros collision calibrate", exc)
    if result.warning:
        print(f"robodyn-ros collision calibrate: warning: {result.warning}", file=sys.stderr)
    print_table(result, args)
    drives_file = args.drive_gains if given else None
    if result.drives.measures_currents.any() and not given:
        drives_file = result.drives.save(Path(args.output).with_suffix(".drives.yaml"),
                                         "the drive gains collision calibrate was given")
        print(f"written: {drives_file} (the drive gains)", file=sys.stderr)
    text = result.yaml(NODE, drives_file)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"written: {args.output} (ros2 run ... --ros-args --params-file {args.output})",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _numbers(text) -> bool:
    """Whether --drive-gains gives values (comma-separated numbers) rather than a file, as
    ``JointDrives.parse`` tells them apart."""
    try:
        [float(v) for v in text.split(",")]
    except ValueError:
        return False
    return True


def print_table(result, args) -> None:
    """The recording, each joint's residual and thresholds (fitted, and as written), and a word on
    the joints the floor decides (stderr: stdout may be the parameter file)."""
    t = result.thresholds
    peak = np.abs(result.residuals).max(axis=0)
    say = functools.partial(print, file=sys.stderr)
    say(f"{len(result.recording.t)} states, {result.recording.t[-1] - result.recording.t[0]:.1f} s; "
        f"K_O = {args.gain:g} 1/s, margin {args.margin:g}")
    amperes = peak / result.drives.gains   # a current joint's residual in A, others' as they are
    say(f"{'joint':12s}{'max |r| (N m)':>15s}{'(A)':>8s}{'fitted a':>10s}{'floor':>8s}"
        f"{'a (N m)':>10s}{'b (N m s/rad)':>15s}")
    for name, unit, *row in zip(t.joint_names, result.drives.units, peak, amperes,
                                result.fitted.static, result.floor, t.static, t.per_velocity):
        row[1] = f"{row[1]:.3g}" if unit == "A" else "-"
        say("{:12s}{:>15.4g}{:>8s}{:>10.4g}{:>8.3g}{:>10.4g}{:>15.4g}".format(name, *row))
    if result.drives.measures_currents.any():
        say(f"efforts: motor currents times their drive gains ({result.drives.source}):\n"
            f"{result.drives.table()}")
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
