"""``robodyn-ros check-urdf FILE``: what a simulator refuses in a URDF (a moving link without a
positive mass or a physical inertia), whether robodyn_ros's own model tolerates it
(``robodyn_ros.sim.check_urdf``), and where the collision shapes overlap one another at the zero
pose and at each ``--pose`` (``robodyn_ros.sim.self_collision``, MuJoCo's contact list: the pairs
of non-adjacent links and how deep). ``--srdf OUT`` writes the SRDF of the pairs a planner need
not check."""
import argparse
import sys

import numpy as np

from ..sim import check_urdf
from ..sim.check_urdf import check, tolerated_by_our_model


def _pose(text):
    try:
        values = [float(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"a pose is joint values separated by commas, got {text!r}")
    return np.array(values)


def self_overlaps(name, urdf, poses, degrees, srdf_out) -> int:
    """Print the overlaps at the zero pose and ``poses``; the number of poses with one (the zero
    pose only when it is within the joint limits)."""
    try:
        from ..sim.self_collision import SelfCollision, srdf
    except ImportError:
        print(f"{name}: self-overlap not checked: it needs MuJoCo (pip install robodyn_ros[mujoco])")
        return 0
    try:
        scene = SelfCollision(urdf)
    except ValueError as exc:
        print(f"{name}: self-overlap not checked: MuJoCo refuses the URDF: {exc}")
        return 0
    if not scene.links:
        print(f"{name}: no collision shapes (primitives) to check")
        return 0
    found = 0
    for i, given in enumerate([np.zeros(len(scene.joint_names)), *poses]):
        q = np.radians(given) if degrees else given
        where = f"pose {np.round(np.degrees(q) if degrees else q, 6).tolist()}" + (
            " deg" if degrees else "")
        if len(q) != len(scene.joint_names):
            print(f"{name}: {where}: expected {len(scene.joint_names)} values "
                  f"({', '.join(scene.joint_names)})", file=sys.stderr)
            found += 1
            continue
        outside = np.any((q < scene.limits[:, 0]) | (q > scene.limits[:, 1]))
        overlaps = scene.overlaps(q)
        found += bool(overlaps) and (i > 0 or not outside)   # a zero pose the arm cannot reach: said
        note = " (outside the joint limits)" if outside else ""
        print(f"{name}: {where}{note}: " + ("; ".join(map(str, overlaps)) if overlaps
                                             else "no shapes overlap"))
    if srdf_out:
        with open(srdf_out, "w", encoding="utf-8") as f:
            f.write(srdf(urdf))
        print(f"{name}: SRDF written to {srdf_out}")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robodyn-ros check-urdf", description=check_urdf.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("urdf", help="URDF file")
    parser.add_argument("--pose", type=_pose, action="append", default=[],
                        help="joint values (rad, m; movable joints in the URDF's order) at which to "
                             "check the shapes too; repeat for several")
    parser.add_argument("--degrees", action="store_true", help="--pose values in degrees")
    parser.add_argument("--srdf", metavar="OUT", help="write the SRDF (MoveIt's disabled pairs)")
    parser.add_argument("--root-link", help="the chain's first link, as the controller's "
                        "root_link (default: the file's root)")
    parser.add_argument("--tip-link", help="the chain's last link, as the controller's tip_link "
                        "(needed when the tree has several leaves: a gripper's fingers)")
    args = parser.parse_args(argv)
    try:
        with open(args.urdf, encoding="utf-8") as f:
            urdf = f.read()
    except OSError as exc:
        print(f"{args.urdf}: cannot read: {exc.strerror}", file=sys.stderr)
        return 2
    found = check(urdf)
    for link, joint, problems in found:
        print(f"{args.urdf}: link '{link}' (moved by '{joint}'): {'; '.join(problems)}: "
              "a simulator refuses it")
    ours, said = tolerated_by_our_model(urdf, args.root_link, args.tip_link)
    if found and ours:
        print(f"{args.urdf}: robodyn_ros's model accepts it (M(q) is positive definite)"
              + "".join(f"\n  it warns: {w}" for w in said))
    elif not ours:
        print(f"{args.urdf}: robodyn_ros's model refuses it{' too' if found else ''}: {said[0]}")
    if not found:
        print(f"{args.urdf}: every moving link has a positive mass and a physical inertia: "
              "a simulator accepts it")
    overlapping = self_overlaps(args.urdf, urdf, args.pose, args.degrees, args.srdf)
    return 1 if found or overlapping else 0
