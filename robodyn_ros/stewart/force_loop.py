"""The stewart_platform node's logic without ROS: the commanded target, its checks, and the policy
that publishes actuator forces or withholds them.

Two modes (``control``): ``feedforward`` gives the inverse dynamics of the target state itself;
``computed_torque`` closes the loop on measured leg lengths and rates (tracking.py): the inverse
dynamics at the measured state with the target's acceleration corrected by Kv e' + Kp e. Without a
measurement fresher than ``measurement_timeout`` seconds it publishes nothing and says why.

A ForceLoop holds one target (a setpoint, a pose reached from six leg lengths, or a trajectory
sampled on an injected clock), the external wrench and the limits. Every input is validated whole
before it changes anything: a malformed one is rejected (WARN), a well-formed target with a point
beyond the limits (singular, condition number, actuator force) is refused (ERROR); either way the
current target stays. ``evaluate()`` gives the forces for the present instant, or says why none
may be published: forces beyond the limits are withheld, never clipped (clipped forces would not
balance the platform and would look valid), and publishing resumes by itself once the target is
back within the limits.
"""
from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Mapping, Sequence
from numbers import Real

import numpy as np

from ..plumbing.reasons import bounded
from ..spatial import rotations
from .dynamics import InverseDynamicsResult
from .kinematics import ForwardKinematicsError
from .model import StewartPlatform
from ..spatial.trajectory import PoseState, PoseTrajectory, SetpointError, check_poses
from .tracking import EstimateError, Gains, commanded_acceleration, estimate, pose_error

LEG_NAMES = tuple(f"leg{i}" for i in range(1, 7))
# N and N.m: the largest external force and moment accepted, the largest force_limit the node takes.
# Below it the forces a wrench causes stay finite (H^-1 grows them by at most condition_limit
# <= 1e12 over the lever arms); a wrench of 1e308 overflowed them, and every later target was
# then refused as if singular.
MAX_WRENCH = 1.0e9
CONTROL_MODES = ("feedforward", "computed_torque")
_ZERO = np.zeros(3)


def check_states(sp, positions, quaternions, twists_and_accels, quaternion_tolerance):
    """``check_poses``, then the leg lengths against ``sp.leg_length_limits`` (when set)."""
    quaternions = check_poses(positions, quaternions, twists_and_accels, quaternion_tolerance)
    if sp.leg_length_limits is not None:
        lo, hi = sp.leg_length_limits
        L = sp.inverse_kinematics(positions, rotations.quaternion_matrix(quaternions)).lengths
        out = np.any((L < lo) | (L > hi), axis=1)
        if out.any():
            i = int(np.argmax(out))
            raise SetpointError(f"point {i}: leg lengths {np.round(L[i], 4).tolist()} outside "
                                f"[{lo}, {hi}] m")
    return quaternions


class Level(enum.IntEnum):
    """Severity, numbered as diagnostic_msgs/DiagnosticStatus numbers it."""
    OK = 0
    WARN = 1
    ERROR = 2


@dataclasses.dataclass(frozen=True)
class Limits:
    """What may be published: the condition number of H above which diagnostics warn
    (condition_warning) and above which no forces are published (condition_limit), the largest
    |actuator force| (force_limit, N; 0 takes the platform's own limit, or none), and the largest
    accepted | |q| - 1 | of an input orientation. Built validated: ValueError says what is wrong."""

    condition_warning: float
    condition_limit: float
    force_limit: float
    quaternion_tolerance: float

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
                raise ValueError(f"{f.name} must be a finite number, got {bounded(repr(value))}")
        if self.condition_warning < 1.0 or self.condition_limit < 1.0:
            raise ValueError("condition numbers are at least 1: condition_warning "
                             f"{self.condition_warning:g}, condition_limit "
                             f"{self.condition_limit:g}")
        if self.condition_warning > self.condition_limit:
            raise ValueError(f"condition_warning {self.condition_warning:g} > condition_limit "
                             f"{self.condition_limit:g}")
        if self.force_limit < 0.0:
            raise ValueError(f"force_limit {self.force_limit:g} N is negative")
        if not 0.0 <= self.quaternion_tolerance < 1.0:
            raise ValueError(f"quaternion_tolerance {self.quaternion_tolerance:g} outside [0, 1)")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, changes: Mapping[str, float]) -> "Limits":
        """These limits with ``changes`` applied, validated together: nothing is half-applied."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise ValueError(f"unknown limits {bounded(unknown)}; known: {list(self.names())}")
        return dataclasses.replace(self, **changes)


@dataclasses.dataclass(frozen=True)
class Rejection:
    """An input that was not taken, and why. WARN: malformed. ERROR: a well-formed target refused
    because a point of it lies beyond the limits. The current target is unchanged either way."""

    what: str     # "setpoint", "leg setpoint", "trajectory", "external wrench", "leg measurement"
    reason: str   # bounded (robodyn_ros.plumbing.reasons)
    level: Level

    def __str__(self):
        return f"{self.what} rejected: {self.reason}"


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """The state of the loop at one instant as /diagnostics shows it."""

    level: Level
    message: str
    values: Mapping[str, float]   # condition_number and max_abs_force when a target is active


@dataclasses.dataclass(frozen=True)
class Idle(Evaluation):
    """No target yet: nothing to publish."""


@dataclasses.dataclass(frozen=True)
class Withheld(Evaluation):
    """Forces that must not be published (level ERROR); ``reason`` says which limit they cross."""

    reason: str


@dataclasses.dataclass(frozen=True)
class Disabled(Evaluation):
    """Forces within the limits, not to be published: publishing is disabled."""


@dataclasses.dataclass(frozen=True)
class Forces(Evaluation):
    """Forces to publish: ``result`` has them (finite, within the limits) with the leg lengths and
    rates, F0 and the condition number."""

    result: InverseDynamicsResult


def _array(value, shape, name) -> np.ndarray:
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise SetpointError(f"{name} is not an array of numbers") from None
    if a.shape != shape:
        raise SetpointError(f"{name} has shape {a.shape}, expected {shape}")
    return a


def _in_leg_order(values, names):
    """Per-leg values in leg order, given in the order ``names`` gives (none: already)."""
    if not len(names):
        return values
    if sorted(names) != list(LEG_NAMES):   # six distinct known legs, in any order
        raise SetpointError(f"names must be {list(LEG_NAMES)} in any order, got "
                            f"{bounded(list(names))}")
    return values[[list(names).index(n) for n in LEG_NAMES]]


class ForceLoop:
    """Target, external wrench and limits of one platform; ``clock()`` is the time in seconds that
    trajectory starts and measurements are given on (the node's clock; a fake one in tests).
    ``control`` is one of CONTROL_MODES; computed_torque needs ``gains``."""

    def __init__(self, platform: StewartPlatform, limits: Limits, clock: Callable[[], float],
                 control: str = "feedforward", gains: Gains | None = None,
                 measurement_timeout: float = 0.1):
        if control not in CONTROL_MODES or (control == "computed_torque" and gains is None):
            raise ValueError(f"control must be one of {CONTROL_MODES} (computed_torque with "
                             f"gains), got {bounded(repr(control))}")
        if not measurement_timeout > 0.0:
            raise ValueError(f"measurement_timeout {measurement_timeout!r} s must be positive")
        self.platform = platform
        self.limits = limits
        self.clock = clock
        self.control, self.gains, self.measurement_timeout = control, gains, measurement_timeout
        self.enabled = True
        self.target: PoseState | PoseTrajectory | None = None
        self.trajectory_start = 0.0
        self.wrench = (_ZERO, _ZERO)
        self.last_rejection: Rejection | None = None   # cleared when a target is accepted
        self.measurement = None   # (lengths, rates, clock time of arrival, time measured)
        self.estimate = None      # the last MeasuredState: where forward kinematics starts

    # --- configuration ------------------------------------------------------------------------
    def reconfigure(self, changes: Mapping[str, float]) -> None:
        """Apply new limits, validated all together first; ValueError with the reason if refused."""
        self.limits = self.limits.replace(changes)

    @property
    def force_limit(self) -> float | None:
        return self.limits.force_limit or self.platform.force_limit

    def enable(self, on: bool) -> str:
        """Start or stop publishing (forces are still evaluated and checked); says what it did."""
        self.enabled = bool(on)
        return "enabled" if self.enabled else "disabled: no forces are published"

    # --- inputs: each returns None when taken, else the Rejection ------------------------------
    def reject(self, what: str, reason, level: Level = Level.WARN) -> Rejection:
        """Record a rejected input (also for malformations found while decoding a message)."""
        self.last_rejection = Rejection(what, bounded(str(reason)), level)
        return self.last_rejection

    def setpoint(self, position, quaternion, linear_velocity=_ZERO, angular_velocity=_ZERO,
                 linear_acceleration=_ZERO, angular_acceleration=_ZERO) -> Rejection | None:
        """One state (base frame, quaternion x y z w), held until replaced."""
        try:
            p, q = _array(position, (3,), "position"), _array(quaternion, (4,), "orientation")
            rates = [_array(r, (3,), name)[None] for r, name in zip(
                (linear_velocity, angular_velocity, linear_acceleration, angular_acceleration),
                ("linear velocity", "angular velocity", "linear acceleration",
                 "angular acceleration"))]
            q = check_states(self.platform, p[None], q[None], rates,
                             self.limits.quaternion_tolerance)
        except SetpointError as exc:
            return self.reject("setpoint", str(exc).removeprefix("point 0: "))
        return self._set_state("setpoint", PoseState(p, q[0], *(r[0] for r in rates)))

    def leg_setpoint(self, lengths, names: Sequence[str] = ()) -> Rejection | None:
        """Six leg lengths (legs 1..6, or in the order ``names`` gives), within the platform's
        leg-length limits; forward kinematics from the current pose gives the pose, held at rest."""
        try:
            lengths = self._leg_lengths(lengths, names)
        except SetpointError as exc:
            return self.reject("leg setpoint", exc)
        if self.target is None:
            return self.reject("leg setpoint", "no current pose to start forward kinematics from: "
                                               "send a setpoint or trajectory first")
        guess = self.current_state()
        try:
            t, R = self.platform.forward_kinematics(lengths, guess.position, guess.rotation)
        except (ValueError, ForwardKinematicsError) as exc:
            return self.reject("leg setpoint", f"forward kinematics: {exc}")
        return self._set_state("leg setpoint", PoseState(
            t, rotations.matrix_quaternion(R), _ZERO, _ZERO, _ZERO, _ZERO))

    def measure(self, lengths, rates, names: Sequence[str] = (), stamp: float = 0.0
                ) -> Rejection | None:
        """Six measured leg lengths (m) and rates (m/s), legs 1..6 or in the order ``names``
        gives, measured at ``stamp`` (clock seconds; 0: unstamped, taken as measured on arrival):
        what computed_torque closes the loop on, against the reference at that time — not at the
        clock's time when it is handled, which may have moved on (a /clock message handled
        before the measurement of its period)."""
        try:
            lengths = self._leg_lengths(lengths, names)
            if np.size(rates) != len(LEG_NAMES):
                raise SetpointError(f"needs {len(LEG_NAMES)} velocities, got {np.size(rates)}")
            rates = _in_leg_order(_array(rates, (len(LEG_NAMES),), "leg rates"), names)
            if not np.all(np.isfinite(rates)):
                raise SetpointError("leg rates not finite")
        except SetpointError as exc:
            return self.reject("leg measurement", exc)
        arrival = self.clock()
        self.measurement = (lengths, rates, arrival, stamp or arrival)
        return None

    def measurement_stale(self) -> bool:
        """No measurement, or none within measurement_timeout seconds of clock()."""
        return (self.measurement is None
                or self.clock() - self.measurement[2] > self.measurement_timeout)

    def _leg_lengths(self, lengths, names):
        """The lengths in leg order; checked before forward kinematics (its pose has them)."""
        if np.size(lengths) != len(LEG_NAMES):
            raise SetpointError(f"needs {len(LEG_NAMES)} positions, got {np.size(lengths)}")
        lengths = _in_leg_order(_array(lengths, (len(LEG_NAMES),), "leg lengths"), names)
        if not np.all(np.isfinite(lengths)):
            raise SetpointError("leg lengths not finite")
        if np.any(lengths <= 0.0):
            raise SetpointError(f"leg lengths {lengths.tolist()} must be positive")
        if self.platform.leg_length_limits is not None:
            lo, hi = self.platform.leg_length_limits
            if np.any((lengths < lo) | (lengths > hi)):
                raise SetpointError(f"leg lengths {np.round(lengths, 4).tolist()} outside "
                                    f"[{lo}, {hi}] m")
        return lengths

    def trajectory(self, times, positions, quaternions, linear_velocities, angular_velocities,
                   linear_accelerations, angular_accelerations, start: float = 0.0
                   ) -> Rejection | None:
        """K states at ``times`` (s, strictly increasing) after ``start`` (clock seconds; 0: now),
        arrays (K,), (K,3), (K,4) and four (K,3). No points: stop, hold the current pose at rest."""
        if len(times) == 0:
            if isinstance(self.target, PoseTrajectory):
                self.target = self.current_state().at_rest()
            return None
        try:
            if not start >= 0.0:
                raise SetpointError(f"header.stamp is negative ({start:g} s)")   # or NaN
            k = len(times)
            pos = _array(positions, (k, 3), "positions")
            quats = _array(quaternions, (k, 4), "orientations")
            rates = [_array(r, (k, 3), name) for r, name in zip(
                (linear_velocities, angular_velocities, linear_accelerations,
                 angular_accelerations), ("linear velocities", "angular velocities",
                                          "linear accelerations", "angular accelerations"))]
            quats = check_states(self.platform, pos, quats, rates,
                                 self.limits.quaternion_tolerance)
            traj = PoseTrajectory(times, pos, quats, *rates)
        except SetpointError as exc:
            return self.reject("trajectory", exc)
        refused = self._beyond_limits((pos, rotations.quaternion_matrix(quats), *rates))
        if refused:
            return self.reject("trajectory", refused, Level.ERROR)
        self.trajectory_start = start or self.clock()
        self.target = traj
        self.last_rejection = None
        return None

    def external_wrench(self, force, moment) -> Rejection | None:
        """Force and moment on the platform at its reference point, platform frame; used until
        replaced. Each finite, of magnitude at most MAX_WRENCH."""
        try:
            f, m = _array(force, (3,), "force"), _array(moment, (3,), "moment")
        except SetpointError as exc:
            return self.reject("external wrench", exc)
        if not (np.all(np.isfinite(f)) and np.all(np.isfinite(m))):
            return self.reject("external wrench", "not finite")
        for name, v, unit in (("force", f, "N"), ("moment", m, "N m")):
            with np.errstate(over="ignore"):
                magnitude = float(np.hypot.reduce(v))   # |v| without overflow in v.v
            if magnitude > MAX_WRENCH:
                return self.reject("external wrench", f"{name} of {magnitude:.4g} {unit} beyond "
                                                      f"{MAX_WRENCH:g} {unit}")
        self.wrench = (f, m)
        return None

    def _set_state(self, what, state) -> Rejection | None:
        refused = self._beyond_limits(tuple(np.asarray(x)[None] for x in state.pose_args()))
        if refused:
            return self.reject(what, refused.removeprefix("point 0: "), Level.ERROR)
        self.target = state
        self.last_rejection = None
        return None

    def _beyond_limits(self, states) -> str:
        """Why a target whose own knots lie beyond the limits is refused ('' when none does)."""
        n = len(states[0])
        r = self.platform.inverse_dynamics(*states, np.tile(self.wrench[0], (n, 1)),
                                           np.tile(self.wrench[1], (n, 1)))
        for i in range(n):
            reason = self.fault(r.condition_number[i], r.forces[i])
            if reason:
                return f"point {i}: {reason}"
        return ""

    # --- evaluation ---------------------------------------------------------------------------
    def current_state(self, at: float | None = None) -> PoseState:
        """The target at clock time ``at`` (default: now)."""
        if isinstance(self.target, PoseTrajectory):
            return self.target.sample((self.clock() if at is None else at) - self.trajectory_start)
        return self.target

    def fault(self, condition_number, forces) -> str:
        """Why these forces must not be published, or '' when they may."""
        limit = self.limits.condition_limit
        if not condition_number < limit:
            return (f"condition number {condition_number:.4g} beyond condition_limit {limit:g} "
                    f"(singular or near-singular pose)")
        if not np.all(np.isfinite(forces)):   # not singular (above): the numbers overflowed
            return (f"forces not finite at condition number {condition_number:.4g} (overflow: "
                    f"velocities, accelerations or external wrench too large)")
        force_limit = self.force_limit
        if force_limit and np.abs(forces).max() > force_limit:
            return f"force {np.abs(forces).max():.4g} N beyond force_limit {force_limit:g} N"
        return ""

    def evaluate(self) -> Evaluation:
        """The forces for the target at clock() (computed_torque: at the time the legs were
        measured) and what may be done with them."""
        if self.target is None:
            return Idle(Level.OK, "no target yet", {})
        closed = self.control != "feedforward" and self.measurement is not None
        desired = self.current_state(self.measurement[3] if closed else None)
        values = {}
        if self.control == "feedforward":
            state = desired.pose_args()
        else:
            try:
                measured = self._estimate(desired)
            except EstimateError as exc:
                return Withheld(Level.ERROR, f"forces withheld: {exc}", {}, str(exc))
            e = pose_error(desired.position, desired.rotation, measured.position,
                           measured.rotation)
            values = {"position_error": float(np.linalg.norm(e[:3])),
                      "orientation_error": float(np.linalg.norm(e[3:]))}
            state = (measured.position, measured.rotation, measured.linear_velocity,
                     measured.angular_velocity,
                     *commanded_acceleration(desired, measured, self.gains))
        r = self.platform.inverse_dynamics(*state, *self.wrench)
        values = {"condition_number": float(r.condition_number),
                  "max_abs_force": float(np.abs(r.forces).max()), **values}
        reason = self.fault(r.condition_number, r.forces)
        if not reason and not all(np.all(np.isfinite(x)) for x in
                                  (r.static_forces, r.leg_lengths, r.leg_rates)):
            reason = "leg lengths, rates or F0 not finite"   # nothing non-finite is published
        if reason:
            return Withheld(Level.ERROR, f"forces withheld: {reason}", values, reason)
        if r.condition_number > self.limits.condition_warning:
            level, message = Level.WARN, "ill-conditioned pose"
        elif self.last_rejection:
            level, message = Level.WARN, str(self.last_rejection)
        else:
            level, message = Level.OK, "ok" if self.enabled else "disabled"
        if not self.enabled:
            return Disabled(level, message, values)
        return Forces(level, message, values, r)

    def _estimate(self, desired: PoseState):
        """The measured state; EstimateError says why there is none (stale, FK failed)."""
        if self.measurement_stale():
            age = ("no leg measurement yet" if self.measurement is None else
                   f"last leg measurement {self.clock() - self.measurement[2]:.3g} s old")
            raise EstimateError(f"{age} (measurement_timeout {self.measurement_timeout:g} s)")
        lengths, rates, _, _ = self.measurement
        guess = self.estimate or desired
        self.estimate = estimate(self.platform, lengths, rates, guess.position, guess.rotation)
        return self.estimate
