"""What a simulator will refuse in a URDF, what only robodyn_ros's model tolerates, and where the
collision shapes overlap one another.

A simulator integrates each moving link as a rigid body and refuses a link without a positive mass
or with an inertia no rigid body has (MuJoCo: "mass and inertia of moving bodies must be larger
than mjMINVAL", "inertia must satisfy A + B >= C"; Gazebo's engines alike). Our dynamics needs only
a positive definite mass matrix, so it takes some of those links (the PUMA data set's link 1 has no
mass, its link 3 violates the triangle inequality): the check says which. Then, with MuJoCo
installed, the link shapes' overlaps at the zero pose and at each --pose, between links that are
not neighbours, and how deep; --srdf writes the SRDF of the pairs a planner need not check.

Exit status: 0 when nothing was found, 1 when a simulator or our model refuses the file or shapes
overlap, 2 when the file cannot be checked (unreadable, malformed, an unknown link named).
"""
import argparse
import sys

import numpy as np

from ..dynamics.description import DescriptionError, read_description
from ..dynamics.link import ModelError
from ..dynamics.urdf import TipChosen
from ..sim.bodies import parse_urdf
from ..sim.check_urdf import check, tolerated_by_our_model
from .commands import check_outputs, refuse


def _values(text):
    """One --pose word: numbers separated by commas (or one number)."""
    try:
        return [float(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"a pose is numbers separated by spaces or commas "
                                         f"(--pose 0 0.5 1 0 0 0), got {text!r}") from None


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
    parser = argparse.ArgumentParser(prog="robodyn-ros check-urdf", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("urdf", metavar="FILE", help="the URDF (or .xacro) file")
    parser.add_argument("--pose", type=_values, nargs="+", action="append", default=[],
                        metavar="Q", help="joint values at which to check the shapes too, one "
                        "per movable joint in the file's order, in rad and m (degrees with "
                        "--degrees), separated by spaces or commas: --pose 0 0.5 1 0 0 0; "
                        "repeat --pose for several poses")
    parser.add_argument("--degrees", action="store_true", help="--pose values in degrees")
    parser.add_argument("--srdf", metavar="OUT", help="write the SRDF (MoveIt's disabled pairs)")
    parser.add_argument("--root-link", metavar="LINK", help="the chain's first link, as the "
                        "controller's root_link (default: the file's root)")
    parser.add_argument("--tip-link", metavar="LINK", help="the chain's last link, as the "
                        "controller's tip_link (needed when the tree has several leaves: a "
                        "gripper's fingers)")
    args = parser.parse_args(argv)
    check_outputs(parser, {"--srdf": args.srdf})
    poses = [np.array([x for word in pose for x in word]) for pose in args.pose]
    try:
        source, urdf = read_description(args.urdf)
        links = {link.name for link in parse_urdf(urdf, source).links}
        found = check(urdf, source)
    except (DescriptionError, ModelError) as exc:
        return refuse(parser.prog, exc)
    for option, link in (("--root-link", args.root_link), ("--tip-link", args.tip_link)):
        if link is not None and link not in links:
            return refuse(parser.prog, f"{option} '{link}' is not a link of {source} (its links: "
                          f"{', '.join(sorted(links))})")
    for link, joint, problems in found:
        print(f"{source}: link '{link}' (moved by '{joint}'): {'; '.join(problems)}: "
              "a simulator refuses it")
    ours, said = tolerated_by_our_model(urdf, args.root_link, args.tip_link)
    for tip in (w for w in said if isinstance(w, TipChosen)):
        print(tip)   # which chain was checked, whatever else is found
    if found and ours:
        print(f"{source}: robodyn_ros's model accepts it (M(q) is positive definite)"
              + "".join(f"\n  it warns: {w}" for w in said if not isinstance(w, TipChosen)))
    elif not ours:
        print(f"{source}: robodyn_ros's model refuses it{' too' if found else ''}: {said[0]}")
    if not found:
        print(f"{source}: every moving link has a positive mass and a physical inertia: "
              "a simulator accepts it")
    overlapping = self_overlaps(source, urdf, poses, args.degrees, args.srdf)
    return 1 if found or not ours or overlapping else 0
