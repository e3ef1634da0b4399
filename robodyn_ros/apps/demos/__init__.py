"""The package's closed loops, each a few processes talking over real DDS on this machine (the
loopback interface): run one with 'robodyn-ros demo NAME', its options with 'robodyn-ros demo NAME
-h'."""
from ..commands import dispatch, renamed

SUMMARY = "the closed loops over real DDS"
COMMANDS = {
    "puma": ("robodyn_ros.apps.demos.puma", "the PUMA 560 under computed-torque control, the "
             "experiment of Lee, Chung, Mudge & Turney 1982 (doc/demo.md)"),
    "stewart": ("robodyn_ros.apps.demos.stewart", "the Stewart platform's closed loop on Path I "
                "(doc/stewart_closed_loop.md)"),
    "identify": ("robodyn_ros.apps.demos.identify", "identification closing the loop: nominal "
                 "model, excitation, identify, the identified model (doc/identification.md)"),
    "adaptive": ("robodyn_ros.apps.demos.adaptive", "the PUMA's motion there and back with a tool "
                 "the controller's model lacks, per control law (doc/demo.md)"),
    "cartesian": ("robodyn_ros.apps.demos.cartesian", "a Cartesian path followed by the "
                  "task-space laws on the PUMA and a 7-joint arm (doc/demo.md)"),
    "collision": ("robodyn_ros.apps.demos.collision", "the PUMA meets an obstacle in MuJoCo: "
                  "detection, isolation, each reaction's contact force (doc/collisions.md)"),
    "drive": ("robodyn_ros.apps.demos.drive", "the Panda behind a drive that adds gravity and "
              "limits the torque rate, as a Franka's (doc/real_robot.md)"),
    "faults": ("robodyn_ros.apps.demos.faults", "the fault matrix: stalls, bursts, clock offsets, "
               "reactivations, a law switch, a preemption, lowered limits, a collision, judged by "
               "a drive that holds commands at its period (doc/real_robot.md)"),
}


def _old_spelling(argv):
    """``demo [--stewart|--identify|--law ...|--cartesian SHAPE] ...``, the spellings of 0.1."""
    if argv and not argv[0].startswith("-"):   # a demo's name, or a typo the parser names
        return None
    for flag, name in (("--stewart", "stewart"), ("--identify", "identify")):
        if flag in argv:
            renamed(f"demo {flag}", f"demo {name}")
            return [name, *(a for a in argv if a != flag)]
    for i, arg in enumerate(argv):
        if arg == "--cartesian" or arg.startswith("--cartesian="):
            shape = arg.partition("=")[2] or (argv[i + 1] if i + 1 < len(argv) else "")
            rest = argv[:i] + argv[i + (1 if "=" in arg else 2):]
            renamed(f"demo --cartesian {shape}", f"demo cartesian --path {shape}")
            return ["cartesian", "--path", shape, *rest]
    if any(a == "--law" or a.startswith("--law=") for a in argv):
        renamed("demo --law", "demo adaptive --law")
        return ["adaptive", *argv]
    renamed("demo", "demo puma")
    return ["puma", *argv]


def main(argv) -> int:
    return dispatch("robodyn-ros demo", __doc__, COMMANDS, argv, _old_spelling)
