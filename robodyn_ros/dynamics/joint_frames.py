"""Scalar building blocks shared by the kernels. ``register_jitable`` keeps them plain Python
functions (so the kernels still run on counting scalars) that numba inlines when it compiles."""
import numpy as np
from numba.extending import register_jitable

from .layout import PRISMATIC


@register_jitable
def place_joint(r, qi, row):
    """Write ^{i-1}R_i (row[0:9], row-major) and p_i (row[9:12]) for joint value qi:
    R0 Rz(qi) and p0 for a revolute joint, R0 and p0 + qi R0 e_z for a prismatic one."""
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


@register_jitable
def to_parent(row, f0, f1, f2, n0, n1, n2):
    """A force f and a moment n about origin i, in frame i, seen in frame i-1: (R f, R n + p x R f)."""
    g0 = row[0] * f0 + row[1] * f1 + row[2] * f2
    g1 = row[3] * f0 + row[4] * f1 + row[5] * f2
    g2 = row[6] * f0 + row[7] * f1 + row[8] * f2
    m0 = row[0] * n0 + row[1] * n1 + row[2] * n2
    m1 = row[3] * n0 + row[4] * n1 + row[5] * n2
    m2 = row[6] * n0 + row[7] * n1 + row[8] * n2
    return (g0, g1, g2,
            m0 + (row[10] * g2 - row[11] * g1),
            m1 + (row[11] * g0 - row[9] * g2),
            m2 + (row[9] * g1 - row[10] * g0))
