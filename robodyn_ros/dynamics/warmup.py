"""Compile (or load from numba's cache) the serial-arm kernels before a loop needs them."""
import numpy as np

from .. import kernels
from .link import Link
from .model import RobotModel


def warm_up(notify=print, forward=True):
    """Run every kernel a controller (and, with ``forward``, a simulator) uses once, on a one-link
    arm whose argument types match any model's. Returns the seconds it took."""
    def exercise():
        model = RobotModel([Link("j", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])
        q = np.zeros(1)
        model.inverse_dynamics(q, q, q)
        model.inverse_dynamics(q[None], q[None], q[None])
        if forward:
            model.mass_matrix(q)
            model.forward_dynamics(q, q, q)
    return kernels.warm_up("dynamics kernels", exercise, notify)
