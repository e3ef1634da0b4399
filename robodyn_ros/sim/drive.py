"""A drive like the torque-controlled arms' own, between the command and the engine: Franka's
(libfranka's ``Torques``: "desired joint-level torques without gravity and friction", refused
above 1000 N·m/s, ``kMaxTorqueRate``) and UR's ``direct_torque`` ("always compensates for
gravity", friction compensation by default). It adds gravity, and friction if asked, to the
command it is sent, from ITS model of the arm — not the controller's: for our engine the arm's
model perturbed (``mass_scale``), for MuJoCo MuJoCo's own bias forces — and it watches the
commanded torque's rate: each step whose command changed faster than ``rate_limit`` is a
violation, counted; with ``stop`` the drive then stops the arm, as FCI's reflex does (braked,
at rest, until reset).

``judge_commands`` judges the commands a drive received, each at the time it arrived, as a drive
that holds them at its period applies them: what changed within one of its cycles, between
consecutive commands and across commands arriving within one period (the fault matrix,
``robodyn-ros demo faults``).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..control.drive import compensation_bits
from ..dynamics.newton_euler import FRICTION as DRIVE_FRICTION
from ..dynamics.newton_euler import GRAVITY as DRIVE_GRAVITY


class TorqueDrive:
    """``adds(q, qd, compensates)``: what the drive adds at the state, by its model (the engine's
    ``drive_adds``). ``rate_limit``: N·m/s per joint (or one for all; inf: none), chain order."""

    def __init__(self, adds, compensates: int, rate_limit, stop: bool = False):
        self._adds, self.compensates, self.stop = adds, int(compensates), bool(stop)
        self.rate_limit = np.asarray(rate_limit, dtype=float)
        self._last = None              # the command of the last step
        self.violations = 0            # steps whose command changed faster than rate_limit
        self.peak_rate = 0.0           # the largest |Δτ| / dt seen over the limit's joints (N·m/s)
        self.stopped = False           # stopped on a violation (``stop``), until reset

    def torque(self, command: np.ndarray, q, qd, dt: float) -> np.ndarray | None:
        """The joint torque for ``command`` held over a step of ``dt`` from (q, q̇): the command
        plus what the drive adds; None while stopped (the arm is braked)."""
        if self.stopped:
            return None
        if self._last is not None:
            rate = np.abs(command - self._last) / dt
            self.peak_rate = max(self.peak_rate, float(np.max(rate)))
            if np.any(rate > self.rate_limit * (1.0 + 1e-9)):   # a rounding is no violation
                self.violations += 1
                if self.stop:
                    self.stopped = True
                    return None
        self._last = np.array(command, dtype=float)
        return command + self.added(q, qd)

    def added(self, q, qd) -> np.ndarray:
        """What the drive adds at (q, q̇), by its model."""
        return self._adds(q, qd, self.compensates)

    def report(self) -> dict:
        """What /diagnostics shows of the drive."""
        return {"drive rate violations (total)": self.violations,
                "drive peak command rate (N m/s)": self.peak_rate, "drive stopped": self.stopped}

    def reset(self) -> None:
        """Released: no command yet, not stopped (the counts stay)."""
        self._last, self.stopped = None, False


def model_adds(model, q, qd, compensates) -> np.ndarray:
    """What a drive adds by a model of the arm (a RobotModel): g(q), and its joint friction at
    q̇."""
    out = np.zeros(model.dof)
    if compensates & DRIVE_GRAVITY:
        out += model.gravity_torques(q)
    if compensates & DRIVE_FRICTION:
        out += model.friction_torques(qd)
    return out


def attach_drive(engine, compensates: int, rate_limit, stop: bool = False,
                 mass_scale: float = 1.0) -> TorqueDrive:
    """A TorqueDrive between the command and ``engine``'s joints: on our engine its model is the
    arm's with every mass and inertia times ``mass_scale`` (a drive's model is not the
    controller's); MuJoCo's engine uses MuJoCo's own bias forces (``mass_scale`` unused)."""
    if mass_scale != 1.0:
        engine.drive_model = engine.model.scaled(mass=mass_scale)
    engine.drive = TorqueDrive(engine.drive_adds, compensates, rate_limit, stop)
    return engine.drive


def plant_drive(engines, order, compensates, rate, stop: bool = False,
                mass_scale: float = 1.0) -> TorqueDrive | None:
    """A simulator's drive (None when ``compensates`` and ``rate`` are empty), shared by its
    ``engines`` (``make_plant``'s, without the payload and with it: a drive does not know what
    the arm holds): ``compensates`` a drive_compensates list, ``rate`` drive_rate_limit in
    ``order``'s joints order (one value: every joint). ValueError naming the option."""
    if not (compensates or rate):
        return None
    n = order.dof
    if len(rate) not in (0, 1, n) or any(not r > 0.0 for r in rate):
        raise ValueError(f"drive_rate_limit must be one or {n} positive values, got {list(rate)}")
    rate = order.to_chain(np.resize(np.asarray(rate, dtype=float), n)) if len(rate) else \
        np.full(n, np.inf)
    drive = attach_drive(engines[0], compensation_bits(compensates), rate, stop, mass_scale)
    for engine in engines[1:]:
        engine.drive = drive
    return drive


@dataclasses.dataclass(frozen=True)
class DriveVerdict:
    """What a drive that holds commands at its ``period`` makes of the commands it received in a
    window (``judge_commands``): ``over`` commands whose change within one of its cycles exceeded
    rate × period on some joint, the largest such change ``max_step`` (N·m or N) and the bound
    ``limit`` (rate × period, the smallest over the joints), the ``largest_gap`` (s) between
    consecutive commands, ``commands`` in the window, and the per-command changes (``times``,
    ``steps``: each command's largest change over the joints) for a plot."""
    over: int
    max_step: float
    limit: float
    largest_gap: float
    commands: int
    times: np.ndarray
    steps: np.ndarray


def judge_commands(times, commands, period: float, rate, start: float = -np.inf,
                   end: float = np.inf) -> DriveVerdict:
    """The commands (rows of ``commands``, chain or joints order alike) a drive received at
    ``times`` (s on its clock, whose cycles begin at multiples of ``period``), judged as the drive
    applies them: at each cycle it applies the latest command and holds it, so a command's change
    within one cycle is the larger of its change from the command before it (a drive that takes
    every command in a cycle of its own) and from the command held when its cycle began (one that
    takes the latest: commands arriving within one period add up). ``rate``: N·m/s per joint (or
    one value). Only commands in [start, end) count; those before are history."""
    times = np.asarray(times, dtype=float)
    order = np.argsort(times, kind="stable")
    t, u = times[order], np.asarray(commands, dtype=float).reshape(len(times), -1)[order]
    bound = np.broadcast_to(np.asarray(rate, dtype=float) * period, u.shape[1:])
    cycle = np.floor(t / period)
    inside = (t >= start) & (t < end)
    steps = np.zeros(len(t))
    over, held = 0, None
    for i in range(1, len(t)):
        if cycle[i] != cycle[i - 1]:
            held = u[i - 1]                 # what the drive holds as command i's cycle begins
        change = np.abs(u[i] - u[i - 1])
        if held is not None:
            change = np.maximum(change, np.abs(u[i] - held))
        steps[i] = change.max()
        if inside[i] and np.any(change > bound * (1.0 + 1e-9)):   # a rounding is no step
            over += 1
    window = t[inside]
    before = t[:np.argmax(inside)][-1:] if inside.any() else t[:0]
    gaps = np.diff(np.concatenate([before, window]))
    return DriveVerdict(over, float(steps[inside].max(initial=0.0)), float(bound.min()),
                        float(gaps.max(initial=0.0)), int(inside.sum()), window, steps[inside])
