"""The drive as the package knows it (:class:`Drive`), and the command stage every command path
shares: a law's full joint torque to the effort sent to the drive.

A torque drive — libfranka's torque interface, UR's ``direct_torque``, a ros2_control effort
interface — runs a cycle of its own every ``period`` seconds (1 ms on a Franka, 2 ms on a UR
e-Series at 500 Hz) and holds the last command it received until the next arrives: each cycle
applies the newest command at hand. So the change the drive applies in one of its cycles is the
change from the command it held in the cycle before, whenever that one was sent: after a 300 ms
stall of the joint states the whole difference lands in one cycle, and two commands sent within
one period may both be applied, one cycle after the other.

What the drive adds (``compensates``): libfranka's ``Torques`` are "desired joint-level torques
without gravity and friction", UR's ``direct_torque`` "always compensates for gravity". The
gravity is taken off every command, estimated by OUR model (the drive's own is not known here).
The friction is left out where it is made: behind a drive that compensates friction, the laws,
the collision reactions and the momentum observer leave the model's friction out (the law is
built with ``friction: false``), so the command removes exactly the friction the law would have
added, smooth or not, and nothing it did not add (a friction removed from a law that added none
chattered ±Fc at rest on velocity noise). The stage computes no friction: the model's friction,
whatever its form (``newton_euler.joint_friction``, where a friction file's tanh scale and offset
are), is computed only where a law, a reaction or the observer adds it.

Its rate limit (``rate``, N·m/s per joint: libfranka refuses more than 1000, ``kMaxTorqueRate``)
bounds the change the drive applies in any one cycle to ``rate`` · ``period``: between two
consecutive commands, and between any command and every command the drive may have held in the
cycle before it, which are those sent within one period before it and the last one sent before
that (:func:`window_command_into`). The stage keeps those commands in a small window, each open
until one period after it was replaced. A command that could not reach its target within the
bound leaves the stage ``pending``: the rest of the ramp is sent at the drive's period
(``CommandStage.resend``), whether or not states arrive.

In the stage: what the drive adds taken off, then the saturation at the effort limits, then the
rate limit; in that order, so that the saturation may not undo the rate limit (which would then be
broken exactly when it matters), and the rate limit acts on what is sent. The kernels take plain
arrays and scalars (no objects), so that a compiled caller — a law's 1 kHz step, or a numba
``cfunc`` behind a C ABI — calls them as they are.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ..dynamics.newton_euler import FRICTION, GRAVITY, NO_WRENCH, rnea
from ..plumbing.kernels import (FLOAT, INDEX_VECTOR, INT, PARAMETERS, VECTOR, C_MATRIX, Direct,
                                as_declared, inline, kernel, scratch)
from ..plumbing.reasons import bounded
from .cycle_steps import clamped
from .joints import JointOrder

#: bits of ``compensates``: what the drive adds to the command it is sent (newton_euler's modes)
DRIVE_GRAVITY, DRIVE_FRICTION = GRAVITY, FRICTION
#: what ``compensates`` may name, as the parameter ``drive_compensates`` spells it
COMPENSATIONS = {"gravity": DRIVE_GRAVITY, "friction": DRIVE_FRICTION}
#: a drive's command stage results: saturated + RATE_LIMITED * rate_limited (-1: NaN or inf)
RATE_LIMITED = 1 << 16
#: rows of a stage's window: the commands the drive may have held in the cycle before the next
#: one (more than a period's worth are merged into a tighter bound, never a looser one)
WINDOW_ROWS = 8
PERIOD = 1e-3   # s: drive_period's default, a 1 kHz drive
SAME_CYCLE = 1e-3   # of a period: the rounding of times within which a period has passed


@dataclasses.dataclass(frozen=True, eq=False)
class Drive:
    """A torque drive (module docstring): what it adds (``compensates``, DRIVE_* bits), its
    cycle (``period``, s) and its rate limit (``rate``, N·m/s or N/s per joint in chain order,
    inf: none). It holds the last command until the next; in any one of its cycles its command
    changes by at most :attr:`step`."""

    compensates: int = 0
    period: float = PERIOD
    rate: np.ndarray | None = None   # None: no rate limit

    def __post_init__(self):
        if not (np.isfinite(self.period) and self.period > 0.0):
            raise ValueError(f"drive_period must be a positive number of seconds, got "
                             f"{bounded(repr(self.period))}")
        if self.rate is not None:
            rate = np.array(self.rate, dtype=float)
            rate.flags.writeable = False
            object.__setattr__(self, "rate", rate)

    @classmethod
    def of(cls, order: JointOrder, compensates=(), period: float = PERIOD, rate=()) -> Drive:
        """From the parameters ``drive_compensates`` (names), ``drive_period`` (s) and
        ``effort_rate_limit`` (joints order; one value: every joint; empty: none); ValueError
        naming the parameter."""
        return cls(compensation_bits(compensates or []), float(period), rate_limits(order, rate))

    def step(self, n: int) -> np.ndarray:
        """The largest change of each joint's command in one drive cycle (chain order, inf:
        none): rate × period."""
        return np.full(n, np.inf) if self.rate is None else self.rate * self.period

    @property
    def limits_rate(self) -> bool:
        return self.rate is not None and bool(np.any(np.isfinite(self.rate)))


def rate_limits(order: JointOrder, rates) -> np.ndarray | None:
    """effort_rate_limit (joints order; one value: every joint; empty: none) in chain order, None
    for none; ValueError naming the parameter."""
    n = order.dof
    rates = list(rates or [])
    try:
        v = np.asarray(rates if len(rates) != 1 else rates * n, dtype=float)
    except (TypeError, ValueError):
        v = None
    if v is not None and v.size == 0:
        return None
    if v is None or v.shape != (n,) or np.any(np.isnan(v)) or np.any(v <= 0):
        raise ValueError(f"effort_rate_limit must be one value or {n} positive values (N m/s "
                         f"or N/s) in joints order {bounded(order.names)} (or empty for "
                         f"none), got {bounded(repr(rates))}")
    return order.to_chain(v)


@kernel
def drive_adds_into(P, compensates, q, out):
    """What a drive that adds gravity (``compensates`` has DRIVE_GRAVITY) puts on top of its
    command, by the model ``P``: g(q) into ``out`` (chain order); zero for none. (The friction
    it adds is none of ours: module docstring.)"""
    n = out.shape[0]
    if compensates & DRIVE_GRAVITY:
        zero = scratch(1, n)[0]
        for i in range(n):
            zero[i] = 0.0
        # rnea's one compiled version (the types its Direct call declares)
        rnea(P, as_declared(q), as_declared(zero), as_declared(zero), NO_WRENCH,
             as_declared(GRAVITY), as_declared(out))
    else:
        for i in range(n):
            out[i] = 0.0


@inline
def _target(P, compensates, q, tau, limit, index, adds, target):
    """target[k] = tau − what the drive adds, of chain joint index[k], clamped to ±limit (joints
    order; ``adds`` a work vector): -1 when tau or what the drive adds has NaN or inf (target
    then not written), else the number of joints clamped."""
    n = tau.shape[0]
    drive_adds_into(P, compensates, as_declared(q), as_declared(adds))   # its Direct version
    for i in range(n):
        if not (np.isfinite(tau[i]) and np.isfinite(adds[i])):
            return -1
    saturated = 0
    for k in range(n):
        i = index[k]
        target[k], hit = clamped(tau[i] - adds[i], limit[i])
        saturated += hit
    return saturated


@inline
def _within(target, step, index, lowest, highest, effort):
    """effort[k] = target[k] within ``step`` (chain joint index[k]; inf: none) of every command
    the drive may have held in the cycle before, whose least and greatest are lowest[k] and
    highest[k] (NaN: none sent yet): within [highest − step, lowest + step], the middle when a
    lowered limit leaves no such value. Returns the number of joints limited."""
    limited = 0
    for k in range(target.shape[0]):
        u, s, low, high = target[k], step[index[k]], highest[k] - step[index[k]], \
            lowest[k] + step[index[k]]
        if s < np.inf and np.isfinite(low) and np.isfinite(high):
            if low > high:
                u = 0.5 * (low + high)
                limited += 1
            elif u > high:
                u = high
                limited += 1
            elif u < low:
                u = low
                limited += 1
        effort[k] = u
    return limited


@kernel
def drive_command_into(P, compensates, q, tau, limit, step, index, previous, effort):
    """The command for the law's full torque ``tau`` (chain order, not changed), the drive's
    cycle following the one that held ``previous`` (the last command sent, joints order; NaN
    where none was):

    1. u = tau − drive_adds_into(P, compensates, q) (nothing taken off for 0);
    2. u clamped to ±``limit`` (chain order);
    3. u within ``previous`` ± ``step`` (chain order: rate × the drive's period; inf: none);

    into ``effort`` in joints order (``index``: the chain joint of each entry; ``effort`` may be
    ``previous`` itself). Returns -1 when tau or what the drive adds has NaN or inf (``effort``
    is then not written), else saturated + RATE_LIMITED · rate_limited, the numbers of joints
    each step changed. Bounded by the last command alone: one command per drive cycle; the
    controller's stage and the native entry point bound every command the drive may have held
    before (stage_command_into)."""
    n = tau.shape[0]
    work = scratch(2, n)
    saturated = _target(P, compensates, q, tau, limit, index, work[0], work[1])
    if saturated < 0:
        return -1
    return saturated + RATE_LIMITED * _within(work[1], step, index, previous, previous, effort)


@inline
def _windowed(target, step, t, period, index, window, effort, lowest, highest, previous):
    """_within of the commands the drive may have held in the cycle before one sent at ``t``:
    ``effort`` (the last one sent) and the rows of ``window`` (expiry, the least and the greatest
    of each joint's commands in joints order) still open at ``t``; then ``effort``'s old value
    enters the window, open until ``t`` + ``period``. Open means by more than SAME_CYCLE of a
    period: commands a period apart on a clock of epoch seconds (a quarter of a microsecond its
    resolution) are two cycles' commands. A row open past ``t`` + ``period`` was opened by a
    clock that went back since: it closes a period from now."""
    n = effort.shape[0]
    for k in range(n):
        lowest[k] = highest[k] = previous[k] = effort[k]
    latest, free = 0, -1
    for r in range(window.shape[0]):
        if window[r, 0] > t + period:
            window[r, 0] = t + period
        if window[r, 0] > t + SAME_CYCLE * period:
            for k in range(n):
                if window[r, 1 + k] < lowest[k]:
                    lowest[k] = window[r, 1 + k]
                if window[r, 1 + n + k] > highest[k]:
                    highest[k] = window[r, 1 + n + k]
        else:
            free = r
        if window[r, 0] > window[latest, 0]:
            latest = r
    limited = _within(target, step, index, lowest, highest, effort)
    if free >= 0:   # the replaced command, in a closed row; else merged into the latest one
        window[free, 0] = t + period
        for k in range(n):
            window[free, 1 + k] = window[free, 1 + n + k] = previous[k]
    else:
        window[latest, 0] = t + period
        for k in range(n):
            window[latest, 1 + k] = min(window[latest, 1 + k], previous[k])
            window[latest, 1 + n + k] = max(window[latest, 1 + n + k], previous[k])
    return limited


@kernel
def stage_command_into(P, compensates, q, tau, limit, step, t, period, index, window, target,
                       effort):
    """drive_command_into at time ``t`` (s) for a drive of ``period`` s, bounded by every command
    the drive may have held in the cycle before (``window``, ``effort``: _windowed), the command
    wanted (saturated, joints order) kept in ``target`` for the rest of a ramp. The same result
    code."""
    n = tau.shape[0]
    work = scratch(4, n)
    saturated = _target(P, compensates, q, tau, limit, index, work[0], target)
    if saturated < 0:
        return -1
    return saturated + RATE_LIMITED * _windowed(target, step, t, period, index, window, effort,
                                                work[1], work[2], work[3])


@kernel
def ramp_into(target, step, t, period, index, window, effort):
    """The next command toward ``target`` (joints order) at ``t``: _windowed. The number of
    joints still limited (0: the target is reached)."""
    n = target.shape[0]
    work = scratch(3, n)
    return _windowed(target, step, t, period, index, window, effort, work[0], work[1], work[2])


def saturated(code: int) -> int:
    """How many joints a command stage's ``code`` saturated."""
    return code % RATE_LIMITED


def rate_limited(code: int) -> int:
    """How many joints a command stage's ``code`` rate-limited."""
    return code // RATE_LIMITED


# the calls: the model's packed parameters, float64 vectors, an index vector, the window
DRIVE_ADDS = Direct(drive_adds_into, PARAMETERS, INT, VECTOR, VECTOR)
DRIVE_COMMAND = Direct(drive_command_into, PARAMETERS, INT, VECTOR, VECTOR, VECTOR, VECTOR,
                       INDEX_VECTOR, VECTOR, VECTOR)
STAGE_COMMAND = Direct(stage_command_into, PARAMETERS, INT, VECTOR, VECTOR, VECTOR, VECTOR, FLOAT,
                       FLOAT, INDEX_VECTOR, C_MATRIX, VECTOR, VECTOR)
RAMP = Direct(ramp_into, VECTOR, VECTOR, FLOAT, FLOAT, INDEX_VECTOR, C_MATRIX, VECTOR)


class CommandStage:
    """One controller's stage: its :class:`Drive`, its clock (s: the node's, simulated time
    included: the drive's cycles are on it) and the command buffer ``effort`` (joints order),
    which always holds the last command sent, the one the drive holds. Every command the
    controller sends is written by :meth:`send` or :meth:`resend` (a law's compiled short path
    writes ``effort`` itself while the stage is :attr:`plain`)."""

    def __init__(self, model, index: np.ndarray, effort: np.ndarray, drive: Drive,
                 clock: Callable[[], float]):
        self._params, self._index, self.effort, self._clock = model.params, index, effort, clock
        self._n = model.dof
        self.window = np.full((WINDOW_ROWS, 1 + 2 * model.dof), -np.inf)
        self.target = np.zeros(model.dof)   # the command wanted, joints order
        self.sent_at: float | None = None   # when the last command was sent (None: none yet)
        self.pending = False   # the last command fell short of its target: a ramp goes on
        #: called when a command leaves a ramp to go on (the watchdog's thread wakes to send it)
        self.on_ramp: Callable[[], None] = lambda: None
        self._adds = np.zeros(model.dof)
        self.drive = drive

    @property
    def drive(self) -> Drive:
        return self._drive

    @drive.setter
    def drive(self, drive: Drive) -> None:
        self._drive = drive
        self._step = drive.step(self._n)
        #: gravity to take off (the friction a drive adds is left out by the laws: Drive)
        self.compensates = drive.compensates & DRIVE_GRAVITY
        #: nothing to take off and no rate limit: the saturation alone (kept, as a cycle asks)
        self.plain = self.compensates == 0 and not drive.limits_rate

    def send(self, q, tau, limit, only: int = -1) -> int:
        """stage_command_into of ``tau`` (chain order, float64) at the state ``q``, now, into
        ``effort``; of what the drive adds, ``only`` the bits given are taken off (default all;
        0: none, for a command that is no joint torque, as ``zero``). Its code (-1: nothing
        sent)."""
        t = self._clock()
        code = STAGE_COMMAND.call(self._params, self.compensates & only, q, tau, limit,
                                  self._step, t, self._drive.period, self._index, self.window,
                                  self.target, self.effort)
        if code >= 0:
            pending = code >= RATE_LIMITED
            if pending and not self.pending:
                self.on_ramp()
            self.sent_at, self.pending = t, pending
        return code

    def left(self) -> None:
        """The last command left the node now (published, which may come a few milliseconds
        after it was computed: a thread waits for the GIL): the drive may hold the one before it
        until now, so that one's window row stays open a period from now, and a ramp's next step
        is due a period from now. Commands a drive receives are then a period apart in the time
        they left, not only in the time they were computed."""
        if self.sent_at is None or self.plain:
            return
        t = self._clock()
        if t > self.sent_at:
            newest = int(np.argmax(self.window[:, 0]))   # the row the last command opened
            self.window[newest, 0] = max(self.window[newest, 0], t + self._drive.period)
            self.sent_at = t

    def sent(self) -> None:
        """A command was written into ``effort`` without the stage (the plain short path): it
        is what the drive holds, and no ramp is left."""
        self.sent_at, self.pending = self._clock(), False

    def resend(self, paced: bool = False) -> bool:
        """The next step of a pending ramp toward ``target``, now: whether one was sent (not
        before a period has passed since the last command, to SAME_CYCLE of it). ``paced``: the
        caller waited a period on a clock of its own (the stage's may stand still: a simulated
        one whose /clock the waiting thread itself would take in); the step is sent as a period
        after the last at least."""
        due = self.due()
        if due is None or (due > SAME_CYCLE * self._drive.period and not paced):
            return False
        t = max(self._clock(), self.sent_at + self._drive.period)
        self.pending = RAMP.call(self.target, self._step, t, self._drive.period, self._index,
                                 self.window, self.effort) > 0
        self.sent_at = t
        return True

    def due(self) -> float | None:
        """Seconds until the next step of a pending ramp is due (<= 0: now), on the stage's
        clock; None when no ramp is pending."""
        if not self.pending:
            return None
        return self.sent_at + self._drive.period - self._clock()

    def adds(self, q) -> np.ndarray:
        """What the drive adds at q by the model, chain order (a buffer the next call
        overwrites; zero for a plain effort drive)."""
        if self.compensates:
            DRIVE_ADDS.call(self._params, self.compensates, q, self._adds)
        return self._adds


def compensation_bits(names) -> int:
    """``drive_compensates`` (a list of 'gravity', 'friction'; empty: none) as its bits;
    ValueError naming the option for anything else."""
    bits = 0
    for name in names:
        if name not in COMPENSATIONS:
            raise ValueError(f"drive_compensates: {name!r} is not one of {sorted(COMPENSATIONS)}")
        bits |= COMPENSATIONS[name]
    return bits


def warm_up() -> None:
    """Compile the calls now, or load them from numba's cache."""
    DRIVE_ADDS.ready()
    DRIVE_COMMAND.ready()
    STAGE_COMMAND.ready()
    RAMP.ready()
