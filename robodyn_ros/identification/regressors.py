"""The joint-torque regressor: τ = Y(q, q̇, q̈) π, linear in the standard parameters π.

Columns: per moving body i, its 10 standard parameters in Pinocchio's order and frame,
``[m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` — mass, first moment and inertia
about the origin of joint frame i, in that frame (the model's canonical frame: for a URDF joint whose
axis is z it is the child link's frame, else that frame turned by the loader's Q, ``dynamics.urdf``);
then per joint j its drive parameters ``DRIVE_COLUMNS`` (armature: q̈_j; viscous: q̇_j; Coulomb for
each direction: 1 where q̇_j > 0, −1 where q̇_j < 0, both magnitudes non-negative) and, when asked
for, a constant ``offset``.

One forward pass. The torque body i's wrench (F, N) — linear in its 10 parameters, in frame i —
causes at joint j ≤ i is s_jᵀ (F, N), where s_j is joint j's axis carried out to frame i: at frame
j, (0, z) for a revolute joint and (z, 0) for a prismatic one, and from frame i-1 to frame i,
s_f ← Rᵀ(s_f + s_n × p), s_n ← Rᵀ s_n. So row j of body i's block is s_jᵀ A_i(ω, α, a): O(n) work
per row, n(n+1)/2 axis transports and 10-column dot products per state.
"""
import dataclasses
import warnings

import numpy as np

from ..dynamics.joint_frames import place_joint
from ..dynamics.layout import (ARMATURE, COULOMB_NEG, COULOMB_POS, FIRST_MOMENT, INERTIA_AT_ORIGIN,
                               JOINT_ORIGIN, MASS, PRISMATIC, VISCOUS)
from ..dynamics.link import ModelError
from ..dynamics.model import RobotModel
from ..dynamics.newton_euler import base_motion, link_motion
from ..kernels import (BOOL, C_MATRIX, FLOAT64, NDARRAY, PARAMETERS, VECTOR, Direct, by_rows,
                       inner_kernel, kernel)
from ..kernels import warm_up as _warm_up

BODY_COLUMNS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
DRIVE_COLUMNS = ("armature", "viscous", "coulomb_positive", "coulomb_negative")
OFFSET = "offset"
_AXIS_COLUMNS = 12 + 6   # a regressor workspace row: the pose of frame i, then s_j in the current frame


def columns(dof, offset=False):
    """The number of columns of Y for ``dof`` joints."""
    return dof * (len(BODY_COLUMNS) + len(DRIVE_COLUMNS) + bool(offset))


def parameter_names(model, offset=False):
    """``joint.parameter`` for every column of Y, e.g. ``joint_1.m``, ``joint_1.viscous``."""
    drive = DRIVE_COLUMNS + ((OFFSET,) if offset else ())
    return ([f"{j}.{c}" for j in model.joint_names for c in BODY_COLUMNS]
            + [f"{j}.{c}" for j in model.joint_names for c in drive])


def standard_parameters(model, offset=False):
    """π of ``model`` in Y's column order (module docstring): Y @ π is its inverse dynamics."""
    P, n = model.params, model.dof
    xx, yy, zz, xy, yz, xz = (INERTIA_AT_ORIGIN + k for k in range(6))
    bodies = P[:n, [MASS, FIRST_MOMENT, FIRST_MOMENT + 1, FIRST_MOMENT + 2, xx, xy, yy, xz, yz, zz]]
    drives = P[:n, [ARMATURE, VISCOUS, COULOMB_POS, COULOMB_NEG]]
    if offset:
        drives = np.hstack([drives, np.zeros((n, 1))])
    return np.concatenate([bodies.ravel(), drives.ravel()])


def with_parameters(model, pi, offset=False):
    """``model`` with the bodies and drives of the standard parameters ``pi`` (the inverse of
    ``standard_parameters``; an offset, which no model has, is left out). A body need not be a
    rigid one (``identification.urdf_write`` says where that matters); one with a first moment
    but no mass is refused: it has no centre of mass."""
    n = model.dof
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (columns(n, offset),):
        raise ModelError(f"standard parameters: expected {columns(n, offset)} (the regressor's "
                         f"layout for {n} joints, offset={bool(offset)}), got shape {pi.shape}")
    if not np.all(np.isfinite(pi)):
        bad = [name for name, x in zip(parameter_names(model, offset), pi) if not np.isfinite(x)]
        raise ModelError(f"standard parameters: not finite: {bad}")
    bodies = pi[:10 * n].reshape(n, 10)
    drives = pi[10 * n:].reshape(n, -1)
    links = []
    for link, (m, hx, hy, hz, xx, xy, yy, xz, yz, zz), drive in zip(model.links, bodies, drives):
        h = np.array([hx, hy, hz])
        if m == 0.0 and h.any():
            raise ModelError(f"standard parameters: joint '{link.name}': first moment {h} with "
                             "zero mass: no body has that (no centre of mass)")
        com = h / m if m != 0.0 else np.zeros(3)
        # parallel axis theorem, from the joint-frame origin to the COM
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) - m * (
            com @ com * np.eye(3) - np.outer(com, com))
        with warnings.catch_warnings():   # a body beyond the triangle inequality: the caller's call
            warnings.simplefilter("ignore")
            try:
                links.append(dataclasses.replace(   # the drive columns are named as Link's fields
                    link, mass=m, com=com, inertia=inertia, **dict(zip(DRIVE_COLUMNS, drive))))
            except ModelError as exc:
                raise ModelError(f"standard parameters: {exc}") from None
    return RobotModel(links, model.tip, model.gravity, model.name)


@inner_kernel
def regressor_into(P, q, qd, qdd, offset, ws, Y):
    """Y(q, qd, qdd) into ``Y`` (n, columns(n, offset)); ``ws`` is (n, 18)."""
    n = q.shape[0]
    drive = 5 if offset else 4
    for j in range(n):
        for c in range(Y.shape[1]):
            Y[j, c] = 0.0
        base = 10 * n + drive * j
        Y[j, base] = qdd[j]
        Y[j, base + 1] = qd[j]
        if qd[j] > 0.0:
            Y[j, base + 2] = 1.0
        elif qd[j] < 0.0:
            Y[j, base + 3] = -1.0
        if offset:
            Y[j, base + 4] = 1.0
    w0, w1, w2, a0, a1, a2, v0, v1, v2 = base_motion(P, n, True)
    S = 12                         # first column of s_j = (s_f, s_n) in ws[j]
    for i in range(n):
        place_joint(P, i, q[i], ws)
        w0, w1, w2, a0, a1, a2, v0, v1, v2 = link_motion(P, ws, i, qd[i], qdd[i], w0, w1, w2,
                                                         a0, a1, a2, v0, v1, v2)
        # carry the axes of joints 0..i-1 from frame i-1 into frame i, then add joint i's own
        px = ws[i, JOINT_ORIGIN]
        py = ws[i, JOINT_ORIGIN + 1]
        pz = ws[i, JOINT_ORIGIN + 2]
        for j in range(i):
            f0 = ws[j, S] + (ws[j, S + 4] * pz - ws[j, S + 5] * py)
            f1 = ws[j, S + 1] + (ws[j, S + 5] * px - ws[j, S + 3] * pz)
            f2 = ws[j, S + 2] + (ws[j, S + 3] * py - ws[j, S + 4] * px)
            n0 = ws[j, S + 3]
            n1 = ws[j, S + 4]
            n2 = ws[j, S + 5]
            ws[j, S] = ws[i, 0] * f0 + ws[i, 3] * f1 + ws[i, 6] * f2
            ws[j, S + 1] = ws[i, 1] * f0 + ws[i, 4] * f1 + ws[i, 7] * f2
            ws[j, S + 2] = ws[i, 2] * f0 + ws[i, 5] * f1 + ws[i, 8] * f2
            ws[j, S + 3] = ws[i, 0] * n0 + ws[i, 3] * n1 + ws[i, 6] * n2
            ws[j, S + 4] = ws[i, 1] * n0 + ws[i, 4] * n1 + ws[i, 7] * n2
            ws[j, S + 5] = ws[i, 2] * n0 + ws[i, 5] * n1 + ws[i, 8] * n2
        for k in range(6):
            ws[i, S + k] = 0.0
        if P[i, PRISMATIC] != 0.0:
            ws[i, S + 2] = 1.0
        else:
            ws[i, S + 5] = 1.0
        # body i's wrench is linear in its parameters: F = m v + a x h + w x (w x h),
        # N = I a + w x (I w) + h x v; each column below is s_j^T d(F, N)/d(parameter)
        ww = w0 * w0 + w1 * w1 + w2 * w2
        c = 10 * i
        for j in range(i + 1):
            sf0 = ws[j, S]
            sf1 = ws[j, S + 1]
            sf2 = ws[j, S + 2]
            sn0 = ws[j, S + 3]
            sn1 = ws[j, S + 4]
            sn2 = ws[j, S + 5]
            sw = sf0 * w0 + sf1 * w1 + sf2 * w2
            Y[j, c] = sf0 * v0 + sf1 * v1 + sf2 * v2
            # h: s_f x a + (s_f.w) w - |w|^2 s_f + v x s_n
            Y[j, c + 1] = (sf1 * a2 - sf2 * a1) + sw * w0 - ww * sf0 + (v1 * sn2 - v2 * sn1)
            Y[j, c + 2] = (sf2 * a0 - sf0 * a2) + sw * w1 - ww * sf1 + (v2 * sn0 - v0 * sn2)
            Y[j, c + 3] = (sf0 * a1 - sf1 * a0) + sw * w2 - ww * sf2 + (v0 * sn1 - v1 * sn0)
            # I: s_n . (E a + w x (E w)) for each symmetric unit matrix E
            Y[j, c + 4] = sn0 * a0 + sn1 * w0 * w2 - sn2 * w0 * w1                                # xx
            Y[j, c + 5] = sn0 * (a1 - w0 * w2) + sn1 * (a0 + w1 * w2) + sn2 * (w0 * w0 - w1 * w1)  # xy
            Y[j, c + 6] = -sn0 * w1 * w2 + sn1 * a1 + sn2 * w0 * w1                               # yy
            Y[j, c + 7] = sn0 * (a2 + w0 * w1) + sn1 * (w2 * w2 - w0 * w0) + sn2 * (a0 - w1 * w2)  # xz
            Y[j, c + 8] = sn0 * (w1 * w1 - w2 * w2) + sn1 * (a2 - w0 * w1) + sn2 * (a1 + w0 * w2)  # yz
            Y[j, c + 9] = sn0 * w1 * w2 - sn1 * w0 * w2 + sn2 * a2                                # zz


@kernel
def regressor_one(P, q, qd, qdd, offset, Y):
    """One state into ``Y``, which the caller allocates."""
    n = P.shape[0] - 1
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or Y.shape[0] != n:
        raise ValueError("expected q, qd and qdd of one value per joint of the model")
    regressor_into(P, q, qd, qdd, offset, np.empty((n, _AXIS_COLUMNS)), Y)


@kernel
def regressor_batch(P, q, qd, qdd, offset, Y):
    """One state per row of q, qd, qdd (N, n) into ``Y`` (N, n, columns)."""
    ws = np.empty((q.shape[1], _AXIS_COLUMNS))
    for k in range(q.shape[0]):
        regressor_into(P, q[k], qd[k], qdd[k], offset, ws, Y[k])


_ONE = Direct(regressor_one, PARAMETERS, VECTOR, VECTOR, VECTOR, BOOL, C_MATRIX)


def regressor(model, q, qd, qdd, offset=False):
    """Y with Y @ standard_parameters(model, offset) = model.inverse_dynamics(q, qd, qdd): (n, p)
    for one state, (N, n, p) for a batch of N (shared among the cores)."""
    n, p = model.dof, columns(model.dof, offset)
    offset = bool(offset)
    if (q.__class__ is qd.__class__ is qdd.__class__ is NDARRAY and q.dtype is FLOAT64
            and qd.dtype is FLOAT64 and qdd.dtype is FLOAT64 and q.ndim == qd.ndim == qdd.ndim == 1):
        Y = np.empty((n, p))
        _ONE.call(model.params, q, qd, qdd, offset, Y)
        return Y
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    if q.ndim == 1:
        return regressor(model, q, qd, qdd, offset)
    if not (q.ndim == 2 and q.shape[1] == n and q.shape == qd.shape == qdd.shape):
        raise ValueError(f"expected batches of shape (N, {n}) alike, got "
                         f"{[x.shape for x in (q, qd, qdd)]}")
    q, qd, qdd = (np.ascontiguousarray(x) for x in (q, qd, qdd))
    Y = np.empty((q.shape[0], n, p))
    by_rows(lambda a, b: regressor_batch(model.params, q[a:b], qd[a:b], qdd[a:b], offset, Y[a:b]),
            q.shape[0])
    return Y


def warm_up(notify=print):
    """Compile (or load from numba's cache) the regressor kernels, one state and a batch, with and
    without the offset column, on a one-link arm whose argument types match any model's."""
    def exercise():
        from ..dynamics.link import Link
        model = RobotModel([Link("j", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])
        q, Q = np.zeros(1), np.zeros((1, 1))
        for offset in (False, True):
            regressor(model, q, q, q, offset)
            regressor(model, Q, Q, Q, offset)
    return _warm_up("regressor kernels", exercise, notify)
