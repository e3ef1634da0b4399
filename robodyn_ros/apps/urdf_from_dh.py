"""The URDF of a DH-table YAML, with a ros2_control block (mock hardware, or Gazebo's with
--gazebo): robodyn-ros urdf-from-dh config/puma560_dh.yaml -o puma560.urdf (doc/dynamics.md)."""
import argparse
import sys

from ..dynamics.dh import load_table
from ..dynamics.link import ModelError
from ..dynamics.urdf_export import dh_to_urdf
from .commands import check_outputs, refuse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="robodyn-ros urdf-from-dh", description=__doc__)
    parser.add_argument("yaml", metavar="YAML", help="DH-table YAML, e.g. config/puma560_dh.yaml")
    parser.add_argument("--gazebo", action="store_true",
                        help="gz_ros2_control hardware and plugin, base fixed to 'world'")
    parser.add_argument("--no-ros2-control", dest="ros2_control", action="store_false",
                        help="leave out the <ros2_control> block")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="output file (default: standard output)")
    args = parser.parse_args(argv)
    check_outputs(parser, {"--output": args.output})
    try:
        urdf = dh_to_urdf(load_table(args.yaml), ros2_control=args.ros2_control,
                          gazebo=args.gazebo, source=args.yaml)
    except ModelError as exc:
        return refuse(parser.prog, exc)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(urdf)
    else:
        sys.stdout.write(urdf)
    return 0
