"""The controller's cycle timing without ROS (robodyn_ros.control.cycle_timing): the
controller_manager's keys and text, the percentiles, the budget and the cycles over it, windows,
levels; known durations in, exact figures out. Over DDS: test_cli_real.py."""
import re

import numpy as np
import pytest

from robodyn_ros.control.cycle_timing import ERROR, OK, WARN, CycleTiming


def feed(timing, durations_us, period_us, start=0.0):
    """Cycles every ``period_us`` (scalar or per cycle) lasting ``durations_us``."""
    periods = np.broadcast_to(np.asarray(period_us, dtype=float), (len(durations_us),))
    t = start
    for d, p in zip(durations_us, periods):
        t += p * 1e-6
        timing.record(t, t + d * 1e-6)
    return t


def test_the_controller_managers_layout_and_the_percentiles():
    timing = CycleTiming("ctc")
    durations = np.arange(1.0, 101.0)  # 1..100 us
    feed(timing, durations, 1000.0)
    level, message, values = timing.report("active")
    assert level == OK and message == "ctc is active"
    assert values["ctc.state"] == "active"
    assert values["ctc.execution_time"] == \
        f"Avg: 50.50 [1.00 - 100.00] us, StdDev: {durations.std():.2f}"
    # the first cycle of all has no period: 99 periods of 1 ms
    assert re.fullmatch(r"Avg: 1000\.00 \[1000\.00 - 1000\.00\] Hz, StdDev: 0\.00",
                        values["ctc.periodicity"])
    assert float(values["ctc.execution_time.p50"]) == pytest.approx(50.5)
    assert float(values["ctc.execution_time.p99"]) == pytest.approx(np.percentile(durations, 99))
    assert values["ctc.execution_time.max"] == "100.00"
    assert values["ctc.period.p50"] == values["ctc.period.max"] == "1000.00"
    assert values["ctc.budget"] == "1000.00"  # rate 0: the median period
    assert values["ctc.cycles_over_budget"] == "0" and values["ctc.cycles"] == "100"


def test_cycles_over_the_budget_of_a_rate_of_its_own_are_a_warning():
    timing = CycleTiming("ctc", rate=500.0)  # 2 ms budget
    feed(timing, [100.0] * 97 + [2500.0, 3000.0, 1999.0], 2000.0)
    level, message, values = timing.report("active")
    assert values["ctc.budget"] == "2000.00" and values["ctc.cycles_over_budget"] == "2"
    assert values["ctc.periodicity"].endswith(" -> Desired : 500 Hz")
    # mean 164.99 us, standard deviation ~470 us > the controller_manager's 200 us: ERROR
    assert level == ERROR and "2 of 100 cycles over the 2000 us budget" in message


def test_levels_follow_the_controller_managers_default_thresholds():
    steady = CycleTiming("ctc")
    feed(steady, [1500.0] * 50, 5000.0)  # mean 1.5 ms > 1 ms: WARN, < 2 ms
    assert steady.report("active")[0] == WARN
    feed(steady, [2500.0] * 50, 5000.0)
    assert steady.report("active")[0] == ERROR
    jitter = CycleTiming("ctc", rate=1000.0)
    feed(jitter, [10.0] * 100, [1000.0, 1012.0] * 50)  # 994 Hz on average, deviation 5.9 Hz
    level, message, _ = jitter.report("active")
    assert level == WARN and "periodicity" in message
    feed(jitter, [10.0] * 100, [1000.0, 1030.0] * 50)  # 985 Hz: beyond 10 Hz
    assert jitter.report("active")[0] == ERROR


def test_windows_restart_and_the_ring_keeps_the_last_cycles():
    timing = CycleTiming("ctc", capacity=8)
    t = feed(timing, [5.0] * 20, 1000.0)
    values = timing.report("active")[2]
    assert values["ctc.cycles"] == "20" and values["ctc.execution_time.max"] == "5.00"
    assert timing.report("active")[0] == WARN  # no cycle in this window
    timing.restart()  # an inactive spell: no period across it
    feed(timing, [7.0] * 3, 1000.0, start=t + 60.0)
    values = timing.report("active")[2]
    assert values["ctc.period.max"] == "1000.00" and values["ctc.execution_time.p50"] == "7.00"


def test_an_inactive_controller_reports_its_state_only():
    timing = CycleTiming("ctc")
    feed(timing, [5.0] * 10, 1000.0)
    assert timing.report("inactive") == (OK, "ctc is inactive", {"ctc.state": "inactive"})
    with pytest.raises(ValueError, match="power of two"):
        CycleTiming("ctc", capacity=1000)
