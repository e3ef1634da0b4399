"""``robodyn-ros``: the package's command line. Each subcommand lives in its own module and is
imported only when asked for, so that ``robodyn-ros complexity`` never loads rclpy."""
import argparse
import importlib
import sys

# subcommand -> (module with main(argv), one-line help)
COMMANDS = {
    "demo": ("robodyn_ros.demo", "PUMA 560 computed-torque closed loop over real DDS (004 §5); "
             "--stewart: the Stewart platform's on Path I"),
    "stewart-path": ("robodyn_ros.stewart.path_study", "Stewart platform Paths I-III (002 §4)"),
    "excite": ("robodyn_ros.identification.excite_cli", "an excitation trajectory for "
               "identification (Fourier series, optimised for cond(W_base)) as a goal YAML"),
    "identify": ("robodyn_ros.identification.identify_cli", "a model from a recorded bag: base "
                 "parameters, a consistent estimate, the identified URDF"),
    "bench": ("robodyn_ros.benchmarks", "benchmarks against Pinocchio, printed and as JSON"),
    "fuzz": ("robodyn_ros.fuzz.run", "hostile inputs to the nodes over DDS while valid "
             "joint states flow at 1 kHz"),
    "soak": ("robodyn_ros.soak", "the controller for an hour (--duration) as in service: states at "
             "1 kHz, a goal every 2 s; RSS, CPU, threads, fds, gaps, outcomes per minute"),
    "perf-page": ("robodyn_ros.benchmarks.page", "doc/performance.md's figures from a bench JSON"),
    "param-tables": ("robodyn_ros.parameters", "the doc/ pages' parameter tables from the schemas"),
    "compile": ("robodyn_ros.precompile", "compile every numba kernel now (make venv does; "
                "after colcon build run it once)"),
    "complexity": ("robodyn_ros.complexity", "operation counts of Newton-Euler and Lagrange-Euler"),
    "urdf-from-dh": ("robodyn_ros.dynamics.urdf_export", "write a URDF from a DH-table YAML"),
    "check-urdf": ("robodyn_ros.sim.check_urdf", "what a simulator refuses in a URDF, and what "
                   "only our model tolerates"),
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="robodyn-ros", description="Model-based robot control for ROS 2.",
        epilog="\n".join(f"  {name:14s} {text}" for name, (_, text) in COMMANDS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=sorted(COMMANDS), help="see below; '<command> -h' for its options")
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    args = parser.parse_args(argv[:1])
    module = importlib.import_module(COMMANDS[args.command][0])
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
