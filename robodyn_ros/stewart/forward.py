"""Forward dynamics of the Stewart platform: the platform's accelerations from the six actuator forces,
and a fixed-step integrator of its motion, for either leg model.

The inverse dynamics is affine in the platform acceleration (a, alpha): F = F_b + M_F (a, alpha), where
the bias F_b (gravity, velocity terms, friction, external wrench) is the inverse dynamics at zero
acceleration and the columns of M_F are its increments for unit accelerations. Seven inverse-dynamics
evaluations in one batch give both (the "unit-vector" or strobing method: Walker & Orin 1982, method 1;
Turney, Mudge & Lee 1980), and forward dynamics solves M_F (a, alpha) = F - F_b. The same equations
solved the other way, so forward after inverse dynamics is the identity for either leg model.

H M_F = M is the platform-space mass matrix (generalized forces H F for the twist (v, omega), H as in
eq. 36): symmetric, and positive definite for physically realisable inertias. The paper's are not (its
loader warns); integrate config/stewart_dasgupta_realisable.yaml, not config/stewart_dasgupta.yaml.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import kernel


@dataclass
class ForwardDynamicsResult:
    """Platform accelerations (base frame, reference point) and the matrices behind them."""

    linear_acceleration: np.ndarray    # (3,)
    angular_acceleration: np.ndarray   # (3,)
    mass_matrix: np.ndarray            # (6, 6) M = H M_F, platform space, for (a, alpha)
    bias_forces: np.ndarray            # (6,) F_b: actuator forces at zero platform acceleration
    actuator_mass_matrix: np.ndarray   # (6, 6) M_F: F = F_b + M_F (a, alpha)
    condition_number: float            # of H


class SingularPoseError(ValueError):
    """The platform cannot be accelerated by its legs at this pose (H singular)."""


def forward_dynamics(sp, position, rotation_matrix, linear_velocity, angular_velocity, forces,
                     external_force=None, external_moment=None) -> ForwardDynamicsResult:
    """Platform acceleration (a, alpha) under the actuator forces F (6,) at one state (position (3,),
    rotation (3, 3), twist of the reference point, base frame); external wrench at the reference
    point in the platform frame, as in inverse_dynamics. Raises SingularPoseError where H is
    singular."""
    forces = np.asarray(forces, dtype=float)
    if forces.shape != (6,) or not np.all(np.isfinite(forces)):
        raise ValueError(f"forces must be six finite numbers, got {forces!r}")
    unit = np.vstack([np.zeros(6), np.eye(6)])        # zero acceleration, then each unit one
    ones = np.ones((7, 1))
    r = sp.inverse_dynamics(ones * np.asarray(position, float),
                            np.broadcast_to(np.asarray(rotation_matrix, float), (7, 3, 3)),
                            _vector(linear_velocity), _vector(angular_velocity), unit[:, :3],
                            unit[:, 3:], _vector(external_force), _vector(external_moment))
    cond = float(r.condition_number[0])
    if not cond < kernel.SINGULAR_CONDITION:
        raise SingularPoseError(f"singular pose (condition number of H {cond:.3g})")
    bias = r.forces[0]
    M_F = (r.forces[1:] - bias).T
    acc = np.linalg.solve(M_F, forces - bias)
    ik = sp.inverse_kinematics(position, rotation_matrix)
    H = np.vstack([ik.directions.T, np.cross(ik.q, ik.directions).T])
    return ForwardDynamicsResult(acc[:3], acc[3:], H @ M_F, bias, M_F, cond)


def _vector(v):
    return np.zeros(3) if v is None else np.asarray(v, dtype=float)


@dataclass
class PlatformMotion:
    """States at the times of an integration, base frame: (N,), (N, 3), (N, 3, 3), (N, 3), (N, 3);
    forces (N - 1, 6) are those held over each step."""

    time: np.ndarray
    position: np.ndarray
    rotation: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray
    forces: np.ndarray


def integrate(sp, position, rotation_matrix, linear_velocity, angular_velocity, forces, duration,
              dt, external_force=None, external_moment=None) -> PlatformMotion:
    """The platform's motion over `duration` seconds by classical Runge-Kutta (order 4) with step dt,
    as the arm's dynamics.integrate.simulate: the actuator forces are held over each step (as a
    sampled controller applies them), either fixed (6,) or forces(time, position, rotation,
    linear_velocity, angular_velocity) -> (6,) sampled at the start of every step. The rotation is
    integrated as a matrix (R' = [omega]x R) and projected onto SO(3) after each step. Raises
    SingularPoseError if the motion reaches a singular pose."""
    if not (dt > 0.0 and duration >= 0.0):
        raise ValueError(f"need dt > 0 and duration >= 0, got dt={dt}, duration={duration}")
    law = forces if callable(forces) else (lambda *_: forces)
    steps = int(round(duration / dt))
    x = tuple(np.array(a, dtype=float) for a in (position, rotation_matrix, linear_velocity,
                                                   angular_velocity))
    states, held = [x], []

    def f(x, F):
        fd = forward_dynamics(sp, *x, F, external_force, external_moment)
        return x[2], _skew(x[3]) @ x[1], fd.linear_acceleration, fd.angular_acceleration

    for n in range(steps):
        F = np.asarray(law(n * dt, *x), dtype=float)
        k1 = f(x, F)
        k2 = f(tuple(a + dt / 2 * k for a, k in zip(x, k1)), F)
        k3 = f(tuple(a + dt / 2 * k for a, k in zip(x, k2)), F)
        k4 = f(tuple(a + dt * k for a, k in zip(x, k3)), F)
        t, R, v, w = (a + dt / 6 * (b + 2 * c + 2 * d + e)
                      for a, b, c, d, e in zip(x, k1, k2, k3, k4))
        U, _, Vt = np.linalg.svd(R)
        x = (t, U @ Vt, v, w)                           # U Vt: the nearest rotation
        states.append(x)
        held.append(F)
    return PlatformMotion(np.arange(steps + 1) * dt, *(np.array(a) for a in zip(*states)),
                          np.array(held).reshape(steps, 6))


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])

