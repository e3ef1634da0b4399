"""The computed-torque control loop without ROS: what the controller node does between a joint state
arriving and an effort command leaving, with its safety behaviour.

One :class:`ControlLoop` holds the latest valid state, the reference (a trajectory, a fixed
reference point or a hold), the control law and the limits. The node (an adapter) turns messages
into arrays, calls these methods and publishes what they return:

* :meth:`ControlLoop.set_state`, :meth:`~ControlLoop.set_trajectory`,
  :meth:`~ControlLoop.set_reference`, :meth:`~ControlLoop.hold`: an :class:`Accepted` or a
  :class:`Rejection` with its reason (the reference is then unchanged). A state stamped more than
  ``state_timeout`` before it arrives is refused (a stalled publisher's backlog: it would command
  from the past); one whose time is more than ``state_timeout`` before the last state's (a
  simulation reset) is taken, and the loop holds the measured position instead of its trajectory,
  as it does when states come back after going stale;
* :meth:`~ControlLoop.cycle`: a :class:`Command` — or a :class:`LawFailure` carrying the safe
  ``on_timeout`` command when the law raised or gave a non-finite or misshapen effort;
* :meth:`~ControlLoop.answer`: take_state then cycle in one step for the ordinary 1 kHz case,
  None (nothing changed) for any other;
* :meth:`~ControlLoop.watchdog`: a :class:`Stale` command while no valid state arrived for
  ``state_timeout`` (steady time), else None;
* :meth:`~ControlLoop.prepare` / :meth:`~ControlLoop.apply`: a reconfiguration validated whole,
  then applied whole.

Two injected clocks: ``clock`` (s) times the reference — the node's clock, simulated time included;
``steady`` (s) judges staleness and the statistics' windows, so a stopped /clock is still noticed.
Arrays are in chain order inside; efforts leave in the ``joints`` (message) order.
"""
from __future__ import annotations

import array
import copy
import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..plumbing.kernels import FLOAT64, NDARRAY
from ..plumbing.reasons import CountedEvent, bounded
from .joints import JointOrder
from .collision_guard import SETTINGS as COLLISION_SETTINGS
from .collision_guard import CollisionGuard, guard_from_settings
from .law import ControlLaw, load_law, takes_target
from .laws import GravityCompensation
from .succession import carry_over, drift
from .cycle_steps import (ANSWERED_STATE, DECLINED, LAST, NEWEST, NOW, TAKE_ORDINARY_STATE,
                          TAKE_STATE, TIMEOUT)
from .drive import DRIVE_GRAVITY, CommandStage, compensation_bits, rate_limited
from .drive import saturated as saturated_joints
from .drive import warm_up as warm_up_drive
from .cycle_timing import CAPACITY
from .cycle_steps import warm_up as warm_up_cycle_steps
from .trajectory import JointTrajectory, TrajectoryError, TrajectorySampler, limit_violation

OK, WARN, ERROR = 0, 1, 2  # the levels of diagnostic_msgs/DiagnosticStatus
ON_TIMEOUT = ("hold_gravity", "zero")
#: answer's ``state_out`` when nobody listens to the controller's state: nothing is written
UNHEARD = (False, np.empty(0), np.empty(0, np.intp), np.empty(0, np.int32))
#: Law parameters given per joint (or as a matrix) in `joints` order; laws take chain order.
PER_JOINT = ("kp", "kd", "ki", "integral_limit", "lambda", "dead_zone", "posture_kp", "posture_kd",
             "torque_rate_limit")
#: Settings of the loop itself (the rest of a configuration is the law's).
DRIVE_SETTINGS = ("drive_compensates", "effort_rate_limit")
LOOP_SETTINGS = ("control_law", "effort_limits", "on_timeout", *DRIVE_SETTINGS, *COLLISION_SETTINGS)
#: the loop's settings that are no law's
OWN = {"effort_limits", "on_timeout", *DRIVE_SETTINGS, *COLLISION_SETTINGS}
_KEEP = object()   # a Reconfiguration that leaves the collision guard as it is


@dataclasses.dataclass(frozen=True)
class Accepted:
    """An input was taken; ``note`` is worth an INFO line when not empty."""
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Rejection:
    """An input was refused and changed nothing; ``reason`` is bounded."""
    reason: str


@dataclasses.dataclass(frozen=True)
class Command:
    """Efforts to publish, in `joints` order."""
    effort: np.ndarray


@dataclasses.dataclass(frozen=True)
class LawFailure(Command):
    """The law gave no usable effort: ``effort`` is the on_timeout command instead."""
    reason: str


@dataclasses.dataclass(frozen=True)
class Stale(Command):
    """No valid state for state_timeout: ``effort`` is the on_timeout command; ``first`` marks
    the transition into staleness, ``reason`` says it."""
    first: bool
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class Reconfiguration:
    """A validated change, ready to apply (see :meth:`ControlLoop.prepare`)."""
    values: Mapping[str, Any]
    law: ControlLaw | None
    limit: np.ndarray | None
    guard: CollisionGuard | None | object = _KEEP
    rate: np.ndarray | None = None   # effort_rate_limit, chain order


@dataclasses.dataclass(frozen=True)
class PreparedTrajectory:
    """A trajectory checked and its reference built (:meth:`ControlLoop.prepare_trajectory`),
    from the reference whose pieces were ``base``."""
    trajectory: JointTrajectory
    sampler: TrajectorySampler
    base: tuple
    span: tuple[float, float]


class _Window:
    """One statistics window: each cycle's compute and cycle times (s) and the latency from a
    stamped state to its command (s; NaN for an unstamped one), kept in ring buffers as
    CycleTiming keeps its own: a cycle stores three numbers, the means and peaks are computed at
    report time, over the last ``CAPACITY`` cycles of a longer window."""

    def __init__(self, start: float):
        self._mask = CAPACITY - 1
        self._compute, self._cycle, self._latency = (array.array("d", bytes(8 * CAPACITY))
                                                     for _ in range(3))
        self.restart(start)

    def restart(self, start: float) -> None:
        self.start, self.cycles = start, 0

    def add(self, compute: float, cycle: float, latency: float) -> None:
        i = self.cycles & self._mask
        self._compute[i], self._cycle[i], self._latency[i] = compute, cycle, latency
        self.cycles += 1

    def summary(self) -> dict[str, float]:
        """The means and peaks, in the units a person reads."""
        kept = min(self.cycles, self._mask + 1)
        values = {}
        for label, column, scale in (("compute time (us)", self._compute, 1e6),
                                     ("cycle time (us)", self._cycle, 1e6),
                                     ("latency state stamp to command (ms)", self._latency, 1e3)):
            v = np.frombuffer(column, count=kept)
            v = v[~np.isnan(v)]
            values[f"{label} mean"] = float(v.mean()) * scale if v.size else 0.0
            values[f"{label} max"] = float(v.max()) * scale if v.size else 0.0
        return values


def _vector(values) -> np.ndarray:
    """``values`` as a float64 array (itself when it is one: a message's, read from its bytes)."""
    if values.__class__ is NDARRAY and values.dtype is FLOAT64:
        return values
    return np.asarray(values, dtype=np.float64)


def _count(values: np.ndarray) -> str:
    return str(values.size) if values.ndim == 1 else f"{values.size} (shape {values.shape})"


def _law_value(value):
    """A one-element list is one number for every joint."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


class ControlLoop:
    """See the module docstring. ``config`` holds ``control_law``, ``effort_limits`` (joints
    order; empty: the model's), ``on_timeout`` and the law's parameters (None: the law's
    default). ``effort_out``: the float64 vector every cycle's :class:`Command` holds, written in
    place (joints order; a node passes its serialized command's values). ``links``: the link each
    joint moves, ``shapes`` their collision shapes (``contact_location.link_shapes``): what a
    collision event names and where it locates the contact."""

    def __init__(self, model, order: JointOrder, config: Mapping[str, Any], state_timeout: float,
                 clock: Callable[[], float], steady: Callable[[], float] = time.monotonic,
                 log: Callable[[str], None] = lambda line: None,
                 law_class: Callable[[str], type[ControlLaw]] = load_law,
                 max_trajectory_points: int = 10_000, position_limit_margin: float = 0.0,
                 links=None, effort_out: np.ndarray | None = None, shapes=()):
        self.model, self.order = model, order
        self._links = tuple(links) if links else tuple(model.joint_names)  # each joint moves
        self._shapes = tuple(shapes)   # the links' collision shapes (contact_location)
        self.guard: CollisionGuard | None = None
        self.state_timeout = float(state_timeout)
        self.max_trajectory_points = int(max_trajectory_points)
        # a reference beyond the URDF's position limits by more than the margin is refused
        # (continuous joints have none)
        self._margin = position_limit_margin
        self._clock, self._steady, self._law_class, self._log = clock, steady, law_class, log
        n = model.dof
        # the efforts each cycle writes: a serialized command's values copy nothing to publish;
        # they hold the last command sent (the rate limit's previous one): none yet, 0
        self._effort = np.empty(n) if effort_out is None else effort_out
        self._effort[:] = 0.0
        self._law_effort = np.empty(n)   # the short path's own, while the stage does more
        self._stage = CommandStage(model, order.index, self._effort,
                                   compensation_bits(config.get("drive_compensates") or []))
        self.config: dict[str, Any] = {}
        self._law = None
        self.apply(self.prepare({"effort_limits": [], "on_timeout": ON_TIMEOUT[0],
                                 "effort_rate_limit": [], **config}))
        self._gravity = GravityCompensation(model, {"friction": False})
        self.rejected = CountedEvent("input rejected", log, steady)
        self.saturations = CountedEvent("effort saturated at the limit", log, steady)
        self.rate_limits = CountedEvent("effort rate-limited (effort_rate_limit)", log, steady)
        self.law_failures = 0
        self.enabled = True
        self.stale = False
        # the latest valid state (chain order); the reference starts when the first one arrives
        self.q, self.qd = np.zeros(n), np.zeros(n)
        self.stamp = 0.0  # its header stamp in seconds; 0 for an unstamped state
        self._latest: float | None = None  # its time (the stamp, else the clock at arrival)
        # answer's clocks (cycle_steps.take_ordinary_state, ordinary_dt): now, the newest time
        # taken (0: none), the last cycle's
        self._times = np.zeros(4)
        self._times[TIMEOUT] = self.state_timeout
        self.received: float | None = None  # steady time of the last valid state
        # the last cycle's (q_d, q̇_d, q̈_d); a trajectory's is sampled into the rows of _samples,
        # which the next cycle overwrites
        self.reference: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._samples = np.empty((3, n))
        self._sampled = tuple(self._samples)
        # called whenever a joint reference takes over from a task-space law's Cartesian target
        self.on_joint_reference: Callable[[], None] = lambda: None
        # called with the CollisionEvent in the cycle that detects a collision
        self.on_collision: Callable[[Any], None] = lambda event: None
        self.on_isolation: Callable[[Any], None] = lambda event: None   # the event, moved on
        self.collisions = 0
        self._applied = np.zeros(n)  # the torque the last cycle commanded (chain order)
        self.time = 0.0  # the last cycle's time on the reference clock
        self._sampler: TrajectorySampler | None = None
        #: (start, end) of the trajectory being followed on the reference clock; None when holding
        self.trajectory_span: tuple[float, float] | None = None
        self._setpoint = None  # (q, qd, qdd) from set_reference, used as is
        self._names: list[str] | None = None  # the last state's names and their match
        self._match: np.ndarray | Rejection = Rejection("no joint state yet")
        self._last_t: float | None = None
        self._timeout_effort = np.zeros(n)
        self._command = Command(self._effort)
        self._bind_law()
        warm_up_cycle_steps()  # compiled at setup: loaded now, not in the first cycle
        warm_up_drive()
        self._window = _Window(steady())
        self._reported = (0, 0, 0, 0)  # saturations, rejections, law failures, rate limits

    # ------------------------------------------------------------------ configuration
    @property
    def law(self) -> ControlLaw:
        return self._law

    def prepare(self, changes: Mapping[str, Any]) -> Reconfiguration:
        """Validate ``changes`` against the current configuration, all of them before any is
        applied: ValueError with the reason, or a :class:`Reconfiguration` for :meth:`apply`."""
        values = {**self.config, **changes}
        law = limit = None
        if "on_timeout" in changes and changes["on_timeout"] not in ON_TIMEOUT:
            raise ValueError(f"on_timeout must be one of {list(ON_TIMEOUT)}, "
                             f"got {bounded(repr(changes['on_timeout']))}")
        if "effort_limits" in changes:
            limit = self._effort_limits(changes["effort_limits"])
        rate = self._rate_limits(changes["effort_rate_limit"]) if "effort_rate_limit" in changes \
            else None
        if "drive_compensates" in changes:
            compensation_bits(changes["drive_compensates"] or [])   # ValueError naming the option
        if changes.keys() - OWN:
            law = self._make_law(values)
        guard = _KEEP
        friction = bool((law or self._law).params.get("friction", True))
        if changes.keys() & set(COLLISION_SETTINGS) or (
                law is not None and friction != bool(self._law and self._law.params.get("friction", True))):
            if self.guard is not None and self.guard.event is not None:
                raise ValueError("a collision stands: reset it (reset_collision) before changing "
                                 "the collision settings")
            guard = guard_from_settings(self.model, self.order, values, self._links, friction,
                                        self.state_timeout, self._shapes)
        return Reconfiguration(values, law, limit, guard, rate)

    def apply(self, change: Reconfiguration) -> None:
        self.config = dict(change.values)
        if change.law is not None:
            if self._law is not None:   # a gain change keeps what an adaptive law learnt
                carry_over(self._law, change.law)
            self._law = change.law
        if change.limit is not None:
            self._limit = change.limit
        if change.rate is not None:
            self._stage.rate = change.rate
        if change.guard is not _KEEP:
            self.guard = change.guard
        if self.guard is not None and (change.law is not None or change.guard is not _KEEP):
            self.guard.follow(self._law)  # an adaptive law's estimates are the observer's model
        if hasattr(self, "q"):  # not during construction: no state to hold yet
            self._set_timeout_effort()
            self._bind_law()

    def _bind_law(self) -> None:
        """The law's short and ordinary paths bound to the effort limits and the command, those
        it has. Unless the stage only saturates, the short path writes a buffer of its own (the
        command holds the last one sent, which the stage limits the next one's change from),
        and the ordinary path, which has no stage, is not taken."""
        law, plain = self._law, self._stage.plain
        bound = (self._limit, self.order.index, self._effort if plain else self._law_effort)
        self._short = None if law.saturating is None else law.saturating(*bound)
        self._ordinary = None if law.answering is None or not plain else law.answering(*bound)

    def _make_law(self, values) -> ControlLaw:
        name = values["control_law"]
        cls = self._law_class(name)  # UnknownLawError (a ValueError) lists the available ones
        try:
            # a parameter nobody set is None: the law's own default then applies
            return cls(self.model, {k: self._chain_order(k, _law_value(values[k]))
                                    for k in cls.parameters if values.get(k) is not None})
        except ValueError:
            raise
        except Exception as exc:  # a plugin's own failure must not take the node down
            raise ValueError(f"control law '{name}' failed to configure: {exc!r}") from exc

    def _chain_order(self, name, value):
        """A per-joint gain (n values) or matrix gain (n*n row-major) given in `joints` order, in
        the chain order the law works in; anything else (one number, a wrong size the law will
        refuse, a plugin's own parameter) as given."""
        if name not in PER_JOINT or not isinstance(value, list):
            return value
        n = self.model.dof
        try:
            v = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return value
        if v.shape == (n,):
            return self.order.to_chain(v).tolist()
        if v.shape == (n * n,) and n > 1:
            return self.order.matrix_to_chain(v.reshape(n, n)).ravel().tolist()
        return value

    def _effort_limits(self, limits) -> np.ndarray:
        if limits is None or len(limits) == 0:
            return self.model.effort_limit.copy()
        try:
            v = np.asarray(limits, dtype=float)
        except (TypeError, ValueError):
            v = None
        if v is None or v.shape != (self.model.dof,) or np.any(np.isnan(v)) or np.any(v <= 0):
            raise ValueError(f"effort_limits must be {self.model.dof} positive values in joints "
                             f"order {bounded(self.order.names)} (or empty for the URDF's), "
                             f"got {bounded(repr(list(limits)))}")
        return self.order.to_chain(v)

    def _rate_limits(self, rates) -> np.ndarray:
        """effort_rate_limit (joints order; one value: every joint; empty: none) in chain order."""
        n = self.model.dof
        try:
            v = np.asarray(rates if len(rates) != 1 else list(rates) * n, dtype=float)
        except (TypeError, ValueError):
            v = None
        if v is not None and v.size == 0:
            return np.full(n, np.inf)
        if v is None or v.shape != (n,) or np.any(np.isnan(v)) or np.any(v <= 0):
            raise ValueError(f"effort_rate_limit must be one value or {n} positive values (N m/s "
                             f"or N/s) in joints order {bounded(self.order.names)} (or empty for "
                             f"none), got {bounded(repr(list(rates)))}")
        return self.order.to_chain(v)

    # ------------------------------------------------------------------ inputs
    def set_state(self, names: Sequence[str], position, velocity,
                  stamp: float = 0.0, effort=None) -> Accepted | Rejection:
        """A measured joint state: names as the message gives them, position and velocity per
        name, its header stamp in seconds (0: unstamped), and the effort per name if the driver
        measures it (read only when the collision guard takes the measured torque)."""
        if names != self._names:
            self._names = list(names)
            try:
                self._match = self.order.find_in(self._names)
            except ValueError as exc:
                self._match = Rejection(str(exc))
        match = self._match
        if isinstance(match, Rejection):
            return self.reject(match.reason)
        n = len(names)
        position, velocity = _vector(position), _vector(velocity)
        if position.shape != (n,) or velocity.shape != (n,):  # TAKE_STATE reads by match
            return self.reject(
                f"joint state has {n} names, {_count(position)} positions and "
                f"{_count(velocity)} velocities (the controller needs a position and a velocity "
                "per name)")
        q, qd = np.empty(self.model.dof), np.empty(self.model.dof)  # new: readers may keep them
        if not TAKE_STATE.call(position, velocity, match, q, qd):
            return self.reject(f"joint state has NaN or inf: position {bounded(q)}, "
                                f"velocity {bounded(qd)}")
        if self.takes_effort:
            effort = None if effort is None else _vector(effort)
            effort = effort[match] if effort is not None and effort.shape == (n,) else None
        return self.take_state(q, qd, stamp, effort)

    def match_of(self, names: Sequence[str]) -> np.ndarray | None:
        """Where the chain's joints are among ``names`` (an index vector), to take a state of
        these names from its positions and velocities alone (:meth:`take_state`): when the last
        state given to set_state had these names and they named them all, and no state's effort
        is taken (:attr:`takes_effort`). Else None: set_state it."""
        if names != self._names or isinstance(self._match, Rejection) or self.takes_effort:
            return None
        return self._match

    @property
    def takes_effort(self) -> bool:
        """Whether a state's measured effort is used (the collision guard's observer takes it)."""
        return self.guard is not None and self.guard.measured

    def take_state(self, q: np.ndarray, qd: np.ndarray, stamp: float = 0.0,
                   effort: np.ndarray | None = None) -> Accepted | Rejection:
        """A measured state already picked into chain order and found finite (set_state's, or an
        adapter's that read it from the message's bytes at :meth:`match_of`): ``q`` and ``qd`` are
        kept, not copied; ``effort`` in chain order when :attr:`takes_effort`, else None."""
        now = self._clock()
        if stamp and now - stamp > self.state_timeout:   # a stalled publisher's backlog
            return self.reject(f"joint state stamped {now - stamp:.3g} s before it arrived, more "
                               f"than state_timeout {self.state_timeout:g} s: not used (its "
                               "publisher stalled, or its clock is not this node's)")
        t, before = stamp or now, self._latest
        back = before is not None and t < before - self.state_timeout
        times = self._times   # answer's: the newest time since time went back
        times[NEWEST] = t if back else max(times[NEWEST], t)
        self.q, self.qd, self.stamp, self._latest = q, qd, stamp, t
        self.received = self._steady()
        if self.takes_effort:
            self.guard.measure(effort)
        if self._sampler is None:  # hold the position it started in
            self._sampler = TrajectorySampler(self.model.joint_names, q, now,
                                              max_pieces=self.max_trajectory_points + 2)
        if self.stale or back:
            # the reference moved on while nothing was controlled (or its times are the old
            # clock's: a simulation reset) and the arm may have moved: resume by holding where
            # it is, with a fresh integral and no dt spanning the outage
            note = ("joint states valid again: control resumes" if self.stale else
                    f"time went back from {before:.6g} to {t:.6g} s (a "
                    "simulation reset?): the trajectory is dropped")
            self.stale = False
            self._hold_measured()
            return Accepted(f"{note}, holding the measured position")
        return Accepted()

    def admit_trajectory(self, joints: int, points: int) -> Rejection | None:
        """Refuse a trajectory by its numbers of joint names and points before any work is
        spent on it."""
        if joints > self.model.dof:
            return self.reject(f"trajectory: {joints} joint names, more than the {self.model.dof} "
                               f"joints {bounded(self.order.names)}")
        if points > self.max_trajectory_points:
            return self.reject(f"trajectory: {points} points, more than max_trajectory_points "
                               f"{self.max_trajectory_points}")
        return None

    def check_trajectory(self, trajectory: JointTrajectory, start: float | None = None) -> str:
        """Why ``trajectory`` cannot be followed (its joints, size, the position limits, an end
        in the past), or '' — without counting it or changing anything (a goal's validation)."""
        if self._sampler is None:
            return "trajectory received before the first valid joint state"
        if self.collided:
            return self._collided_reason()
        if trajectory.times.size > self.max_trajectory_points:
            return (f"trajectory: {trajectory.times.size} points, more than "
                    f"max_trajectory_points {self.max_trajectory_points}")
        try:
            outside = self._outside_limits(trajectory.reordered(self.model.joint_names).positions)
        except TrajectoryError as exc:
            return f"trajectory: {exc}"
        if outside:
            return f"trajectory: {outside}"
        end, now = (start or self._clock()) + float(trajectory.times[-1]), self._clock()
        if end < now:
            return f"trajectory: it ends in the past ({end:.6f} s, now {now:.6f} s)"
        return ""

    def set_trajectory(self, trajectory: JointTrajectory,
                       start: float | None = None) -> Accepted | Rejection:
        """Follow ``trajectory`` from ``start`` (its header stamp; None: now), JTC's rules.
        The reference may hold at most max_trajectory_points segments (queued ones included)."""
        result = None
        while result is None:
            result = self.take_trajectory(self.prepare_trajectory(trajectory, start))
        return result

    def prepare_trajectory(self, trajectory: JointTrajectory,
                           start: float | None = None) -> PreparedTrajectory | Rejection:
        """set_trajectory's work, which changes nothing: the checks and the reference's new
        segments (a 10,000-point trajectory: 30-100 ms), so that a caller sharing the loop with
        the cycle's thread takes it under the lock in microseconds (:meth:`take_trajectory`)."""
        reason = self.check_trajectory(trajectory, start)
        if reason:
            return self.reject(reason)
        now, sampler = self._clock(), copy.copy(self._sampler)   # _set_pieces replaces, never edits
        try:
            sampler.set_trajectory(trajectory.reordered(self.model.joint_names), now, start or None)
        except TrajectoryError as exc:
            return self.reject(f"trajectory: {exc}")
        begin = start or now
        return PreparedTrajectory(trajectory, sampler, self._sampler.pieces,
                                  (begin, begin + float(trajectory.times[-1])))

    def take_trajectory(self, prepared: PreparedTrajectory | Rejection
                        ) -> Accepted | Rejection | None:
        """Follow a trajectory :meth:`prepare_trajectory` made ready (its Rejection is returned as
        is); None, nothing changed, if the reference moved meanwhile (a hold): prepare it again."""
        if isinstance(prepared, Rejection):
            return prepared
        if self.collided:
            return self.reject(self._collided_reason())
        if self._sampler.pieces is not prepared.base:
            return None
        self._sampler, self.trajectory_span = prepared.sampler, prepared.span
        self._setpoint = None
        self._joint_reference_takes_over()
        return Accepted(f"trajectory of {prepared.trajectory.times.size} point(s) accepted, "
                        f"reference ends at t = {self._sampler.end_time:.3f} s")

    def set_reference(self, positions, velocities=(), accelerations=()) -> Accepted | Rejection:
        """One reference point in `joints` order, used as is until replaced (empty velocities
        and accelerations: zero)."""
        if self._sampler is None:
            return self.reject("reference received before the first valid joint state")
        if self.collided:
            return self.reject(self._collided_reason())
        n = self.model.dof
        parts = []
        for field, values in (("positions", positions), ("velocities", velocities),
                              ("accelerations", accelerations)):
            values = np.asarray(values, dtype=float)
            if values.size == 0 and field != "positions":
                values = np.zeros(n)
            if values.shape != (n,) or not np.all(np.isfinite(values)):
                return self.reject(f"reference {field} must be {n} finite values in joints "
                                    f"order {bounded(self.order.names)}, got "
                                    f"{bounded(values.ravel())}")
            parts.append(self.order.to_chain(values))
        outside = self._outside_limits(parts[0][None])
        if outside:
            return self.reject(f"reference: {outside}")
        self._setpoint = tuple(parts)
        self._sampler.hold(parts[0], self._clock())  # a later trajectory splices from here
        self.trajectory_span = None
        self._joint_reference_takes_over()
        return Accepted()

    def _outside_limits(self, positions: np.ndarray) -> str:
        """Why positions (points x joints, chain order) leave the position limits, or ''."""
        return limit_violation(positions, self.model.joint_names, self.model.lower,
                               self.model.upper, self._margin)

    def enable(self, on: bool) -> str:
        """Track the reference (on) or compensate gravity only (off); the answer to give."""
        if on and not self.enabled:
            if self.received is not None:
                self._hold_measured()  # the arm may have moved while only gravity was held
            self._law.reset()
        self.enabled = bool(on)
        return ("enabled: tracking the reference" if self.enabled
                else "disabled: gravity compensation only")

    def hold(self) -> Accepted | Rejection:
        """Hold the measured position, forgetting the law's integral (it was wound up against
        the old reference)."""
        if self.received is None:
            return Rejection("no valid joint state yet: nothing to hold")
        self._hold_measured()
        return Accepted(f"holding {np.round(self.order.from_chain(self.q), 6).tolist()}")

    def _hold_measured(self) -> None:
        self._setpoint = None
        self.trajectory_span = None
        self._sampler.hold(self.q, self._clock())
        self._law.reset()
        self._last_t = None
        self._joint_reference_takes_over()

    def _joint_reference_takes_over(self) -> None:
        """A trajectory, a reference or a hold replaces a task-space law's Cartesian target."""
        if takes_target(self._law):
            self._law.clear_target()
        self.on_joint_reference()

    def reject(self, reason: str) -> Rejection:
        """Count and log a refused input (also one the adapter refused before the loop saw it)."""
        rejection = Rejection(bounded(reason))
        self.rejected(rejection.reason)
        return rejection

    # ------------------------------------------------------------------ control cycle
    @property
    def active(self) -> bool:
        """A valid, fresh state is at hand: a cycle may run."""
        return self.received is not None and not self.stale

    def cycle(self) -> Command:
        """The effort for the latest state: the law's, saturated, or the safe command."""
        start = time.perf_counter()
        # the reference at the instant the state was measured (when stamped), so delivery delay
        # does not shift it against the measurement
        t = self.time = self.stamp or self._clock()
        dt = self._time_step(t)
        self.reference = self._reference_at(t)
        law = self._law if self.enabled else self._gravity
        if self.guard is not None:
            law = self._observed(t, law)
        return self._command_by(law, self.reference, dt, start)

    def answer(self, message: bytes, names: Sequence[str], names_bytes: np.ndarray,
               stamp: np.ndarray, state_out: tuple = UNHEARD) -> Command | None:
        """:meth:`take_state` then :meth:`cycle` in one step for the ordinary 1 kHz case: a
        serialized JointState (``message``) naming ``names`` as the last state given to set_state
        did (``names_bytes``: how they are serialized; see match_of), its positions and
        velocities finite, stamped after every state taken and fresh (its (sec, nanosec) into
        ``stamp``, int64), the law tracking a trajectory or a hold, the collision guard (if any)
        observing the command it sends. With a :class:`Command`, the cycle's state is written
        into ``state_out`` (``cycle_steps.STATE_OUT``: listened, a serialized controller
        state's doubles, where each field starts, its header stamp; nothing unless listened).
        The state is taken, the reference sampled, the law's step run and the state written in
        one compiled call where the law offers one (``ControlLaw``: each Python call and array
        crossing around the law costs microseconds there), else the state taken and the
        reference sampled in one (``cycle_steps.take_ordinary_state``). Returns None, having
        changed nothing, in any other case: take_state and cycle handle it then."""
        guard, match, times = self.guard, self.match_of(names), self._times
        if self.stale or not self.enabled or self._setpoint is not None or self._sampler is None \
                or match is None:
            return None
        times[NOW] = self._clock()
        q, qd = np.empty(self.model.dof), np.empty(self.model.dof)  # new: readers may keep them
        if guard is None and self._ordinary is not None:
            return self._answer_at_once(message, names_bytes, match, q, qd, stamp, state_out)
        if not TAKE_ORDINARY_STATE.call(message, names_bytes, match, q, qd, stamp, times,
                                        *self._sampler.pieces, self._samples):
            return None
        t = times[NEWEST]
        self.q, self.qd, self.stamp, self._latest, self.time = q, qd, t, t, t
        self.received = self._steady()
        start, dt = time.perf_counter(), self._time_step(t)
        self.reference = self._sampled
        law = self._law if guard is None else self._observed(t, self._law)   # may hold: resampled
        result = self._command_by(law, self.reference, dt, start)
        if result.__class__ is Command:
            ANSWERED_STATE.call(*state_out, stamp, self._samples, q, qd, self._effort,
                                self.order.index)
        return result

    def _time_step(self, t: float) -> float:
        """The cycle's time step to ``t`` from the last cycle's (0 after none since a hold, never
        negative), ``t`` kept as the last: the rule ``cycle_steps.ordinary_dt`` compiles."""
        last, self._last_t = self._last_t, t
        return 0.0 if last is None else max(t - last, 0.0)

    def _answer_at_once(self, message, names_bytes, match, q, qd, stamp,
                        state_out) -> Command | None:
        """answer by the law's ordinary path: the state taken, the reference sampled, the law's
        step and the state written in one compiled call (``ControlLaw``), and as little Python
        around it as the cycle's record needs (its compute time is the whole call's)."""
        times, last = self._times, self._last_t
        times[LAST] = math.nan if last is None else last
        start = time.perf_counter()
        clamped = self._ordinary(message, names_bytes, match, q, qd, stamp, times,
                                 *self._sampler.pieces, self._samples, *state_out)
        if clamped == DECLINED:
            return None
        t = times[NEWEST]
        self.q, self.qd, self.stamp, self._latest, self.time, self._last_t = q, qd, t, t, t, t
        self.received = self._steady()
        self.reference = self._sampled
        self._stage.sent_at = t
        if clamped:
            bad = self._judged(clamped, self._law.torque)
            if bad:
                return self._finished(self._law, bad, start)
        elapsed = time.perf_counter() - start
        self._window.add(elapsed, elapsed, times[NOW] + elapsed - t)
        return self._command

    def _observed(self, t: float, law) -> ControlLaw:
        """The momentum observer's step on the state: a detection counted and reacted to (a
        stop holds from now: the reference sampled again). The law to run: the guard while it
        reacts, else ``law``."""
        guard = self.guard
        if guard.observe(t, self.q, self.qd, self._applied):
            self._collision()
            self.reference = self._reference_at(t)
        elif guard.moved:
            self.on_isolation(guard.event)
        return guard if guard.reacting else law

    def _command_by(self, law, reference, dt: float, start: float) -> Command:
        """The command of the cycle begun at ``start``: the law's, saturated, or the safe one; the
        observer's torque for the next cycle kept, the cycle's statistics added."""
        return self._finished(law, self._run_law(law, reference, dt), start)

    def _finished(self, law, bad: str, start: float) -> Command:
        """_command_by after the law ran: ``bad`` says how it failed ('' when it did not)."""
        computed = time.perf_counter()
        result = self._failure(law, bad) if bad else self._command
        if self.guard is not None:   # the torque the observer integrates at the next cycle:
            self._applied[self.order.index] = self._effort   # the command and what the drive adds
            if self._stage.compensates:
                self._applied += self._stage.adds(self.q, self.qd)
        self._window.add(computed - start, time.perf_counter() - start,
                         self._clock() - self.stamp if self.stamp else math.nan)
        return result

    def _run_law(self, law, reference, dt: float) -> str:
        """The law's effort at ``reference``, saturated into the command (a saturation
        counted); why it gave none, or ''."""
        try:
            if law is self._law and self._short is not None and reference is self._sampled:
                clamped = self._short(self.q, self.qd, self._samples, dt)
                tau = law.torque
                if self._stage.plain:
                    self._stage.sent_at = self.time
                elif clamped >= 0:   # the law's torque through the whole stage
                    clamped = self._stage.send(self.q, self.qd, tau, self._limit, self.time)
            else:
                tau = law.compute(self.q, self.qd, *reference, dt)
                bad = self._unusable(tau)
                if bad:
                    return bad
                if tau.dtype is not FLOAT64:  # a law may compute in another type
                    tau = tau.astype(np.float64)
                # checked for NaN and inf, what the drive adds taken off, saturated, rate-limited
                # and put into joints order in one call
                clamped = self._stage.send(self.q, self.qd, tau, self._limit, self.time)
        except Exception as exc:  # a plugin's bug must not end the node  # noqa: BLE001
            return f"raised {exc!r}"
        return self._judged(clamped, tau)

    def _judged(self, clamped: int, tau: np.ndarray) -> str:
        """After the command stage on ``tau`` gave ``clamped`` (-1: NaN or inf in it; else
        ``drive.drive_command_into``'s count of saturated and rate-limited joints): why it is no
        command, or '' (a saturation and a rate limit counted)."""
        if clamped < 0:
            return f"returned NaN or inf {bounded(tau)}"
        if saturated_joints(clamped):
            self._count_saturation()
        if rate_limited(clamped):
            self.rate_limits("")
        return ""

    def _failure(self, law, bad: str) -> LawFailure:
        """The safe command in place of the law's, which failed: ``bad`` says how."""
        self.law_failures += 1
        reason = bounded(f"control law {type(law).__name__} {bad}: published "
                         f"{self.config['on_timeout']}")
        self.rejected(reason)
        self._set_timeout_effort()
        self._send_safe(self.time)
        return LawFailure(self._effort, reason)

    def _reference_at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reference point set, or the trajectory's at ``t`` in the rows of _samples."""
        if self._setpoint is not None:
            return self._setpoint
        self._sampler.sample_into(t, self._samples)
        return self._sampled

    def _unusable(self, tau) -> str:
        """Why the law's result is no effort vector of this arm ('' when it is; NaN and inf are
        found by the command stage)."""
        if not isinstance(tau, np.ndarray):
            return f"returned a {type(tau).__name__}, not a numpy array"
        if tau.shape != (self.model.dof,):
            return f"returned shape {tau.shape} instead of {(self.model.dof,)}"
        return ""

    def _count_saturation(self) -> None:
        """Counted each cycle; which joints, only for the line logged (every cycle while the
        arm pushes on something: the text cost some 25 µs a cycle in the running node)."""
        def which() -> str:
            over = np.flatnonzero(np.abs(self._effort) >= self.order.from_chain(self._limit))
            return f"joints {bounded([self.order.names[i] for i in over])}"
        self.saturations(which)

    def watchdog(self) -> Stale | None:
        """The safe command while the state is stale (no valid one for state_timeout), else
        None. Call it often: the command starts at most one call period late."""
        if self.received is None or self._steady() - self.received <= self.state_timeout:
            return None
        first = not self.stale
        if first:
            self.stale = True
            self._set_timeout_effort()
        self._send_safe(self._clock())
        return Stale(self._effort.copy(), first, f"no valid joint state for {self.state_timeout} s: "
                     f"publishing {self.config['on_timeout']}")

    def stale_in(self) -> float | None:
        """Seconds until the state goes stale (<= 0 once it has), None before the first valid
        state: how long a watchdog may sleep."""
        if self.received is None:
            return None
        return self.received + self.state_timeout - self._steady()

    def _set_timeout_effort(self) -> None:
        self._timeout_effort = self._safe_effort(self.config["on_timeout"])

    def _safe_effort(self, kind: str) -> np.ndarray:
        """A safe command's joint torque (chain order): hold_gravity = g(q) at the last valid
        state, zero = no effort."""
        if kind == "hold_gravity":
            return self.model.gravity_torques(self.q)
        return np.zeros(self.model.dof)

    def _send_safe(self, t: float, kind: str | None = None) -> int:
        """The ``kind`` safe command (the timeout's: ``_timeout_effort``) through the command
        stage into the command at ``t``: hold_gravity less the gravity the drive adds, zero as it
        is, saturated and rate-limited. The stage's code."""
        kind = kind or self.config["on_timeout"]
        tau = self._timeout_effort if kind == self.config["on_timeout"] else self._safe_effort(kind)
        # hold_gravity less the drive's gravity; its friction compensation is left as it is (at a
        # stale state's velocity, taking it off would push against a motion long over)
        code = self._stage.send(self.q, self.qd, tau, self._limit, t,
                                DRIVE_GRAVITY if kind == "hold_gravity" else 0)
        if rate_limited(code):
            self.rate_limits("")
        return code

    def safe_commands(self, kind: str, period: float = 1e-3, most: int = 1000) -> list[Command]:
        """The ``kind`` safe command in `joints` order (what a deactivated controller leaves),
        reached from the last command sent in steps ``period`` apart within effort_rate_limit:
        one command without a rate limit, at most ``most``."""
        if kind not in ON_TIMEOUT:
            raise ValueError(f"a safe command is one of {list(ON_TIMEOUT)}, got {kind!r}")
        self._set_timeout_effort()
        steps, t = [], self._clock()
        for _ in range(most):
            code = self._send_safe(t, kind)
            steps.append(Command(self._effort.copy()))
            if not rate_limited(code):
                break
            t += period
        return steps

    def activate(self) -> None:
        """Start commanding from the measured position: hold it, with a fresh integral (the
        first valid state starts the hold when none arrived yet); a new activation forgets a
        collision."""
        if self.guard is not None:
            self.guard.reset()
            self.guard.restart()
        if self.received is not None:
            self._hold_measured()

    # ------------------------------------------------------------------ collisions
    @property
    def collided(self) -> bool:
        """A collision was detected and not reset yet."""
        return self.guard is not None and self.guard.event is not None

    def _collided_reason(self) -> str:
        return (f"{self.guard.event.reason}; reaction {self.guard.reaction}: reset the collision "
                "(reset_collision) first")

    def _collision(self) -> None:
        """The cycle detected a collision: count it, react, tell the node."""
        self.collisions += 1
        event = self.guard.event
        self._log(f"{event.reason}; reaction: {self.guard.reaction}")
        if self.guard.reaction == "stop":
            self._hold_measured()   # where it was detected, with the law's gains
        self.on_collision(event)

    def reset_collision(self) -> Accepted | Rejection:
        """The collision is dealt with: hold where the arm is now (a floating arm has moved)."""
        if not self.collided:
            return Rejection("no collision to reset")
        self.guard.reset()
        self._hold_measured()
        return Accepted(f"collision reset: holding {np.round(self.order.from_chain(self.q), 6).tolist()}")

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The reference at time ``t`` in `joints` order, if a trajectory being followed covers
        ``t`` (JTC's query_state), else None."""
        span = self.trajectory_span
        if span is None or not span[0] <= t <= span[1]:
            return None
        return tuple(self.order.from_chain(v) for v in self._sampler.sample(t))

    def describe(self) -> str:
        """What runs, for a log line: the law, the joints and the model's link masses."""
        masses = ", ".join(f"{link.mass:.4g}" for link in self.model.links)
        drive = self.config.get("drive_compensates") or []
        return (f"{type(self._law).__name__} on joints {list(self.order.names)}; link masses "
                f"[{masses}] kg; the drive adds {', '.join(drive) or 'nothing'}")

    # ------------------------------------------------------------------ statistics
    def report(self) -> tuple[int, str, dict[str, Any]]:
        """(level, message, values) of the window since the last report; starts a new one."""
        now, w = self._steady(), self._window
        elapsed, cycles, timings = now - w.start, w.cycles, w.summary()
        w.restart(now)
        counts = (self.saturations.count, self.rejected.count, self.law_failures,
                  self.rate_limits.count)
        saturated, rejected, failed, limited = (c - r for c, r in zip(counts, self._reported))
        self._reported = counts
        age = None if self.received is None else now - self.received
        on_timeout = self.config["on_timeout"]
        values = {
            "enabled": self.enabled,
            "control law": type(self._law).__name__,
            "achieved rate (Hz)": cycles / elapsed if elapsed > 0 else 0.0,
            **timings,
            "saturations (window)": saturated,
            "saturations (total)": self.saturations.count,
            "rate limits (window)": limited,
            "rate limits (total)": self.rate_limits.count,
            "rejected inputs (window)": rejected,
            "rejected inputs (total)": self.rejected.count,
            "last rejection": self.rejected.last_reason,
            "control law failures (window)": failed,
            "control law failures (total)": self.law_failures,
            "stale state": self.stale,
            "state age (s)": -1.0 if age is None else age,
            **drift(self._law),
        }
        if self.guard is not None:
            values["collisions (total)"] = self.collisions
            values["collision"] = self.guard.event.reason if self.collided else "none"
            values["collision reaction"] = self.guard.reaction
            values["observer torque"] = (f"measured effort ({self.guard.unmeasured} states "
                                         "without one: the command stood in)"
                                         if self.guard.measured else "the command sent")
        if age is None:
            return WARN, "waiting for the first valid joint state", values
        if self.collided:
            return ERROR, self._collided_reason(), values
        if self.stale:
            return ERROR, f"joint state stale: publishing {on_timeout}", values
        if failed:
            return ERROR, (f"control law failed {failed} time(s), publishing {on_timeout}: "
                           f"{self.rejected.last_reason}"), values
        if rejected:
            return WARN, f"inputs rejected: {self.rejected.last_reason}", values
        if saturated:
            return WARN, "effort saturated", values
        if limited:
            return WARN, "effort rate-limited", values
        return OK, "tracking" if self.enabled else "disabled: gravity compensation", values
