"""Validated pose setpoints and time-sampled pose trajectories of a frame (the Stewart platform's
moving frame, an arm's task frame), free of ROS types: arrays in, arrays out, and a SetpointError
carrying the reason for a rejection."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import rotations


class SetpointError(ValueError):
    """A setpoint or trajectory that must not be executed; str() is the reason."""


@dataclass(frozen=True)
class PoseState:
    """Pose (position, unit quaternion x y z w), twist and acceleration of a frame's origin, base
    frame: what inverse dynamics needs."""

    position: np.ndarray
    quaternion: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray
    angular_acceleration: np.ndarray

    @property
    def rotation(self):
        return rotations.quaternion_matrix(self.quaternion)

    def pose_args(self):
        return (self.position, self.rotation, self.linear_velocity, self.angular_velocity,
                self.linear_acceleration, self.angular_acceleration)

    def at_rest(self) -> "PoseState":
        zero = np.zeros(3)
        return PoseState(self.position, self.quaternion, zero, zero, zero, zero)


def check_poses(positions, quaternions, twists_and_accels, quaternion_tolerance):
    """Validate K states given as arrays (K,3), (K,4) and four (K,3); returns the quaternions
    normalised. Raises SetpointError naming the first offending point."""
    arrays = {"position": positions, "orientation": quaternions}
    arrays.update(zip(("linear velocity", "angular velocity", "linear acceleration",
                       "angular acceleration"), twists_and_accels))
    for name, arr in arrays.items():
        bad = ~np.all(np.isfinite(arr), axis=1)
        if bad.any():
            raise SetpointError(f"point {int(np.argmax(bad))}: {name} is not finite")
    norms = np.linalg.norm(quaternions, axis=1)
    off = np.abs(norms - 1.0) > quaternion_tolerance
    if off.any():
        i = int(np.argmax(off))
        raise SetpointError(f"point {i}: quaternion norm {norms[i]:.6g} differs from 1 by more "
                            f"than {quaternion_tolerance:g}")
    quaternions = quaternions / norms[:, None]
    return quaternions


class PoseTrajectory:
    """States at increasing times (s). sample(tau) interpolates linearly between knots (slerp for the
    orientation), holds the first pose at rest before the first knot and the last pose at rest after
    the last one."""

    def __init__(self, times, positions, quaternions, linear_velocity, angular_velocity,
                 linear_acceleration, angular_acceleration):
        self.times = np.asarray(times, dtype=float)
        if self.times.ndim != 1 or len(self.times) == 0:
            raise SetpointError("trajectory has no points")
        if not np.all(np.isfinite(self.times)) or np.any(np.diff(self.times) <= 0.0):
            raise SetpointError("time_from_start must be finite and strictly increasing")
        self.p, self.q = np.asarray(positions, float), np.asarray(quaternions, float)
        self.rates = np.stack([linear_velocity, angular_velocity, linear_acceleration,
                               angular_acceleration]).astype(float)
        # slerp along the short arc: make consecutive quaternions point the same way
        for i in range(1, len(self.q)):
            if self.q[i] @ self.q[i - 1] < 0.0:
                self.q[i] = -self.q[i]

    @property
    def duration(self):
        return self.times[-1]

    def state(self, i) -> PoseState:
        return PoseState(self.p[i], self.q[i], *self.rates[:, i])

    def sample(self, tau) -> PoseState:
        if tau <= self.times[0]:
            return self.state(0).at_rest() if tau < self.times[0] else self.state(0)
        if tau >= self.times[-1]:
            return self.state(-1).at_rest() if tau > self.times[-1] else self.state(-1)
        i = int(np.searchsorted(self.times, tau, side="right")) - 1
        u = (tau - self.times[i]) / (self.times[i + 1] - self.times[i])
        q0, q1 = self.q[i], self.q[i + 1]
        angle = np.arccos(np.clip(q0 @ q1, -1.0, 1.0))
        if angle < 1e-9:
            q = q0 + u * (q1 - q0)
        else:
            q = (np.sin((1 - u) * angle) * q0 + np.sin(u * angle) * q1) / np.sin(angle)
        lerp = self.rates[:, i] + u * (self.rates[:, i + 1] - self.rates[:, i])
        return PoseState(self.p[i] + u * (self.p[i + 1] - self.p[i]), q / np.linalg.norm(q),
                             *lerp)
