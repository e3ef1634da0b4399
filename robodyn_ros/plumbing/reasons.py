"""Rejection reasons, bounded and counted: what a node logs or reports about a bad input stays short
however large the input was (a JointState with 100,000 unknown names must not become a 1 MB log
line or diagnostic), and a flood of bad inputs is counted every time but logged at most once per
period. No rclpy here, so every node and core can use it."""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable

MAX_CHARS = 1000   # a reason longer than this is cut, saying how long it was
MAX_ITEMS = 5      # a list in a reason shows its count and this many first items


def bounded(value: str | Iterable, max_items: int = MAX_ITEMS, max_chars: int = MAX_CHARS) -> str:
    """``value`` as text of at most ``max_chars`` characters.

    A string is cut at ``max_chars`` with a note of its full length. Any other iterable (a list of
    names, an array of values) is shown as its first ``max_items`` items and its count when longer,
    e.g. ``['a', 'b', ... 99998 more, 100000 in all]``.
    """
    if isinstance(value, str):
        text = value
    else:
        if not hasattr(value, "__len__"):
            value = list(value)
        head = (value[:max_items].tolist() if hasattr(value, "tolist")   # NumPy: plain numbers
                else list(itertools.islice(value, max_items)))
        items = [repr(item) for item in head]
        if len(value) > max_items:
            items.append(f"... {len(value) - max_items} more, {len(value)} in all")
        text = "[" + ", ".join(items) + "]"
    if len(text) <= max_chars:
        return text
    note = f"... ({len(text)} characters)"
    return text[:max(max_chars - len(note), 0)] + note[:max_chars]


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

    def __call__(self, reason: str | Callable[[], str] = "") -> None:
        """Count one; ``reason`` may be what builds it, called only for a line logged (then
        ``last_reason`` is the last logged): an event of every control cycle, such as a
        saturation, costs a count, not a text."""
        self.count += 1
        now = self._clock()
        if not callable(reason):
            self.last_reason = reason = bounded(reason)
        elif now >= self._next_log:
            self.last_reason = reason = bounded(reason())
        if now >= self._next_log:
            self._log(f"{self.what}{': ' + reason if reason else ''} "
                      f"({self.count - self._logged_count} since the last report, "
                      f"{self.count} in total)")
            self._logged_count = self.count
            self._next_log = now + self.period
