"""A measured joint state into the control loop, without ROS: its names matched to the chain (once
per name list), its arrays read and checked, its stamp judged against the loop's clock.

The loop keeps what it takes (``ControlLoop.take_state``); this is what finds a state unusable, with
the reason. A stamp says when the state was measured, on the driver's clock, and the reference is
sampled there: so a stamp more than ``state_timeout`` before the loop's clock (a stalled
publisher's backlog) or more than ``future_tolerance`` after it (a clock running ahead: the
reference would be sampled in the future) is refused; but for the latter while the loop's clock
reads 0 (simulated time before its first /clock, which may be discovered after the states: no
time to judge by). The offset, stamp less arrival on the
loop's clock, of every stamped state is kept (its median and last are on /diagnostics): the
latency, negative, where the clocks agree.
"""
from __future__ import annotations

import array
from collections.abc import Sequence

import numpy as np

from ..plumbing.kernels import FLOAT64, NDARRAY
from ..plumbing.reasons import bounded
from .cycle_steps import TAKE_STATE
from .cycle_timing import CAPACITY
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
    state may be stamped when it arrives, ``future_tolerance`` (s) how far ahead of the loop's
    clock."""

    def __init__(self, model, order: JointOrder, state_timeout: float, future_tolerance: float):
        self.model, self.order = model, order
        self.state_timeout, self.future_tolerance = state_timeout, future_tolerance
        self.names: list[str] | None = None  # the last state's names and where the chain's are
        self.match: np.ndarray | str = "no joint state yet"   # ... or why they do not name it
        self.ahead = 0      # states refused: stamped ahead of the clock by more than the tolerance
        self.dropped = 0    # states older than the newest taken: dropped, not answered
        self._offsets, self.offsets = array.array("d", bytes(8 * CAPACITY)), 0

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
        clock, or '' (its offset kept)."""
        if not stamp:
            return ""
        self.offset(stamp - now)
        if now - stamp > self.state_timeout:   # a stalled publisher's backlog
            return (f"joint state stamped {now - stamp:.3g} s before it arrived, more than "
                    f"state_timeout {self.state_timeout:g} s: not used (its publisher stalled, "
                    "or its clock is not this node's)")
        if stamp - now > self.future_tolerance and now > 0.0:   # 0: no /clock yet, no time
            self.ahead += 1
            return (f"joint state stamped {stamp - now:.3g} s ahead of this node's clock, more "
                    f"than future_stamp_tolerance {self.future_tolerance:g} s: not used (the "
                    "driver's clock is not this node's: doc/real_robot.md)")
        return ""

    def offset(self, offset: float) -> None:
        """A stamped state's stamp less its arrival (s), kept."""
        self._offsets[self.offsets % CAPACITY] = offset
        self.offsets += 1

    def summary(self) -> dict:
        """/diagnostics' values: the offsets' median and last (ms), the states refused ahead and
        dropped."""
        kept = np.frombuffer(self._offsets, count=min(self.offsets, CAPACITY))
        last = self._offsets[(self.offsets - 1) % CAPACITY] if self.offsets else 0.0
        return {"clock offset, stamp - arrival (ms) median":
                    float(np.median(kept)) * 1e3 if kept.size else 0.0,
                "clock offset, stamp - arrival (ms) last": last * 1e3,
                "states stamped ahead, refused (total)": self.ahead,
                "states older than the newest, dropped (total)": self.dropped}
