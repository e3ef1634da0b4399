"""A control law's effort to the command sent, without ROS: the law run at the reference, its
result checked (n finite numbers), then the command stage (``drive.CommandStage``: what the drive
adds taken off, saturated, rate-limited, into `joints` order), saturations and rate limits counted.

A law's compiled short path (``ControlLaw.saturating``) and ordinary one (``answering``) are bound
here once per law to the effort limits and the command: while the stage only saturates they write
the command themselves; otherwise the short path writes a buffer of its own and the stage takes
its torque, and the ordinary path (which has no stage) is not offered.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..plumbing.kernels import FLOAT64
from ..plumbing.reasons import CountedEvent, bounded
from .drive import CommandStage, rate_limited
from .drive import saturated as saturated_joints
from .joints import JointOrder


class CommandPath:
    """One loop's: ``stage`` (its ``effort`` the command, joints order), ``limit`` the effort
    limits (chain order, set by the loop's configuration), the counts of saturations and rate
    limits (logged through ``log``, throttled on ``steady``)."""

    def __init__(self, model, order: JointOrder, stage: CommandStage,
                 log: Callable[[str], None], steady: Callable[[], float]):
        self.model, self.order, self.stage, self.effort = model, order, stage, stage.effort
        self.limit: np.ndarray | None = None
        self._law_effort = np.empty(model.dof)   # the short path's own, while the stage does more
        self.short = self.ordinary = None
        self.saturations = CountedEvent("effort saturated at the limit", log, steady)
        self.rate_limits = CountedEvent("effort rate-limited (effort_rate_limit)", log, steady)

    def bind(self, law) -> None:
        """``law``'s short and ordinary paths bound to the effort limits and the command, those it
        has (see the module docstring)."""
        plain = self.stage.plain
        bound = (self.limit, self.order.index, self.effort if plain else self._law_effort)
        self.short = None if law.saturating is None else law.saturating(*bound)
        self.ordinary = None if law.answering is None or not plain else law.answering(*bound)

    def run(self, law, short: bool, q, qd, reference, samples, dt: float) -> str:
        """``law``'s effort at ``reference`` (by its short path at ``samples`` when ``short``)
        through the stage into the command: why it gave none, or ''."""
        stage = self.stage
        try:
            if short:
                clamped = self.short(q, qd, samples, dt)
                tau = law.torque
                if stage.plain:
                    stage.pending = False   # no ramp
                elif clamped >= 0:   # the law's torque through the whole stage
                    clamped = stage.send(q, tau, self.limit)
            else:
                tau = law.compute(q, qd, *reference, dt)
                bad = self._unusable(tau)
                if bad:
                    return bad
                if tau.dtype is not FLOAT64:  # a law may compute in another type
                    tau = tau.astype(np.float64)
                # checked for NaN and inf, what the drive adds taken off, saturated, rate-limited
                # and put into joints order in one call
                clamped = stage.send(q, tau, self.limit)
        except Exception as exc:  # a plugin's bug must not end the node  # noqa: BLE001
            return f"raised {exc!r}"
        return self.judged(clamped, tau)

    def judged(self, clamped: int, tau: np.ndarray) -> str:
        """After the command stage on ``tau`` gave ``clamped`` (-1: NaN or inf in it; else
        ``drive.drive_command_into``'s count of saturated and rate-limited joints): why it is no
        command, or '' (a saturation and a rate limit counted)."""
        if clamped < 0:
            return f"returned NaN or inf {bounded(tau)}"
        if saturated_joints(clamped):
            self._count_saturation()
        if rate_limited(clamped):
            self.rate_limits("")
        return ""

    def _unusable(self, tau) -> str:
        """Why the law's result is no effort vector of this arm ('' when it is; NaN and inf are
        found by the command stage)."""
        if not isinstance(tau, np.ndarray):
            return f"returned a {type(tau).__name__}, not a numpy array"
        if tau.shape != (self.model.dof,):
            return f"returned shape {tau.shape} instead of {(self.model.dof,)}"
        return ""

    def _count_saturation(self) -> None:
        """Counted each cycle; which joints, only for the line logged (every cycle while the
        arm pushes on something: the text cost some 25 µs a cycle in the running node)."""
        def which() -> str:
            over = np.flatnonzero(np.abs(self.effort) >= self.order.from_chain(self.limit))
            return f"joints {bounded([self.order.names[i] for i in over])}"
        self.saturations(which)
