"""``robodyn-ros bench``: every benchmark of the package, printed and optionally as JSON.

Each module's ``run()`` returns {"robot": ..., "rows": [...]} with our figure and, where there is
one, the peer's figure taken in the same process (Pinocchio for the serial arm)."""
import argparse
import importlib
import json
import os
import platform
import sys

from ..commands import check_outputs
from ..processes import loopback_dds

SUITES = {
    "dynamics": "robodyn_ros.apps.benchmarks.dynamics",
    "control": "robodyn_ros.apps.benchmarks.control",
    "stewart": "robodyn_ros.apps.benchmarks.stewart",
    "identification": "robodyn_ros.apps.benchmarks.identification",
    "latency": "robodyn_ros.apps.benchmarks.latency",
    "disturbance": "robodyn_ros.apps.benchmarks.disturbance",
}
DEFAULT = ["dynamics", "control", "stewart", "identification"]
DESCRIPTION = """\
Every benchmark of the package, printed and optionally as JSON: each figure of ours beside its
peer's taken in the same process (Pinocchio for the serial arm) and its target
(doc/performance.md)."""


def _print(name, result):
    print(f"\n== {name}: {result.get('robot', '')}")
    print(f"{'':52s} {'best':>12s} {'median':>12s} {'peer':>12s} {'ratio':>7s}  target")
    for row in result["rows"]:
        peer = f"{row['peer']:12.4g}" if "peer" in row else f"{'-':>12s}"
        ratio = f"{row['ratio']:7.2f}" if "ratio" in row else f"{'':7s}"
        met = {True: " (met)", False: " (MISSED)"}.get(row.get("met"), "")
        print(f"{row['name']:52s} {row['best']:12.4g} {row['median']:12.4g} {peer} {ratio}  "
              f"{row.get('target', '')}{met}")
        if row.get("note"):
            print(f"{'':52s} {row['note']}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="robodyn-ros bench", description=DESCRIPTION)
    parser.add_argument("suites", nargs="*", metavar="SUITE",
                        help=f"some of {', '.join(SUITES)} (default: {' '.join(DEFAULT)}; 'latency' "
                             "runs the controller over DDS for --duration seconds, 'disturbance' "
                             "for a quiet and a disturbed phase of --duration seconds each)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON ('-' = stdout)")
    parser.add_argument("--duration", type=float, default=60.0, metavar="S",
                        help="the latency run's length, and each disturbance phase's, s (60)")
    args = parser.parse_args(argv)
    unknown = set(args.suites) - set(SUITES)
    if unknown:
        parser.error(f"unknown suites {sorted(unknown)}; choose from {', '.join(SUITES)}")
    if not args.duration > 0:
        parser.error("--duration must be > 0")
    check_outputs(parser, {"--json": args.json})
    loopback_dds()   # before anything imports rclpy
    results = {"machine": {"python": sys.version.split()[0], "cpu": platform.processor() or
                           platform.machine(), "cores": os.cpu_count()}, "suites": {}}
    for name in args.suites or DEFAULT:
        module = importlib.import_module(SUITES[name])
        result = (module.run(duration=args.duration) if name in ("latency", "disturbance")
                  else module.run())
        results["suites"][name] = result
        _print(name, result)
    if args.json:
        text = json.dumps(results, indent=2)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return 0
