"""Inverse kinematics (eqs. 1-9) and forward kinematics from six leg lengths (Newton-Raphson)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import kernel
from ..spatial import rotations
from .poses import pack_poses


@dataclass
class LegKinematics:
    """Per-leg arrays, (6,...) for one pose or (N, 6, ...) for a batch, base frame."""

    lengths: np.ndarray        # L (eq. 2)
    rates: np.ndarray          # L' (eq. 5)
    accelerations: np.ndarray  # L'' (eq. 8)
    directions: np.ndarray     # s (eq. 3)
    q: np.ndarray              # R p, platform point relative to the reference point
    angular_velocity: np.ndarray      # W (eq. 6)
    angular_acceleration: np.ndarray  # A (eq. 9)


def inverse_kinematics(sp, position, rotation_matrix, linear_velocity=None, angular_velocity=None,
                       linear_acceleration=None, angular_acceleration=None) -> LegKinematics:
    single, poses = pack_poses(position, rotation_matrix, linear_velocity, angular_velocity,
                               linear_acceleration, angular_acceleration)
    scalars = np.empty((len(poses), 3, 6))
    vectors = np.empty((len(poses), 4, 6, 3))
    kernel.leg_kinematics_batch(sp.packed, poses, scalars, vectors)
    L, Ld, Ldd = (scalars[:, j] for j in range(3))
    s, q, W, A = (vectors[:, j] for j in range(4))
    out = LegKinematics(L, Ld, Ldd, s, q, W, A)
    if single:
        out = LegKinematics(*(getattr(out, f)[0] for f in out.__dataclass_fields__))
    return out


class ForwardKinematicsError(RuntimeError):
    """Newton-Raphson did not reach the requested leg lengths."""


def forward_kinematics(sp, leg_lengths, position_guess, rotation_guess, *, tol=1e-12,
                       max_iter=50, max_step=0.2):
    """Platform pose (position, rotation matrix) whose leg lengths are leg_lengths, by Newton-Raphson
    from a guess. The Jacobian of L w.r.t. (dt, dphi) is H^T (dL_i = s_i.dt + (q_i x s_i).dphi), the
    rotation is updated multiplicatively. Steps longer than max_step (m or rad) are shortened so that a
    poor guess does not jump to another assembly mode. Raises ForwardKinematicsError when the lengths
    are not reached to tol within max_iter iterations or the Jacobian is singular."""
    target = np.asarray(leg_lengths, dtype=float)
    if target.shape != (6,) or not np.all(np.isfinite(target)) or np.any(target <= 0.0):
        raise ValueError(f"leg_lengths must be six positive finite numbers, got {leg_lengths!r}")
    t = np.array(position_guess, dtype=float)
    R = np.array(rotation_guess, dtype=float)
    err = np.inf
    for _ in range(max_iter):
        ik = inverse_kinematics(sp, t, R)
        residual = ik.lengths - target
        err = np.abs(residual).max()
        if err <= tol:
            return t, R
        J = np.hstack([ik.directions, np.cross(ik.q, ik.directions)])
        if not np.linalg.cond(J) < kernel.SINGULAR_CONDITION:
            raise ForwardKinematicsError(f"singular leg Jacobian at position {t.round(6).tolist()} "
                                         f"(residual {err:.3g} m)")
        step = np.linalg.solve(J, -residual)
        norm = np.linalg.norm(step)
        if norm > max_step:
            step *= max_step / norm
        t = t + step[:3]
        R = rotations.exp_so3(step[3:]) @ R
    raise ForwardKinematicsError(f"no convergence in {max_iter} iterations: largest leg-length "
                                 f"residual {err:.3g} m > {tol:g} m")
