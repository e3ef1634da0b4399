"""``robodyn-ros``: the package's command line, a noun per command (``robodyn-ros demo puma``);
maintainers' tools are under ``robodyn-ros dev``."""
import sys

from .commands import RunFailed, dispatch, refuse, renamed

# command -> (module with main(argv), one-line help); a group (demo, dev) has a COMMANDS of its own
COMMANDS = {
    "demo": ("robodyn_ros.apps.demos", None),   # a group: its line lists its commands
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
    "stewart-path": ("robodyn_ros.apps.stewart_path", "the Stewart platform's Paths I-III "
                     "(Dasgupta & Mruthyunjaya 1998)"),
    "security": ("robodyn_ros.apps.security", "an SROS2 keystore with every enclave of the "
                 "package's policy (doc/security.md)"),
    "bench": ("robodyn_ros.apps.benchmarks", "benchmarks against Pinocchio, printed and as JSON"),
    "complexity": ("robodyn_ros.apps.complexity", "operation counts of Newton-Euler and "
                   "Lagrange-Euler"),
    "dev": ("robodyn_ros.apps.dev", None),   # its line lists the tools
}
# fuzz and soak test the package's own nodes on a simulated PUMA for minutes to an hour, against
# the package's own bounds: a maintainer's release checks, not a user's tools
MOVED_TO_DEV = ("perf-page", "param-tables", "fuzz", "soak")


def _old_spelling(argv):
    if argv and argv[0] in MOVED_TO_DEV:
        renamed(argv[0], f"dev {argv[0]}")
        return ["dev", *argv]
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    # a line reaches a pipe or a log file when it is printed, not when a buffer fills
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    try:
        return dispatch("robodyn-ros", "Model-based robot control for ROS 2.", COMMANDS, argv,
                        _old_spelling)
    except RunFailed as exc:
        refuse("robodyn-ros", exc)
        return 1
    except KeyboardInterrupt:   # Ctrl-C: the user knows why
        print("robodyn-ros: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
