"""Straight-line platform trajectories with parabolic blends (section 4.3).

Each of the six coordinates (t_x, t_y, t_z, theta_x, theta_y, theta_z) moves with constant acceleration,
constant velocity, constant deceleration. Translation and orientation share the total time tau_f; the
blend time follows from the cruise speed (eq. 39) and fixes the acceleration (eq. 40).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spatial import rotations


def blend_time(distance: float, tau_f: float, speed: float) -> float:
    """tau_t = tau_f - distance / speed (eq. 39); must lie in (0, tau_f / 2] to be a valid profile."""
    tau_b = tau_f - distance / speed
    if not 0.0 < tau_b <= 0.5 * tau_f:
        raise ValueError(
            f"no linear-parabolic profile covers {distance:.6g} in {tau_f:g} s at cruise speed "
            f"{speed:g}: blend time tau_f - distance/speed = {tau_b:.6g} s must lie in (0, tau_f/2]")
    return tau_b


@dataclass(frozen=True)
class _Segment:
    """One group of coordinates (translation or RPY angles) moving along x0 -> x1."""

    x0: np.ndarray
    x1: np.ndarray
    tau_f: float
    speed: float

    @property
    def distance(self):
        return float(np.linalg.norm(self.x1 - self.x0))

    @property
    def blend(self):
        return blend_time(self.distance, self.tau_f, self.speed) if self.distance > 0 else 0.0

    def sample(self, tau):
        """(x, x', x'') at the times tau (N,)."""
        n = len(tau)
        if self.distance == 0.0:
            return np.tile(self.x0, (n, 1)), np.zeros((n, 3)), np.zeros((n, 3))
        u = (self.x1 - self.x0) / self.distance
        tb, tf, V = self.blend, self.tau_f, self.speed
        acc = V / tb                                         # |a_t| of eq. (40)
        tau = np.clip(tau, 0.0, tf)[:, None]
        early, late = tau < tb, tau > tf - tb
        s = np.where(early, 0.5 * acc * tau**2,
                     np.where(late, self.distance - 0.5 * acc * (tf - tau)**2,
                              0.5 * acc * tb**2 + V * (tau - tb)))
        sd = np.where(early, acc * tau, np.where(late, acc * (tf - tau), V))
        sdd = np.where(early, acc, np.where(late, -acc, 0.0))
        return self.x0 + s * u, sd * u, sdd * u


@dataclass
class PathSample:
    """Platform state at N times: everything StewartPlatform.inverse_dynamics takes."""

    time: np.ndarray
    position: np.ndarray
    theta: np.ndarray
    theta_dot: np.ndarray
    theta_ddot: np.ndarray
    rotation: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray       # base frame
    linear_acceleration: np.ndarray
    angular_acceleration: np.ndarray   # base frame

    def pose_args(self):
        """Positional arguments of inverse_dynamics, in its order."""
        return (self.position, self.rotation, self.linear_velocity, self.angular_velocity,
                self.linear_acceleration, self.angular_acceleration)


@dataclass(frozen=True)
class LinearParabolicPath:
    """From (t0, theta0) to (t1, theta1) in tau_f seconds, cruise speeds V (m/s) and Omega (rad/s,
    in the RPY coordinates)."""

    t0: tuple
    theta0: tuple
    t1: tuple
    theta1: tuple
    tau_f: float
    V: float
    Omega: float

    def __post_init__(self):
        # Validate now (eq. 39) rather than at the first sample.
        _ = self.translation.blend, self.rotation.blend

    @property
    def translation(self):
        return _Segment(np.asarray(self.t0, float), np.asarray(self.t1, float), self.tau_f, self.V)

    @property
    def rotation(self):
        return _Segment(np.asarray(self.theta0, float), np.asarray(self.theta1, float), self.tau_f,
                        self.Omega)

    @property
    def tau_t(self):
        """Blend time of the translation (eq. 39)."""
        return self.translation.blend

    @property
    def tau_theta(self):
        return self.rotation.blend

    def times(self, dtau):
        return np.arange(int(round(self.tau_f / dtau)) + 1) * dtau

    def sample(self, tau) -> PathSample:
        tau = np.atleast_1d(np.asarray(tau, dtype=float))
        t, v, a = self.translation.sample(tau)
        th, thd, thdd = self.rotation.sample(tau)
        return PathSample(tau, t, th, thd, thdd, rotations.rpy_matrix(th), v,
                          rotations.rpy_angular_velocity(th, thd), a,
                          rotations.rpy_angular_acceleration(th, thd, thdd))
