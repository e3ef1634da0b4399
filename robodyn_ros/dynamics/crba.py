"""Joint-space inertia matrix M(q) by the composite-rigid-body algorithm (Walker & Orin), the fast
path for forward dynamics. ``model.mass_matrix(q, method="strobe")`` is the independent check: n
Newton–Euler passes with unit accelerations (001, end of §3).
"""

from ..plumbing.kernels import as_declared, inline, kernel, scratch, state_kernel
from .joint_frames import inertia, place_joint, rotate, to_parent
from .layout import (ARMATURE, COMPOSITE_FIRST_MOMENT, COMPOSITE_INERTIA, COMPOSITE_MASS, CRBA_COLUMNS,
                     FIRST_MOMENT, INERTIA_AT_ORIGIN, JOINT_ORIGIN, MASS, PRISMATIC)
from .newton_euler import check_sizes


@inline
def crba_into(P, q, ws, M):
    n = q.shape[0]
    for i in range(n):
        place_joint(P, i, q[i], ws)
        ws[i, COMPOSITE_MASS] = P[i, MASS]
        ws[i, COMPOSITE_FIRST_MOMENT] = P[i, FIRST_MOMENT]
        ws[i, COMPOSITE_FIRST_MOMENT + 1] = P[i, FIRST_MOMENT + 1]
        ws[i, COMPOSITE_FIRST_MOMENT + 2] = P[i, FIRST_MOMENT + 2]
        ws[i, COMPOSITE_INERTIA] = P[i, INERTIA_AT_ORIGIN]
        ws[i, COMPOSITE_INERTIA + 1] = P[i, INERTIA_AT_ORIGIN + 1]
        ws[i, COMPOSITE_INERTIA + 2] = P[i, INERTIA_AT_ORIGIN + 2]
        ws[i, COMPOSITE_INERTIA + 3] = P[i, INERTIA_AT_ORIGIN + 3]
        ws[i, COMPOSITE_INERTIA + 4] = P[i, INERTIA_AT_ORIGIN + 4]
        ws[i, COMPOSITE_INERTIA + 5] = P[i, INERTIA_AT_ORIGIN + 5]
    # composite bodies, tip to base: add body i (moved into frame i-1) to body i-1
    for i in range(n - 1, 0, -1):
        m = ws[i, COMPOSITE_MASS]
        px = ws[i, JOINT_ORIGIN]
        py = ws[i, JOINT_ORIGIN + 1]
        pz = ws[i, JOINT_ORIGIN + 2]
        # h rotated into frame i-1
        hx, hy, hz = rotate(ws, i, ws[i, COMPOSITE_FIRST_MOMENT], ws[i, COMPOSITE_FIRST_MOMENT + 1],
                            ws[i, COMPOSITE_FIRST_MOMENT + 2])
        # R I R^T, with I symmetric
        Ixx, Iyy, Izz, Ixy, Iyz, Ixz = inertia(ws, i, COMPOSITE_INERTIA)
        # B = R I (rows of R times I)
        B00 = ws[i, 0] * Ixx + ws[i, 1] * Ixy + ws[i, 2] * Ixz
        B01 = ws[i, 0] * Ixy + ws[i, 1] * Iyy + ws[i, 2] * Iyz
        B02 = ws[i, 0] * Ixz + ws[i, 1] * Iyz + ws[i, 2] * Izz
        B10 = ws[i, 3] * Ixx + ws[i, 4] * Ixy + ws[i, 5] * Ixz
        B11 = ws[i, 3] * Ixy + ws[i, 4] * Iyy + ws[i, 5] * Iyz
        B12 = ws[i, 3] * Ixz + ws[i, 4] * Iyz + ws[i, 5] * Izz
        B20 = ws[i, 6] * Ixx + ws[i, 7] * Ixy + ws[i, 8] * Ixz
        B21 = ws[i, 6] * Ixy + ws[i, 7] * Iyy + ws[i, 8] * Iyz
        B22 = ws[i, 6] * Ixz + ws[i, 7] * Iyz + ws[i, 8] * Izz
        Jxx = B00 * ws[i, 0] + B01 * ws[i, 1] + B02 * ws[i, 2]
        Jyy = B10 * ws[i, 3] + B11 * ws[i, 4] + B12 * ws[i, 5]
        Jzz = B20 * ws[i, 6] + B21 * ws[i, 7] + B22 * ws[i, 8]
        Jxy = B00 * ws[i, 3] + B01 * ws[i, 4] + B02 * ws[i, 5]
        Jyz = B10 * ws[i, 6] + B11 * ws[i, 7] + B12 * ws[i, 8]
        Jxz = B00 * ws[i, 6] + B01 * ws[i, 7] + B02 * ws[i, 8]
        # parallel-axis shift by p: (2 p.h + m p.p) 1 - h p^T - p h^T - m p p^T
        d = 2.0 * (px * hx + py * hy + pz * hz) + m * (px * px + py * py + pz * pz)
        ws[i - 1, COMPOSITE_MASS] += m
        ws[i - 1, COMPOSITE_FIRST_MOMENT] += hx + m * px
        ws[i - 1, COMPOSITE_FIRST_MOMENT + 1] += hy + m * py
        ws[i - 1, COMPOSITE_FIRST_MOMENT + 2] += hz + m * pz
        ws[i - 1, COMPOSITE_INERTIA] += Jxx + d - 2.0 * hx * px - m * px * px
        ws[i - 1, COMPOSITE_INERTIA + 1] += Jyy + d - 2.0 * hy * py - m * py * py
        ws[i - 1, COMPOSITE_INERTIA + 2] += Jzz + d - 2.0 * hz * pz - m * pz * pz
        ws[i - 1, COMPOSITE_INERTIA + 3] += Jxy - hx * py - px * hy - m * px * py
        ws[i - 1, COMPOSITE_INERTIA + 4] += Jyz - hy * pz - py * hz - m * py * pz
        ws[i - 1, COMPOSITE_INERTIA + 5] += Jxz - hx * pz - px * hz - m * px * pz
    # column i: the wrench the composite body i needs for a unit rate of joint i, carried to the base
    for i in range(n):
        hx = ws[i, COMPOSITE_FIRST_MOMENT]
        hy = ws[i, COMPOSITE_FIRST_MOMENT + 1]
        hz = ws[i, COMPOSITE_FIRST_MOMENT + 2]
        if P[i, PRISMATIC] != 0.0:
            # s = (0; z): f = m z, n = h x z
            f0 = 0.0
            f1 = 0.0
            f2 = ws[i, COMPOSITE_MASS]
            n0 = hy
            n1 = -hx
            n2 = 0.0
            M[i, i] = f2 + P[i, ARMATURE]
        else:
            # s = (z; 0): f = z x h, n = I z
            f0 = -hy
            f1 = hx
            f2 = 0.0
            n0 = ws[i, COMPOSITE_INERTIA + 5]
            n1 = ws[i, COMPOSITE_INERTIA + 4]
            n2 = ws[i, COMPOSITE_INERTIA + 2]
            M[i, i] = n2 + P[i, ARMATURE]
        for j in range(i, 0, -1):
            f0, f1, f2, n0, n1, n2 = to_parent(ws, j, f0, f1, f2, n0, n1, n2)
            if P[j - 1, PRISMATIC] != 0.0:
                M[j - 1, i] = f2
            else:
                M[j - 1, i] = n2
            M[i, j - 1] = M[j - 1, i]


@state_kernel
def crba(P, q, M):
    """M(q) into ``M`` (n, n), allocated by the caller (cheaper in NumPy, see ``newton_euler.rnea``);
    the workspace on the stack (``scratch``)."""
    check_sizes(P, q, q, q)
    crba_into(P, q, scratch(q.shape[0], CRBA_COLUMNS), M)


@kernel
def crba_batch(P, q, M):
    """``crba`` on each row of ``q`` into ``M`` (N, n, n): its compiled version called, not
    compiled into this kernel once more (``newton_euler.rnea_batch``)."""
    for k in range(q.shape[0]):
        crba(P, as_declared(q[k]), M[k])
