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
"""
from __future__ import annotations

import numpy as np

from ..dynamics.friction import FrictionModel
from ..plumbing.reasons import bounded
from .drive import DRIVE_FRICTION, DRIVE_GRAVITY
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
    before any work is spent on them. ``compensates``: what the drive adds itself (``drive``'s
    bits), left out of the efforts: g(q) for DRIVE_GRAVITY, the friction for DRIVE_FRICTION.
    """

    def __init__(self, model, friction: bool = True, position_limit_margin: float = 0.0,
                 max_points: int = 10_000, compensates: int = 0):
        if isinstance(friction, FrictionModel):
            model, friction = model.with_friction(friction), True
        self.model = model
        self.compensates = int(compensates)
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

    def efforts(self, trajectory: JointTrajectory) -> np.ndarray:
        """Efforts (points x joints) in ``trajectory.joint_names`` order; TrajectoryError when
        the trajectory does not name each joint of the model once (NE needs every joint's state),
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
        return tau[:, order.index]
