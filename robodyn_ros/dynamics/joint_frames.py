"""Scalar building blocks shared by the kernels, compiled into every kernel that calls them (``inline``);
their plain Python source is what the kernels' interpreted twins call (on counting scalars too).

Each takes a 2-D array and a row index, never a row view, and has no loop (robodyn_ros.plumbing.kernels says
why: reference counting).
"""
import numpy as np

from ..plumbing.kernels import inline

from .layout import PRISMATIC


@inline
def place_joint(P, i, qi, W):
    """Write ^{i-1}R_i (W[i, 0:9], row-major) and p_i (W[i, 9:12]) for joint value qi from row i of
    P (layout: the same columns): R0 Rz(qi) and p0 for a revolute joint, R0 and p0 + qi R0 e_z for a
    prismatic one."""
    if P[i, PRISMATIC] != 0.0:
        W[i, 0] = P[i, 0]
        W[i, 1] = P[i, 1]
        W[i, 2] = P[i, 2]
        W[i, 3] = P[i, 3]
        W[i, 4] = P[i, 4]
        W[i, 5] = P[i, 5]
        W[i, 6] = P[i, 6]
        W[i, 7] = P[i, 7]
        W[i, 8] = P[i, 8]
        W[i, 9] = P[i, 9] + P[i, 2] * qi
        W[i, 10] = P[i, 10] + P[i, 5] * qi
        W[i, 11] = P[i, 11] + P[i, 8] * qi
    else:
        c = np.cos(qi)
        s = np.sin(qi)
        W[i, 0] = P[i, 0] * c + P[i, 1] * s
        W[i, 1] = P[i, 1] * c - P[i, 0] * s
        W[i, 2] = P[i, 2]
        W[i, 3] = P[i, 3] * c + P[i, 4] * s
        W[i, 4] = P[i, 4] * c - P[i, 3] * s
        W[i, 5] = P[i, 5]
        W[i, 6] = P[i, 6] * c + P[i, 7] * s
        W[i, 7] = P[i, 7] * c - P[i, 6] * s
        W[i, 8] = P[i, 8]
        W[i, 9] = P[i, 9]
        W[i, 10] = P[i, 10]
        W[i, 11] = P[i, 11]


@inline
def rotate(R, i, x0, x1, x2):
    """R x for the rotation stored row-major in R[i, 0:9]."""
    return (R[i, 0] * x0 + R[i, 1] * x1 + R[i, 2] * x2,
            R[i, 3] * x0 + R[i, 4] * x1 + R[i, 5] * x2,
            R[i, 6] * x0 + R[i, 7] * x1 + R[i, 8] * x2)


@inline
def rotate_back(R, i, x0, x1, x2):
    """Rᵀ x for the rotation stored row-major in R[i, 0:9]: a vector of frame i-1 seen in frame i."""
    return (R[i, 0] * x0 + R[i, 3] * x1 + R[i, 6] * x2,
            R[i, 1] * x0 + R[i, 4] * x1 + R[i, 7] * x2,
            R[i, 2] * x0 + R[i, 5] * x1 + R[i, 8] * x2)


@inline
def to_parent(W, i, f0, f1, f2, n0, n1, n2):
    """A force f and a moment n about origin i, in frame i, seen in frame i-1 (the pose in row i of
    W): (R f, R n + p x R f)."""
    g0, g1, g2 = rotate(W, i, f0, f1, f2)
    m0, m1, m2 = rotate(W, i, n0, n1, n2)
    return (g0, g1, g2,
            m0 + (W[i, 10] * g2 - W[i, 11] * g1),
            m1 + (W[i, 11] * g0 - W[i, 9] * g2),
            m2 + (W[i, 9] * g1 - W[i, 10] * g0))


@inline
def inertia(A, i, c):
    """The inertia stored as xx yy zz xy yz xz from column c of row i of A."""
    return A[i, c], A[i, c + 1], A[i, c + 2], A[i, c + 3], A[i, c + 4], A[i, c + 5]
