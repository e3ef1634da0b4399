"""Hostile inputs to the nodes over DDS while valid joint states flow at 1 kHz.

    robodyn-ros dev fuzz [--duration 180] [--inputs 100000] [--rate 100] [--json FILE]

Five processes on loopback DDS, on a domain of the run's own: arm_simulator (the PUMA 560,
publishing /joint_states and /clock at 1 kHz), computed_torque_controller (simulated time, one
command per joint state, state_timeout 0.1 s), stewart_platform (held at a valid setpoint), an
observer (standing where the arm's drive stands: it timestamps every effort command on arrival and
checks every output of the three nodes) and this process, the fuzzer, which sends hostile inputs
of every kind over the nodes' topics, services, parameters and the FollowJointTrajectory action,
at --rate inputs per second for --duration seconds or --inputs inputs, whichever ends first.

What is measured: the inputs sent by kind, and those a node accepted (a hostile parameter set or
action goal that succeeded); any non-finite number in a joint state, a command, the controller
state or a Stewart output; the largest /diagnostics message (serialized bytes); the longest line
each node logged; the largest gap between consecutive effort commands, against the bound 2
control periods + the watchdog's state_timeout x 1.1; each node's resident memory at the start
and the end of the fuzzing; and whether every node is alive at the end (then stopped with SIGINT,
exiting 0).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..commands import check_outputs
from ..processes import loopback_dds, status_kb
from .inputs import FLOOD_PERIOD, Q0, Fuzzer
from .observer import CONTROLLER, OBSERVER, SIMULATOR, STATE_TIMEOUT, STEWART, gap_bound, start_arm

WARMUP = 3.0         # s of valid traffic before the first hostile input
STARTUP_TIMEOUT = 90.0


# ------------------------------------------------------------------------------------ the run
def run(duration: float = 180.0, inputs: int = 100_000, rate: float = 100.0,
        state_timeout: float = STATE_TIMEOUT, seed: int = 0, progress=print,
        logs: str | None = None, kinds: str = "", flood_period: float = FLOOD_PERIOD) -> dict:
    """Start the nodes and the observer, fuzz, stop everything; the figures as a dict. The
    nodes' logs go to ``logs`` (a directory kept afterwards) or to a temporary one; ``kinds``
    sends only the kinds whose name contains it; a flood goes out every ``flood_period`` s."""
    loopback_dds()   # before anything imports rclpy
    from robodyn_ros.dynamics import warm_up
    from robodyn_ros.apps.processes import NodeProcesses
    from robodyn_ros.plumbing.resources import find_share_file

    warm_up()  # fill numba's cache once, so the nodes load it instead of compiling side by side
    urdf = find_share_file("urdf/puma560.urdf")
    with tempfile.TemporaryDirectory(prefix="robodyn_fuzz_") as tmp:
        logs = Path(logs or tmp)
        logs.mkdir(parents=True, exist_ok=True)
        observed_file = logs / "observed.json"
        with NodeProcesses(logs) as nodes:
            start_arm(nodes, urdf, Q0, state_timeout)
            nodes.start(STEWART, "robodyn_ros.nodes.stewart_platform", {})
            with NodeProcesses(logs) as observer:  # stopped first: shutdown is no gap
                observer.start(OBSERVER, "robodyn_ros.apps.fuzz.observer",
                               {"output": observed_file,
                                "gap_bound": gap_bound(state_timeout)})
                sent, accepted, timeline, memory, alive = _fuzz(
                    nodes, observer, duration, inputs, rate, seed, kinds, flood_period, progress)
            observed = json.loads(observed_file.read_text()) if observed_file.exists() else {}
        log_lines = {name: _longest_line(logs / f"{name}.log")
                     for name in (CONTROLLER, SIMULATOR, STEWART)}
    bound = gap_bound(state_timeout)
    gap = observed.get("command_gap_max_s", math.inf)
    return {
        "duration_s": duration, "rate": rate, "seed": seed, "state_timeout_s": state_timeout,
        "inputs": sum(sent.values()), "inputs_by_kind": dict(sorted(sent.items())),
        "accepted_by_kind": dict(sorted(accepted.items())),
        "observed": observed,
        "longest_log_line": log_lines,
        "command_gap_bound_s": bound,
        "command_gap_within_bound": gap <= bound,
        "memory_kb": memory,
        "alive_at_end": alive,
        # the inputs sent during each of the largest gaps (and 0.2 s before it began)
        "largest_gaps": [{"gap_s": g, "inputs": sorted({k for t, k in timeline
                                                         if end - g - 0.2 <= t <= end})}
                         for g, end in observed.get("largest_gaps", [])],
        "exit_codes": nodes.exit_codes,
    }


def _fuzz(nodes, observer, duration, inputs, rate, seed, kinds, flood_period, progress):
    import rclpy
    from rclpy.experimental import EventsExecutor

    from robodyn_ros.apps.processes import spin_until

    context = rclpy.Context()  # its own, beside any the caller (a test) has
    rclpy.init(context=context)
    try:
        fuzzer = Fuzzer(np.random.default_rng(seed), kinds, context, flood_period)
        executor = EventsExecutor(context=context)
        executor.add_node(fuzzer.node)
        spin_until(executor, _Both(nodes, observer), fuzzer.ready, STARTUP_TIMEOUT,
                   "waiting for the nodes and the observer")
        progress(f"nodes up; {WARMUP:g} s of valid traffic, then {rate:g} hostile inputs/s for "
                 f"{duration:g} s (at most {inputs})")
        fuzzer.keep_stewart_busy()
        _spin_for(executor, WARMUP)
        memory = {name: {"start": status_kb(pid, "VmRSS"), "samples": []} for name, pid in nodes.pids.items()}
        start = time.monotonic()
        next_input, next_print, count = start, start, 0
        while count < inputs and time.monotonic() < start + duration:
            if nodes.dead() or observer.dead():
                break
            now = time.monotonic()
            if now < next_input:
                executor.spin_once(timeout_sec=min(next_input - now, 0.01))
                continue
            fuzzer.send_one()
            count += 1
            next_input = max(next_input + 1.0 / rate, time.monotonic() - 1.0)
            if now >= next_print:
                progress(f"  t = {now - start:6.1f} s: {count} inputs sent")
                next_print = now + 10.0
                for name, pid in nodes.pids.items():
                    memory[name]["samples"].append(status_kb(pid, "VmRSS"))
        _spin_for(executor, 1.0)  # the last answers, and a second of valid traffic after them
        for name, pid in nodes.pids.items():
            memory[name]["end"] = status_kb(pid, "VmRSS")
            memory[name]["peak"] = status_kb(pid, "VmHWM")
        alive = {name: name not in nodes.dead() for name in nodes.pids}
        fuzzer.node.destroy_node()
        return fuzzer.sent, fuzzer.accepted, fuzzer.timeline, memory, alive
    finally:
        rclpy.try_shutdown(context=context)


class _Both:
    """Two NodeProcesses checked as one (spin_until's argument)."""

    def __init__(self, *groups):
        self.groups = groups

    def check(self):
        for group in self.groups:
            group.check()


def _spin_for(executor, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)


def _longest_line(path: Path) -> dict:
    longest = max(path.read_bytes().splitlines(), key=len, default=b"")
    return {"bytes": len(longest), "start": longest[:160].decode(errors="replace")}


# ------------------------------------------------------------------------------------ the command
def summary(result: dict) -> str:
    """The figures as a few lines of text."""
    o = result["observed"]
    lines = [f"{result['inputs']} hostile inputs in {len(result['inputs_by_kind'])} kinds:"]
    lines += [f"  {kind:38s} {n:7d}" for kind, n in result["inputs_by_kind"].items()]
    lines += [f"  ACCEPTED {kind}: {n}" for kind, n in result["accepted_by_kind"].items()]
    lines += [
        f"observed: {o.get('commands', 0)} commands, {o.get('joint_states', 0)} joint states, "
        f"{o.get('controller_states', 0)} controller states, {o.get('stewart_forces', 0)} Stewart "
        f"force sets, {o.get('diagnostics', 0)} /diagnostics",
        f"non-finite outputs: {o.get('non_finite', {}) or 'none'}",
        f"largest /diagnostics message: {o.get('largest_diagnostic_bytes', 0)} bytes "
        f"({o.get('largest_diagnostic', '')})",
        "longest log line (bytes): " + ", ".join(
            f"{name} {v['bytes']}" for name, v in result["longest_log_line"].items()),
        f"largest gap between effort commands: {o.get('command_gap_max_s', math.inf) * 1e3:.1f} ms "
        f"(p99 {o.get('command_gap_p99_s', math.inf) * 1e3:.2f} ms; bound "
        f"{result['command_gap_bound_s'] * 1e3:.1f} ms; {o.get('command_gaps_over_bound', '?')} "
        "over it); largest step of the stamps between consecutive simulator states "
        f"{o.get('joint_state_stamp_step_max_s', math.nan) * 1e3:.1f} ms, between the states "
        f"consecutive controller states answered "
        f"{o.get('controller_state_stamp_step_max_s', math.nan) * 1e3:.1f} ms",
        "resident memory (kB) start -> end (peak): " + ", ".join(
            f"{name} {m['start']} -> {m.get('end', -1)} ({m.get('peak', -1)})"
            for name, m in result["memory_kb"].items()),
        *(f"  gap {g['gap_s'] * 1e3:.1f} ms during {', '.join(g['inputs']) or 'no input'}"
          for g in result["largest_gaps"]),
        "alive at the end: " + ", ".join(f"{n} {'yes' if a else 'NO'}"
                                         for n, a in result["alive_at_end"].items())
        + f"; exit codes {result['exit_codes']}",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="robodyn-ros dev fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=180.0, metavar="S",
                        help="seconds of fuzzing (180)")
    parser.add_argument("--inputs", type=int, default=100_000, metavar="N",
                        help="most inputs (100000)")
    parser.add_argument("--rate", type=float, default=100.0, metavar="HZ",
                        help="inputs per second (100)")
    parser.add_argument("--seed", type=int, default=0, help="of the random choices (0)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--logs", metavar="DIR", help="keep the nodes' logs in DIR")
    parser.add_argument("--flood-period", type=float, default=FLOOD_PERIOD, metavar="S",
                        help=f"seconds between two floods ({FLOOD_PERIOD:g})")
    parser.add_argument("--kinds", default="", metavar="TEXT",
                        help="only the kinds whose name contains TEXT (e.g. flood_)")
    args = parser.parse_args(argv)
    if not (args.duration > 0 and args.inputs > 0 and args.rate > 0 and args.flood_period > 0):
        parser.error("--duration, --inputs, --rate and --flood-period must be > 0")
    check_outputs(parser, {"--json": args.json})
    result = run(args.duration, args.inputs, args.rate, seed=args.seed, logs=args.logs,
                 kinds=args.kinds, flood_period=args.flood_period)
    print(summary(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    o = result["observed"]
    clean = (not o.get("non_finite") and result["command_gap_within_bound"]
             and all(result["alive_at_end"].values()))
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
