"""What /diagnostics shows of a control loop, without ROS: each cycle's timings in a window of ring
buffers, and the report of the window (its rates, timings and counts, the level and message).
"""
from __future__ import annotations

import array
from typing import Any

import numpy as np

from ..dynamics.drives import CURRENT
from .cycle_timing import CAPACITY
from .outcomes import ERROR, OK, WARN
from .succession import drift


def residuals(guard, order) -> dict[str, float]:
    """The momentum observer's latest residual per joint (``joints`` order) in N m (N for a
    prismatic joint) and, for a joint whose measured effort is a current, in A: the current the
    external torque draws through its drive gain (``guard.drives``). Read off the cycle's thread:
    each value is one cycle's, the joints perhaps of two consecutive cycles."""
    unit_of = dict(zip(guard.drives.joints, guard.drives.units))
    r, r_in = order.from_chain(guard.residual), order.from_chain(guard.residual_in())
    values = {}
    for name, torque, effort in zip(order.names, r.tolist(), r_in.tolist()):
        unit = unit_of[name]
        values[f"residual {name} ({'N' if unit == 'N' else 'N m'})"] = torque
        if unit == CURRENT:
            values[f"residual {name} (A)"] = effort
    return values


class _Window:
    """One statistics window: each cycle's compute and cycle times (s) and the latency from a
    stamped state to its command (s; NaN for an unstamped one), kept in ring buffers as
    CycleTiming keeps its own: a cycle stores three numbers, the means and peaks are computed at
    report time, over the last ``CAPACITY`` cycles of a longer window."""

    def __init__(self, start: float):
        self._mask = CAPACITY - 1
        self._compute, self._cycle, self._latency = (array.array("d", bytes(8 * CAPACITY))
                                                     for _ in range(3))
        self.restart(start)

    def restart(self, start: float) -> None:
        self.start, self.cycles = start, 0

    def add(self, compute: float, cycle: float, latency: float) -> None:
        i = self.cycles & self._mask
        self._compute[i], self._cycle[i], self._latency[i] = compute, cycle, latency
        self.cycles += 1

    def summary(self) -> dict[str, float]:
        """The means and peaks, in the units a person reads."""
        kept = min(self.cycles, self._mask + 1)
        values = {}
        for label, column, scale in (("compute time (us)", self._compute, 1e6),
                                     ("cycle time (us)", self._cycle, 1e6),
                                     ("latency state stamp to command (ms)", self._latency, 1e3)):
            v = np.frombuffer(column, count=kept)
            v = v[~np.isnan(v)]
            values[f"{label} mean"] = float(v.mean()) * scale if v.size else 0.0
            values[f"{label} max"] = float(v.max()) * scale if v.size else 0.0
        return values


class LoopReport:
    """The window of one loop (``steady``: its statistics' clock), the counts at the last
    report, and its ``measurement``'s stamps."""

    def __init__(self, steady, measurement):
        self._steady, self._measurement = steady, measurement
        self.window = _Window(steady())
        self._reported = (0, 0, 0, 0)  # saturations, rejections, law failures, rate limits

    def report(self, loop) -> tuple[int, str, dict[str, Any]]:
        """(level, message, values) of ``loop``'s window since the last report; starts a new one."""
        now, w = self._steady(), self.window
        elapsed, cycles, timings = now - w.start, w.cycles, w.summary()
        w.restart(now)
        counts = (loop.saturations.count, loop.rejected.count, loop.law_failures,
                  loop.rate_limits.count)
        saturated, rejected, failed, limited = (c - r for c, r in zip(counts, self._reported))
        self._reported = counts
        age = None if loop.received is None else now - loop.received
        on_timeout = loop.config["on_timeout"]
        values = {
            "enabled": loop.enabled,
            "control law": type(loop.law).__name__,
            "achieved rate (Hz)": cycles / elapsed if elapsed > 0 else 0.0,
            **timings,
            "saturations (window)": saturated,
            "saturations (total)": loop.saturations.count,
            "rate limits (window)": limited,
            "rate limits (total)": loop.rate_limits.count,
            "rejected inputs (window)": rejected,
            "rejected inputs (total)": loop.rejected.count,
            "last rejection": loop.rejected.last_reason,
            "control law failures (window)": failed,
            "control law failures (total)": loop.law_failures,
            "stale state": loop.stale,
            "state age (s)": -1.0 if age is None else age,
            **self._measurement.summary(),
            **drift(loop.law),
        }
        guard, implausible = loop.guard, None
        if guard is not None:
            values["collisions (total)"] = loop.collisions
            values["collision"] = guard.event.reason if loop.collided else "none"
            values["collision reaction"] = guard.reaction
            values["observer torque"] = (f"measured effort ({guard.unmeasured} states "
                                         "without one: the command stood in)"
                                         if guard.measured else "the command sent")
            values.update(residuals(guard, loop.order))
            implausible = guard.implausible(loop.q, loop.qd)
            values["measured effort"] = implausible or ("plausible as torques" if guard.measured else "not used")
        if age is None:
            return WARN, "waiting for the first valid joint state", values
        if loop.collided:
            return ERROR, loop.collided_reason(), values
        if loop.stale:
            return ERROR, f"joint state stale: publishing {on_timeout}", values
        if failed:
            return ERROR, (f"control law failed {failed} time(s), publishing {on_timeout}: "
                           f"{loop.rejected.last_reason}"), values
        if rejected:
            return WARN, f"inputs rejected: {loop.rejected.last_reason}", values
        if saturated:
            return WARN, "effort saturated", values
        if limited:
            return WARN, "effort rate-limited", values
        if implausible:
            return WARN, implausible, values
        return OK, "tracking" if loop.enabled else "disabled: gravity compensation", values
