"""Rejection reasons, bounded and counted, without ROS.

A hostile message may carry 100,000 names, and its reason is logged and repeated in every
/diagnostics report, so every reason is cut to a stated size; a flood of bad inputs is counted
every time and logged at most once per period."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

MAX_ITEMS = 8         # items of a list shown in a reason
MAX_REASON = 400      # characters of one reason


def bounded_list(items: Sequence, limit: int = MAX_ITEMS) -> str:
    """``[a, b, c]``, or the first ``limit`` items and how many there are in all."""
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:limit])
    if len(items) <= limit:
        return f"[{shown}]"
    return f"[{shown}, ... ({len(items)} in all)]"


def bounded(text: str, limit: int = MAX_REASON) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


class CountedEvent:
    """An event counted every time and logged through ``log`` at most once per ``period`` of
    ``clock``, with how many happened since the last line."""

    def __init__(self, what: str, log: Callable[[str], None], clock: Callable[[], float],
                 period: float = 2.0):
        self.what, self._log, self._clock, self.period = what, log, clock, period
        self.count = 0
        self.last_reason = ""
        self._logged_count = 0
        self._next_log = -math.inf

    def __call__(self, reason: str = "") -> None:
        self.count += 1
        self.last_reason = reason = bounded(reason)
        now = self._clock()
        if now >= self._next_log:
            self._log(f"{self.what}{': ' + reason if reason else ''} "
                      f"({self.count - self._logged_count} since the last report, "
                      f"{self.count} in total)")
            self._logged_count = self.count
            self._next_log = now + self.period
