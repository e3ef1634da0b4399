"""The built-in engine: robodyn_ros's own forward dynamics, classical RK4, and position limits as a
perfectly stiff, inelastic stop."""
import numpy as np

from robodyn_ros.dynamics.integrate import rk4_step

from .engine import Engine


class RobodynEngine(Engine):
    """One RK4 step of the model's forward dynamics, then the stop: a joint that ended beyond a
    position limit is put back on it and its velocity into the stop is zeroed (a plastic impact;
    the stop never gives, so no stiffness to tune and nothing to go unstable at any rate)."""
    name = "robodyn"

    def __init__(self, model, dt):
        super().__init__(model, dt)
        self.lower, self.upper = model.lower, model.upper

    def _advance(self, q, qd, tau, tau_ext):
        q, qd = rk4_step(self.model, q, qd, tau + tau_ext, self.dt)
        below, above = q < self.lower, q > self.upper
        if not (below.any() or above.any()):
            return q, qd, False
        q = np.clip(q, self.lower, self.upper)
        qd = np.where((below & (qd < 0.0)) | (above & (qd > 0.0)), 0.0, qd)
        return q, qd, True
