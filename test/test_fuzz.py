"""Hostile input, as ``robodyn-ros dev fuzz`` sends it: the faults it found, each tested on its own,
and a short fuzz run over DDS checked against issue 12's "done when"."""
import gc

import numpy as np
import pytest
from lifecycle_msgs.srv import ChangeState
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robodyn_ros.apps.fuzz import run as fuzz
from robodyn_ros.control import JointTrajectory as Trajectory
from robodyn_ros.control import TrajectoryError
from robodyn_ros.nodes.messages import (_uniform_points, trajectory_from_message,
                                        trajectory_from_serialized, trajectory_sizes)
from robodyn_ros.plumbing.reasons import MAX_CHARS
from conftest import JOINTS, Q0, wait_for_subscriber

#: A log line holds at most one bounded reason (reasons.MAX_CHARS) and the logger's prefix
#: ("[WARN] [<time>] [<node>]: parameter change refused: " is 86 bytes): "no line over ~1 kB".
LOG_LINE_LIMIT = MAX_CHARS + 200


# ------------------------------------------------------------------ a flood of trajectory points
@pytest.mark.parametrize("frame, names, points", [
    ("", JOINTS, 3), ("world", JOINTS, 0), ("abc", ["", "a", "bb", "ccc"], 1),
    ("x" * 13, [f"j{i}" for i in range(1000)], 2), ("", [], 100_000)])
def test_trajectory_sizes_are_read_from_the_serialized_message(frame, names, points):
    """The controller judges a trajectory's size before deserializing it (a 100,000-point message
    took its executor 1.3 s to convert, found by the fuzzer as a 1.3 s gap between commands):
    the count read from the CDR bytes is the message's, whatever the lengths before it."""
    msg = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(positions=[0.5] * 6)
                                                     for _ in range(points)])
    msg.header.frame_id = frame
    raw = serialize_message(msg)
    assert trajectory_sizes(raw) == (len(names), points)
    with pytest.raises(ValueError, match="ends early"):
        trajectory_sizes(raw[:8 + 4 + len(frame)])


def _outcome(convert):
    """(trajectory, start) or the reason it was refused."""
    try:
        return convert()
    except ValueError as exc:
        return str(exc)


def test_trajectories_read_from_their_bytes_equal_the_deserialized_ones():
    """The controller reads a trajectory whose points all have one size straight from its CDR
    bytes (rclpy's conversion of 10,000 points held it 50-170 ms without commanding, the
    fuzzer's remaining gaps); any other goes through rclpy. Either way the trajectory, or the
    reason it is refused, is the deserialized message's: 400 random messages, uniform or not,
    with every padding a point's start modulo 8 gives, stamps valid and not."""
    rng = np.random.default_rng(12)
    fast = 0
    for _ in range(400):
        names = [f"{'j' * int(rng.integers(5))}{i}" for i in range(int(rng.integers(8)))]
        sizes = rng.integers(0, 8, size=4)
        uniform = rng.random() < 0.7
        msg = JointTrajectory(joint_names=names)
        msg.header.frame_id = "f" * int(rng.integers(9))
        msg.header.stamp.sec = int(rng.integers(-2, 5))
        msg.header.stamp.nanosec = int(rng.choice([0, 5, 999_999_999, 1_000_000_000]))
        for i in range(int(rng.integers(6))):
            n = sizes if uniform else rng.integers(0, 8, size=4)
            point = JointTrajectoryPoint(**{field: rng.normal(size=int(k)).tolist() for field, k in
                                            zip(("positions", "velocities", "accelerations",
                                                 "effort"), n)})
            point.time_from_start.sec = int(rng.choice([i, i, -1]))
            point.time_from_start.nanosec = int(rng.choice([0, 10, 2_000_000_000]))
            msg.points.append(point)
        raw = serialize_message(msg)
        expected = _outcome(lambda: trajectory_from_message(deserialize_message(raw,
                                                                                JointTrajectory)))
        got = _outcome(lambda: trajectory_from_serialized(raw, JointTrajectory))
        fast += isinstance(_outcome(lambda: _uniform_points(raw)), tuple)
        if isinstance(expected, str):
            assert got == expected
            continue
        (a, start_a), (b, start_b) = expected, got
        assert start_a == start_b and a.joint_names == b.joint_names
        for field in ("times", "positions", "velocities", "accelerations"):
            x, y = getattr(a, field), getattr(b, field)
            assert (x is None) == (y is None), field
            np.testing.assert_array_equal(x, y)
    assert fast > 200  # the arrays path was taken, not only the fallback


@pytest.mark.usefixtures("ros")
@pytest.mark.parametrize("names, points, reason", [
    (JOINTS, 11, "trajectory: 11 points, more than max_trajectory_points 10"),
    ([f"j{i}" for i in range(100_000)], 1, "trajectory: 100000 joint names, more than the 6 "
     "joints ['joint_1', 'joint_2', 'joint_3', 'joint_4', 'joint_5', ... 1 more, 6 in all]")])
def test_a_trajectory_too_large_is_refused_by_its_sizes(rig, names, points, reason):
    """Refused from the counts in its bytes, before any name or point is converted (100,000
    names took the controller 190 ms through the conversion, the fuzzer's largest gap then)."""
    ctl = rig.controller(max_trajectory_points=10)
    wait_for_subscriber(rig, rig.joint_states)
    rig.publish_state(Q0)
    rig.next_command()
    pub = rig.probe.create_publisher(JointTrajectory,
                                     f"{rig.ns}/computed_torque_controller/joint_trajectory", 10)
    wait_for_subscriber(rig, pub)
    pub.publish(JointTrajectory(joint_names=names, points=[
        JointTrajectoryPoint(positions=list(Q0)) for _ in range(points)]))
    rig.spin_until(lambda: ctl.loop.rejected.count, what="the refusal")
    assert ctl.loop.rejected.last_reason == reason


def test_many_repeated_joint_names_are_counted_once_and_reported_bounded():
    """A goal's trajectory (rclpy converts it before any size check) naming 20,000 joints, each
    twice: names.count per name made this quadratic (100,000 names: hours in the goal callback)
    and the reason listed every repeated name."""
    names = [f"j{i % 10_000}" for i in range(20_000)]
    with pytest.raises(TrajectoryError) as refused:
        Trajectory(names, [1.0], np.zeros((1, len(names))))
    reason = str(refused.value)
    assert reason.startswith("joint names repeated: ['j0', 'j1', 'j10', 'j100', 'j1000', ... "
                             "9995 more, 10000 in all]"), reason
    assert len(reason) <= MAX_CHARS


# ------------------------------------------------------------------ lifecycle under traffic
@pytest.mark.usefixtures("ros")
def test_a_joint_state_queued_before_cleanup_does_not_end_the_controller(rig):
    """A state the executor hands over after cleanup (queued while the node tore down) found no
    loop: AttributeError out of the callback ended the process — exit 1 at every SIGINT while
    states flowed at 1 kHz, found by the fuzzer; ``ros2 lifecycle set cleanup`` did the same."""
    ctl = rig.controller()
    wait_for_subscriber(rig, rig.joint_states)
    rig.publish_state(Q0)
    rig.next_command()
    for _ in range(20):
        rig.publish_state(Q0)
    ctl.trigger_deactivate()
    ctl.trigger_cleanup()
    rig.spin_for(0.5)  # raised AttributeError before
    assert ctl.loop is None


@pytest.mark.usefixtures("ros")
def test_a_configured_controller_leaves_its_heap_out_of_full_collections(rig):
    """A full collection walked the whole heap (~130,000 objects, 250-330 ms on the test machine)
    and a burst of inputs triggers one: the fuzzer's largest command gaps. Configure freezes
    what exists; cleanup thaws it so that what teardown dropped can still be collected."""
    gc.unfreeze()
    ctl = rig.controller()
    assert gc.get_freeze_count() > 10_000
    ctl.trigger_deactivate()
    ctl.trigger_cleanup()
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("ros")
@pytest.mark.parametrize("transition, label", [(99, ""), (1, ""), (5, ""), (0, "x" * 10_000)])
def test_change_state_to_no_transition_is_refused_and_the_controller_keeps_commanding(
        rig, capfd, transition, label):
    """An id no transition has from the current state raised RCLError out of rclpy's
    ~/change_state callback and ended the process; a 10 kB label became a 10 kB log line of
    rcl_lifecycle's. Both are refused (success false) and commands go on."""
    ctl = rig.controller()
    wait_for_subscriber(rig, rig.joint_states)
    request = ChangeState.Request()
    request.transition.id, request.transition.label = transition, label
    assert not rig.call(ChangeState, "computed_torque_controller/change_state", request).success
    assert ctl.active
    rig.publish_state(Q0)
    rig.next_command()
    assert max(map(len, capfd.readouterr().err.splitlines()), default=0) < LOG_LINE_LIMIT


# ------------------------------------------------------------------ parameters
@pytest.mark.usefixtures("ros")
@pytest.mark.parametrize("name, value", [("", 1.0), ("", "x"), ("rate", 5.0)])
def test_the_simulator_refuses_a_parameter_it_does_not_have(rig, name, value):
    """rclpy took a parameter named '' on a node without run-time changes (arm_simulator and
    effort_feedforward; the fuzzer counted it accepted): every node now refuses a name it does
    not have."""
    sim = rig.simulator()
    assert not sim.set_parameters([Parameter(name, value=value)])[0].successful
    assert not sim.has_parameter("")


# ------------------------------------------------------------------ the fuzz run
#: The CI run's watchdog. Its gap bound, 2 periods + 1.1 x 0.5 s = 552 ms, is chosen from the
#: measurements on a 2-core machine running the five processes at 1 kHz: gaps with no hostile
#: input at all reached 19 ms, with light inputs only 138 ms (the processes' share of two cores),
#: and in about one full test-suite run of three one gap of 336-354 ms opened within 0.4 s of the
#: start of the warm-up, before any hostile input, with no numba compile in any node (the five
#: processes and this one just started on two cores). The faults the fuzzer found stopped the
#: commands for longer — a 100,000-point trajectory 0.43-1.3 s, a stream of them 3-5 s. The
#: default 0.1 s (bound 112 ms) is what `robodyn-ros dev fuzz` reports against (doc/testing.md).
CI_STATE_TIMEOUT = 0.5


def test_a_short_fuzz_run_meets_issue_12s_done_when():
    """Every kind of hostile input (hundreds in all) while the simulator streams joint states
    at 1 kHz: no non-finite state or command, no /diagnostics message over 10 kB, no log line
    over ~1 kB, no gap between effort commands over 2 periods + the watchdog's bound, every node
    alive at the end and exiting cleanly."""
    # 14 s: every kind must go out, and each flood takes its sender up to ~0.7 s on a busy
    # machine (in a full suite run, 10 s sent 13 of the 14 flood kinds)
    result = fuzz.run(duration=14.0, rate=50.0, state_timeout=CI_STATE_TIMEOUT,
                      flood_period=0.3, progress=lambda line: None)
    observed = result["observed"]
    summary = fuzz.summary(result)
    assert set(result["inputs_by_kind"]) == set(fuzz.Fuzzer.kind_names()), summary
    assert observed["commands"] > 1000 and observed["joint_states"] > 1000, summary
    assert observed["stewart_forces"] > 0, summary
    assert not observed["non_finite"], summary
    assert observed["largest_diagnostic_bytes"] <= 10_000, summary
    assert max(line["bytes"] for line in result["longest_log_line"].values()) <= LOG_LINE_LIMIT, \
        summary
    assert observed["command_gap_max_s"] <= fuzz.gap_bound(CI_STATE_TIMEOUT), summary
    assert all(result["alive_at_end"].values()), summary
    assert set(result["exit_codes"].values()) == {0}, summary
