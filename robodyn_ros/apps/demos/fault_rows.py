"""The fault matrix's rows, what a row measures, and its table (``robodyn-ros demo faults``): no ROS
here, so that the DDS path (``fault_dds.py``) and the native one (``fault_native.py``) report
alike.

A row is a goal in motion with one fault in it. Its outcome is judged from the commands the drive
received (``sim.drive.judge_commands``: the drive holds commands at its period and counts each
command whose change within one of its cycles exceeds rate × period), the controller states it
answered (which stamp each answered: a future-stamped one used is counted) and the time from each
state to its command (the worst of the row over the median before its fault).
"""
from __future__ import annotations

import dataclasses
import statistics

import numpy as np

PERIOD = 1e-3     # s: the drive's cycle (a Franka's 1 kHz)
RATE = 1000.0     # N m/s per joint: libfranka's kMaxTorqueRate (config/franka_controller.yaml)
CONTROLLER = "computed_torque_controller"
LOW_LIMITS = [2.0, 2.0, 2.0, 2.0, 0.5, 0.5, 0.5]   # N m: below what the goals ask of joints 2 and 4
# the Panda's poses (those of demo drive): each row's goal goes to the other of A and B
Q_A = (0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8)
Q_B = (0.8, 0.2, -0.5, -1.5, 0.5, 2.0, 0.0)
Q_C = (-0.5, -0.2, 0.3, -1.8, -0.3, 1.2, 1.2)


def panda():
    """The Panda both paths run: (its RobotModel, the URDF's path)."""
    import warnings

    from ...dynamics import RobotModel
    from ...plumbing.resources import find_share_file
    urdf = find_share_file("urdf/panda.urdf")
    with warnings.catch_warnings():   # the description's own inertia warnings
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(urdf), urdf


def franka_file() -> dict:
    """config/franka_controller.yaml, the file both paths are driven with."""
    import yaml

    from ...plumbing.resources import find_share_file
    return yaml.safe_load(find_share_file("config/franka_controller.yaml").read_text())


@dataclasses.dataclass(frozen=True)
class Form:
    """A row's timing (s): the goal's ``duration``, its fault ``fault_at`` s into it, what is
    recorded ``after`` the goal's end, how long an ``episode`` lasts (a clock offset, a
    deactivation, a law switch, a push)."""
    duration: float
    fault_at: float
    after: float
    episode: float


SHORT = Form(duration=1.0, fault_at=0.4, after=0.3, episode=0.25)   # the tests'
FULL = Form(duration=2.0, fault_at=0.8, after=0.5, episode=0.5)     # the demo's


@dataclasses.dataclass(frozen=True)
class Fault:
    """One row: ``kind`` and its ``value`` (ms of a stall, states of a burst, s of a clock
    offset, the on_deactivate of a reactivation)."""
    kind: str
    value: float | str = 0.0

    @property
    def name(self) -> str:
        v = self.value
        if self.kind == "stall":
            return f"stall of the states {v:g} ms"
        if self.kind == "burst":
            return f"burst of {v:g} states"
        if self.kind == "offset":
            return f"driver clock {v:+g} s"
        if self.kind == "reactivate":
            return f"deactivate, activate (on_deactivate {v})"
        return {"nominal": "nominal (no fault)", "switch": "law switch, and back",
                "preempt": "a goal preempting a goal", "limits": "effort limits lowered",
                "collision": "collision (a push at the hand)"}[self.kind]


STALLS = [Fault("stall", ms) for ms in (5, 20, 60, 300)]
BURSTS = [Fault("burst", n) for n in (10, 50)]
PYTHON_ROWS = [Fault("nominal"), *STALLS, *BURSTS,
               *(Fault("offset", s) for s in (-0.5, 0.5, 2.0)),
               Fault("reactivate", "zero"), Fault("reactivate", "hold_gravity"), Fault("switch"),
               Fault("preempt"), Fault("limits"), Fault("collision")]
NATIVE_ROWS = [Fault("nominal"), *STALLS, *BURSTS, Fault("switch"), Fault("limits")]


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A row's figures: ``over`` commands over rate × period, the ``max_step`` (N m) against
    ``limit`` (rate × period), future-stamped states answered (None: no stamps on this path),
    the ``worst`` time from a state to its command in the row and the ``quiet`` median before
    the fault (s), the ``largest_gap`` between commands (s), the seconds the arm's time
    ``slipped`` in the row (this harness not run on time: a loaded machine), the ``detection``
    of a collision in the row (None: no observer on this path), the row's ``attempts`` (one
    more each time this harness lost too much time at once), and the per-command ``trace`` (s
    from the goal, N m) for a plot."""
    fault: str
    over: int
    max_step: float
    limit: float
    future_used: int | None
    worst: float
    quiet: float
    largest_gap: float
    slipped: float = 0.0
    detection: dict | None = None
    attempts: int = 1
    trace: tuple = dataclasses.field(default=((), ()), repr=False)

    @property
    def ratio(self) -> float:
        return self.worst / self.quiet if self.quiet > 0 else float("nan")


def outcome(fault: Fault, times, commands, start: float, fault_at: float, end: float,
            latencies, future_used=None, slipped: float = 0.0, detection=None) -> Outcome:
    """The row of ``fault`` whose goal began at ``start`` (s on the drive's clock), its fault at
    ``fault_at``, recorded until ``end``: ``times``, ``commands`` every command the drive
    received (before the row too: history), ``latencies`` (state time, s from the state to its
    command) of the states answered."""
    from ...sim.drive import judge_commands
    verdict = judge_commands(times, commands, PERIOD, RATE, start, end)
    at, latency = (np.asarray(v, dtype=float) for v in zip(*latencies)) if len(latencies) \
        else (np.zeros(0), np.zeros(0))
    quiet = latency[(at >= start) & (at < fault_at)]
    row = latency[(at >= start) & (at < end)]
    return Outcome(fault.name, verdict.over, verdict.max_step, verdict.limit, future_used,
                   float(row.max(initial=0.0)), float(np.median(quiet)) if quiet.size else 0.0,
                   verdict.largest_gap, slipped, detection,
                   trace=(verdict.times - start, verdict.steps))


# ------------------------------------------------------------------ the table

COLUMNS = ("fault", "steps over rate × period", "max step (N m) / rate × period",
           "future stamps used", "worst cycle / quiet median", "largest gap (ms)")


def _spread(values, form: str) -> str:
    """The median of ``values`` and, when they differ, their range."""
    values = [v for v in values if v is not None and np.isfinite(v)]
    if not values:
        return "–"
    median = statistics.median(values)
    if min(values) == max(values):
        return form.format(median)
    return f"{form.format(median)} ({form.format(min(values))}–{form.format(max(values))})"


def _figure(seconds: float) -> str:
    """A time in µs, or ms from 1 ms up."""
    return f"{seconds * 1e3:.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def table(runs: list[list[Outcome]]) -> list[str]:
    """A Markdown table of the rows over ``runs`` (each a list of the same rows): medians, with
    their range over the runs where they differ."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for rows in zip(*runs):
        first = rows[0]
        future = "–" if first.future_used is None else _spread([r.future_used for r in rows], "{:g}")
        ratio = (_spread([r.ratio for r in rows], "{:.0f}") + "×: "
                 + _figure(statistics.median(r.worst for r in rows)) + " / "
                 + _figure(statistics.median(r.quiet for r in rows)))
        lines.append(f"| {first.fault} | {_spread([r.over for r in rows], '{:g}')} "
                     f"| {_spread([r.max_step for r in rows], '{:.2f}')} / {first.limit:g} "
                     f"| {future} | {ratio} "
                     f"| {_spread([r.largest_gap * 1e3 for r in rows], '{:.0f}')} |")
    return lines


def harness_note(runs: list[list[Outcome]], max_slip: float) -> str:
    """What this harness lost of the arm's time in the rows (a loaded machine), in a line;
    ``max_slip``: s lost at once after which a row was run again."""
    every = [o for rows in runs for o in rows]
    slipped = sorted(o.slipped * 1e3 for o in every)
    again = sum(o.attempts > 1 for o in every)
    return (f"The arm's time slipped (this harness not run on time) {statistics.median(slipped):.0f} "
            f"ms in a row at the median, {slipped[-1]:.0f} ms at most; {again} of {len(every)} "
            f"rows were run again after a slip over {max_slip * 1e3:g} ms at once.")


def collision_note(runs: list[list[Outcome]]) -> str:
    """The collision rows' detection cycles, in a line ('' without a collision row)."""
    found = [o.detection for rows in runs for o in rows
             if o.fault == Fault("collision").name and o.detection is not None]
    if not found:
        return ""
    detected = [d for d in found if d.get("answered")]
    held = sum(bool(d["reaction_in_cycle"]) for d in detected)
    after = [d["report_after_command_us"] * 1e-3 for d in detected]
    return (f"The collision: detected and answered in {len(detected)} of {len(found)} runs; the "
            f"answer to the detecting state held the measured position in {held}; the ~/collision "
            f"report came {_spread(after, '{:.1f}')} ms after that command (negative: before it).")


def as_json(outcome: Outcome) -> dict:
    """An outcome as JSON (its trace left out)."""
    values = dataclasses.asdict(outcome)
    del values["trace"]
    return {**values, "ratio": outcome.ratio}
