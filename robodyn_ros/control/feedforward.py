"""Newton–Euler feedforward efforts for the points of a joint trajectory, without ROS.

For users who keep ros2_control's real-time loop: joint_trajectory_controller (JTC) with the
``effort`` command interface adds each trajectory point's ``effort`` (linearly interpolated between
points) to its PID output (ros2_controllers >= 4.22.0, see doc/effort_feedforward.md). Filling that
field with τ_i = NE(q_i, q̇_i, q̈_i) of every point makes JTC a computed-torque-like controller
whose PID only corrects the model's error.

Where a trajectory has no velocities or accelerations they are those of the spline JTC itself
follows between the points (:func:`robodyn_ros.control.trajectory.point_derivatives`): linear
segments without velocities, cubic ones without accelerations, taken at each point's time as JTC
samples them there (the segment that starts at the point). The message's positions, velocities
and accelerations are never changed: adding derived velocities would turn JTC's linear segments
into cubic ones, a different path.

The first point: JTC runs from the state it has when the trajectory starts (measured, or its last
command) to the first point; that state is unknown here. It does not matter for the efforts of the
points themselves — at a point's time JTC is on the segment that starts there, and the last point
is held at rest — so the first point's effort is that of the segment from the first point to the
second. Before it, JTC interpolates the effort from its last command to the first point's.

The drive (``drive.Drive``): what it adds itself is left out of the efforts, and with a rate limit
the efforts change no faster than it from the effort in effect when the trajectory starts — the
trajectory JTC follows until then (the last one forwarded, :meth:`EffortFeedforward.following`)
at the new one's start, 0 before the first: JTC interpolates efforts linearly between points, so
a slope within the rate is a change within rate × drive_period in every drive cycle, whatever
JTC's phase. A point whose effort would change faster gets the effort the rate reaches (the PID
makes up the difference); the positions are never changed. What JTC's PID adds is its own.
"""
from __future__ import annotations

import numpy as np

from ..dynamics.friction import FrictionModel
from ..plumbing.reasons import bounded
from .drive import DRIVE_FRICTION, DRIVE_GRAVITY, Drive
from .joints import JointOrder
from .trajectory import JointTrajectory, TrajectoryError, limit_violation, point_derivatives

__all__ = ["EffortFeedforward"]


class EffortFeedforward:
    """τ = NE(q, q̇, q̈) at every point of a trajectory, in the trajectory's joint order.

    ``friction``: include the model's joint friction (viscous and Coulomb at the point's
    velocity); or a ``dynamics.friction.FrictionModel`` (an identified URDF's friction file), used
    instead of the model's (the model is then ``model.with_friction(friction)``).
    ``position_limit_margin``: a point beyond the URDF's position limits by more than this is
    refused, as the controller refuses it. ``max_points``: larger trajectories are refused
    before any work is spent on them. ``drive``: what it adds itself is left out of the efforts
    (g(q) for DRIVE_GRAVITY, the friction for DRIVE_FRICTION), and its rate limit bounds their
    change (module docstring).
    """

    def __init__(self, model, friction: bool = True, position_limit_margin: float = 0.0,
                 max_points: int = 10_000, drive: Drive = Drive()):
        if isinstance(friction, FrictionModel):
            model, friction = model.with_friction(friction), True
        self.model, self.drive = model, drive
        self.compensates = drive.compensates
        self._profile = None   # (times on the caller's clock, efforts) of the one JTC follows
        # behind a drive that adds its own friction, none here
        self.friction = bool(friction) and not self.compensates & DRIVE_FRICTION
        self.position_limit_margin = float(position_limit_margin)
        self.max_points = int(max_points)

    def admit(self, points: int) -> None:
        """TrajectoryError for a trajectory too large (or empty) to fill, before converting it."""
        if points == 0:
            raise TrajectoryError("trajectory has no points")
        if points > self.max_points:
            raise TrajectoryError(f"{points} points, more than max_trajectory_points "
                                  f"{self.max_points}")

    def efforts(self, trajectory: JointTrajectory, start: float = 0.0) -> np.ndarray:
        """Efforts (points x joints) in ``trajectory.joint_names`` order, for a trajectory that
        starts at ``start`` (s, the caller's clock: its stamp, or now); TrajectoryError when the
        trajectory does not name each joint of the model once (NE needs every joint's state),
        leaves the position limits, or the dynamics give a non-finite effort."""
        self.admit(trajectory.times.size)
        try:
            order = JointOrder(self.model.joint_names, trajectory.joint_names)
        except ValueError as exc:
            raise TrajectoryError(str(exc)) from None
        chain = trajectory.reordered(order.chain)
        model = self.model
        outside = limit_violation(chain.positions, model.joint_names, model.lower, model.upper,
                                  self.position_limit_margin)
        if outside:
            raise TrajectoryError(outside)
        qd, qdd = point_derivatives(chain)
        tau = model.inverse_dynamics(chain.positions, qd, qdd, friction=self.friction)
        if self.compensates & DRIVE_GRAVITY:
            rest = np.zeros_like(qd)
            tau -= model.inverse_dynamics(chain.positions, rest, rest, friction=False)
        if not np.all(np.isfinite(tau)):
            point = int(np.argwhere(~np.isfinite(tau))[0, 0])
            raise TrajectoryError(f"the effort of point {point} is not finite: "
                                  f"{bounded(tau[point])}")
        if self.drive.limits_rate:
            tau = self._within_rate(tau, trajectory.times, start)
        return tau[:, order.index]

    def _within_rate(self, tau, times, start) -> np.ndarray:
        """``tau`` (points x joints, chain order) changing no faster than the drive's rate from
        the effort in effect at ``start``, point after point (module docstring)."""
        limited, rate = np.empty_like(tau), self.drive.rate
        last, before = self.effort_at(start), 0.0
        for k, t in enumerate(times):
            step = rate * (t - before)
            last = limited[k] = np.clip(tau[k], last - step, last + step)
            before = t
        return limited

    def effort_at(self, t: float) -> np.ndarray:
        """The efforts JTC adds at ``t`` (chain order): the trajectory it follows interpolated
        linearly, its last point's after its end; 0 before the first trajectory."""
        if self._profile is None:
            return np.zeros(self.model.dof)
        times, efforts = self._profile
        return np.array([np.interp(t, times, efforts[:, i]) for i in range(self.model.dof)])

    def following(self, trajectory: JointTrajectory, efforts: np.ndarray, start: float) -> None:
        """JTC follows ``trajectory`` (the message's joint order) from ``start`` with ``efforts``
        (as :meth:`efforts` gave them): the efforts in effect from then on."""
        order = JointOrder(self.model.joint_names, trajectory.joint_names)
        chain = np.empty((len(efforts), self.model.dof))
        chain[:, order.index] = efforts
        self._profile = (np.concatenate([[start], start + trajectory.times]),
                         np.vstack([self.effort_at(start), chain]))
