"""Compile (or load from numba's cache) the serial-arm kernels before a loop needs them."""
import numpy as np

from ..plumbing import kernels
from .link import Link
from .model import RobotModel

# CPU seconds of compiling from an empty cache (each warm-up alone in a fresh process on the 2-core
# machine of doc/install.md, 2026-11-28 evening): what a controller needs, what forward dynamics
# adds, what every_call adds
CONTROLLER_SECONDS, FORWARD_SECONDS, EVERY_CALL_SECONDS = 4, 3, 1


def warm_up(notify=print, forward=True, every_call=False):
    """Run every kernel a controller (and, with ``forward``, a simulator) uses once, on a one-link
    arm whose argument types match any model's; ``every_call`` adds the calls no node makes at
    start (tip wrenches, batches of mass matrices and of forward dynamics), for ``robodyn-ros
    compile``. Returns the seconds it took."""
    def exercise():
        model = RobotModel([Link("j", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])
        q, Q = np.zeros(1), np.zeros((1, 1))
        model.inverse_dynamics(q, q, q)
        model.inverse_dynamics(Q, Q, Q)
        model.frame_motion(q, q)  # a controller's task-frame pose, a simulator's tip wrench
        if forward:
            model.mass_matrix(q)
            model.forward_dynamics(q, q, q)
        if every_call:
            wrench = np.zeros(6)
            model.inverse_dynamics(q, q, q, tip_wrench=wrench)
            model.inverse_dynamics(Q, Q, Q, tip_wrench=wrench)
            model.mass_matrix(Q)
            model.forward_dynamics(q, q, q, tip_wrench=wrench)
            model.forward_dynamics(Q, Q, Q)
            model.forward_dynamics(Q, Q, Q, tip_wrench=wrench)
    estimate = CONTROLLER_SECONDS + FORWARD_SECONDS * forward + EVERY_CALL_SECONDS * every_call
    return kernels.warm_up("dynamics kernels", exercise, notify, estimate)
