"""Forward dynamics: qdd = M(q)^-1 (tau - h(q, qd)), with M by the composite-rigid-body algorithm,
h by one Newton–Euler pass, and the solve by Cholesky (M is symmetric positive definite)."""
import numpy as np

from ..plumbing.kernels import as_declared, as_read_only, inline, kernel, scratch
from .crba import crba
from .newton_euler import NO_WRENCH, check_sizes, rnea


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


@kernel
def forward_dynamics(P, q, qd, tau, wrench, mode, qdd):
    """One state into ``qdd``, allocated by the caller (cheaper in NumPy, see ``newton_euler.rnea``):
    the bias forces by ``rnea`` at zero acceleration, M by ``crba``, both their compiled versions
    called (compiled into this kernel they cost some 8 s more of numba's time, and the calls a few
    per cent of this one), the workspaces on the stack (``scratch``)."""
    check_sizes(P, q, qd, tau)
    n = q.shape[0]
    zero = scratch(1, n)
    for i in range(n):
        zero[0, i] = 0.0
    rnea(P, q, qd, as_declared(zero[0]), wrench, mode, qdd)
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    M = scratch(n, n)
    crba(P, q, M)
    cholesky_solve_into(M, qdd)


@kernel
def forward_dynamics_no_wrench(P, q, qd, tau, mode, qdd):
    """The simulation-loop call: one array argument fewer to pass."""
    forward_dynamics(P, q, qd, tau, NO_WRENCH, mode, qdd)


@kernel
def forward_dynamics_batch(P, q, qd, tau, wrench, mode, qdd):
    """``forward_dynamics`` on each row (``newton_euler.rnea_batch``)."""
    last = wrench.shape[0] - 1   # one placeholder row when there is no tip wrench
    for k in range(q.shape[0]):
        forward_dynamics(P, as_declared(q[k]), as_declared(qd[k]), as_declared(tau[k]),
                         as_read_only(wrench[min(k, last)]), mode, as_declared(qdd[k]))
