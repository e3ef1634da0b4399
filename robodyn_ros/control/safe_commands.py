"""The commands that stand in for a law's, without ROS: ``hold_gravity`` (g(q) at the last valid
state) and ``zero`` (no effort), sent while the state is stale or the law failed (``on_timeout``)
and on deactivation (``on_deactivate``), through the same command stage as every command: what
the drive adds taken off, saturated, and reached within the drive's rate limit (the rest of the
way one step a drive period: ``CommandStage.resend``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .drive import DRIVE_GRAVITY, CommandStage, rate_limited

ON_TIMEOUT = ("hold_gravity", "zero")   # the safe commands, on_timeout's and on_deactivate's


class SafeCommands:
    """One loop's: its ``stage``, and ``count_rate_limit()`` called for each one rate-limited."""

    def __init__(self, model, stage: CommandStage, count_rate_limit: Callable[[], None]):
        self.model, self.stage, self._count = model, stage, count_rate_limit
        self.kind = ON_TIMEOUT[0]           # on_timeout's
        self.timeout = np.zeros(model.dof)  # its torque, fixed when it began (chain order)

    def torque(self, kind: str, q: np.ndarray) -> np.ndarray:
        """A safe command's joint torque (chain order): hold_gravity = g(q), zero = no effort."""
        if kind == "hold_gravity":
            return self.model.gravity_torques(q)
        return np.zeros(self.model.dof)

    def begin(self, kind: str, q: np.ndarray) -> None:
        """on_timeout is ``kind``, its torque fixed at the measured position ``q``."""
        self.kind, self.timeout = kind, self.torque(kind, q)

    def send(self, q, limit, kind: str | None = None) -> int:
        """The ``kind`` safe command (on_timeout's: the torque :meth:`begin` fixed) through the
        command stage into the command, now: hold_gravity less the gravity the drive adds, zero
        as it is, saturated and rate-limited. The stage's code."""
        kind = kind or self.kind
        tau = self.timeout if kind == self.kind else self.torque(kind, q)
        code = self.stage.send(q, tau, limit, DRIVE_GRAVITY if kind == "hold_gravity" else 0)
        if rate_limited(code):
            self._count()
        return code
