"""Scalar building blocks shared by the kernels: ``inline`` keeps them plain Python functions (so the
kernels still run interpreted on counting scalars) that numba compiles into the kernels that call them."""
import numpy as np

from ..kernels import inline

from .layout import PRISMATIC


@inline
def place_joint(r, qi, row):
    """Write ^{i-1}R_i (row[0:9], row-major) and p_i (row[9:12]) for joint value qi from the
    parameter row r (layout: the same columns): R0 Rz(qi) and p0 for a revolute joint, R0 and
    p0 + qi R0 e_z for a prismatic one."""
    if r[PRISMATIC] != 0.0:
        for k in range(9):
            row[k] = r[k]
        row[9] = r[9] + r[2] * qi
        row[10] = r[10] + r[5] * qi
        row[11] = r[11] + r[8] * qi
    else:
        c = np.cos(qi)
        s = np.sin(qi)
        for k in range(3):
            row[3 * k] = r[3 * k] * c + r[3 * k + 1] * s
            row[3 * k + 1] = r[3 * k + 1] * c - r[3 * k] * s
            row[3 * k + 2] = r[3 * k + 2]
        for k in range(9, 12):
            row[k] = r[k]


@inline
def rotate(R, x0, x1, x2):
    """R x for a rotation stored row-major in R[0:9]."""
    return (R[0] * x0 + R[1] * x1 + R[2] * x2,
            R[3] * x0 + R[4] * x1 + R[5] * x2,
            R[6] * x0 + R[7] * x1 + R[8] * x2)


@inline
def to_parent(row, f0, f1, f2, n0, n1, n2):
    """A force f and a moment n about origin i, in frame i, seen in frame i-1: (R f, R n + p x R f)."""
    g0, g1, g2 = rotate(row, f0, f1, f2)
    m0, m1, m2 = rotate(row, n0, n1, n2)
    return (g0, g1, g2,
            m0 + (row[10] * g2 - row[11] * g1),
            m1 + (row[11] * g0 - row[9] * g2),
            m2 + (row[9] * g1 - row[10] * g0))
