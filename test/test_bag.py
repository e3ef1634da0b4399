"""Rosbag2 recordings (robodyn_ros.identification.bag, nodes/recorder.py): real bags written with the
rosbags library in both storage formats and read back; the effort command's alignment on a sequence
whose answer is known by construction; every BagError naming what is missing; the recorder over
real DDS; and a bag of the real demo that gives back the demo's own error table."""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.identification.bag import (FLOAT64_MULTI_ARRAY, JOINT_STATE, BagError, BagWriter,
                                            read_joint_states, read_messages, write_joint_states)

STORAGES = ["mcap", "sqlite3"]
NAMES = ["a", "b", "c"]
N = 120
RNG = np.random.default_rng(19)
T = 2.0 + 1e-3 * np.arange(N)  # s: stamps and receive times
Q = RNG.uniform(-2.0, 2.0, (N, 3))
TAU = RNG.uniform(-50.0, 50.0, (N, 3))
STORE = get_typestore(Stores.ROS2_JAZZY)  # rosbags' message types, to build messages with


@pytest.fixture(params=STORAGES)
def storage(request):
    return request.param


def ns(t):
    return int(round(t * 1e9))


def joint_state(t, names, position, velocity=(), effort=()):
    """A rosbags sensor_msgs/JointState stamped ``t``."""
    types = STORE.types
    return types[JOINT_STATE](
        header=types["std_msgs/msg/Header"](
            stamp=types["builtin_interfaces/msg/Time"](*divmod(ns(t), 1_000_000_000)), frame_id=""),
        name=list(names), position=np.asarray(position, float), velocity=np.asarray(velocity, float),
        effort=np.asarray(effort, float))


def command(values):
    """A rosbags std_msgs/Float64MultiArray of ``values``."""
    types = STORE.types
    return types[FLOAT64_MULTI_ARRAY](layout=types["std_msgs/msg/MultiArrayLayout"](
        dim=[], data_offset=0), data=np.asarray(values, float))


def good_bag(path, storage, **kwargs):
    return write_joint_states(path, T, NAMES, Q, effort=TAU, storage=storage, **kwargs)


# --- round trips -------------------------------------------------------------------------------

def test_joint_states_round_trip_in_any_joint_order(tmp_path, storage):
    """Messages list the joints in changing orders (a new order, the same order again, back to the
    first): the arrays come back in one order; no velocities -> None; the efforts kept."""
    orders = [[0, 1, 2], [2, 0, 1], [2, 0, 1], [1, 2, 0], [0, 1, 2]]
    path = tmp_path / "bag"
    with BagWriter(path, storage) as bag:
        bag.add_topic("/joint_states", JOINT_STATE)
        for k in range(N):
            o = orders[k % len(orders)]
            bag.write_message("/joint_states", ns(T[k]), joint_state(
                T[k], [NAMES[i] for i in o], Q[k, o], effort=TAU[k, o]))
    rec = read_joint_states(path)
    assert rec.joint_names == NAMES and rec.source == str(path)
    assert np.array_equal(rec.position, Q) and np.array_equal(rec.effort, TAU)
    assert rec.velocity is None
    assert rec.time_source == "header" and rec.effort_source == "joint_states" and rec.dropped == 0
    assert np.array_equal(rec.time_ns, [ns(t) for t in T])
    assert np.allclose(rec.t, T - T[0], rtol=0, atol=1e-12) and rec.t[0] == 0.0
    assert not rec.position.flags.writeable
    # requested joints: the columns in that order
    sub = read_joint_states(path, joints=["c", "a"])
    assert sub.joint_names == ["c", "a"] and np.array_equal(sub.position, Q[:, [2, 0]])


def test_write_joint_states_round_trip_unstamped(tmp_path, storage):
    """Zero stamps (as some drivers send): the receive times are the time base. A bag's single
    storage file reads as the bag does."""
    v = RNG.normal(size=Q.shape)
    path = write_joint_states(tmp_path / "bag", T, NAMES, Q, velocity=v, storage=storage,
                              stamped=False, extra={"/other": (FLOAT64_MULTI_ARRAY, [
                                  (0.5, command([1.0])), (0.5, command([2.0]))])})
    assert sorted((t, m.data.tolist()) for t, m in read_messages(path, "/other")) == [
        (500_000_000, [1.0]), (500_000_000, [2.0])]
    rec = read_joint_states(path)
    assert rec.time_source == "receive" and np.array_equal(rec.time_ns, [ns(t) for t in T])
    assert np.array_equal(rec.velocity, v) and rec.effort is None and rec.effort_source is None
    (file,) = [f for f in path.iterdir() if f.suffix in (".mcap", ".db3")]
    assert np.array_equal(read_joint_states(file).position, Q)


def test_a_type_outside_the_store_is_read_from_its_msg_file(tmp_path, storage, monkeypatch):
    """A message type that rosbags' Jazzy store lacks (as control_msgs) is defined from
    share/<package>/msg/<Name>.msg under AMENT_PREFIX_PATH, with the types it uses."""
    share = tmp_path / "prefix" / "share" / "robodyn_test_msgs" / "msg"
    share.mkdir(parents=True)
    (share / "Sample.msg").write_text("std_msgs/Header header\nrobodyn_test_msgs/Inner[] inner\n")
    (share / "Inner.msg").write_text("# a comment\nfloat64[] values\nstring name\n")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "prefix"))
    path = tmp_path / "bag"
    with BagWriter(path, storage) as bag:
        bag.add_topic("/sample", "robodyn_test_msgs/msg/Sample")
        types = bag.typestore.types
        inner = types["robodyn_test_msgs/msg/Inner"]
        msg = types["robodyn_test_msgs/msg/Sample"](
            header=joint_state(1.5, [], []).header,
            inner=[inner(values=np.array([1.0, 2.0]), name="x"), inner(values=np.zeros(0),
                                                                        name="y")])
        bag.write_message("/sample", 7, msg)
        with pytest.raises(BagError, match="no definition of robodyn_test_msgs/msg/Missing: "
                                           r"none of .*share/robodyn_test_msgs/msg/Missing\.msg"):
            bag.add_topic("/missing", "robodyn_test_msgs/msg/Missing")
    ((received, back),) = list(read_messages(path, "/sample"))
    assert received == 7 and back.header.stamp.sec == 1 and back.header.stamp.nanosec == 5e8
    assert [i.name for i in back.inner] == ["x", "y"] and back.inner[0].values.tolist() == [1, 2]


# --- the effort command ------------------------------------------------------------------------

def test_effort_command_alignment(tmp_path, storage):
    """The torque of state k is the first command received at or after state k and before state
    k + 1. By construction: command k carries 100 k + (1, 2, 3) in effort_joints order (c, a, b)
    and arrives 0.3 ms after state k, except: two commands before the first state (ignored);
    none for state 5; a second, later one for state 9 (not taken); state 12's exactly at its
    receipt (taken); state 14's exactly at state 15's receipt (so state 14 has none and state 15
    gets it, as the rule says: it was received at state 15); and the last state's 5 ms after it."""
    effort_joints = ["c", "a", "b"]
    values = {k: 100.0 * k + np.array([1.0, 2.0, 3.0]) for k in range(N)}
    times = {k: T[k] + 3e-4 for k in range(N)}
    del times[5]
    times.update({12: T[12], 14: T[15], 15: T[15] + 3e-4, N - 1: T[-1] + 5e-3})
    messages = [(T[0] - 2e-3, np.full(3, -1.0)), (T[0] - 1e-3, np.full(3, -2.0))]
    messages += [(s, values[k]) for k, s in times.items()] + [(T[9] + 6e-4, -values[9])]
    path = tmp_path / "bag"
    write_joint_states(path, T, NAMES, Q, storage=storage, extra={
        "/effort_controller/commands": (FLOAT64_MULTI_ARRAY, [
            (s, command(v)) for s, v in messages])})
    rec = read_joint_states(path, effort_topic="/effort_controller/commands",
                            effort_joints=effort_joints)
    kept = [k for k in range(N) if k not in (5, 14)]
    expected = np.array([values[14 if k == 15 else k] for k in kept])
    assert rec.dropped == 2 and rec.effort_source == "/effort_controller/commands"
    assert np.array_equal(rec.time_ns, [ns(T[k]) for k in kept])
    assert np.array_equal(rec.position, Q[kept])
    # (c, a, b) order in the commands -> (a, b, c) columns
    assert np.array_equal(rec.effort, expected[:, [1, 2, 0]])


def test_effort_from_the_controller_state_by_stamp(tmp_path, storage):
    """The controller's state (here our stand-in, a JointTrajectory of the points reference,
    feedback, error, output) stamped as each joint state gives that state's torque exactly, in its
    own joint order; states without one are dropped; a message of other than 4 points is refused."""
    path = tmp_path / "bag"
    with BagWriter(path, storage) as bag:
        types = bag.typestore.types
        bag.add_topic("/joint_states", JOINT_STATE)
        bag.add_topic("/state", "trajectory_msgs/msg/JointTrajectory")
        point = types["trajectory_msgs/msg/JointTrajectoryPoint"]
        duration = types["builtin_interfaces/msg/Duration"](sec=0, nanosec=0)
        order = [2, 0, 1]
        for k in range(N):
            state = joint_state(T[k], NAMES, Q[k])
            bag.write_message("/joint_states", ns(T[k]), state)
            if k % 7 == 3:
                continue  # no controller state for this one
            empty = np.zeros(0)
            points = [point(positions=empty, velocities=empty, accelerations=empty,
                            effort=e, time_from_start=duration)
                      for e in (empty, empty, empty, TAU[k, order])]
            bag.write_message("/state", ns(T[k]) + 400_000, types[
                "trajectory_msgs/msg/JointTrajectory"](header=state.header,
                                                       joint_names=[NAMES[i] for i in order],
                                                       points=points))
    rec = read_joint_states(path, effort_topic="/state")
    kept = [k for k in range(N) if k % 7 != 3]
    assert rec.dropped == N - len(kept) and np.array_equal(rec.effort, TAU[kept])
    assert np.array_equal(rec.position, Q[kept])


# --- errors ------------------------------------------------------------------------------------

def test_not_a_bag(tmp_path):
    with pytest.raises(BagError, match=r"nothing: no such file or directory"):
        read_joint_states(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BagError, match="empty: not a rosbag2: the directory has no metadata.yaml"):
        read_joint_states(tmp_path / "empty")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(BagError, match="notes.txt: not a rosbag2"):
        read_joint_states(tmp_path / "notes.txt")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "metadata.yaml").write_text("rosbag2_bagfile_information: {version: 8}")
    with pytest.raises(BagError, match="broken: unreadable rosbag2: .*metadata key is missing"):
        read_joint_states(tmp_path / "broken")
    (tmp_path / "junk.mcap").write_bytes(b"\x89MCAP0\r\n" + bytes(64))
    with pytest.raises(BagError, match="junk.mcap: unreadable rosbag2"):
        read_joint_states(tmp_path / "junk.mcap")


def test_a_bag_is_never_overwritten(tmp_path, storage):
    good_bag(tmp_path / "bag", storage)
    with pytest.raises(BagError, match="bag exists already"):
        BagWriter(tmp_path / "bag", storage)
    with pytest.raises(BagError, match="storage 'rosbag1' is not one of mcap, sqlite3"):
        BagWriter(tmp_path / "other", "rosbag1")


def test_topic_absent_or_of_another_type(tmp_path, storage):
    path = tmp_path / "bag"
    with BagWriter(path, storage) as bag:
        bag.add_topic("/joint_states", FLOAT64_MULTI_ARRAY)
        bag.add_topic("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")
        bag.write_message("/joint_states", 1, command([1.0]))
    with pytest.raises(BagError, match=r"bag: no topic /robot/joint_states; the bag's topics: "
                                       r"/diagnostics \(diagnostic_msgs/msg/DiagnosticArray\), "
                                       r"/joint_states \(std_msgs/msg/Float64MultiArray\)"):
        read_joint_states(path, topic="/robot/joint_states")
    with pytest.raises(BagError, match="bag: /joint_states is std_msgs/msg/Float64MultiArray, not "
                                       "sensor_msgs/msg/JointState"):
        read_joint_states(path)


def test_missing_joints_are_named(tmp_path, storage):
    path = tmp_path / "bag"
    with BagWriter(path, storage) as bag:
        bag.add_topic("/joint_states", JOINT_STATE)
        for k in range(N):  # message 40 lacks joint c
            names = NAMES[:2] if k == 40 else NAMES
            bag.write_message("/joint_states", ns(T[k]),
                              joint_state(T[k], names, Q[k, :len(names)]))
    with pytest.raises(BagError, match="bag: /joint_states message 0 .*: no joint x, y; the "
                                       "message has a, b, c"):
        read_joint_states(path, joints=["a", "x", "y"])
    with pytest.raises(BagError, match=r"/joint_states message 40 \(received at 2.040000000 s\): "
                                       "no joint c; the message has a, b"):
        read_joint_states(path)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_position_is_named(tmp_path, storage, bad):
    q = Q.copy()
    q[33, 1] = bad
    path = write_joint_states(tmp_path / "bag", T, NAMES, q, storage=storage)
    with pytest.raises(BagError, match=f"bag: /joint_states: position of b is {bad} at "
                                       r"2.033000000 s"):
        read_joint_states(path)


def test_too_few_samples(tmp_path, storage):
    path = write_joint_states(tmp_path / "bag", T[:50], NAMES, Q[:50], storage=storage)
    with pytest.raises(BagError, match="bag: 50 messages on /joint_states, fewer than "
                                       "min_samples = 100"):
        read_joint_states(path)
    assert len(read_joint_states(path, min_samples=50).t) == 50


def write_stamped(path, storage, t):
    with BagWriter(path, storage) as bag:
        bag.add_topic("/joint_states", JOINT_STATE)
        for k in range(N):
            bag.write_message("/joint_states", ns(T[k]), joint_state(t[k], NAMES, Q[k]))


def test_times_must_increase(tmp_path, storage):
    t = T.copy()
    t[70] = t[68]  # received later, stamped earlier
    write_stamped(tmp_path / "bag", storage, t)
    with pytest.raises(BagError, match="bag: /joint_states: the header times are not increasing: "
                                       "message 70 at 2.068000000 s follows message 69 at "
                                       "2.069000000 s"):
        read_joint_states(tmp_path / "bag")


def test_a_state_published_again_is_read_once(tmp_path, storage):
    t = T.copy()
    t[70] = t[69]  # the same state again (a lockstep simulator repeats it for a restarted controller)
    write_stamped(tmp_path / "bag", storage, t)
    recording = read_joint_states(tmp_path / "bag")
    assert len(recording.t) == N - 1 and recording.dropped == 1
    np.testing.assert_array_equal(recording.position, np.delete(Q, 70, axis=0))


def test_velocity_in_some_messages_only(tmp_path, storage):
    path = tmp_path / "bag"
    with BagWriter(path, storage) as bag:
        bag.add_topic("/joint_states", JOINT_STATE)
        for k in range(N):
            bag.write_message("/joint_states", ns(T[k]), joint_state(
                T[k], NAMES, Q[k], velocity=Q[k] if k < 60 else ()))
    with pytest.raises(BagError, match="60 of 120 messages have no velocity .the first is "
                                       "message 60."):
        read_joint_states(path)


def test_effort_topic_errors(tmp_path, storage):
    path = tmp_path / "bag"
    good_bag(path, storage, extra={"/commands": (FLOAT64_MULTI_ARRAY, [
        (t + 1e-4, command([1.0, 2.0] if k == 8 else [1.0, 2.0, 3.0]))
        for k, t in enumerate(T)])})
    with pytest.raises(BagError, match=r"bag: no topic /effort_controller/commands; the bag's "
                                       r"topics: /commands \(std_msgs/msg/Float64MultiArray\), "
                                       r"/joint_states \(sensor_msgs/msg/JointState\)"):
        read_joint_states(path, effort_topic="/effort_controller/commands")
    with pytest.raises(BagError, match=r"bag: /commands message 8 .*: 2 values for the 3 effort "
                                       r"joints \(a, b, c\)"):
        read_joint_states(path, effort_topic="/commands")
    with pytest.raises(BagError, match=r"effort_joints \(a, b\) lack c"):
        read_joint_states(path, effort_topic="/commands", effort_joints=["a", "b"])
    with pytest.raises(BagError, match="/joint_states is sensor_msgs/msg/JointState, neither "
                                       "std_msgs/msg/Float64MultiArray nor a controller state"):
        read_joint_states(path, effort_topic="/joint_states")


# --- over DDS ----------------------------------------------------------------------------------

def test_recorder_over_dds(tmp_path):
    """BagRecorder on a node records what another node publishes over DDS; read_joint_states
    gives back the published values, each state with its command. (A context of its own: the
    demo's test below initialises rclpy's default one.)"""
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.node import Node

    from conftest import WAIT
    from robodyn_ros.nodes.recorder import BagRecorder, type_name

    context = rclpy.Context()
    context.init()
    executor = EventsExecutor(context=context)
    recorder_node, talker = (Node(name, namespace="/bag_test", context=context)
                             for name in ("recorder", "talker"))
    for node in (recorder_node, talker):
        executor.add_node(node)

    def spin_until(condition, what):
        deadline = time.monotonic() + WAIT
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            executor.spin_once(timeout_sec=0.02)

    states = talker.create_publisher(JointState, "recorded_states", 10)
    commands = talker.create_publisher(Float64MultiArray, "recorded_commands", 10)
    path = tmp_path / "bag"
    try:
        with pytest.raises(BagError, match="no definition of unknown_msgs/msg/Thing"):
            BagRecorder(recorder_node, tmp_path / "bad", [("thing", "unknown_msgs/msg/Thing")])
        with BagRecorder(recorder_node, path, [
                ("recorded_states", type_name(JointState)),
                ("recorded_commands", type_name(Float64MultiArray))]) as rec:
            topics = ["/bag_test/recorded_states", "/bag_test/recorded_commands"]
            assert list(rec.counts) == topics and rec.path == path
            for publisher in (states, commands):
                spin_until(lambda: publisher.get_subscription_count() > 0, "discovery")
            velocity = RNG.normal(size=Q.shape)
            for k in range(N):
                o = [[0, 1, 2], [1, 2, 0]][k % 2]
                msg = JointState(name=[NAMES[i] for i in o], position=Q[k, o].tolist(),
                                 velocity=velocity[k, o].tolist())
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns(T[k]), 1_000_000_000)
                # one at a time, so that the receive order is the publishing order
                for topic, publisher, message in (
                        (topics[0], states, msg),
                        (topics[1], commands, Float64MultiArray(data=TAU[k].tolist()))):
                    publisher.publish(message)
                    spin_until(lambda: rec.counts[topic] == k + 1, f"message {k} on {topic}")
    finally:
        executor.shutdown()
        for node in (recorder_node, talker):
            node.destroy_node()
        context.try_shutdown()
    back = read_joint_states(path, topic=topics[0], effort_topic=topics[1])
    assert back.joint_names == NAMES and back.dropped == 0 and back.time_source == "header"
    assert np.array_equal(back.position, Q) and np.array_equal(back.velocity, velocity)
    assert np.array_equal(back.effort, TAU)
    assert np.array_equal(back.time_ns, [ns(t) for t in T])


def test_a_recorded_demo_gives_back_its_error_table(tmp_path):
    """``robodyn-ros demo puma --record``: the bag's controller states (stamped as the joint states)
    hold the demo's error table, their feedback is the bag's joint states, their reference minus
    it their error, and their output (the command) is the torque the simulator reports applied
    up to the next state."""
    from robodyn_ros.apps.demos.arm_loop import CONTROLLER
    from robodyn_ros.nodes.controller_state import TOPIC

    out = tmp_path / "demo.json"
    # as a user runs it, in a process of its own and on a DDS domain of its own: on this
    # process's, it left the latency benchmark's driver of a later test unable to pair a single
    # answer (not understood yet; no process of it outlives the run)
    domain = str(1 + (int(os.environ["ROS_DOMAIN_ID"]) + 50) % 100)
    subprocess.run([sys.executable, "-m", "robodyn_ros.apps.cli", "demo", "puma", "--rates", "1000",
                    "--duration", "0.5", "--record", str(tmp_path / "bags"), "--plot", "",
                    "--json", str(out)], check=False, timeout=300, capture_output=True,
                   env={**os.environ, "ROS_DOMAIN_ID": domain})
    (run,) = json.loads(out.read_text())["runs"]
    assert run["bag"] == str(tmp_path / "bags" / "1_kHz")
    states = read_joint_states(run["bag"])
    assert states.joint_names == run["joints"] and states.time_source == "header"
    assert len(states.t) >= run["samples"] and states.effort_source == "joint_states"
    topic = f"/{CONTROLLER}/{TOPIC.removeprefix('~/')}"
    controller = {}
    for _, msg in read_messages(run["bag"], topic):
        assert list(msg.joint_names) == run["joints"]
        points = msg.points if hasattr(msg, "points") else [msg.reference, msg.feedback,
                                                            msg.error, msg.output]
        controller[msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec] = points
    error = np.array([p[2].positions for p in controller.values()])
    # the same data: equal but for rounding, a few ulps of positions of order 1 rad (the
    # controller's sampler and the demo's each compute the reference)
    np.testing.assert_allclose(np.abs(error).max(axis=0),
                               [run["max_error_rad"][j] for j in run["joints"]], rtol=0, atol=1e-14)
    k = np.flatnonzero(np.isin(states.time_ns, list(controller)))
    # the demo waited for them before sending the motion; the last answer may come after the
    # recorder closed
    assert len(k) >= run["samples"] - 2
    reference, feedback, err = (np.array([controller[states.time_ns[i]][p].positions for i in k])
                                for p in range(3))
    assert np.array_equal(feedback, states.position[k])
    assert np.array_equal(reference - feedback, err)
    torques = read_joint_states(run["bag"], effort_topic=topic)
    assert torques.effort_source == topic and torques.dropped == len(states.t) - len(k)
    # during the motion (the reference moving; the simulator step-locked to the controller since
    # its first command) the command answering state k is what the simulator applied up to k + 1
    start = min(ns for ns, p in controller.items() if np.any(p[0].velocities))
    following = np.searchsorted(states.time_ns, torques.time_ns) + 1
    moving = (torques.time_ns >= start) & (following < len(states.t))
    assert moving.sum() > 1000  # of the 1500 states of the motion and the settling
    assert np.array_equal(torques.effort[moving], states.effort[following[moving]])
