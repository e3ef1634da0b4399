"""What the control loop answers its adapter, without ROS: an input taken or refused, and the
command a cycle, a failing law or the watchdog leaves for the drive."""
from __future__ import annotations

import dataclasses

import numpy as np

OK, WARN, ERROR = 0, 1, 2  # the levels of diagnostic_msgs/DiagnosticStatus


@dataclasses.dataclass(frozen=True)
class Accepted:
    """An input was taken; ``note`` is worth an INFO line when not empty."""
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Rejection:
    """An input was refused and changed nothing; ``reason`` is bounded."""
    reason: str


@dataclasses.dataclass(frozen=True)
class Dropped(Rejection):
    """A state older than one taken already, dropped: late, not wrong (counted, not logged)."""


@dataclasses.dataclass(frozen=True)
class Command:
    """Efforts to publish, in `joints` order."""
    effort: np.ndarray


@dataclasses.dataclass(frozen=True)
class LawFailure(Command):
    """The law gave no usable effort: ``effort`` is the on_timeout command instead."""
    reason: str


@dataclasses.dataclass(frozen=True)
class Stale(Command):
    """No valid state for state_timeout: ``effort`` is the on_timeout command; ``first`` marks
    the transition into staleness, ``reason`` says it."""
    first: bool
    reason: str = ""
