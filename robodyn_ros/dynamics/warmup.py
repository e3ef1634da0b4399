"""Compile (or load from numba's cache) the dynamics kernels before a real-time loop needs them.

The first run on a machine compiles them, which takes several seconds; later runs load the cached
machine code in a fraction of a second. The user hears about it only when it takes a while."""
import threading
import time

import numpy as np

from .model import Link, RobotModel


def warm_up(notify=print, forward=True):
    """Run every kernel a controller (and, with ``forward``, a simulator) uses once, on a one-link
    arm whose argument types match any model's. Returns the seconds it took."""
    start = time.monotonic()
    timer = threading.Timer(0.5, notify, ("Compiling the dynamics kernels (numba; first run on this "
                                          "machine only, about 10 s, cached afterwards)...",))
    timer.start()
    try:
        model = RobotModel([Link("j", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])
        q = np.zeros(1)
        model.inverse_dynamics(q, q, q)
        model.inverse_dynamics(q[None], q[None], q[None])
        if forward:
            model.mass_matrix(q)
            model.forward_dynamics(q, q, q)
    finally:
        timer.cancel()
    return time.monotonic() - start
