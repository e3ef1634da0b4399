"""Forward dynamics: qdd = M(q)^-1 (tau - h(q, qd)), with M by the composite-rigid-body algorithm,
h by one Newton–Euler pass, and the solve by Cholesky (M is symmetric positive definite)."""
import numpy as np

from ..plumbing.kernels import inline, kernel
from .crba import crba_into
from .layout import CRBA_COLUMNS, RNEA_COLUMNS
from .newton_euler import NO_WRENCH, check_sizes, rnea_into


@inline
def cholesky(A):
    """A's lower Cholesky factor in its lower triangle (n is small: plain loops); False, A half
    done, if A is not positive definite (a massless chain, a NaN state, a singular J M⁻¹ Jᵀ)."""
    n = A.shape[0]
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        d = np.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    return True


@inline
def cholesky_solve(L, b):
    """b = (L Lᵀ)⁻¹ b, L from ``cholesky``: the two triangular solves."""
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


@inline
def cholesky_solve_into(M, b):
    """Overwrite M with its Cholesky factor L (lower) and b with M^-1 b."""
    if not cholesky(M):
        # a massless chain or a NaN state: no physical acceleration exists
        raise ValueError("mass matrix is not positive definite")
    cholesky_solve(M, b)


@inline
def _forward_into(P, q, qd, tau, wrench, mode, ws, cws, M, zero, qdd):
    """``zero``: n zeros (the acceleration of the bias-force pass), allocated by the caller."""
    n = q.shape[0]
    rnea_into(P, q, qd, zero, wrench, mode, ws, qdd)
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    crba_into(P, q, cws, M)
    cholesky_solve_into(M, qdd)


@kernel
def forward_dynamics(P, q, qd, tau, wrench, mode, qdd):
    """One state into ``qdd``, allocated by the caller (cheaper in NumPy, see ``newton_euler.rnea``)."""
    check_sizes(P, q, qd, tau)
    n = q.shape[0]
    # four allocations, not views of one: the compiler then knows they cannot overlap (one
    # allocation cut into views made a call 1.89 instead of 1.33 us)
    _forward_into(P, q, qd, tau, wrench, mode, np.empty((n, RNEA_COLUMNS)),
                  np.empty((n, CRBA_COLUMNS)), np.empty((n, n)), np.zeros(n), qdd)


@kernel
def forward_dynamics_no_wrench(P, q, qd, tau, mode, qdd):
    """The simulation-loop call: one array argument fewer to pass."""
    forward_dynamics(P, q, qd, tau, NO_WRENCH, mode, qdd)


@kernel
def forward_dynamics_batch(P, q, qd, tau, wrench, mode, qdd):
    N, n = q.shape
    ws = np.empty((n, RNEA_COLUMNS))
    cws = np.empty((n, CRBA_COLUMNS))
    M = np.empty((n, n))
    zero = np.zeros(n)
    last = wrench.shape[0] - 1   # one placeholder row when there is no tip wrench
    for k in range(N):
        _forward_into(P, q[k], qd[k], tau[k], wrench[min(k, last)], mode, ws, cws, M, zero, qdd[k])
