"""The control cycle's per-message steps as compiled calls: taking a joint state (the chain's
joints picked from the message, checked for NaN and inf) and finishing the command (the law's
effort checked for NaN and inf, clamped to the effort limits, put into joints order). In NumPy
these were some ten calls of about a microsecond each per message; numba runs the plain loops
below (``robodyn_ros.plumbing.kernels``), which the tests also run interpreted.
"""
import numpy as np

from ..plumbing.kernels import INDEX_VECTOR, VECTOR, Direct, kernel
from .trajectory import SAMPLE


@kernel
def saturate_into(tau, limit, index, out):
    """out[k] = tau[index[k]] clamped to [-limit, +limit] of that joint (``index``: chain joint of
    each joints-order entry). Returns -1 when some tau is NaN or inf (out is then not written),
    else the number of joints clamped."""
    n = tau.shape[0]
    for i in range(n):
        if not np.isfinite(tau[i]):
            return -1
    clamped = 0
    for k in range(n):
        i = index[k]
        t = tau[i]
        if t > limit[i]:
            t = limit[i]
            clamped += 1
        elif t < -limit[i]:
            t = -limit[i]
            clamped += 1
        out[k] = t
    return clamped


@kernel
def take_state(position, velocity, match, q, qd):
    """q[i] = position[match[i]] and qd[i] = velocity[match[i]] (``match``: the message's entry of
    each chain joint, every one within both vectors). Returns False when one of them is NaN or
    inf (q and qd are written all the same)."""
    finite = True
    for i in range(match.shape[0]):
        k = match[i]
        q[i] = position[k]
        qd[i] = velocity[k]
        if not (np.isfinite(q[i]) and np.isfinite(qd[i])):
            finite = False
    return finite


# the loop's calls: float64 vectors and index vectors, which ControlLoop always passes
TAKE_STATE = Direct(take_state, VECTOR, VECTOR, INDEX_VECTOR, VECTOR, VECTOR)
SATURATE = Direct(saturate_into, VECTOR, VECTOR, INDEX_VECTOR, VECTOR)


def warm_up() -> None:
    """Compile the calls now, or load them from numba's cache (a loop makes them every cycle):
    these two and the reference's sampling (``trajectory.SAMPLE``)."""
    TAKE_STATE.ready()
    SATURATE.ready()
    SAMPLE.ready()
