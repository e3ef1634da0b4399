"""The controller as it runs in service, for as long as asked.

    robodyn-ros dev soak [--duration 3600] [--warmup 120] [--goal-period 2] [--json FILE]

arm_simulator (PUMA 560, 1 kHz, not step-locked) and computed_torque_controller (simulated time,
one command per state) run in processes of their own on loopback DDS, on a domain of the run's
own, as in robodyn-ros dev fuzz; the arm is simulated so that the goals move it and can succeed.
This process stands where the drive and MoveIt stand: it times every effort command on arrival,
listens to the controller state and /diagnostics, and sends a FollowJointTrajectory goal every
--goal-period s of simulated time, the arm between two poses: one goal in ten lasts 1.5 periods
and is preempted by the next (expected: aborted, an invalid-goal error code), one in twenty is
cancelled halfway (CANCELED), every other one must reach its end within the goal tolerances
(SUCCEEDED). A goal goes out a period after the one before and, unless that one is to be
preempted, once its result is in (5 periods at most): a machine too loaded to simulate in real
time, or a stall of this process, delays the goals instead of changing their outcomes.

Every --interval s (60) a row: the controller's RSS, CPU (user + system over the interval),
threads and open file descriptors, the largest gap between commands, the goals' outcomes, the
real-time factor of the simulation, the controller's own largest period between states (its
/diagnostics), this process's longest stall (a gap it measures may be its own), the controller's
stale spells (its log), the machine's load and CPU use (the other processes'); printed as it
comes and, with --json, the report rewritten (partial results survive a stopped run). The
verdict: after --warmup s the RSS stays within --rss-bound MB (max - min of the rows), threads
and fds constant; no gap between commands over 2 periods + the watchdog's bound (measured in this
process, so its own stalls count too); every goal's outcome the expected one; both nodes alive.
Exit 0 when it holds, 1 when not. SIGINT ends the run early, reported.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import signal
import struct
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from .benchmarks.latency import COMMAND_TOPIC, JOINTS
from .commands import check_outputs
from ..control.goal import INVALID_GOAL, SUCCESSFUL
from .fuzz.inputs import Q0
from .fuzz.observer import CONTROLLER, STATE_TIMEOUT, gap_bound, start_arm
from .fuzz.run import STARTUP_TIMEOUT
from .processes import NodeProcesses, cpu_seconds, loopback_dds, spin_until, status_kb

MOVE = (0.3, -0.2, -0.3, 0.4, 0.3, 0.5)  # rad: the second pose, from Q0 (within every limit)
GOAL_TOLERANCE = 0.01      # rad, every joint: reached means there
GOAL_TIME_TOLERANCE = 0.5  # s after the last point to get there (else GOAL_TOLERANCE_VIOLATED)
#: expected (status, error code) of each kind of goal; preempted goals are aborted as JTC's are
EXPECTED = {"succeed": ("SUCCEEDED", SUCCESSFUL), "preempt": ("ABORTED", INVALID_GOAL),
            "cancel": ("CANCELED", SUCCESSFUL)}
STATUS = {4: "SUCCEEDED", 5: "CANCELED", 6: "ABORTED"}  # action_msgs/GoalStatus


def kind(k: int, last: bool) -> str:
    """Goal k's kind: one in twenty cancelled, one in ten preempted (but not the run's last)."""
    if k % 20 == 4:
        return "cancel"
    return "preempt" if k % 10 == 9 and not last else "succeed"


@dataclasses.dataclass
class _Goal:
    index: int
    kind: str
    cancel_at: float | None  # simulated s
    sent_sim: float = 0.0
    sent: float = dataclasses.field(default_factory=time.time)  # wall, as the nodes log it
    ended: float | None = None
    handle: object = None
    outcome: tuple | None = None  # (status, error code), "REJECTED" / "NO RESULT" as status


class _Monitor:
    """This process's node: command arrivals, controller states, diagnostics, the goals."""

    def __init__(self, context, goal_period, bound):
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.action import ActionClient
        from rclpy.node import Node
        from std_msgs.msg import Float64MultiArray

        from ..nodes.controller_state import TOPIC
        from ..nodes.messages import JointTrajectoryControllerState
        from ..nodes.messages import FollowJointTrajectory

        self.node = Node("soak_monitor", context=context)
        self.bound_ns, self.goal_period = bound * 1e9, goal_period
        self.goals: list[_Goal] = []
        self.last: _Goal | None = None  # the goal sent last
        self.stale: list[float] = []  # wall s each stale spell of the controller began
        self.last_command = None  # monotonic ns
        self.sim_ns = None  # the stamp of the last controller state: simulated time
        self.period_max_us = 0.0  # the controller's own, from /diagnostics
        self.stall_max = 0.0  # s: the longest this process's loop was away (its own stalls)
        self.interval = Counter()  # this interval's counts, emptied by take()
        self.gap_max_ns = self.gaps_over = 0
        self.worst_diagnostic = (0, "")
        sub = self.node.create_subscription
        sub(Float64MultiArray, COMMAND_TOPIC, self._on_command, 1000, raw=True)
        sub(JointTrajectoryControllerState, f"/{CONTROLLER}/{TOPIC.removeprefix('~/')}",
            self._on_controller_state, 1000, raw=True)
        sub(DiagnosticArray, "/diagnostics", self._on_diagnostics, 100)
        self.action = ActionClient(self.node, FollowJointTrajectory,
                                   f"/{CONTROLLER}/follow_joint_trajectory")
        self._type = FollowJointTrajectory

    def _on_command(self, raw):
        now = time.monotonic_ns()
        if self.last_command is not None:
            gap = now - self.last_command
            self.gap_max_ns = max(self.gap_max_ns, gap)
            self.gaps_over += gap > self.bound_ns
        self.last_command = now
        self.interval["commands"] += 1

    def _on_controller_state(self, raw):
        # header.stamp, after the 4 bytes of CDR encapsulation: read in place, 1 kHz
        sec, nanosec = struct.unpack_from("<iI", raw, 4)
        self.sim_ns = sec * 1_000_000_000 + nanosec
        self.interval["controller_states"] += 1

    def _on_diagnostics(self, msg):
        for status in msg.status:
            if CONTROLLER in status.name:
                self.interval["diagnostics"] += 1
                for kv in status.values:
                    if kv.key.endswith(".period.max"):
                        self.period_max_us = max(self.period_max_us, float(kv.value))
                level = int.from_bytes(status.level) if isinstance(status.level, bytes) \
                    else int(status.level)
                if level > self.worst_diagnostic[0]:
                    self.worst_diagnostic = (level, status.message)

    def ready(self) -> bool:
        return (self.action.server_is_ready() and self.interval["commands"] > 0
                and self.sim_ns is not None)

    def sim(self) -> float:
        """Simulated time (s), as the controller last answered it."""
        return self.sim_ns * 1e-9

    def due(self) -> bool:
        """A period after the last goal, and its result in unless the next is to preempt it
        (waited for 5 periods at most: a lost result is reported, it does not end the goals)."""
        last, now = self.last, self.sim()
        return last is None or (now >= last.sent_sim + self.goal_period and (
            last.kind == "preempt" or last.outcome is not None
            or now >= last.sent_sim + 5 * self.goal_period))

    def send(self, k: int, last: bool) -> None:
        """Goal k: to the second pose and back in turn; one to be preempted lasts 1.5 periods."""
        from builtin_interfaces.msg import Duration
        from control_msgs.msg import JointTolerance
        from trajectory_msgs.msg import JointTrajectoryPoint

        goal = _Goal(k, kind(k, last), None, self.sim())
        span = self.goal_period * (1.5 if goal.kind == "preempt" else 0.5)
        if goal.kind == "cancel":
            goal.cancel_at = self.sim() + span / 2
        target = [q + (d if k % 2 == 0 else 0.0) for q, d in zip(Q0, MOVE)]
        msg = self._type.Goal()
        msg.trajectory.joint_names = list(JOINTS)
        sec, nanosec = divmod(round(span * 1e9), 1_000_000_000)
        msg.trajectory.points = [JointTrajectoryPoint(
            positions=target, velocities=[0.0] * len(JOINTS),
            time_from_start=Duration(sec=sec, nanosec=nanosec))]
        msg.goal_tolerance = [JointTolerance(name=j, position=GOAL_TOLERANCE) for j in JOINTS]
        msg.goal_time_tolerance = Duration(nanosec=round(GOAL_TIME_TOLERANCE * 1e9))
        self.goals.append(goal)
        self.last = goal
        self.action.send_goal_async(msg).add_done_callback(lambda f: self._accepted(goal, f))

    def _accepted(self, goal, future):
        goal.handle = future.result()
        if not goal.handle.accepted:
            goal.outcome = ("REJECTED", None)
            return
        goal.handle.get_result_async().add_done_callback(lambda f: self._result(goal, f.result()))

    @staticmethod
    def _result(goal, result):
        goal.ended = time.time()
        goal.outcome = (STATUS.get(result.status, str(result.status)), result.result.error_code)

    def cancel_due(self) -> None:
        now = self.sim()
        for goal in self.goals:
            if (goal.cancel_at is not None and now >= goal.cancel_at and goal.outcome is None
                    and goal.handle is not None):
                goal.cancel_at = None
                goal.handle.cancel_goal_async()

    def take(self, now_ns: int, stale: list[float]) -> dict:
        """This interval's figures, and a fresh interval. A silence still going on counts;
        ``stale``: when the controller's stale spells since the last call began."""
        self.stale += stale
        if self.last_command is not None:
            self.gap_max_ns = max(self.gap_max_ns, now_ns - self.last_command)
        counts, self.interval = self.interval, Counter()
        outcomes = Counter()
        for goal in self.goals:
            if goal.outcome is not None:
                outcomes[f"{goal.kind}: {goal.outcome[0]}"] += 1
        unexpected = [g for g in self.goals
                      if g.outcome is not None and g.outcome != EXPECTED[g.kind]]
        self.goals = [g for g in self.goals if g.outcome is None]  # reported once
        figures = {"commands": counts["commands"], "controller_states": counts["controller_states"],
                   "diagnostics": counts["diagnostics"],
                   "diagnostic_worst": list(self.worst_diagnostic),
                   "command_gap_max_ms": self.gap_max_ns * 1e-6, "command_gaps_over_bound":
                   self.gaps_over, "controller_period_max_ms": self.period_max_us * 1e-3,
                   "sim_s": self.sim(), "monitor_stall_max_ms": self.stall_max * 1e3,
                   "goals": dict(sorted(outcomes.items())),
                   "stale_spells": len(stale),
                   "unexpected_goals": [{"goal": g.index, "kind": g.kind, "outcome": g.outcome,
                                         "stale_spell_during_it": any(
                                             g.sent <= t <= (g.ended or math.inf)
                                             for t in self.stale)}
                                        for g in unexpected]}
        self.gap_max_ns = self.gaps_over = 0
        self.period_max_us = self.stall_max = 0.0
        self.worst_diagnostic = (0, "")
        return figures


class _StaleLog:
    """When the controller's stale spells began: its watchdog's warnings, read from its log as
    they come (the log's stamps are wall time, as time.time())."""
    WARNING = b"]: no valid joint state for "

    def __init__(self, path: Path):
        self._path, self._offset = path, 0

    def new(self) -> list[float]:
        with open(self._path, "rb") as log:
            log.seek(self._offset)
            text = log.read()
        complete = text[:text.rfind(b"\n") + 1]
        self._offset += len(complete)
        return [float(line.split(b"] [", 2)[1]) for line in complete.splitlines()
                if self.WARNING in line]


def _sample(pid) -> dict:
    """The controller process's figures from /proc (cpu: seconds so far), and the machine's
    CPU time (/proc/stat's first line: user nice system idle iowait irq softirq steal)."""
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = -1
    machine = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return {"rss_kb": status_kb(pid, "VmRSS"), "threads": status_kb(pid, "Threads"), "fds": fds,
            "cpu_s": cpu_seconds(pid) if Path(f"/proc/{pid}").exists() else math.nan,
            "machine": machine}


def _machine(before, after) -> dict:
    """The machine's share of CPU busy (every core, all processes) and stolen by the host."""
    d = [b - a for a, b in zip(before, after)]
    total = max(sum(d), 1)
    return {"machine_busy_percent": 100.0 * (total - d[3] - d[4]) / total,
            "machine_steal_percent": 100.0 * d[7] / total}


# ------------------------------------------------------------------------------------ the run
def run(duration=3600.0, warmup=120.0, goal_period=2.0, interval=60.0, rss_bound_mb=1.0,
        state_timeout=STATE_TIMEOUT, logs=None, progress=print, write=None) -> dict:
    """Start the nodes, soak, stop them; the report as a dict (``write(report)`` after each
    row too). The nodes' logs go to ``logs`` (kept) or to a temporary directory."""
    loopback_dds()   # before anything imports rclpy
    from robodyn_ros.dynamics import warm_up
    from robodyn_ros.plumbing.resources import find_share_file

    warm_up()  # fill numba's cache once, so that the nodes load it instead of compiling
    urdf = find_share_file("urdf/puma560.urdf")
    bound = gap_bound(state_timeout)
    report = {"duration_s": duration, "warmup_s": warmup, "interval_s": interval,
              "goal_period_s": goal_period, "state_timeout_s": state_timeout,
              "command_gap_bound_ms": bound * 1e3, "rss_bound_kb": rss_bound_mb * 1024,
              "cores": os.cpu_count(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                               time.gmtime()),
              "rows": [], "complete": False}
    with tempfile.TemporaryDirectory(prefix="robodyn_soak_") as tmp:
        logs = Path(logs or tmp)
        logs.mkdir(parents=True, exist_ok=True)
        with NodeProcesses(logs) as nodes:
            start_arm(nodes, urdf, Q0, state_timeout)
            report["alive_at_end"] = _soak(nodes, report, bound, progress, write)
        report["exit_codes"] = nodes.exit_codes
    report.update(verdict(report))
    return report


def _soak(nodes, report, bound, progress, write) -> dict:
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.signals import SignalHandlerOptions

    stop = []
    previous = signal.signal(signal.SIGINT, lambda *_: stop.append(True))  # any number of them
    context = rclpy.Context()  # its own, beside any the caller (a test) has
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    duration, goal_period, interval = (report[k] for k in ("duration_s", "goal_period_s",
                                                           "interval_s"))
    try:
        monitor = _Monitor(context, goal_period, bound)
        executor = EventsExecutor(context=context)
        executor.add_node(monitor.node)
        spin_until(executor, nodes, monitor.ready, STARTUP_TIMEOUT,
                   "waiting for the controller's commands and its action server")
        pid = nodes.pids[CONTROLLER]
        start = time.monotonic()
        # goals go out on simulated time until 2 periods before the end (wall): the last one
        # is not preempted, and ends within the run
        sending, k, sim0 = True, 0, monitor.sim()
        stale = _StaleLog(nodes.log(CONTROLLER))
        row_end, before = start + interval, {**_sample(pid), "t": 0.0, "sim": sim0}
        progress(f"nodes up; {duration:g} s, a goal every {goal_period:g} s, a row every "
                 f"{interval:g} s (warm-up {report['warmup_s']:g} s)")
        now = time.monotonic()
        while not stop and not nodes.dead():
            now, last = time.monotonic(), now
            monitor.stall_max = max(monitor.stall_max, now - last)
            if now >= start + duration and not any(g.outcome is None for g in monitor.goals):
                break
            if now >= start + duration + 10.0:  # the last results had 10 s to come
                for goal in monitor.goals:
                    goal.outcome = goal.outcome or ("NO RESULT", None)
                break
            monitor.cancel_due()  # before the next goal: a cancel a stall delayed comes first
            if sending and monitor.due():
                sending = now < start + duration - 2 * goal_period
                monitor.send(k, last=not sending)
                k += 1
            if now >= row_end:
                before = _row(monitor, stale, report, pid, before, now - start, progress, write)
                row_end += interval
            executor.spin_once(timeout_sec=0.005)
        if not stop and not nodes.dead():  # the last, partial row (the final results)
            _row(monitor, stale, report, pid, before, time.monotonic() - start, progress, write)
        report["complete"] = not stop and not nodes.dead()
        report["goals_sent"] = k
        alive = {name: name not in nodes.dead() for name in nodes.pids}
        report["peak_rss_kb"] = status_kb(pid, "VmHWM")
        monitor.node.destroy_node()
        return alive
    finally:
        rclpy.try_shutdown(context=context)
        signal.signal(signal.SIGINT, previous)


def _row(monitor, stale, report, pid, before, t, progress, write) -> dict:
    sample = _sample(pid)
    row = {"t_s": round(t, 3), **{k: v for k, v in sample.items() if k not in ("cpu_s", "machine")},
           "cpu_percent": 100.0 * (sample["cpu_s"] - before["cpu_s"]) / max(t - before["t"], 1e-9),
           **monitor.take(time.monotonic_ns(), stale.new()), "load_1min": os.getloadavg()[0],
           **_machine(before["machine"], sample["machine"])}
    row["real_time_factor"] = (row["sim_s"] - before["sim"]) / max(t - before["t"], 1e-9)
    report["rows"].append(row)
    goals = sum(row["goals"].values())
    progress(f"  t = {t:6.0f} s  RSS {row['rss_kb'] / 1024:7.2f} MB  CPU {row['cpu_percent']:5.1f} "
             f"%  threads {row['threads']}  fds {row['fds']}  largest gap "
             f"{row['command_gap_max_ms']:6.1f} ms (own stall {row['monitor_stall_max_ms']:.0f})  goals {goals}, "
             f"{len(row['unexpected_goals'])} unexpected  stale {row['stale_spells']}  "
             f"RTF {row['real_time_factor']:.2f}  load {row['load_1min']:.2f}  machine busy "
             f"{row['machine_busy_percent']:.0f} % (steal {row['machine_steal_percent']:.0f} %)")
    if write is not None:
        write(report)
    return {**sample, "t": t, "sim": row["sim_s"]}


def verdict(report: dict) -> dict:
    """The goals, judged on the rows: RSS, threads and fds after the warm-up, gaps, goals."""
    rows = report["rows"]
    after = [r for r in rows if r["t_s"] >= report["warmup_s"] - 1e-6]
    rss = [r["rss_kb"] for r in after]
    outcomes = Counter()
    for r in rows:
        outcomes.update(r["goals"])
    unexpected = [g for r in rows for g in r["unexpected_goals"]]
    gap = max((r["command_gap_max_ms"] for r in rows), default=math.inf)
    checks = {
        "rss_flat": len(after) >= 2 and max(rss) - min(rss) <= report["rss_bound_kb"],
        "threads_constant": len(after) >= 2 and len({r["threads"] for r in after}) == 1,
        "fds_constant": len(after) >= 2 and len({r["fds"] for r in after}) == 1,
        "gaps_within_bound": gap <= report["command_gap_bound_ms"],
        "goals_as_expected": sum(outcomes.values()) > 0 and not unexpected,
        "complete": report["complete"] and all(report.get("alive_at_end", {}).values()),
    }
    return {"after_warmup": {
        "rows": len(after), "rss_min_kb": min(rss, default=-1), "rss_max_kb": max(rss, default=-1),
        "rss_growth_kb": max(rss) - min(rss) if rss else -1,
        "cpu_percent_mean": sum(r["cpu_percent"] for r in after) / max(len(after), 1),
        "cpu_percent_max": max((r["cpu_percent"] for r in after), default=math.nan),
        "threads": sorted({r["threads"] for r in after}), "fds": sorted({r["fds"] for r in after})},
        "command_gap_max_ms": gap, "command_gaps_over_bound":
        sum(r["command_gaps_over_bound"] for r in rows),
        "outcomes": dict(sorted(outcomes.items())), "unexpected_goals": unexpected,
        "stale_spells": sum(r["stale_spells"] for r in rows),
        "checks": checks, "holds": all(checks.values())}


# ------------------------------------------------------------------------------------ the command
def summary(report: dict) -> str:
    a, c = report["after_warmup"], report["checks"]
    mark = {True: "ok", False: "FAILED"}
    return "\n".join([
        f"after the {report['warmup_s']:g} s warm-up ({a['rows']} rows): RSS {a['rss_min_kb']} .. "
        f"{a['rss_max_kb']} kB, growth {a['rss_growth_kb']} kB (bound {report['rss_bound_kb']:g}) "
        f"{mark[c['rss_flat']]}; threads {a['threads']} {mark[c['threads_constant']]}; fds "
        f"{a['fds']} {mark[c['fds_constant']]}; CPU mean {a['cpu_percent_mean']:.1f} %, max "
        f"{a['cpu_percent_max']:.1f} %",
        f"largest gap between commands {report['command_gap_max_ms']:.1f} ms (bound "
        f"{report['command_gap_bound_ms']:.1f} ms, {report['command_gaps_over_bound']} over) "
        f"{mark[c['gaps_within_bound']]}",
        f"goals: {report['outcomes']}; unexpected: {report['unexpected_goals'] or 'none'} "
        f"{mark[c['goals_as_expected']]}; stale spells (states late by > state_timeout): "
        f"{report['stale_spells']}",
        f"complete, nodes alive: {report.get('alive_at_end')} {mark[c['complete']]}; "
        f"verdict: {'the goals hold' if report['holds'] else 'the goals DO NOT hold'}"])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="robodyn-ros dev soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=3600.0, metavar="S",
                        help="seconds (3600)")
    parser.add_argument("--warmup", type=float, default=120.0, metavar="S",
                        help="seconds before the RSS, threads and fds must stay flat (120)")
    parser.add_argument("--goal-period", type=float, default=2.0, metavar="S",
                        help="s between goals (2)")
    parser.add_argument("--interval", type=float, default=60.0, metavar="S",
                        help="s between rows (60)")
    parser.add_argument("--rss-bound", type=float, default=1.0, metavar="MB",
                        help="largest RSS growth after the warm-up (1 MB)")
    parser.add_argument("--state-timeout", type=float, default=STATE_TIMEOUT, metavar="S",
                        help=f"the controller's (its default, {STATE_TIMEOUT:g} s)")
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON (each row)")
    parser.add_argument("--logs", metavar="DIR", help="keep the nodes' logs in DIR")
    args = parser.parse_args(argv)
    if not (args.duration > 0 and args.warmup >= 0 and args.goal_period > 0 and args.interval > 0
            and args.rss_bound > 0 and args.state_timeout > 0):
        parser.error("--duration, --goal-period, --interval, --rss-bound and --state-timeout "
                     "must be > 0, --warmup >= 0")
    check_outputs(parser, {"--json": args.json})
    write = (lambda r: Path(args.json).write_text(json.dumps(r, indent=1) + "\n")) \
        if args.json else None
    report = run(args.duration, args.warmup, args.goal_period, args.interval, args.rss_bound,
                 args.state_timeout, logs=args.logs, write=write)
    if write is not None:
        write(report)
    print(summary(report))
    return 0 if report["holds"] else 1


if __name__ == "__main__":
    sys.exit(main())
