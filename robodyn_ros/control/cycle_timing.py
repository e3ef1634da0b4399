"""How long a controller's cycles take and how regularly they come, reported as ros2_control's
controller_manager reports its controllers' (the ``Controllers Activity`` status it publishes on
/diagnostics, ros2_control 4.x), so that a user reads ours beside a C++ controller's:

* ``<name>.state``: the lifecycle state's label;
* ``<name>.execution_time``: ``Avg: 24.31 [17.02 - 96.55] us, StdDev: 5.12``;
* ``<name>.periodicity``: ``Avg: 999.87 [431.40 - 2310.90] Hz, StdDev: 88.10``, with
  `` -> Desired : 1000 Hz`` when the controller runs at a rate of its own (``rate`` > 0);

and beyond the controller_manager's, as plain numbers (a plot reads them): the 50th and 99th
percentiles and the largest execution time and period (``<name>.execution_time.p50``, ``.p99``,
``.max``; ``<name>.period.p50``, ...; µs), the cycle budget (``<name>.budget``, µs: the period
of ``rate``, or with ``rate`` 0, one command per joint state, the median period the states came
at), the cycles that took longer (``<name>.cycles_over_budget``) and the cycles counted
(``<name>.cycles``). The controller_manager's statistics run since activation; these cover one
diagnostic window (the last ``CAPACITY`` cycles of a longer one). Levels follow the
controller_manager's default thresholds; cycles over budget are a WARN.

Per cycle, :meth:`CycleTiming.record` stores two numbers into preallocated ring buffers (no
allocation, a fraction of a microsecond); everything else is computed at report time. No ROS here.
"""
from __future__ import annotations

import array
import math

import numpy as np

OK, WARN, ERROR = 0, 1, 2  # diagnostic_msgs/DiagnosticStatus levels
#: Cycles a window's statistics cover: a 1 s window up to 16 kHz.
CAPACITY = 1 << 14
#: controller_manager's default diagnostics.threshold.controllers (ros2_control 4.x): execution
#: time mean and standard deviation (µs), periodicity mean error and standard deviation (Hz).
EXECUTION_TIME_WARN, EXECUTION_TIME_ERROR = (1000.0, 100.0), (2000.0, 200.0)
PERIODICITY_WARN, PERIODICITY_ERROR = (5.0, 5.0), (10.0, 10.0)


def _stats_text(values: np.ndarray, unit: str) -> str:
    """The controller_manager's make_stats_string: 'Avg: a [min - max] unit, StdDev: s'."""
    return (f"Avg: {values.mean():.2f} [{values.min():.2f} - {values.max():.2f}] {unit}, "
            f"StdDev: {values.std():.2f}")


class CycleTiming:
    """Execution time and period of the cycles of the controller ``name``; ``rate`` (Hz) is its
    own control rate, 0 when it answers each joint state (module docstring)."""

    def __init__(self, name: str, rate: float = 0.0, capacity: int = CAPACITY):
        if capacity < 2 or capacity & (capacity - 1):
            raise ValueError(f"capacity must be a power of two >= 2, got {capacity}")
        self.name, self.rate = name, float(rate)
        self._mask = capacity - 1
        self._durations = array.array("d", bytes(8 * capacity))  # s, ring buffers
        self._periods = array.array("d", bytes(8 * capacity))
        self._count = 0  # cycles recorded in this window
        self._last = math.nan  # start of the previous cycle
        # numpy's percentile imports what it needs at its first call (~20 ms): here, not in the
        # executor's first report
        self.record(0.0, 0.0)
        self.record(1.0, 1.0)
        self.report("active")
        self.restart()

    def restart(self) -> None:
        """Forget the previous cycle's start (after an inactive spell, which is no period)."""
        self._last = math.nan

    def record(self, start: float, end: float) -> None:
        """One cycle from ``start`` to ``end`` (s, one monotonic clock)."""
        i = self._count & self._mask
        self._durations[i] = end - start
        self._periods[i] = start - self._last  # NaN for the first cycle
        self._last = start
        self._count += 1

    def report(self, state: str) -> tuple[int, str, dict[str, str]]:
        """(level, message, key/values) of the window since the last report; starts a new one.
        ``state``: the controller's lifecycle state label (its timing only while 'active')."""
        n, self._count = self._count, 0
        values = {f"{self.name}.state": state}
        if state != "active":
            return OK, f"{self.name} is {state}", values
        if n == 0:
            return WARN, f"{self.name} is active but ran no cycle in this window", values
        kept = min(n, self._mask + 1)
        durations = np.frombuffer(self._durations, count=kept) * 1e6  # µs, copies
        periods = np.frombuffer(self._periods, count=kept) * 1e6
        periods = periods[np.isfinite(periods) & (periods > 0)]
        name = self.name
        values[f"{name}.execution_time"] = _stats_text(durations, "us")
        problems, level = [], OK
        if periods.size:
            hz = 1e6 / periods
            desired = f" -> Desired : {self.rate:g} Hz" if self.rate > 0 else ""
            values[f"{name}.periodicity"] = _stats_text(hz, "Hz") + desired
            if self.rate > 0:
                level = self._judge(abs(hz.mean() - self.rate), hz.std(), PERIODICITY_WARN,
                                    PERIODICITY_ERROR, "periodicity", problems, level)
        level = self._judge(durations.mean(), durations.std(), EXECUTION_TIME_WARN,
                            EXECUTION_TIME_ERROR, "execution", problems, level)
        for label, data in (("execution_time", durations), ("period", periods)):
            if data.size:
                p50, p99 = np.percentile(data, (50.0, 99.0))
                values.update({f"{name}.{label}.p50": f"{p50:.2f}", f"{name}.{label}.p99": f"{p99:.2f}",
                               f"{name}.{label}.max": f"{data.max():.2f}"})
        budget = 1e6 / self.rate if self.rate > 0 else (float(np.median(periods)) if periods.size
                                                         else math.inf)
        over = int(np.count_nonzero(durations > budget))
        values.update({f"{name}.budget": f"{budget:.2f}", f"{name}.cycles_over_budget": str(over),
                       f"{name}.cycles": str(n)})
        if over:
            level = max(level, WARN)
            problems.append(f"{over} of {n} cycles over the {budget:.0f} us budget")
        return level, "; ".join([f"{name} is active", *problems]), values

    def _judge(self, mean_error, deviation, warn, error, what, problems, level):
        if mean_error > error[0] or deviation > error[1]:
            problems.append(f"high {what} jitter or mean error")
            return ERROR
        if mean_error > warn[0] or deviation > warn[1]:
            problems.append(f"high {what} jitter or mean error")
            return max(level, WARN)
        return level
