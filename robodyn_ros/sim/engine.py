"""What every engine does the same way: clamp the effort at the limits, refuse a non-finite state,
count both, and the choice of an engine by name."""
from __future__ import annotations

import numpy as np

ENGINES = ("robodyn", "mujoco")


class StepError(RuntimeError):
    """A step that gave no physical state (non-finite, or the engine refused it); the caller keeps
    the state it had."""


class Engine:
    """Advances (q, qd) by ``dt`` with the effort ``tau`` held (a zero-order hold).

    ``step`` applies ``tau`` clamped at the model's effort limits, as a drive would, and counts the
    steps that needed it (``clamped``) and the steps that ended against a position limit
    (``stopped``). A subclass provides ``_advance(q, qd, tau) -> (q, qd, stopped)`` and may
    override ``reset``.
    """
    name = ""

    def __init__(self, model, dt: float):
        self.model = model
        self.dt = dt
        self.effort_limit = model.effort_limit
        self.clamped = 0
        self.stopped = 0

    def step(self, q, qd, tau):
        """(q, qd) after one step of ``dt``; raises StepError instead of returning garbage."""
        applied = self.applied(tau)
        if not np.array_equal(applied, tau):
            self.clamped += 1
        try:
            q, qd, stopped = self._advance(q, qd, applied)
        except ValueError as exc:  # e.g. a mass matrix that is not positive definite
            raise StepError(str(exc)) from exc
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            raise StepError("the step gave a non-finite state")
        self.stopped += stopped
        return q, qd

    def applied(self, tau):
        """The effort a step applies for the command ``tau``."""
        return np.clip(tau, -self.effort_limit, self.effort_limit)

    def reset(self):
        """Forget what the engine carries from step to step (nothing, unless overridden)."""

    def _advance(self, q, qd, tau):  # -> (q, qd, whether a joint ended at a position limit)
        raise NotImplementedError
