"""A run's regression without its regressor matrix: per joint the Gram matrix of [Y_j y_j],
accumulated over chunks of states (no rclpy here).

Every figure the identification reports of its training data is a quadratic form of these:
WᵀW, Wᵀy and yᵀy for the least squares (``estimate.least_squares_from_gram``) and the consistent
estimate (``estimate.consistent_from_gram``); |y_j − Y_j π|² = [π, −1]ᵀ A_j [π, −1] for each joint's
residual of any π. So memory is one chunk of Y (``CHUNK`` states) plus n small matrices, whatever
the run's length. Joint j's row of Y is zero for the bodies before j and the other joints' drives
(``Layout.joint_columns``): its matrix covers its own columns only, a quarter of the work of the
whole row for a 7-joint arm. A joint's rows at rest can be left out of its matrix (``rest``: its
friction there is unknown, doc/identification.md), so each joint counts its own ``rows``.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..plumbing.kernels import one_blas_thread

CHUNK = 4096   # states per regressor chunk: 4096 × 7 × 98 doubles = 22 MB


@dataclasses.dataclass(frozen=True)
class JointGrams:
    """Per joint j, ``columns[j]`` (its columns of Y) and ``blocks[j]`` = [Y_j y_j]ᵀ[Y_j y_j] over
    those columns and its torque (square, one more than its columns); ``states`` added; ``p`` Y's
    columns; ``rows[j]`` the states in joint j's matrix (all of them unless some were left out)."""
    columns: tuple
    blocks: tuple
    states: int
    p: int
    rows: np.ndarray = None

    def __post_init__(self):
        rows = np.full(len(self.blocks), self.states) if self.rows is None else np.asarray(self.rows)
        object.__setattr__(self, "rows", rows)

    def matrix(self, columns, weights=None):
        """M = Σ_j w_j² [Y_j[:, columns] y_j]ᵀ[Y_j[:, columns] y_j] over the global ``columns``."""
        columns = np.asarray(columns)
        where = np.full(self.p, -1)
        where[columns] = np.arange(len(columns))
        M = np.zeros((len(columns) + 1, len(columns) + 1))
        for j, (own, A) in enumerate(zip(self.columns, self.blocks)):
            keep = np.append(np.flatnonzero(where[own] >= 0), len(own))
            target = np.append(where[own][keep[:-1]], len(columns))
            M[np.ix_(target, target)] += (1.0 if weights is None else weights[j] ** 2) * A[np.ix_(keep, keep)]
        return M

    def residual_squares(self, pi):
        """|y_j − Y_j π|² per joint (n,) of a parameter vector of Y's layout."""
        pi = np.asarray(pi, dtype=float)
        values = []
        for own, A in zip(self.columns, self.blocks):
            v = np.append(pi[own], -1.0)
            values.append(max(float(v @ A @ v), 0.0))
        return np.array(values)

    def torque_squares(self):
        return np.array([A[-1, -1] for A in self.blocks])


def accumulate(layout, q, qd, qdd, tau, chunk=CHUNK, rest=None, coulomb=None):
    """The JointGrams of states (q, q̇, q̈) (N, n) and torques τ (N, n) for ``layout``'s regressor;
    ``rest`` (N, n) bool: joint j's rows left out of its matrix where ``rest[:, j]``; ``coulomb``
    (N, m): the Coulomb columns (``Layout.regressor``)."""
    n, p = layout.model.dof, len(layout.names)
    columns = tuple(layout.joint_columns(j) for j in range(n))
    blocks = [np.zeros((len(c) + 1, len(c) + 1)) for c in columns]
    buffers = [np.empty((chunk, len(c) + 1)) for c in columns]
    # small products, many of them: BLAS's threads only contend (18x slower on a loaded 2-core machine)
    with one_blas_thread():
        for start in range(0, len(q), chunk):
            rows = slice(start, start + chunk)
            Y = layout.regressor(q[rows], qd[rows], qdd[rows], None if coulomb is None else coulomb[rows])
            for j, own in enumerate(columns):
                Wy = buffers[j][:len(Y)]
                np.take(Y[:, j, :], own, axis=1, out=Wy[:, :-1])
                Wy[:, -1] = tau[rows, j]
                if rest is not None:
                    Wy[rest[rows, j]] = 0.0
                blocks[j] += Wy.T @ Wy
    counts = None if rest is None else len(q) - np.count_nonzero(rest, axis=0)
    return JointGrams(columns, tuple(blocks), len(q), p, counts)


def predictions(layout, q, qd, qdd, parameter_sets, chunk=CHUNK, coulomb=None):
    """Y π (N, n) of each π in ``parameter_sets``, chunk by chunk (``coulomb``: as ``accumulate``)."""
    out = [np.empty(q.shape) for _ in parameter_sets]
    for start in range(0, len(q), chunk):
        rows = slice(start, start + chunk)
        Y = layout.regressor(q[rows], qd[rows], qdd[rows], None if coulomb is None else coulomb[rows])
        for o, pi in zip(out, parameter_sets):
            o[rows] = Y @ pi
    return out
