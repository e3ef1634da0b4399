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


def make_engine(name: str, model, dt: float, urdf: str = "", *, payload=None,
                mass_scale: float = 1.0, root=None):
    """The engine called ``name`` for ``model`` (already scaled and with its payload); the MuJoCo
    engine also needs the URDF text, the payload (mass, com, tip link), the mass scale and the
    chain's root link to rebuild the same arm."""
    if name == "robodyn":
        from .robodyn_engine import RobodynEngine
        return RobodynEngine(model, dt)
    if name == "mujoco":
        from .mujoco_engine import MujocoEngine
        return MujocoEngine(model, dt, urdf, payload=payload, mass_scale=mass_scale, root=root)
    raise ValueError(f"unknown engine '{name}': one of {', '.join(ENGINES)}")
