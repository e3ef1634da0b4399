"""Task-space computed-torque control of the platform from measured leg lengths and rates (no ROS).

The pose is estimated from the six measured lengths by forward kinematics, the twist from the
measured rates through the inverse leg Jacobian: L' = J (v, omega) with J = H^T, rows
(s_i, q_i x s_i) (the same Jacobian forward kinematics solves with), so (v, omega) = J^-1 L'. That is
exact at the estimated pose and adds no delay; differencing the estimated poses instead would lag
half a sample and amplify the length noise by 1/dt.

The law is Lee et al.'s computed torque (004) on the parallel machine: the inverse dynamics at the
measured state (pose and twist) with the commanded acceleration

    a     = a_d     + Kv (v_d - v)         + Kp (t_d - t)
    alpha = alpha_d + Kv (omega_d - omega) + Kp log(R_d R^T)

all in the base frame, as inverse_dynamics takes them. log(R_d R^T) is the rotation vector taking
the measured orientation to the desired one, in the base frame (rotations.log_so3); its rate is
omega_d - omega to first order, and exactly so for a rotation about one fixed axis. With a perfect
model the plant then accelerates as commanded and the error e = (t_d - t, log(R_d R^T)) obeys
e'' + Kv e' + Kp e = 0 (exactly for the position, to first order in the orientation error), axis by
axis. Evaluating the inverse dynamics at the desired state instead would make that hold only to
first order in the error for the position too.
"""
from __future__ import annotations

import dataclasses
import math
from numbers import Real

import numpy as np

from ..spatial import rotations
from .kinematics import ForwardKinematicsError

AXES = ("x", "y", "z", "rx", "ry", "rz")


@dataclasses.dataclass(frozen=True)
class Gains:
    """Kp (1/s^2) and Kv (1/s) per task axis (x, y, z, rx, ry, rz): one number for all six or six.
    Built validated (ValueError): finite and positive, which makes every axis' error decay."""

    kp: np.ndarray
    kv: np.ndarray

    def __init__(self, kp, kv):
        for name, value in (("kp", kp), ("kv", kv)):
            values = [value] if isinstance(value, Real) else list(value)
            if len(values) not in (1, 6) or not all(
                    isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0
                    for v in values):
                raise ValueError(f"{name} must be one positive finite number or six (x, y, z, "
                                 f"rx, ry, rz), got {value!r}")
            object.__setattr__(self, name, np.broadcast_to(np.array(values, float), (6,)).copy())


@dataclasses.dataclass(frozen=True)
class MeasuredState:
    """The platform state estimated from the legs: pose and twist of the reference point, base
    frame."""

    position: np.ndarray
    rotation: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray


class EstimateError(ValueError):
    """No state follows from the measured legs (forward kinematics failed, J singular)."""


def estimate(sp, lengths, rates, position_guess, rotation_guess) -> MeasuredState:
    """The state whose leg lengths and rates are the measured ones; forward kinematics starts from
    the guess (the previous estimate: a step of one sample converges in a few iterations)."""
    try:
        t, R = sp.forward_kinematics(lengths, position_guess, rotation_guess)
    except (ValueError, ForwardKinematicsError) as exc:
        raise EstimateError(f"forward kinematics: {exc}") from None
    ik = sp.inverse_kinematics(t, R)
    J = np.hstack([ik.directions, np.cross(ik.q, ik.directions)])
    try:
        twist = np.linalg.solve(J, np.asarray(rates, float))   # regular where FK converged
    except np.linalg.LinAlgError:
        raise EstimateError("leg Jacobian singular at the measured pose") from None
    if not np.all(np.isfinite(twist)):
        raise EstimateError("twist from the leg rates not finite")
    return MeasuredState(t, R, twist[:3], twist[3:])


def pose_error(position_d, rotation_d, position, rotation) -> np.ndarray:
    """e = (t_d - t, log(R_d R^T)), base frame: (6,)."""
    return np.concatenate([np.asarray(position_d) - position,
                           rotations.log_so3(np.asarray(rotation_d) @ np.asarray(rotation).T)])


def commanded_acceleration(desired, measured: MeasuredState, gains: Gains):
    """(a, alpha) = accel_d + Kv e' + Kp e for the desired PoseState and the measured state."""
    e = pose_error(desired.position, desired.rotation, measured.position, measured.rotation)
    de = np.concatenate([desired.linear_velocity - measured.linear_velocity,
                         desired.angular_velocity - measured.angular_velocity])
    acc = (np.concatenate([desired.linear_acceleration, desired.angular_acceleration])
           + gains.kv * de + gains.kp * e)
    return acc[:3], acc[3:]


def hold_error(sp, path, period: float, kp, step: float = 0.01) -> np.ndarray:
    """The largest error per task axis (6,) that sampling the law every ``period`` seconds leaves
    along ``path`` (a LinearParabolicPath) with a perfect model: the forces held over a period lag
    the forces F(t) the path needs by F' T / 2 on average, an acceleration deficit
    M_F^-1 F' T / 2 (M_F: forward_dynamics' actuator mass matrix) that the law answers, quasi-
    statically, with Kp e. F' is differenced on a grid of ``step`` away from the blends' ends
    (where the path's acceleration jumps and F' does not exist)."""
    h = 1e-4
    t = np.arange(0.0, path.tau_f, step) + step / 2
    jumps = np.array([path.tau_t, path.tau_theta, path.tau_f - path.tau_t,
                      path.tau_f - path.tau_theta])
    t = t[np.abs(t[:, None] - jumps[None]).min(axis=1) > 2 * h]

    def forces(times):
        return sp.inverse_dynamics(*path.sample(times).pose_args()).forces

    rate = (forces(t + h) - forces(t - h)) / (2 * h)
    s = path.sample(t)
    deficit = np.array([np.linalg.solve(sp.forward_dynamics(
        s.position[i], s.rotation[i], s.linear_velocity[i], s.angular_velocity[i],
        np.zeros(6)).actuator_mass_matrix, rate[i]) for i in range(len(t))])
    return np.abs(deficit).max(axis=0) * period / 2 / np.broadcast_to(kp, (6,))
