"""``robodyn-ros``: the package's command line, a noun per command (``robodyn-ros demo puma``);
maintainers' tools are under ``robodyn-ros dev``."""
import sys

from .commands import dispatch, renamed

# command -> (module with main(argv), one-line help)
COMMANDS = {
    "demo": ("robodyn_ros.apps.demos", "the closed loops over real DDS: puma (004 §5), stewart, "
             "identify, adaptive, cartesian; 'demo -h' lists them"),
    "compile": ("robodyn_ros.apps.precompile", "compile every numba kernel now (make venv does; "
                "after colcon build run it once)"),
    "check-urdf": ("robodyn_ros.apps.check_urdf", "what a simulator refuses in a URDF, and what "
                   "only our model tolerates"),
    "urdf-from-dh": ("robodyn_ros.apps.urdf_from_dh", "write a URDF from a DH-table YAML"),
    "excite": ("robodyn_ros.apps.excite", "an excitation trajectory for identification (Fourier "
               "series, optimised for cond(W_base)) as a goal YAML"),
    "bag": ("robodyn_ros.apps.bag", "a rosbag2 of /joint_states from a log's columns: CSV (UR's "
            "RTDE), NumPy .npz or text files"),
    "identify": ("robodyn_ros.apps.identify", "a model from a recorded bag: base parameters, a "
                 "consistent estimate, the identified URDF"),
    "collision": ("robodyn_ros.apps.collision", "collision thresholds from a collision-free "
                  "recording: robodyn-ros collision calibrate BAG --urdf FILE"),
    "stewart-path": ("robodyn_ros.apps.stewart_path", "Stewart platform Paths I-III (002 §4)"),
    "security": ("robodyn_ros.apps.security", "an SROS2 keystore with every enclave of the "
                 "package's policy (doc/security.md)"),
    "bench": ("robodyn_ros.apps.benchmarks", "benchmarks against Pinocchio, printed and as JSON"),
    "complexity": ("robodyn_ros.apps.complexity", "operation counts of Newton-Euler and "
                   "Lagrange-Euler"),
    "fuzz": ("robodyn_ros.apps.fuzz.run", "hostile inputs to the nodes over DDS while valid "
             "joint states flow at 1 kHz"),
    "soak": ("robodyn_ros.apps.soak", "the controller for an hour (--duration) as in service: "
             "states at 1 kHz, a goal every 2 s; RSS, CPU, threads, fds, gaps, outcomes per minute"),
    "dev": ("robodyn_ros.apps.dev", "maintainers' tools: perf-page, param-tables, "
            "launch-under-load"),
}
MOVED_TO_DEV = ("perf-page", "param-tables")


def _old_spelling(argv):
    if argv[0] in MOVED_TO_DEV:
        renamed(argv[0], f"dev {argv[0]}")
        return ["dev", *argv]
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    # a line reaches a pipe or a log file when it is printed, not when a buffer fills
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    return dispatch("robodyn-ros", "Model-based robot control for ROS 2.", COMMANDS, argv,
                    _old_spelling)


if __name__ == "__main__":
    sys.exit(main())
