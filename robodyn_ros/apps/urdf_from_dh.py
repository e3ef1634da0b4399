"""``robodyn-ros urdf-from-dh config/X.yaml [--gazebo] [-o out.urdf]``: the URDF of a DH-table
YAML (``robodyn_ros.dynamics.urdf_export``)."""
import argparse
import sys

from ..dynamics.dh import load_table
from ..dynamics.urdf_export import dh_to_urdf


def main(argv=None):
    """``robodyn-ros urdf-from-dh config/X.yaml [--gazebo] [-o out.urdf]``"""
    parser = argparse.ArgumentParser(prog="robodyn-ros urdf-from-dh",
                                     description="Write the URDF of a DH-table YAML.")
    parser.add_argument("yaml", help="DH-table YAML, e.g. config/puma560_dh.yaml")
    parser.add_argument("--gazebo", action="store_true",
                        help="gz_ros2_control hardware and plugin, base fixed to 'world'")
    parser.add_argument("--no-ros2-control", dest="ros2_control", action="store_false",
                        help="leave out the <ros2_control> block")
    parser.add_argument("-o", "--output", help="output file (default: standard output)")
    args = parser.parse_args(argv)
    urdf = dh_to_urdf(load_table(args.yaml), ros2_control=args.ros2_control, gazebo=args.gazebo,
                      source=args.yaml)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(urdf)
    else:
        sys.stdout.write(urdf)
    return 0

