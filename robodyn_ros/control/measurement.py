"""A measured joint state into the control loop, without ROS: its names matched to the chain (once
per name list), its arrays read and checked, its stamp judged against the loop's clock.

The loop keeps what it takes (``ControlLoop.take_state``); this is what finds a state unusable, with
the reason.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..plumbing.kernels import FLOAT64, NDARRAY
from ..plumbing.reasons import bounded
from .cycle_steps import TAKE_STATE
from .joints import JointOrder


def _vector(values) -> np.ndarray:
    """``values`` as a float64 array (itself when it is one: a message's, read from its bytes)."""
    if values.__class__ is NDARRAY and values.dtype is FLOAT64:
        return values
    return np.asarray(values, dtype=np.float64)


def _count(values: np.ndarray) -> str:
    return str(values.size) if values.ndim == 1 else f"{values.size} (shape {values.shape})"


class Measurement:
    """The intake of one arm's states (``order``: its joints); ``state_timeout`` (s) is how old a
    state may be stamped when it arrives."""

    def __init__(self, model, order: JointOrder, state_timeout: float):
        self.model, self.order, self.state_timeout = model, order, state_timeout
        self.names: list[str] | None = None  # the last state's names and where the chain's are
        self.match: np.ndarray | str = "no joint state yet"   # ... or why they do not name it

    def read(self, names: Sequence[str], position, velocity, effort, takes_effort: bool):
        """(q, q̇, effort) in chain order from a state's fields per name (``effort`` only when
        ``takes_effort``, else None), or the reason (a str) the state is unusable."""
        if names != self.names:
            self.names = list(names)
            try:
                self.match = self.order.find_in(self.names)
            except ValueError as exc:
                self.match = str(exc)
        match = self.match
        if isinstance(match, str):
            return match
        n = len(names)
        position, velocity = _vector(position), _vector(velocity)
        if position.shape != (n,) or velocity.shape != (n,):  # TAKE_STATE reads by match
            return (f"joint state has {n} names, {_count(position)} positions and "
                    f"{_count(velocity)} velocities (the controller needs a position and a "
                    "velocity per name)")
        q, qd = np.empty(self.model.dof), np.empty(self.model.dof)  # new: readers may keep them
        if not TAKE_STATE.call(position, velocity, match, q, qd):
            return (f"joint state has NaN or inf: position {bounded(q)}, velocity "
                    f"{bounded(qd)}")
        if takes_effort:
            effort = None if effort is None else _vector(effort)
            effort = effort[match] if effort is not None and effort.shape == (n,) else None
        else:
            effort = None
        return q, qd, effort

    def match_of(self, names: Sequence[str], takes_effort: bool) -> np.ndarray | None:
        """Where the chain's joints are among ``names``, when the last state read had these names
        and they named them all and no effort is taken; else None."""
        if names != self.names or isinstance(self.match, str) or takes_effort:
            return None
        return self.match

    def refusal(self, stamp: float, now: float) -> str:
        """Why a state stamped ``stamp`` (s; 0: unstamped) is not used at ``now`` on the loop's
        clock, or ''."""
        if stamp and now - stamp > self.state_timeout:   # a stalled publisher's backlog
            return (f"joint state stamped {now - stamp:.3g} s before it arrived, more than "
                    f"state_timeout {self.state_timeout:g} s: not used (its publisher stalled, "
                    "or its clock is not this node's)")
        return ""
