"""``robodyn-ros check-urdf FILE``: what a simulator refuses in a URDF (a moving link without a
positive mass or a physical inertia), and whether robodyn_ros's own model tolerates it
(``robodyn_ros.sim.check_urdf``)."""
import argparse
import sys

from ..sim import check_urdf
from ..sim.check_urdf import check, tolerated_by_our_model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robodyn-ros check-urdf", description=check_urdf.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("urdf", help="URDF file")
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
    return 1 if found else 0

