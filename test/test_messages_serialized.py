"""The controller's hot-path messages (joint state in; command and controller state out) read and
written as CDR bytes, against rclpy's own (de)serialization as the oracle: what the node reads
from a serialized JointState is what the deserialized message says, and what it publishes
deserializes to the values it meant."""
import struct

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.control import cycle_steps
from robodyn_ros.nodes.controller_state import SerializedState
from robodyn_ros.nodes.messages import JointTrajectoryControllerState
from robodyn_ros.nodes.messages import MAX_JOINT_STATE_NAMES, JointStateReader
from robodyn_ros.nodes.serialized import SerializedFloat64MultiArray, SerializedJointState, serialized
from robodyn_ros.plumbing.kernels import interpreted


def _state(names, position, velocity, frame="", sec=12, nanosec=345, effort=()):
    msg = JointState(name=list(names), position=list(position), velocity=list(velocity),
                     effort=list(effort))
    msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id = sec, nanosec, frame
    return msg


def _same(read, msg):
    stamp, names, position, velocity, effort = read
    assert (stamp.sec, stamp.nanosec) == (msg.header.stamp.sec, msg.header.stamp.nanosec)
    assert names == list(msg.name)
    np.testing.assert_array_equal(position, np.asarray(msg.position))
    np.testing.assert_array_equal(velocity, np.asarray(msg.velocity))
    np.testing.assert_array_equal(effort, np.asarray(msg.effort))


@pytest.mark.parametrize("frame", ["", "b", "base_link", "x" * 7])  # every alignment after it
@pytest.mark.parametrize("count", [0, 1, 6, 7])
def test_a_joint_state_read_from_its_bytes_equals_the_deserialized_message(frame, count):
    rng = np.random.default_rng(count)
    names = [f"j{'x' * i}" for i in range(count)]
    msg = _state(names, rng.normal(size=count), rng.normal(size=count), frame,
                 effort=rng.normal(size=count))
    _same(JointStateReader(JointState).read(serialize_message(msg)), msg)


def test_names_are_decoded_again_only_when_their_bytes_change():
    reader = JointStateReader(JointState)
    first = reader.read(serialize_message(_state(["a", "b"], [1.0, 2.0], [3.0, 4.0])))
    again = reader.read(serialize_message(_state(["a", "b"], [5.0, 6.0], [7.0, 8.0])))
    assert again[1] is first[1]      # the same list: the loop's name match is kept
    assert list(again[2]) == [5.0, 6.0]
    other = _state(["b", "a"], [1.0, 2.0], [3.0, 4.0], frame="longer frame")
    _same(reader.read(serialize_message(other)), other)


def test_names_that_extend_the_last_ones_are_not_taken_for_them():
    reader = JointStateReader(JointState)
    reader.read(serialize_message(_state(["a", "b"], [1.0, 2.0], [3.0, 4.0])))
    longer = _state(["a", "b", "c"], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    _same(reader.read(serialize_message(longer)), longer)
    shorter = _state(["a"], [1.0], [2.0])
    _same(reader.read(serialize_message(shorter)), shorter)


def test_a_flood_of_names_is_refused_by_its_count_before_any_is_decoded():
    names = [f"unknown_{i}" for i in range(MAX_JOINT_STATE_NAMES + 1)]
    with pytest.raises(ValueError, match=f"{MAX_JOINT_STATE_NAMES + 1} names, more than"):
        JointStateReader(JointState).read(serialize_message(_state(names, [0.0], [0.0])))
    at_most = _state(names[:-1], [0.0], [0.0])
    _same(JointStateReader(JointState).read(serialize_message(at_most)), at_most)


def test_position_and_velocity_of_other_sizes_are_read_as_they_are():
    # the loop refuses them with the sizes in its reason; the reader must not invent values
    msg = _state(["a", "b", "c"], [1.0], [])
    _same(JointStateReader(JointState).read(serialize_message(msg)), msg)


def test_bytes_that_end_early_are_a_value_error_never_a_partial_state():
    raw = serialize_message(_state(["a", "b"], [1.0, 2.0], [3.0, 4.0]))
    reader = JointStateReader(JointState)
    for end in range(len(raw) - 16):   # cut anywhere up to the velocities' last double
        with pytest.raises(ValueError, match="ends early"):
            reader.read(raw[:end + 4])


def test_a_joint_state_of_absurd_counts_is_refused_without_reading_them():
    raw = bytearray(serialize_message(_state(["a"], [1.0], [2.0])))
    # the position count (after the header, the name) claims 2**31 doubles
    at = 4 + 8 + 4 + 4 + 4 + 4 + 2   # body: stamp, frame_id "", name count, "a" (size, bytes)
    at = (at + 3) & ~3
    assert struct.unpack_from("<I", raw, at)[0] == 1
    struct.pack_into("<I", raw, at, 2**31)
    with pytest.raises(ValueError, match="ends early"):
        JointStateReader(JointState).read(bytes(raw))


def _big_endian(names, position, velocity, sec, nanosec):
    """A JointState in big-endian CDR, written by hand (rclpy only writes little-endian)."""
    body = bytearray(struct.pack(">iII", sec, nanosec, 1) + b"\0")

    def align(n):
        body.extend(b"\0" * (-len(body) % n))
    align(4)
    body += struct.pack(">I", len(names))
    for name in names:
        align(4)
        body += struct.pack(">I", len(name) + 1) + name.encode() + b"\0"
    for values in (position, velocity, ()):
        align(4)
        body += struct.pack(">I", len(values))
        if values:
            align(8)
            body += struct.pack(f">{len(values)}d", *values)
    return b"\x00\x00\x00\x00" + bytes(body)


def test_a_big_endian_joint_state_is_deserialized():
    msg = _state(["a", "b"], [1.5, -2.0], [0.25, 3.0], sec=7, nanosec=9)
    raw = _big_endian(["a", "b"], [1.5, -2.0], [0.25, 3.0], 7, 9)
    assert deserialize_message(raw, JointState).position.tolist() == [1.5, -2.0]  # the oracle
    _same(JointStateReader(JointState).read(raw), msg)


def _takers(reader):
    """reader.take through the machine code, and the same kernel's source run by the interpreter."""
    source = interpreted(cycle_steps)["take_serialized_state"]

    def interpreted_take(raw, match, q, qd):
        stamp = np.zeros(2, dtype=np.int64)
        if source(raw, np.frombuffer(reader._block, np.uint8), match, q, qd, stamp):
            return tuple(stamp.tolist())
        return None
    return reader.take, interpreted_take


@pytest.mark.parametrize("frame", ["", "b", "base_link", "x" * 7])  # every alignment after it
@pytest.mark.parametrize("count", [1, 6, 9])
def test_a_joint_state_naming_the_last_joints_is_taken_from_its_bytes(frame, count):
    rng = np.random.default_rng(count)
    names = [f"j{'x' * i}" for i in range(count)]
    reader = JointStateReader(JointState)
    reader.read(serialize_message(_state(names, np.zeros(count), np.zeros(count))))
    match = rng.permutation(count)[:min(count, 6)]
    msg = _state(names, rng.normal(size=count), rng.normal(size=count), frame, sec=2**31 - 1,
                 nanosec=999_999_999, effort=rng.normal(size=count))
    for take in _takers(reader):
        q, qd = np.empty(match.size), np.empty(match.size)
        assert tuple(take(serialize_message(msg), match, q, qd)) == (2**31 - 1, 999_999_999)
        np.testing.assert_array_equal(q, np.asarray(msg.position)[match])
        np.testing.assert_array_equal(qd, np.asarray(msg.velocity)[match])


def test_only_a_finite_state_of_the_same_names_and_sizes_is_taken_from_its_bytes():
    """Every other state is left to read() and the loop, which say why they refuse it."""
    reader = JointStateReader(JointState)
    reader.read(serialize_message(_state(["a", "b"], [0.0, 0.0], [0.0, 0.0])))
    match = np.array([1, 0])
    good = bytes(serialized(_state(["a", "b"], [1.0, 2.0], [3.0, 4.0])))   # exactly its bytes
    refused = [serialize_message(_state(names, position, velocity)) for names, position, velocity in (
        (["b", "a"], [1.0, 2.0], [3.0, 4.0]),            # other names
        (["a", "bc"], [1.0, 2.0], [3.0, 4.0]),           # a name that extends one
        (["a"], [1.0], [3.0]),                           # fewer
        (["a", "b"], [1.0], [3.0, 4.0]),                 # a position missing
        (["a", "b"], [1.0, 2.0], []),                    # no velocity
        (["a", "b"], [1.0, 2.0, 5.0], [3.0, 4.0]),       # one position too many
        (["a", "b"], [np.nan, 2.0], [3.0, 4.0]),
        (["a", "b"], [1.0, 2.0], [3.0, -np.inf]))]
    refused.append(_big_endian(["a", "b"], [1.0, 2.0], [3.0, 4.0], 1, 2))
    refused += [serialize_message(_state(["a", "b"], [1.0, 2.0], [3.0, 4.0], sec=sec,
                                         nanosec=nanosec))   # stamps no clock gives
                for sec, nanosec in ((-1, 0), (0, 1_000_000_000), (-2**31, 2**32 - 1))]
    refused += [good[:end] for end in range(len(good))]   # cut anywhere, to nothing
    for take in _takers(reader):
        assert take(good, match, np.empty(2), np.empty(2)) is not None
        for raw in refused:
            assert take(raw, match, np.empty(2), np.empty(2)) is None


@pytest.mark.parametrize("n", [0, 1, 6, 7])
def test_the_serialized_command_deserializes_to_its_values(n):
    command = SerializedFloat64MultiArray(n)
    values = np.arange(n) * 1.5 - 2.0
    command.values[:] = values
    msg = deserialize_message(bytes(command), Float64MultiArray)
    np.testing.assert_array_equal(np.asarray(msg.data), values)
    assert list(msg.layout.dim) == [] and msg.layout.data_offset == 0
    # rclpy's own bytes for the same message (padding aside, which CDR leaves undefined)
    expected = serialize_message(Float64MultiArray(data=values.tolist()))
    raw = bytes(command)
    assert len(raw) == len(expected) and raw[:16] == expected[:16] and raw[20:] == expected[20:]


@pytest.mark.parametrize("names", [["a"], [f"joint_{i}" for i in range(1, 7)], ["x" * 5] * 7])
def test_the_serialized_joint_state_deserializes_to_what_was_written(names):
    n = len(names)
    state = SerializedJointState(names, JointState)
    for sec, nanosec in ((5, 0), (2**31 - 1, 999_999_999)):   # written again: the places are kept
        position, velocity = np.arange(n) * 0.25 - sec, np.arange(n) * -1.5 + nanosec
        state.position[:], state.velocity[:] = position, velocity
        msg = deserialize_message(state.write(sec, nanosec), JointState)
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (sec, nanosec)
        assert list(msg.name) == names and len(msg.effort) == 0
        np.testing.assert_array_equal(msg.position, position)
        np.testing.assert_array_equal(msg.velocity, velocity)


def test_a_serialized_joint_state_with_efforts_deserializes_to_all_three():
    names = [f"joint_{i}" for i in range(1, 7)]
    state = SerializedJointState(names, JointState, effort=True)
    values = np.arange(18.0).reshape(3, 6) - 7.5
    state.position[:], state.velocity[:], state.effort[:] = values
    raw = state.write(3, 4)
    msg = deserialize_message(raw, JointState)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (3, 4) and list(msg.name) == names
    np.testing.assert_array_equal([msg.position, msg.velocity, msg.effort], values)
    assert raw == serialize_message(msg)[:len(raw)]   # rclpy's own bytes for the same message


@pytest.mark.parametrize("n", [1, 6, 7])
def test_the_serialized_controller_state_deserializes_to_the_cycle_it_reports(n):
    rng = np.random.default_rng(n)
    joints = [f"joint_{i}" for i in range(n)]
    index = rng.permutation(n)                      # joints order from chain order
    reference = rng.normal(size=(3, n))
    q, qd, effort = rng.normal(size=(3, n))
    state = SerializedState(joints)
    for sec in (5, 2**31 - 1):                      # written again: the places are kept
        raw = state.write((sec, 999_999_999), reference, q, qd, effort, index)
        msg = deserialize_message(raw, JointTrajectoryControllerState)
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (sec, 999_999_999)
        assert list(msg.joint_names) == joints
        points = msg.points if hasattr(msg, "points") else \
            [msg.reference, msg.feedback, msg.error, msg.output]
        expected = {(0, "positions"): reference[0], (0, "velocities"): reference[1],
                    (0, "accelerations"): reference[2], (1, "positions"): q, (1, "velocities"): qd,
                    (2, "positions"): reference[0] - q, (2, "velocities"): reference[1] - qd}
        for (point, field), values in expected.items():
            np.testing.assert_array_equal(getattr(points[point], field), values[index])
        np.testing.assert_array_equal(msg.output.effort, effort)
        assert len(points[1].accelerations) == 0 and len(points[3].positions) == 0


def _rosbags_length(names, n, effort):
    """The CDR length of a JointState by rosbags, a serializer of its own."""
    from rosbags.typesys import Stores, get_typestore
    types = get_typestore(Stores.ROS2_JAZZY).types
    msg = types["sensor_msgs/msg/JointState"](
        header=types["std_msgs/msg/Header"](stamp=types["builtin_interfaces/msg/Time"](0, 0),
                                            frame_id=""),
        name=names, position=np.zeros(n), velocity=np.zeros(n),
        effort=np.zeros(n if effort else 0))
    return len(get_typestore(Stores.ROS2_JAZZY).serialize_cdr(msg, "sensor_msgs/msg/JointState"))


@pytest.mark.parametrize("effort", [False, True])
@pytest.mark.parametrize("n", [1, 2, 6, 7])
def test_templates_carry_no_byte_past_the_message(n, effort):
    """rclpy's serialize_message pads its buffer with whatever memory held (heap addresses): a
    template must end where the message ends, or every message published from it leaks them."""
    names = [f"j{i}" for i in range(n)]
    joint_state = SerializedJointState(names, JointState, effort=effort).write(1, 2)
    controller_state = SerializedState(names).write((1, 2), np.zeros((3, n)), *np.zeros((3, n)),
                                                    np.arange(n))
    for raw, message_type in ((joint_state, JointState),
                              (controller_state, JointTrajectoryControllerState)):
        deserialize_message(raw, message_type)
        with pytest.raises(Exception):          # one byte less is not the message
            deserialize_message(raw[:-1], message_type)
    assert len(joint_state) == _rosbags_length(names, n, effort)


def _shortest_prefix(msg) -> int:
    """A second formulation of a message's CDR length: the shortest prefix of rclpy's bytes that
    deserializes (its C deserializer prints to stderr for prefixes cut inside a sequence)."""
    raw = serialize_message(msg)
    shortest, longest = 4, len(raw)
    while shortest < longest:
        middle = (shortest + longest) // 2
        try:
            deserialize_message(raw[:middle], type(msg))
            longest = middle
        except Exception:   # noqa: BLE001  a bare RuntimeError, or others
            shortest = middle + 1
    return shortest


def test_the_cdr_length_is_the_shortest_prefix_that_deserializes():
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from robodyn_ros.nodes.serialized import cdr_length
    state = JointTrajectoryControllerState(joint_names=["j1", "j22", "j333"])
    state.output.effort = [1.0, 2.0, 3.0]
    for msg in (_state(["a", "bb"], [1.0, 2.0], [3.0, 4.0], frame="xyz"), _state(["a"], [], []),
                _state(["a"], [1.0], [2.0], effort=[3.0]), Float64MultiArray(data=[1.0, 2.0]),
                Float64MultiArray(), state, JointTrajectoryControllerState(),
                JointTrajectory(joint_names=["x"], points=[JointTrajectoryPoint(positions=[1.0])]),
                DiagnosticArray(status=[DiagnosticStatus(name="n", level=b"\x01",
                                                         values=[KeyValue(key="k", value="é")])])):
        assert cdr_length(msg) == _shortest_prefix(msg), type(msg).__name__


def test_building_the_templates_prints_nothing(capfd):
    """The controller's state and a joint state with efforts, as a node builds them at configure:
    nothing on stderr (deserializing truncated prefixes printed "sequence size exceeds remaining
    buffer" at every controller start)."""
    names = [f"panda_joint{i}" for i in range(1, 8)]
    SerializedState(names)
    SerializedJointState(names, JointState, effort=True)
    assert capfd.readouterr().err == ""
