"""``robodyn-ros bag from-csv|from-npz|from-text ... -o BAG``: a joint log as most robots leave
it -- a CSV table (UR's RTDE recorder), NumPy arrays, one text file per quantity -- written as a
rosbag2 of sensor_msgs/JointState on /joint_states (names, position, velocity, effort), stamped
and received at the log's own times, which ``robodyn-ros identify`` and ``collision calibrate``
read. Columns of other joint quantities (a controller's command, RTDE's target_moment_0..5) become
std_msgs/Float64MultiArray topics with --effort-topic. doc/identification.md.
"""
from __future__ import annotations

import argparse
import sys

from ..identification.logs import NPZ, RTDE, TIME_UNITS, UR_JOINTS, LogError

SOURCES = {
    "from-csv": "a CSV table with a header line (space-, comma-, semicolon- or tab-separated); "
                "the defaults are UR's RTDE names",
    "from-npz": "a NumPy .npz of named arrays; the defaults are JointState's field names",
    "from-text": "one text file per quantity: whitespace-separated numbers, one sample per row "
                 "or one value per line (sample by sample, joint by joint)",
}


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros bag", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="from-csv|from-npz|from-text")
    for verb, text in SOURCES.items():
        sub = verbs.add_parser(verb, help=text, description=text)
        if verb != "from-text":
            sub.add_argument("log", help="the log file (gzipped or not)")
        defaults = {"from-csv": RTDE, "from-npz": NPZ}.get(verb)
        what = "file" if verb == "from-text" else ("column" if verb == "from-csv" else "array")
        spec = ("" if verb == "from-text" else
                "; a pattern with {i} (the joint's index from 0), {j} (from 1) or {joint} (its "
                "name), or the names separated by commas"
                + (", or the name of an (N, joints) array" if verb == "from-npz" else ""))
        sub.add_argument("-o", "--output", required=True, metavar="BAG",
                         help="the rosbag2 to write (a new directory; never overwritten)")
        names = sub.add_mutually_exclusive_group(required=verb != "from-csv")
        names.add_argument("--joints", nargs="+", metavar="NAME",
                           help="the joints' names, in the order of the log's columns"
                           + (f" (default: a UR's, {' '.join(UR_JOINTS)})" if verb == "from-csv"
                              else ""))
        names.add_argument("--urdf", metavar="FILE", help="take the joints' names from this "
                           "URDF's chain, base to tip (a path or package://robodyn_ros/urdf/...)")
        sub.add_argument("--tip-link", help="with --urdf: the last link of the chain (default: "
                         "the single leaf)")
        required = verb == "from-text"
        sub.add_argument("--time", required=required, metavar=what.upper(),
                         default=None if required else defaults["time"],
                         help=f"the times' {what}" + ("" if required else " (default: %(default)s)"))
        for field, meaning in (("position", "joint positions (rad or m)"),
                               ("velocity", "joint velocities; 'none' for none"),
                               ("effort", "joint efforts (N m or N, or a drive's currents); "
                                          "'none' for none")):
            sub.add_argument(f"--{field}", required=required and field == "position",
                             metavar=what.upper(),
                             default=None if required else defaults[field],
                             help=f"the {meaning}: the {what}{spec}"
                             + ("" if required else " (default: %(default)s"
                                + ("" if field == "position" else
                                   ", left out when the log has no such " + what) + ")"))
        sub.add_argument("--effort-topic", action="append", default=[], metavar=f"TOPIC={what.upper()}",
                         help="also write these values as a std_msgs/Float64MultiArray topic, one "
                         "message per sample at its time, in the joints' order (a controller's "
                         "command, as identify --effort-topic reads it; RTDE: "
                         "/target_moment=target_moment_{i}); repeatable")
        sub.add_argument("--time-unit", choices=TIME_UNITS, default="s",
                         help="unit of the times (default: %(default)s)")
        sub.add_argument("--topic", default="/joint_states",
                         help="the JointState topic (default: %(default)s)")
        sub.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap",
                         help="the bag's storage format (default: %(default)s)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from ..dynamics import ModelError
    from ..identification.bag import BagError

    try:
        log = read_log(args)
        write(args, log)
    except (LogError, BagError, ModelError) as exc:
        print(f"robodyn-ros bag {args.verb}: {exc}", file=sys.stderr)
        return 2
    print(f"{args.output}: {log.summary()}")
    topics = [args.topic + " (sensor_msgs/JointState: "
              + ", ".join(f for f in ("position", "velocity", "effort")
                          if getattr(log, f) is not None) + ")"]
    topics += [f"{topic} (std_msgs/Float64MultiArray)" for topic in log.arrays]
    print(f"{args.output}: {', '.join(topics)}; {args.storage}")
    return 0


def joint_names(args):
    if args.urdf:
        import warnings

        from ..dynamics import RobotModel
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the description's own complaints are not ours here
            return RobotModel.from_urdf(args.urdf, tip_link=args.tip_link).joint_names
    return args.joints or list(UR_JOINTS)


def read_log(args):
    from ..identification import logs

    joints = joint_names(args)
    arrays = {}
    for option in args.effort_topic:
        topic, sep, spec = option.partition("=")
        if not (sep and topic.startswith("/") and spec):
            raise LogError(f"--effort-topic {option!r}: give TOPIC=COLUMNS, e.g. "
                           "/target_moment=target_moment_{i}")
        arrays[topic] = spec
    fields = {f: None if getattr(args, f) in (None, "none") else getattr(args, f)
              for f in ("velocity", "effort")}
    if args.verb == "from-text":
        return logs.read_text(joints, time=args.time, position=args.position, arrays=arrays,
                              time_unit=args.time_unit, **fields)
    defaults = RTDE if args.verb == "from-csv" else NPZ
    # a default the log lacks is left out; a column named on the command line must be there
    optional = [f for f, spec in fields.items() if spec == defaults[f]]
    read = logs.read_csv if args.verb == "from-csv" else logs.read_npz
    return read(args.log, joints, time=args.time, position=args.position, arrays=arrays,
                time_unit=args.time_unit, optional=optional, **fields)


def write(args, log):
    from rosbags.typesys import Stores, get_typestore

    from ..identification.bag import FLOAT64_MULTI_ARRAY, write_joint_states

    store = get_typestore(Stores.ROS2_JAZZY)
    array, layout = store.types[FLOAT64_MULTI_ARRAY], store.types["std_msgs/msg/MultiArrayLayout"]

    def messages(values):
        return [(t, store.serialize_cdr(array(layout=layout(dim=[], data_offset=0), data=row),
                                        FLOAT64_MULTI_ARRAY))
                for t, row in zip(log.t.tolist(), values)]

    write_joint_states(args.output, log.t, list(log.joints), log.position, log.velocity,
                       log.effort, storage=args.storage, topic=args.topic,
                       extra={topic: (FLOAT64_MULTI_ARRAY, messages(values))
                              for topic, values in log.arrays.items()})


if __name__ == "__main__":
    sys.exit(main())
