"""What the control loop tracks, without ROS: a joint trajectory (joint_trajectory_controller's
rules, ``trajectory.TrajectorySampler``), one reference point used as is until replaced, or a hold
of a measured position. Positions beyond the URDF's limits by more than a margin are refused
(continuous joints have none). Arrays in chain order; references arrive in `joints` order.
"""
from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

import numpy as np

from ..plumbing.reasons import bounded
from .joints import JointOrder
from .trajectory import JointTrajectory, TrajectoryError, TrajectorySampler, limit_violation


@dataclasses.dataclass(frozen=True)
class PreparedTrajectory:
    """A trajectory checked and its reference built (:meth:`Reference.prepare`), from the
    reference whose pieces were ``base``."""
    trajectory: JointTrajectory
    sampler: TrajectorySampler
    base: tuple
    span: tuple[float, float]


class Reference:
    """One arm's reference; ``clock`` (s) is the loop's. It starts with the first measured
    state (:meth:`start`): nothing is tracked before it."""

    def __init__(self, model, order: JointOrder, clock: Callable[[], float], max_points: int,
                 margin: float):
        self.model, self.order, self._clock = model, order, clock
        self.max_points, self._margin = int(max_points), margin
        self.sampler: TrajectorySampler | None = None
        #: (start, end) of the trajectory being followed on the loop's clock; None otherwise
        self.span: tuple[float, float] | None = None
        self.setpoint = None  # (q, qd, qdd) from set_point, used as is
        # a trajectory's (q_d, q̇_d, q̈_d) is sampled into the rows of samples, which the next
        # sample overwrites
        self.samples = np.empty((3, model.dof))
        self.sampled = tuple(self.samples)

    def start(self, q: np.ndarray, now: float) -> None:
        """Hold ``q``, the first measured position, unless a reference started already."""
        if self.sampler is None:
            self.sampler = TrajectorySampler(self.model.joint_names, q, now,
                                             max_pieces=self.max_points + 2)

    def admit(self, joints: int, points: int) -> str:
        """Why a trajectory of ``joints`` names and ``points`` points is refused before any work
        is spent on it, or ''."""
        if joints > self.model.dof:
            return (f"trajectory: {joints} joint names, more than the {self.model.dof} joints "
                    f"{bounded(self.order.names)}")
        if points > self.max_points:
            return f"trajectory: {points} points, more than max_trajectory_points {self.max_points}"
        return ""

    def check(self, trajectory: JointTrajectory, start: float | None) -> str:
        """Why ``trajectory`` (from ``start``, None: now) cannot be followed — its size, the
        position limits, an end in the past — or ''."""
        if trajectory.times.size > self.max_points:
            return (f"trajectory: {trajectory.times.size} points, more than "
                    f"max_trajectory_points {self.max_points}")
        try:
            outside = self.outside_limits(trajectory.reordered(self.model.joint_names).positions)
        except TrajectoryError as exc:
            return f"trajectory: {exc}"
        if outside:
            return f"trajectory: {outside}"
        end, now = (start or self._clock()) + float(trajectory.times[-1]), self._clock()
        if end < now:
            return f"trajectory: it ends in the past ({end:.6f} s, now {now:.6f} s)"
        return ""

    def prepare(self, trajectory: JointTrajectory, start: float | None) -> PreparedTrajectory | str:
        """A checked ``trajectory`` (from ``start``, None: now) made ready to follow, changing
        nothing (the new segments are built on a copy of the sampler: the slow part, outside the
        lock a caller shares with the cycle): why not, or the :class:`PreparedTrajectory`."""
        now, sampler = self._clock(), copy.copy(self.sampler)   # _set_pieces replaces, never edits
        try:
            sampler.set_trajectory(trajectory.reordered(self.model.joint_names), now, start or None)
        except TrajectoryError as exc:
            return f"trajectory: {exc}"
        begin = start or now
        return PreparedTrajectory(trajectory, sampler, self.sampler.pieces,
                                  (begin, begin + float(trajectory.times[-1])))

    def take(self, prepared: PreparedTrajectory) -> bool:
        """Follow a trajectory :meth:`prepare` made ready: False, nothing changed, when the
        reference moved since (a hold, another trajectory): prepare it again."""
        if self.sampler.pieces is not prepared.base:
            return False
        self.sampler, self.span = prepared.sampler, prepared.span
        self.setpoint = None
        return True

    def set_point(self, positions, velocities=(), accelerations=()) -> str:
        """One reference point in `joints` order (empty velocities and accelerations: zero): why
        it is refused, or ''."""
        n = self.model.dof
        parts = []
        for field, values in (("positions", positions), ("velocities", velocities),
                              ("accelerations", accelerations)):
            values = np.asarray(values, dtype=float)
            if values.size == 0 and field != "positions":
                values = np.zeros(n)
            if values.shape != (n,) or not np.all(np.isfinite(values)):
                return (f"reference {field} must be {n} finite values in joints order "
                        f"{bounded(self.order.names)}, got {bounded(values.ravel())}")
            parts.append(self.order.to_chain(values))
        outside = self.outside_limits(parts[0][None])
        if outside:
            return f"reference: {outside}"
        self.setpoint = tuple(parts)
        self.sampler.hold(parts[0], self._clock())  # a later trajectory splices from here
        self.span = None
        return ""

    def hold(self, q: np.ndarray) -> None:
        """Hold the measured position ``q`` from now."""
        self.setpoint = None
        self.span = None
        self.sampler.hold(q, self._clock())

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reference point set, or the trajectory's at ``t`` in the rows of ``samples``."""
        if self.setpoint is not None:
            return self.setpoint
        self.sampler.sample_into(t, self.samples)
        return self.sampled

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The reference at ``t`` in `joints` order, if a trajectory being followed covers ``t``
        (JTC's query_state), else None."""
        span = self.span
        if span is None or not span[0] <= t <= span[1]:
            return None
        return tuple(self.order.from_chain(v) for v in self.sampler.sample(t))

    def outside_limits(self, positions: np.ndarray) -> str:
        """Why positions (points x joints, chain order) leave the position limits, or ''."""
        return limit_violation(positions, self.model.joint_names, self.model.lower,
                               self.model.upper, self._margin)
