"""Inverse dynamics of the Stewart platform (Dasgupta & Mruthyunjaya 1998, sections 2-3 and 4.4)."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..plumbing.kernels import BOOL, C_MATRIX, FLOAT64, MATRIX, NDARRAY, PARAMETER_VECTOR, VECTOR, Direct, by_rows
from . import kernel, universal
from .poses import pack_poses


@dataclass
class ConstraintForces:
    """Joint reactions per leg (eqs. 21, 26-29, 17), base-frame components.

    spherical (F_s): force of the platform on the leg at the spherical joint (the leg pushes the
    platform with -F_s); prismatic (F_p): force of the lower part on the upper part, of which
    prismatic_constraint (F_c) is the part normal to the leg; universal (F_u): force of the base on
    the lower part; universal_moment (M_u): constraint moment of the base on the lower part at the
    universal joint, along universal_moment_axis (leg model no_spin: the leg axis s, as in the paper;
    universal: k x y, normal to both joint axes); prismatic_moment (M_p): moment of the lower part on
    the upper part about the point prismatic_point * s on the leg axis.
    """

    spherical: np.ndarray
    prismatic: np.ndarray
    prismatic_constraint: np.ndarray
    universal: np.ndarray
    universal_moment: np.ndarray
    prismatic_moment: np.ndarray
    universal_moment_axis: np.ndarray


class InverseDynamicsResult:
    """Per-leg arrays are (6,) for one pose, (N, 6) for a batch; condition_number and singular are
    scalars or (N,). Forces are NaN where singular is True (no meaningful solution exists).

    The per-leg fields are views into the one output array the kernel filled (rows L, L', L'', D, x, F,
    F0), made when read: a single-pose call builds nothing else."""

    __slots__ = ("_out", "condition_number", "constraint")

    def __init__(self, out, condition_number, constraint=None):
        self._out = out                            # (OUT_ROWS, 6) or (OUT_ROWS, N, 6)
        self.condition_number = condition_number   # sigma_max / sigma_min of H: float or (N,)
        self.constraint = constraint               # ConstraintForces when asked for

    forces = property(lambda self: self._out[kernel.O_F],
                      doc="F = D - x (eq. 37), N; positive pushes the platform away")
    static_forces = property(lambda self: self._out[kernel.O_F0],
                             doc="F0, massless legs and frictionless joints (eq. 41)")
    leg_lengths = property(lambda self: self._out[kernel.O_L], doc="L")
    leg_rates = property(lambda self: self._out[kernel.O_LD], doc="L'")
    leg_accelerations = property(lambda self: self._out[kernel.O_LDD], doc="L''")
    x = property(lambda self: self._out[kernel.O_X],
                 doc="axial component of the spherical-joint force (eq. 22)")
    D = property(lambda self: self._out[kernel.O_D], doc="eq. (24)")

    @property
    def singular(self):
        """H singular in double precision (condition number beyond 1e12 or inf) or a universal joint
        degenerate: bool, or (N,) bool."""
        c = self.condition_number
        if isinstance(c, float):
            return not c < kernel.SINGULAR_CONDITION
        return ~(c < kernel.SINGULAR_CONDITION)

    @property
    def dynamic_forces(self):
        """F_d = F - F0 (eq. 42): the part due to leg inertia and joint friction."""
        return self.forces - self.static_forces

    @property
    def dynamic_fraction(self):
        """F_d / F; undefined (NaN or inf) where F crosses zero."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.dynamic_forces / self.forces

    def __repr__(self):
        return (f"InverseDynamicsResult(forces={self.forces!r}, "
                f"condition_number={self.condition_number!r}, singular={self.singular!r})")


_ZERO3 = np.zeros(3)   # only read
# one pose: its guard checks every argument's type, so numba need not (kernels.Direct)
_ONE_POSE = Direct(kernel.inverse_dynamics_args, PARAMETER_VECTOR, VECTOR, MATRIX, VECTOR, VECTOR,
                   VECTOR, VECTOR, VECTOR, VECTOR, BOOL, C_MATRIX)


def inverse_dynamics(sp, position, rotation_matrix, linear_velocity, angular_velocity,
                     linear_acceleration, angular_acceleration, external_force=None,
                     external_moment=None, *, constraint_forces=False, printed_eq16=False):
    """Actuator forces for one pose ((3,), (3,3), ...) or a batch ((N,3), (N,3,3), ...), with the legs
    of sp.leg_model ("no_spin": the paper's; "universal": exact universal joints, universal.py).

    Velocities and accelerations are those of the platform reference point, base frame; the external
    force and moment act at the reference point and are given in the platform frame.
    printed_eq16=True reproduces the paper's eq. (16) as printed (double-counted upper-leg inertia);
    it exists for the paper's model only.
    """
    universal_legs = sp.leg_model == "universal"
    if universal_legs and printed_eq16:
        raise ValueError("printed_eq16 reproduces a misprint of the paper's no_spin leg model; "
                         "this platform has leg_model 'universal'")
    # One pose given as float64 arrays goes straight into one compiled call, which checks the
    # sizes (-1: not one pose); None is passed as zeros. Anything else takes the general path,
    # which converts or says what is wrong.
    v = _ZERO3 if linear_velocity is None else linear_velocity
    w = _ZERO3 if angular_velocity is None else angular_velocity
    a = _ZERO3 if linear_acceleration is None else linear_acceleration
    al = _ZERO3 if angular_acceleration is None else angular_acceleration
    f = _ZERO3 if external_force is None else external_force
    m = _ZERO3 if external_moment is None else external_moment
    R = rotation_matrix
    if (not constraint_forces and not universal_legs
            and position.__class__ is R.__class__ is v.__class__ is w.__class__ is a.__class__
            is al.__class__ is f.__class__ is m.__class__ is NDARRAY
            and position.dtype is FLOAT64 and R.dtype is FLOAT64 and v.dtype is FLOAT64
            and w.dtype is FLOAT64 and a.dtype is FLOAT64 and al.dtype is FLOAT64
            and f.dtype is FLOAT64 and m.dtype is FLOAT64
            and position.ndim == 1 and R.ndim == 2 and v.ndim == 1 and w.ndim == 1
            and a.ndim == 1 and al.ndim == 1 and f.ndim == 1 and m.ndim == 1):
        out = np.empty((kernel.OUT_ROWS, 6))
        cond = _ONE_POSE.call(sp.packed, position, R, v, w, a, al, f, m, bool(printed_eq16), out)
        if cond >= 0.0:
            return InverseDynamicsResult(out, cond)
    single, poses = pack_poses(position, rotation_matrix, linear_velocity, angular_velocity,
                               linear_acceleration, angular_acceleration, external_force,
                               external_moment)
    n = len(poses)
    out = np.empty((kernel.OUT_ROWS, n, 6))
    cond = np.empty(n)
    if universal_legs:
        solve = universal.inverse_dynamics_batch
    else:
        solve = functools.partial(kernel.inverse_dynamics_batch, printed_eq16=bool(printed_eq16))

    # each core's share of the rows is written straight into out (no block of its own to copy:
    # allocating, first touching and copying those cost a third of a 2-core batch)
    by_rows(lambda start, stop: solve(sp.packed, poses, out=out, cond=cond, start=start,
                                      stop=stop), n)
    constraint = None
    if constraint_forces:
        vec = np.empty((6, n, 6, 3))
        mu = np.empty((n, 6))
        if universal_legs:
            universal.constraint_forces_batch(sp.packed, poses, out, vec, mu)
        else:
            kernel.constraint_forces_batch(sp.packed, poses, bool(printed_eq16), out, vec, mu)
        pick = 0 if single else slice(None)
        constraint = ConstraintForces(vec[0, pick], vec[1, pick], vec[2, pick], vec[3, pick],
                                      mu[pick], vec[4, pick], vec[5, pick])
    if single:
        return InverseDynamicsResult(out[:, 0], float(cond[0]), constraint)
    return InverseDynamicsResult(out, cond, constraint)
