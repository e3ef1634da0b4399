"""Joint-space inertia matrix M(q) by the composite-rigid-body algorithm (Walker & Orin), the fast
path for forward dynamics. ``model.mass_matrix(q, method="strobe")`` is the independent check: n
Newton–Euler passes with unit accelerations (001, end of §3).
"""
import numpy as np

from ..kernels import inner_kernel, kernel
from .joint_frames import place_joint, rotate, to_parent
from .layout import (ARMATURE, COMPOSITE_FIRST_MOMENT, COMPOSITE_INERTIA, COMPOSITE_MASS, CRBA_COLUMNS,
                     FIRST_MOMENT, INERTIA_AT_ORIGIN, JOINT_ORIGIN, MASS, PRISMATIC)
from .newton_euler import check_sizes


@inner_kernel
def crba_into(P, q, ws, M):
    n = q.shape[0]
    for i in range(n):
        r = P[i]
        row = ws[i]
        place_joint(r, q[i], row)
        row[COMPOSITE_MASS] = r[MASS]
        for k in range(3):
            row[COMPOSITE_FIRST_MOMENT + k] = r[FIRST_MOMENT + k]
        for k in range(6):
            row[COMPOSITE_INERTIA + k] = r[INERTIA_AT_ORIGIN + k]
    # composite bodies, tip to base: add body i (moved into frame i-1) to body i-1
    for i in range(n - 1, 0, -1):
        row = ws[i]
        par = ws[i - 1]
        m = row[COMPOSITE_MASS]
        px = row[JOINT_ORIGIN]
        py = row[JOINT_ORIGIN + 1]
        pz = row[JOINT_ORIGIN + 2]
        # h rotated into frame i-1
        hx, hy, hz = rotate(row, row[COMPOSITE_FIRST_MOMENT], row[COMPOSITE_FIRST_MOMENT + 1],
                            row[COMPOSITE_FIRST_MOMENT + 2])
        # R I R^T, with I symmetric
        Ixx = row[COMPOSITE_INERTIA]
        Iyy = row[COMPOSITE_INERTIA + 1]
        Izz = row[COMPOSITE_INERTIA + 2]
        Ixy = row[COMPOSITE_INERTIA + 3]
        Iyz = row[COMPOSITE_INERTIA + 4]
        Ixz = row[COMPOSITE_INERTIA + 5]
        # B = R I (rows of R times I)
        B00 = row[0] * Ixx + row[1] * Ixy + row[2] * Ixz
        B01 = row[0] * Ixy + row[1] * Iyy + row[2] * Iyz
        B02 = row[0] * Ixz + row[1] * Iyz + row[2] * Izz
        B10 = row[3] * Ixx + row[4] * Ixy + row[5] * Ixz
        B11 = row[3] * Ixy + row[4] * Iyy + row[5] * Iyz
        B12 = row[3] * Ixz + row[4] * Iyz + row[5] * Izz
        B20 = row[6] * Ixx + row[7] * Ixy + row[8] * Ixz
        B21 = row[6] * Ixy + row[7] * Iyy + row[8] * Iyz
        B22 = row[6] * Ixz + row[7] * Iyz + row[8] * Izz
        Jxx = B00 * row[0] + B01 * row[1] + B02 * row[2]
        Jyy = B10 * row[3] + B11 * row[4] + B12 * row[5]
        Jzz = B20 * row[6] + B21 * row[7] + B22 * row[8]
        Jxy = B00 * row[3] + B01 * row[4] + B02 * row[5]
        Jyz = B10 * row[6] + B11 * row[7] + B12 * row[8]
        Jxz = B00 * row[6] + B01 * row[7] + B02 * row[8]
        # parallel-axis shift by p: (2 p.h + m p.p) 1 - h p^T - p h^T - m p p^T
        d = 2.0 * (px * hx + py * hy + pz * hz) + m * (px * px + py * py + pz * pz)
        par[COMPOSITE_MASS] += m
        par[COMPOSITE_FIRST_MOMENT] += hx + m * px
        par[COMPOSITE_FIRST_MOMENT + 1] += hy + m * py
        par[COMPOSITE_FIRST_MOMENT + 2] += hz + m * pz
        par[COMPOSITE_INERTIA] += Jxx + d - 2.0 * hx * px - m * px * px
        par[COMPOSITE_INERTIA + 1] += Jyy + d - 2.0 * hy * py - m * py * py
        par[COMPOSITE_INERTIA + 2] += Jzz + d - 2.0 * hz * pz - m * pz * pz
        par[COMPOSITE_INERTIA + 3] += Jxy - hx * py - px * hy - m * px * py
        par[COMPOSITE_INERTIA + 4] += Jyz - hy * pz - py * hz - m * py * pz
        par[COMPOSITE_INERTIA + 5] += Jxz - hx * pz - px * hz - m * px * pz
    # column i: the wrench the composite body i needs for a unit rate of joint i, carried to the base
    for i in range(n):
        row = ws[i]
        hx = row[COMPOSITE_FIRST_MOMENT]
        hy = row[COMPOSITE_FIRST_MOMENT + 1]
        hz = row[COMPOSITE_FIRST_MOMENT + 2]
        if P[i, PRISMATIC] != 0.0:
            # s = (0; z): f = m z, n = h x z
            f0 = 0.0
            f1 = 0.0
            f2 = row[COMPOSITE_MASS]
            n0 = hy
            n1 = -hx
            n2 = 0.0
            M[i, i] = f2 + P[i, ARMATURE]
        else:
            # s = (z; 0): f = z x h, n = I z
            f0 = -hy
            f1 = hx
            f2 = 0.0
            n0 = row[COMPOSITE_INERTIA + 5]
            n1 = row[COMPOSITE_INERTIA + 4]
            n2 = row[COMPOSITE_INERTIA + 2]
            M[i, i] = n2 + P[i, ARMATURE]
        for j in range(i, 0, -1):
            f0, f1, f2, n0, n1, n2 = to_parent(ws[j], f0, f1, f2, n0, n1, n2)
            if P[j - 1, PRISMATIC] != 0.0:
                M[j - 1, i] = f2
            else:
                M[j - 1, i] = n2
            M[i, j - 1] = M[j - 1, i]
    return M



@kernel
def crba(P, q, M):
    """M(q) into ``M`` (n, n), allocated by the caller (cheaper in NumPy, see ``newton_euler.rnea``)."""
    check_sizes(P, q, q, q)
    crba_into(P, q, np.empty((q.shape[0], CRBA_COLUMNS)), M)


@kernel
def crba_batch(P, q, M):
    N, n = q.shape
    ws = np.empty((n, CRBA_COLUMNS))
    for k in range(N):
        crba_into(P, q[k], ws, M[k])
