"""The computed-torque control loop without ROS: what the controller node does between a joint state
arriving and an effort command leaving, with its safety behaviour.

:class:`ControlLoop` is the node's façade over one module per part: a state's names, arrays and
stamp judged (``measurement``), the reference followed (``reference``: a trajectory, a set point,
a hold), the law's effort to the command (``command_path``, through the drive's command stage,
``drive``), the commands that stand in for a law's (``safe_commands``), a change of configuration
validated whole (``configuration``) and /diagnostics' view (``loop_report``). The node turns
messages into arrays, calls its methods and publishes what they return (``outcomes``): an input
is :class:`Accepted` or a :class:`Rejection` with its reason, and changes nothing when refused; a
cycle gives a :class:`Command`, or a :class:`LawFailure` carrying the safe ``on_timeout`` command;
the watchdog a :class:`Stale` command while no valid state arrived for ``state_timeout``.

Two injected clocks: ``clock`` (s) times the reference — the node's clock, simulated time included;
``steady`` (s) judges staleness and the statistics' windows, so a stopped /clock is still noticed.
Arrays are in chain order inside; efforts leave in the ``joints`` (message) order.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..plumbing.reasons import CountedEvent, bounded
from .collision_guard import CollisionGuard
from .command_path import CommandPath
from .configuration import LOOP_SETTINGS  # noqa: F401  (the node's)
from .configuration import KEEP, Reconfiguration, Settings
from .cycle_steps import (AHEAD, ANSWERED_STATE, DECLINED, LAST, NEWEST, NOW,
                          TAKE_ORDINARY_STATE, TIMEOUT)
from .cycle_steps import warm_up as warm_up_cycle_steps
from .drive import CommandStage, Drive
from .drive import warm_up as warm_up_drive
from .joints import JointOrder
from .law import ControlLaw, load_law, takes_target
from .laws import GravityCompensation
from .loop_report import LoopReport, _Window  # noqa: F401  (the tests' window)
from .measurement import Measurement
from .outcomes import (ERROR, OK, WARN, Accepted, Command, Dropped, LawFailure,  # noqa: F401
                       Rejection, Stale)
from .reference import PreparedTrajectory, Reference
from .safe_commands import ON_TIMEOUT, SafeCommands
from .succession import carry_over
from .trajectory import JointTrajectory

#: answer's ``state_out`` when nobody listens to the controller's state: nothing is written
UNHEARD = (False, np.empty(0), np.empty(0, np.intp), np.empty(0, np.int32))
FUTURE_STAMP_TOLERANCE = 0.05   # s: future_stamp_tolerance's default
DROPPED = Dropped("joint state older than the newest taken: dropped")


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
                 links=None, effort_out: np.ndarray | None = None, shapes=(),
                 drive_holds: np.ndarray | None = None,
                 future_stamp_tolerance: float = FUTURE_STAMP_TOLERANCE):
        self.model, self.order = model, order
        links = tuple(links) if links else tuple(model.joint_names)  # each joint moves
        self.guard: CollisionGuard | None = None
        self.state_timeout = float(state_timeout)
        self._clock, self._steady, self._log = clock, steady, log
        n = model.dof
        self._settings = Settings(model, order, law_class, links, tuple(shapes), self.state_timeout)
        self._measurement = Measurement(model, order, self.state_timeout,
                                        float(future_stamp_tolerance))
        self._ref = Reference(model, order, clock, max_trajectory_points, position_limit_margin)
        # the efforts each cycle writes: a serialized command's values copy nothing to publish;
        # they hold the last command sent, the one the drive holds (the rate limit's previous
        # one): ``drive_holds`` (joints order: a controller configured again), else none yet, 0
        self._effort = np.empty(n) if effort_out is None else effort_out
        self._effort[:] = 0.0 if drive_holds is None else drive_holds
        # answer's clocks (cycle_steps.take_ordinary_state, ordinary_dt): now, the newest time
        # taken (0: none), state_timeout, the last cycle's, how far ahead a stamp may be
        self._times = np.zeros(5)
        self._times[TIMEOUT], self._times[AHEAD] = self.state_timeout, future_stamp_tolerance
        self._stage = CommandStage(model, order.index, self._effort, Drive(), self._drive_time)
        self._path = CommandPath(model, order, self._stage, log, steady)
        self.saturations, self.rate_limits = self._path.saturations, self._path.rate_limits
        self._safe = SafeCommands(model, self._stage, lambda: self.rate_limits(""))
        self.config: dict[str, Any] = {}
        self._law = None
        self.apply(self.prepare({"effort_limits": [], "on_timeout": ON_TIMEOUT[0],
                                 "drive_compensates": [], "drive_period": Drive.period,
                                 "effort_rate_limit": [], **config}))
        self._gravity = GravityCompensation(model, {"friction": False})
        self.rejected = CountedEvent("input rejected", log, steady)
        self.law_failures = 0
        self.enabled = True
        self.stale = False
        # the latest valid state (chain order); the reference starts when the first one arrives
        self.q, self.qd = np.zeros(n), np.zeros(n)
        self.stamp = 0.0  # its header stamp in seconds; 0 for an unstamped state
        self._latest: float | None = None  # its time (the stamp, else the clock at arrival)
        self.received: float | None = None  # steady time of the last valid state
        # the last cycle's (q_d, q̇_d, q̈_d): the reference's samples, or its set point
        self.reference: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        # called whenever a joint reference takes over from a task-space law's Cartesian target
        self.on_joint_reference: Callable[[], None] = lambda: None
        # called with the CollisionEvent in the cycle that detects a collision
        self.on_collision: Callable[[Any], None] = lambda event: None
        self.on_isolation: Callable[[Any], None] = lambda event: None   # the event, moved on
        self.collisions = 0
        self._applied = np.zeros(n)  # the torque the last cycle commanded (chain order)
        self.time = 0.0  # the last cycle's time on the reference clock
        self._last_t: float | None = None
        self._command = Command(self._effort)
        self._path.bind(self._law)
        warm_up_cycle_steps()  # compiled at setup: loaded now, not in the first cycle
        warm_up_drive()
        self._report = LoopReport(steady, self._measurement)
        self._window = self._report.window

    def _drive_time(self) -> float:
        """The command stage's time (the drive's cycles are on it): the clock, or the newest
        state's time where the clock lags it. A command answering a state is sent no earlier than
        that state: a simulated clock read on the cycle's thread lags the states it answers while
        the executor's thread has not yet taken their /clock in, and on the lagging clock a ramp's
        step went out a drive cycle early, beside the cycle's command (two steps in one cycle)."""
        clock, newest = self._clock(), self._times[NEWEST]
        return newest if newest > clock else clock

    # ------------------------------------------------------------------ configuration
    @property
    def law(self) -> ControlLaw:
        return self._law

    @property
    def max_trajectory_points(self) -> int:
        return self._ref.max_points

    @property
    def trajectory_span(self) -> tuple[float, float] | None:
        """(start, end) of the trajectory being followed on the reference clock; None when
        holding."""
        return self._ref.span

    @property
    def _sampler(self):
        return self._ref.sampler

    def prepare(self, changes: Mapping[str, Any]) -> Reconfiguration:
        """Validate ``changes`` against the current configuration, all of them before any is
        applied: ValueError with the reason, or a :class:`Reconfiguration` for :meth:`apply`."""
        return self._settings.prepare(self.config, self._law, self.guard, changes)

    def apply(self, change: Reconfiguration) -> None:
        self.config = dict(change.values)
        if change.law is not None:
            if self._law is not None:   # a gain change keeps what an adaptive law learnt
                carry_over(self._law, change.law)
            self._law = change.law
        if change.limit is not None:
            self._path.limit = change.limit
        if change.drive is not None:
            self._stage.drive = change.drive
        if change.guard is not KEEP:
            self.guard = change.guard
        if self.guard is not None and (change.law is not None or change.guard is not KEEP):
            self.guard.follow(self._law)  # an adaptive law's estimates are the observer's model
        if hasattr(self, "q"):  # not during construction: no state to hold yet
            self._safe.begin(self.config["on_timeout"], self.q)
            self._path.bind(self._law)

    # ------------------------------------------------------------------ inputs
    def set_state(self, names: Sequence[str], position, velocity,
                  stamp: float = 0.0, effort=None) -> Accepted | Rejection:
        """A measured joint state: names as the message gives them, position and velocity per
        name, its header stamp in seconds (0: unstamped), and the effort per name if the driver
        measures it (read only when the collision guard takes the measured torque)."""
        read = self._measurement.read(names, position, velocity, effort, self.takes_effort)
        if isinstance(read, str):
            return self.reject(read)
        return self.take_state(*read[:2], stamp, read[2])

    def match_of(self, names: Sequence[str]) -> np.ndarray | None:
        """Where the chain's joints are among ``names`` (an index vector), to take a state of
        these names from its positions and velocities alone (:meth:`take_state`): when the last
        state given to set_state had these names and they named them all, and no state's effort
        is taken (:attr:`takes_effort`). Else None: set_state it."""
        return self._measurement.match_of(names, self.takes_effort)

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
        refusal = self._measurement.refusal(stamp, now)
        if refusal:
            return self.reject(refusal)
        t, before = stamp or now, self._latest
        back = before is not None and t < before - self.state_timeout
        times = self._times   # answer's: the newest time since time went back
        if stamp and not back and t < times[NEWEST]:   # late: a newer one was taken already
            self._measurement.dropped += 1
            return DROPPED
        times[NEWEST] = t if back else max(times[NEWEST], t)
        self.q, self.qd, self.stamp, self._latest = q, qd, stamp, t
        self.received = self._steady()
        if self.takes_effort:
            self.guard.measure(effort)
        self._ref.start(q, now)  # hold the position it started in
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
        reason = self._ref.admit(joints, points)
        return self.reject(reason) if reason else None

    def check_trajectory(self, trajectory: JointTrajectory, start: float | None = None) -> str:
        """Why ``trajectory`` cannot be followed (its joints, size, the position limits, an end
        in the past), or '' — without counting it or changing anything (a goal's validation)."""
        if self._ref.sampler is None:
            return "trajectory received before the first valid joint state"
        if self.collided:
            return self.collided_reason()
        return self._ref.check(trajectory, start)

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
        prepared = self.check_trajectory(trajectory, start) or self._ref.prepare(trajectory, start)
        return self.reject(prepared) if isinstance(prepared, str) else prepared

    def take_trajectory(self, prepared: PreparedTrajectory | Rejection
                        ) -> Accepted | Rejection | None:
        """Follow a trajectory :meth:`prepare_trajectory` made ready (its Rejection is returned as
        is); None, nothing changed, if the reference moved meanwhile (a hold): prepare it again."""
        if isinstance(prepared, Rejection):
            return prepared
        if self.collided:
            return self.reject(self.collided_reason())
        if not self._ref.take(prepared):
            return None
        self._joint_reference_takes_over()
        return Accepted(f"trajectory of {prepared.trajectory.times.size} point(s) accepted, "
                        f"reference ends at t = {self._ref.sampler.end_time:.3f} s")

    def set_reference(self, positions, velocities=(), accelerations=()) -> Accepted | Rejection:
        """One reference point in `joints` order, used as is until replaced (empty velocities
        and accelerations: zero)."""
        if self._ref.sampler is None:
            return self.reject("reference received before the first valid joint state")
        if self.collided:
            return self.reject(self.collided_reason())
        reason = self._ref.set_point(positions, velocities, accelerations)
        if reason:
            return self.reject(reason)
        self._joint_reference_takes_over()
        return Accepted()

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
        self._ref.hold(self.q)
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
        self.reference = self._ref.at(t)
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
        guard, match, times, ref = self.guard, self.match_of(names), self._times, self._ref
        if self.stale or not self.enabled or ref.setpoint is not None or ref.sampler is None \
                or match is None:
            return None
        times[NOW] = self._clock()
        q, qd = np.empty(self.model.dof), np.empty(self.model.dof)  # new: readers may keep them
        if guard is None and self._path.ordinary is not None:
            return self._answer_at_once(message, names_bytes, match, q, qd, stamp, state_out)
        if not TAKE_ORDINARY_STATE.call(message, names_bytes, match, q, qd, stamp, times,
                                        *ref.sampler.pieces, ref.samples):
            return None
        t = times[NEWEST]
        self.q, self.qd, self.stamp, self._latest, self.time = q, qd, t, t, t
        self.received = self._steady()
        self._measurement.offset(t - times[NOW])
        start, dt = time.perf_counter(), self._time_step(t)
        self.reference = ref.sampled
        law = self._law if guard is None else self._observed(t, self._law)   # may hold: resampled
        result = self._command_by(law, self.reference, dt, start)
        if result.__class__ is Command:
            ANSWERED_STATE.call(*state_out, stamp, ref.samples, q, qd, self._effort,
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
        times, last, ref = self._times, self._last_t, self._ref
        times[LAST] = math.nan if last is None else last
        start = time.perf_counter()
        clamped = self._path.ordinary(message, names_bytes, match, q, qd, stamp, times,
                                      *ref.sampler.pieces, ref.samples, *state_out)
        if clamped == DECLINED:
            return None
        t = times[NEWEST]
        self.q, self.qd, self.stamp, self._latest, self.time, self._last_t = q, qd, t, t, t, t
        self.received = self._steady()
        self._measurement.offset(t - times[NOW])
        self.reference = ref.sampled
        self._stage.pending = False   # a plain stage's: no ramp
        if clamped:
            bad = self._path.judged(clamped, self._law.torque)
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
            self.reference = self._ref.at(t)
        elif guard.moved:
            self.on_isolation(guard.event)
        return guard if guard.reacting else law

    def _command_by(self, law, reference, dt: float, start: float) -> Command:
        """The command of the cycle begun at ``start``: the law's, saturated, or the safe one; the
        observer's torque for the next cycle kept, the cycle's statistics added."""
        short = law is self._law and self._path.short is not None and reference is self._ref.sampled
        bad = self._path.run(law, short, self.q, self.qd, reference, self._ref.samples, dt)
        return self._finished(law, bad, start)

    def _finished(self, law, bad: str, start: float) -> Command:
        """_command_by after the law ran: ``bad`` says how it failed ('' when it did not)."""
        computed = time.perf_counter()
        result = self._failure(law, bad) if bad else self._command
        if self.guard is not None:   # the torque the observer integrates at the next cycle:
            self._applied[self.order.index] = self._effort   # the command and what the drive adds
            if self._stage.compensates:
                self._applied += self._stage.adds(self.q)
        self._window.add(computed - start, time.perf_counter() - start,
                         self._clock() - self.stamp if self.stamp else math.nan)
        return result

    def _failure(self, law, bad: str) -> LawFailure:
        """The safe command in place of the law's, which failed: ``bad`` says how."""
        self.law_failures += 1
        reason = bounded(f"control law {type(law).__name__} {bad}: published "
                         f"{self.config['on_timeout']}")
        self.rejected(reason)
        self._safe.begin(self.config["on_timeout"], self.q)
        self._safe.send(self.q, self._path.limit)
        return LawFailure(self._effort, reason)

    # ------------------------------------------------------------------ safe commands
    def watchdog(self) -> Stale | None:
        """The safe command while the state is stale (no valid one for state_timeout), else
        None. Call it often: the command starts at most one call period late."""
        if self.received is None or self._steady() - self.received <= self.state_timeout:
            return None
        first = not self.stale
        if first:
            self.stale = True
            self._safe.begin(self.config["on_timeout"], self.q)
        self._safe.send(self.q, self._path.limit)
        return Stale(self._effort.copy(), first, f"no valid joint state for {self.state_timeout} s: "
                     f"publishing {self.config['on_timeout']}")

    def stale_in(self) -> float | None:
        """Seconds until the state goes stale (<= 0 once it has), None before the first valid
        state: how long a watchdog may sleep."""
        if self.received is None:
            return None
        return self.received + self.state_timeout - self._steady()

    def deactivate(self, kind: str) -> Command | None:
        """The first command toward the ``kind`` safe command (``on_deactivate``: what a
        deactivated controller leaves, `joints` order), within the drive's rate limit; the rest
        of the way, one step a drive period: :meth:`ramp`. None before any valid state: the drive
        keeps what it has (hold_gravity needs a measured position)."""
        if kind not in ON_TIMEOUT:
            raise ValueError(f"a safe command is one of {list(ON_TIMEOUT)}, got {kind!r}")
        if self.received is None:
            return None
        self._safe.begin(self.config["on_timeout"], self.q)
        self._safe.send(self.q, self._path.limit, kind)
        return Command(self._effort.copy())

    def ramp(self, paced: bool = False) -> Command | None:
        """The next step toward a command the drive's rate limit kept the last one short of (a
        deactivation, a stale hold, a lowered effort limit, a law's step), sent a drive period
        after the last command; None when no step is due (:meth:`ramp_due`). The one place a
        ramp goes on between cycles: the watchdog's thread and the deactivation call it.
        ``paced``: the caller waited the period on its own clock (``CommandStage.resend``)."""
        if not self._stage.resend(paced):
            return None
        if self._stage.pending:
            self.rate_limits("")
        return Command(self._effort.copy())

    def command_left(self) -> None:
        """The node published the last command now (``CommandStage.left``)."""
        self._stage.left()

    @property
    def on_ramp(self) -> Callable[[], None]:
        """Called (under the caller's lock) when a command leaves a ramp to go on: whoever calls
        :meth:`ramp` wakes to send its next step a drive period later."""
        return self._stage.on_ramp

    @on_ramp.setter
    def on_ramp(self, wake: Callable[[], None]) -> None:
        self._stage.on_ramp = wake

    def ramp_due(self) -> float | None:
        """Seconds until :meth:`ramp` has a step to send (<= 0: now), on the loop's clock; None
        when no ramp goes on."""
        return self._stage.due()

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

    def collided_reason(self) -> str:
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

    # ------------------------------------------------------------------ what it says
    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The reference at time ``t`` in `joints` order, if a trajectory being followed covers
        ``t`` (JTC's query_state), else None."""
        return self._ref.sample(t)

    def describe(self) -> str:
        """What runs, for a log line: the law, the joints and the model's link masses."""
        masses = ", ".join(f"{link.mass:.4g}" for link in self.model.links)
        drive = self.config.get("drive_compensates") or []
        return (f"{type(self._law).__name__} on joints {list(self.order.names)}; link masses "
                f"[{masses}] kg; the drive adds {', '.join(drive) or 'nothing'}")

    def report(self) -> tuple[int, str, dict[str, Any]]:
        """(level, message, values) of the window since the last report; starts a new one."""
        return self._report.report(self)
