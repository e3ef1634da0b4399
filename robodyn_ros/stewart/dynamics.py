"""Inverse dynamics of the Stewart platform (Dasgupta & Mruthyunjaya 1998, sections 2-3 and 4.4)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import kernel
from .poses import pack_pose, pack_poses


@dataclass
class ConstraintForces:
    """Joint reactions per leg (eqs. 21, 26-29, 17), base-frame components.

    spherical (F_s): force of the platform on the leg at the spherical joint (the leg pushes the
    platform with -F_s); prismatic (F_p): force of the lower part on the upper part, of which
    prismatic_constraint (F_c) is the part normal to the leg; universal (F_u): force of the base on
    the lower part; universal_moment (M_u): constraint moment about the leg axis at the universal
    joint; prismatic_moment (M_p): moment of the lower part on the upper part about the point
    prismatic_point * s on the leg axis.
    """

    spherical: np.ndarray
    prismatic: np.ndarray
    prismatic_constraint: np.ndarray
    universal: np.ndarray
    universal_moment: np.ndarray
    prismatic_moment: np.ndarray


@dataclass
class InverseDynamicsResult:
    """Per-leg arrays are (6,) for one pose, (N, 6) for a batch; condition_number and singular are
    scalars or (N,). Forces are NaN where singular is True (no meaningful solution exists)."""

    forces: np.ndarray             # F = D - x (eq. 37), N; positive pushes the platform away
    static_forces: np.ndarray      # F0, massless legs and frictionless joints (eq. 41)
    condition_number: np.ndarray   # sigma_max / sigma_min of H
    singular: np.ndarray           # H singular in double precision or a universal joint degenerate
    leg_lengths: np.ndarray        # L
    leg_rates: np.ndarray          # L'
    leg_accelerations: np.ndarray  # L''
    x: np.ndarray                  # axial component of the spherical-joint force (eq. 22)
    D: np.ndarray                  # eq. (24)
    constraint: ConstraintForces | None = None

    @property
    def dynamic_forces(self):
        """F_d = F - F0 (eq. 42): the part due to leg inertia and joint friction."""
        return self.forces - self.static_forces

    @property
    def dynamic_fraction(self):
        """F_d / F; undefined (NaN or inf) where F crosses zero."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.dynamic_forces / self.forces


def inverse_dynamics(sp, position, rotation_matrix, linear_velocity, angular_velocity,
                     linear_acceleration, angular_acceleration, external_force=None,
                     external_moment=None, *, constraint_forces=False, printed_eq16=False):
    """Actuator forces for one pose ((3,), (3,3), ...) or a batch ((N,3), (N,3,3), ...).

    Velocities and accelerations are those of the platform reference point, base frame; the external
    force and moment act at the reference point and are given in the platform frame.
    printed_eq16=True reproduces the paper's eq. (16) as printed (double-counted upper-leg inertia).
    """
    pose = pack_pose(position, rotation_matrix, linear_velocity, angular_velocity,
                     linear_acceleration, angular_acceleration, external_force, external_moment)
    if pose is not None and not constraint_forces:
        out = np.empty((kernel.OUT_ROWS, 6))
        cond = kernel.inverse_dynamics_one(sp.packed, pose, bool(printed_eq16), out)
        L, Ld, Ldd, D, x, F, F0 = out
        return InverseDynamicsResult(F, F0, cond, not cond < kernel.SINGULAR_CONDITION, L, Ld, Ldd,
                                     x, D)
    single, poses = pack_poses(position, rotation_matrix, linear_velocity, angular_velocity,
                               linear_acceleration, angular_acceleration, external_force,
                               external_moment)
    n = len(poses)
    out = np.empty((n, kernel.OUT_ROWS, 6))
    cond = np.empty(n)
    kernel.inverse_dynamics_batch(sp.packed, poses, bool(printed_eq16), out, cond)
    L, Ld, Ldd, D, x, F, F0 = (out[:, row] for row in range(kernel.OUT_ROWS))
    constraint = None
    if constraint_forces:
        vec = np.empty((n, 5, 6, 3))
        mu = np.empty((n, 6))
        kernel.constraint_forces_batch(sp.packed, poses, bool(printed_eq16), out, vec, mu)
        constraint = ConstraintForces(*(vec[:, j] for j in range(4)), mu, vec[:, 4])
    result = InverseDynamicsResult(F, F0, cond, ~(cond < kernel.SINGULAR_CONDITION), L, Ld, Ldd,
                                   x, D, constraint)
    return _first(result) if single else result


def _first(r: InverseDynamicsResult) -> InverseDynamicsResult:
    c = r.constraint
    if c is not None:
        c = ConstraintForces(*(getattr(c, f)[0] for f in c.__dataclass_fields__))
    return InverseDynamicsResult(r.forces[0], r.static_forces[0], float(r.condition_number[0]),
                                 bool(r.singular[0]), r.leg_lengths[0], r.leg_rates[0],
                                 r.leg_accelerations[0], r.x[0], r.D[0], c)
