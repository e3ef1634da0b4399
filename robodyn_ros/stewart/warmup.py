"""Compile (or load from numba's cache) the Stewart-platform kernels before a loop needs them."""
import numpy as np

from .. import kernels


def warm_up(platform, notify=print):
    """One pose and a batch of one through ``platform``'s inverse dynamics; any pose compiles them
    (a singular one too). Returns the seconds it took."""
    p, R, z = np.array([0.0, 0.0, 1.0]), np.eye(3), np.zeros(3)

    def exercise():
        platform.inverse_dynamics(p, R, z, z, z, z).forces
        platform.inverse_dynamics(p[None], R[None], z[None], z[None], z[None], z[None]).forces
    return kernels.warm_up("Stewart-platform kernels", exercise, notify)
