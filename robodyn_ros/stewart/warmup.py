"""Compile (or load from numba's cache) the Stewart-platform kernels before a loop needs them."""
import numpy as np

from ..plumbing import kernels
from .model import StewartPlatform

# CPU seconds of compiling a leg model's kernels from an empty cache (alone in a fresh process on
# the 2-core machine of doc/install.md, 2026-11-28 evening); every_call adds about a quarter
COMPILE_SECONDS = {"no_spin": 7, "universal": 7}


def warm_up(platform, notify=print, every_call=False):
    """One pose and a batch of one through ``platform``'s inverse dynamics; any pose compiles them
    (a singular one too). ``every_call`` adds the constraint forces and the leg kinematics, for
    ``robodyn-ros compile``. Returns the seconds it took."""
    p, R, z = np.array([0.0, 0.0, 1.0]), np.eye(3), np.zeros(3)

    def exercise():
        platform.inverse_dynamics(p, R, z, z, z, z).forces
        platform.inverse_dynamics(p[None], R[None], z[None], z[None], z[None], z[None]).forces
        if every_call:
            platform.inverse_dynamics(p, R, z, z, z, z, constraint_forces=True)
            platform.inverse_kinematics(p, R, z, z, z, z)
    return kernels.warm_up("Stewart-platform kernels", exercise, notify,
                           COMPILE_SECONDS[platform.leg_model] * (1.25 if every_call else 1.0))


def hexapod(leg_model="no_spin"):
    """A regular hexapod of unit parts, built without any file: its argument types are those of
    every platform, so warming it up compiles every platform's kernels of that leg model."""
    angles = np.arange(6) * np.pi / 3.0
    ring = np.column_stack([np.cos(angles), np.sin(angles), np.zeros(6)])
    axes = np.column_stack([-np.sin(angles), np.cos(angles), np.zeros(6)])
    inertias = np.tile(np.eye(3), (6, 1, 1))
    return StewartPlatform(b=ring, k=axes, p=0.5 * ring, m_d=np.ones(6), m_u=np.ones(6),
                           r_d0=np.zeros((6, 3)), r_u0=np.zeros((6, 3)), I_d0=inertias,
                           I_u0=inertias.copy(), M=1.0, R0=np.zeros(3), I_p=np.eye(3),
                           leg_model=leg_model)
