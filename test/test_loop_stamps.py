"""Joint-state stamps both ways, in the control loop without ROS (fake clocks): a state stamped
ahead of the loop's clock by more than future_stamp_tolerance is refused with its reason and
counted, by the ordinary path as by the others; states older than the newest taken are dropped,
counted apart, and never answered after a newer one; the offset, stamp less arrival, is on the
loop's report."""
import numpy as np

from robodyn_ros.control import JointTrajectory
from robodyn_ros.control.loop import Accepted, Dropped, Rejection

from test_control_loop import CHAIN, Q0, _answer, _message, make_loop, state

GOAL = Q0 + np.radians([30.0, -20.0, 25.0, 40.0, -30.0, 45.0])


def test_a_state_stamped_ahead_of_the_clock_is_refused_with_its_reason_and_counted():
    """A driver's clock 2 s ahead: the reference would be sampled 2 s into a 3 s goal. Refused,
    counted, on the report; within the tolerance it is taken."""
    loop, clock, _ = make_loop()
    assert state(loop, stamp=clock.t) == Accepted()
    loop.set_trajectory(JointTrajectory(CHAIN, [3.0], [GOAL]))
    for ahead in (2.0, 0.5, 0.051):
        result = state(loop, stamp=clock.t + ahead)
        assert isinstance(result, Rejection) and not isinstance(result, Dropped)
        assert f"{ahead:.3g} s ahead of this node's clock" in result.reason
    assert loop.rejected.count == 3
    clock.t += 0.001
    assert state(loop, stamp=clock.t + 0.049) == Accepted()   # within 0.05 s
    loop.cycle()
    np.testing.assert_allclose(loop.reference[0], Q0, atol=0.02)   # 50 ms into a 3 s goal, not 2 s
    level, message, values = loop.report()
    assert values["states stamped ahead, refused (total)"] == 3
    assert "ahead of this node's clock" in values["last rejection"]


def test_the_ordinary_path_refuses_a_state_stamped_ahead_too():
    """answer's one compiled call declines it; the state is then refused as any other."""
    loop, clock, _ = make_loop()
    raw, stamp = _message(Q0, np.zeros(6), clock.t)
    assert _answer(loop, raw) is None   # the first: names unknown yet
    assert state(loop, stamp=stamp) == Accepted()
    raw, _ = _message(Q0, np.zeros(6), clock.t + 2.0)
    assert _answer(loop, raw) is None
    raw, _ = _message(Q0, np.zeros(6), clock.t + 0.001)
    assert _answer(loop, raw) is not None


def test_the_clock_offset_is_on_the_report():
    """stamp - arrival: the latency where the clocks agree (negative), its median and the last."""
    loop, clock, _ = make_loop()
    for k in range(9):
        clock.t += 0.001
        assert state(loop, stamp=clock.t - 0.001 * (k % 3 + 1)) == Accepted()
    clock.t += 0.001
    raw, _ = _message(Q0, np.zeros(6), clock.t - 0.0025)
    assert _answer(loop, raw) is not None   # the ordinary path keeps it too
    values = loop.report()[2]
    np.testing.assert_allclose(values["clock offset, stamp - arrival (ms) median"], -2.0, atol=1e-6)
    np.testing.assert_allclose(values["clock offset, stamp - arrival (ms) last"], -2.5, atol=1e-6)


def test_a_state_older_than_the_newest_is_dropped_and_never_answered_after_it():
    """States 1, 3, 2, 4 ms: the third is late; it is dropped (counted apart from rejections,
    which stay 0), and the loop's state stays the newest, so no cycle answers it."""
    loop, clock, _ = make_loop()
    stamps = []
    for k in (1, 3, 2, 4):
        result = state(loop, Q0 + 0.001 * k, stamp=clock.t + 0.001 * k - 0.01)
        if not isinstance(result, Rejection):
            loop.cycle()
            stamps.append(loop.stamp)
        else:
            assert isinstance(result, Dropped)
            assert loop.stamp == stamps[-1]
            np.testing.assert_allclose(loop.q, Q0 + 0.003)
    assert np.all(np.diff(stamps) > 0) and len(stamps) == 3
    values = loop.report()[2]
    assert values["states older than the newest, dropped (total)"] == 1
    assert values["rejected inputs (total)"] == 0


def test_before_a_simulated_clock_starts_a_state_is_not_judged_ahead():
    """On simulated time the node's clock reads 0 until its first /clock, which DDS may deliver
    after the first states: no time to judge a stamp by, so the state is taken."""
    loop, clock, _ = make_loop()
    clock.t = 0.0
    assert state(loop, stamp=3.5) == Accepted()
    clock.t = 3.5
    assert isinstance(state(loop, stamp=5.6), Rejection)   # with a clock, 2.1 s ahead
