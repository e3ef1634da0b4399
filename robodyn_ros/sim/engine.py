"""What every engine does the same way: clamp the effort at the limits, add a push from outside,
refuse a non-finite state, count both, and the choice of an engine by name."""
from __future__ import annotations

import numpy as np

from .drive import model_adds

ENGINES = ("robodyn", "mujoco")
# N and N·m: the largest push from outside a step takes. A thousand times what a person or an
# arm's payload exerts, far below where τ_ext = Jᵀw and the step overflow: 1e308 was finite, made
# every later step fail and froze the arm until another wrench replaced it.
MAX_WRENCH = 1.0e6


def wrench_refusal(wrench) -> str:
    """Why a push from outside ([f; n], six numbers) is no physical one, or ''."""
    wrench = np.asarray(wrench, dtype=float)
    if not np.all(np.isfinite(wrench)):
        return f"not finite: {wrench.tolist()}"
    if np.any(np.abs(wrench) > MAX_WRENCH):
        return f"a component beyond {MAX_WRENCH:g} N or N·m: {wrench.tolist()}"
    return ""


class StepError(RuntimeError):
    """A step that gave no physical state (non-finite, or the engine refused it); the caller keeps
    the state it had."""


class Engine:
    """Advances (q, qd) by ``dt`` with the effort ``tau`` held (a zero-order hold).

    ``step`` applies ``tau`` clamped at the model's effort limits, as a drive would, and counts the
    steps that needed it (``clamped``) and the steps that ended against a position limit
    (``stopped``). An external ``wrench`` [f; n] on the tip frame's origin (base frame) adds
    τ_ext = J(q)ᵀ w after the clamp: a push from outside is no actuator's, so no limit holds it.
    J is taken at the step's start and held over it, as ``tau`` is. A subclass provides
    ``_advance(q, qd, tau, tau_ext) -> (q, qd, stopped)`` and may override ``reset``.
    """
    name = ""

    def __init__(self, model, dt: float):
        self.model = model
        self.dt = dt
        self.effort_limit = model.effort_limit
        self.clamped = 0
        self.stopped = 0
        self.drive = None   # a TorqueDrive (sim/drive.py) between the command and the joints
        self.drive_model = model   # that drive's model of the arm (attach_drive perturbs it)

    def step(self, q, qd, tau, wrench=None):
        """(q, qd) after one step of ``dt``; raises StepError instead of returning garbage.
        Behind a ``drive``, ``tau`` is the command it is sent; a stopped drive brakes the arm."""
        if self.drive is not None:
            tau = self.drive.torque(tau, q, qd, self.dt)
            if tau is None:
                return q, np.zeros_like(qd)
        applied = self.applied(tau)
        if not np.array_equal(applied, tau):
            self.clamped += 1
        tau_ext = (np.zeros(self.model.dof) if wrench is None
                   else self.model.frame_jacobian(q).T @ wrench)
        try:
            q, qd, stopped = self._advance(q, qd, applied, tau_ext)
        except ValueError as exc:  # e.g. a mass matrix that is not positive definite
            raise StepError(str(exc)) from exc
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            raise StepError("the step gave a non-finite state")
        self.stopped += stopped
        return q, qd

    def applied(self, tau):
        """The effort a step applies for the torque ``tau``."""
        return np.clip(tau, -self.effort_limit, self.effort_limit)

    def joint_torque(self, command, q, qd):
        """The joints' torque for ``command`` at (q, q̇), as a driver measures it: behind a drive,
        with what the drive adds (zero while it is stopped)."""
        if self.drive is not None:
            if self.drive.stopped:
                return np.zeros_like(command)
            command = command + self.drive.added(q, qd)
        return self.applied(command)

    def drive_adds(self, q, qd, compensates):
        """What a drive built into this arm adds (``sim.drive.TorqueDrive``), by its own model,
        ``drive_model``."""
        return model_adds(self.drive_model, q, qd, compensates)

    def reset(self):
        """Forget what the engine carries from step to step (nothing, unless overridden)."""

    def _advance(self, q, qd, tau, tau_ext):  # -> (q, qd, whether a joint ended at a position limit)
        raise NotImplementedError
