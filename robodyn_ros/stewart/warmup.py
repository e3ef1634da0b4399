"""Compile (or load from numba's cache) the Stewart-platform kernels before a loop needs them."""
import numpy as np

from ..compiled import announce_if_slow


def warm_up(platform, notify=print):
    """One pose and a batch of one through ``platform``'s inverse dynamics; any pose compiles them
    (a singular one too). Returns the seconds it took."""
    p, R, z = np.array([0.0, 0.0, 1.0]), np.eye(3), np.zeros(3)

    def work():
        platform.inverse_dynamics(p, R, z, z, z, z).forces
        platform.inverse_dynamics(p[None], R[None], z[None], z[None], z[None], z[None]).forces
    return announce_if_slow("Stewart-platform kernels", work, notify)
