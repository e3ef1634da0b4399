"""Messages shared by the nodes: the one trajectory_msgs/JointTrajectory conversion to and from the
ROS-free :class:`~robodyn_ros.control.JointTrajectory`, and the one place control_msgs is imported.

control_msgs is on no package registry: a ROS machine has ros-jazzy-control-msgs from apt, and on
the pip route ``make`` builds the project's own definitions of the five interfaces used here
(interfaces/control_msgs: Jazzy's field layout, so the same type hashes) into the venv. The nodes
need it: without it they do not start, and say how to get it.
"""
from __future__ import annotations

import struct

import numpy as np
from rclpy.serialization import deserialize_message

from ..control import JointTrajectory, TrajectoryError
from ..control.cycle_steps import TAKE_SERIALIZED_STATE
from .common import stamp_parts, stamp_seconds
from .serialized import Time, read_stamp

try:  # the package's one control_msgs import: the nodes take these three from here
    from control_msgs.action import FollowJointTrajectory  # noqa: F401
    from control_msgs.msg import JointTrajectoryControllerState  # noqa: F401
    from control_msgs.srv import QueryTrajectoryState  # noqa: F401
except ImportError as exc:
    raise ImportError(
        f"control_msgs is not importable ({exc}): on a ROS install, apt install "
        "ros-jazzy-control-msgs and source /opt/ros/jazzy/setup.bash; on the pip route, `make venv` "
        "builds the package's own (interfaces/control_msgs) into .venv (doc/install.md)") from exc


def trajectory_from_message(msg) -> tuple[JointTrajectory, float]:
    """(trajectory, header stamp in seconds, 0 = "now"); ValueError (a TrajectoryError for the
    points) with the reason when it cannot be followed. Velocities and accelerations are taken
    when some point has them, so a trajectory that gives them for some points only is refused."""
    points = msg.points
    if not points:
        raise TrajectoryError("trajectory has no points")
    velocities = [p.velocities for p in points] if any(len(p.velocities) for p in points) \
        else None
    accelerations = [p.accelerations for p in points] \
        if any(len(p.accelerations) for p in points) else None
    trajectory = JointTrajectory(
        msg.joint_names, [stamp_seconds(p.time_from_start, f"point {i} time_from_start")
                          for i, p in enumerate(points)],
        [p.positions for p in points], velocities, accelerations)
    return trajectory, stamp_seconds(msg.header.stamp, "header.stamp")


def trajectory_message(trajectory: JointTrajectory, start: float = 0.0):
    """A trajectory_msgs/JointTrajectory of ``trajectory`` whose header stamp is ``start`` (s; 0:
    "now", as a controller reads it)."""
    from trajectory_msgs.msg import JointTrajectory as Message
    from trajectory_msgs.msg import JointTrajectoryPoint

    msg = Message(joint_names=list(trajectory.joint_names))
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp_parts(start)
    fields = [(name, getattr(trajectory, name)) for name in ("positions", "velocities", "accelerations")
              if getattr(trajectory, name) is not None]
    for i, t in enumerate(trajectory.times):
        point = JointTrajectoryPoint(**{name: values[i].tolist() for name, values in fields})
        point.time_from_start.sec, point.time_from_start.nanosec = stamp_parts(t)
        msg.points.append(point)
    return msg


def _reader(raw: bytes):
    """The CDR body of a serialized message and a function reading a uint32 at an offset (aligned
    to 4 bytes from the start of the body, as CDR does): (value, offset after it)."""
    order = "<" if raw[1:2] == b"\x01" else ">"  # encapsulation 0x0001: little-endian CDR
    body = memoryview(raw)[4:]

    def u32(pos):
        pos = (pos + 3) & ~3
        return struct.unpack_from(order + "I", body, pos)[0], pos + 4
    return body, u32


def _after_header(u32) -> tuple[int, int]:
    """The uint32 after a message's std_msgs/Header (stamp sec and nanosec, then frame_id) and
    the offset after it: the count of the sequence that follows the header."""
    size, pos = u32(8)
    return u32(pos + size)


def _header_and_names(raw: bytes):
    """(body, u32, (stamp sec, nanosec), joint_names, offset of the points' count) of a
    serialized trajectory_msgs/JointTrajectory."""
    body, u32 = _reader(raw)
    count, pos = _after_header(u32)
    names, pos = _strings(body, u32, pos, count)
    return body, u32, read_stamp(raw), names, pos


def trajectory_sizes(raw: bytes) -> tuple[int, int]:
    """The numbers of joint names and of points of a serialized trajectory_msgs/JointTrajectory,
    read from its CDR bytes without deserializing it: converting a 100,000-point message into
    Python objects takes the subscriber over a second, too long to spend on a trajectory it will
    refuse for its size. ValueError when the bytes end early."""
    try:
        body, u32 = _reader(raw)
        names, pos = _after_header(u32)
        return names, u32(_strings_end(u32, pos, names))[0]
    except struct.error as exc:
        raise ValueError(f"a serialized JointTrajectory ends early: {exc}") from exc


def trajectory_from_serialized(raw: bytes, message_type) -> tuple[JointTrajectory, float]:
    """:func:`trajectory_from_message` of a serialized ``message_type`` (JointTrajectory). When
    every point has the same number of positions, velocities, accelerations and efforts (what a
    planner sends) the arrays are read straight from the CDR bytes: rclpy's conversion of
    10,000 points into Python objects takes 50-170 ms, which the controller would spend without
    commanding. Any other message is deserialized."""
    arrays = None
    if raw[1:2] == b"\x01":  # little-endian, as numpy's '<' views read it
        try:
            arrays = _uniform_points(raw)
        except (struct.error, ValueError):  # ends early, or not uniform after all
            arrays = None
    if arrays is None:
        return trajectory_from_message(deserialize_message(raw, message_type))
    names, stamp, times, fields = arrays
    if not times.size:
        raise TrajectoryError("trajectory has no points")
    sec, nanosec = times
    bad = (sec < 0) | (nanosec >= 1_000_000_000)
    if bad.any():
        i = int(np.argmax(bad))
        stamp_seconds(Time(int(sec[i]), int(nanosec[i])), f"point {i} time_from_start")
    trajectory = JointTrajectory(names, sec + 1e-9 * nanosec, fields[0],
                                 fields[1] if fields[1].shape[1] else None,
                                 fields[2] if fields[2].shape[1] else None)
    return trajectory, stamp_seconds(stamp, "header.stamp")


def _uniform_points(raw: bytes):
    """(names, stamp, (sec, nanosec) arrays, [positions, velocities, accelerations, effort]) of
    a serialized JointTrajectory whose points all have point 0's sizes, or None.

    A point is four sequences of doubles (a uint32 count, then the doubles aligned to 8 bytes
    from the start of the body) and time_from_start (int32 sec, uint32 nanosec); its padding
    depends on where it starts modulo 8, so the points' layout repeats from the first point
    that starts where an earlier one did (modulo 8): at most three points are read one by one,
    then the rest are numpy views with the stride of that repeat. Every point's counts are
    checked in that layout, in order, so a point of another size is found at its own first count
    and the message is left to the deserializer.
    """
    body, u32, stamp, names, pos = _header_and_names(raw)
    count, pos = u32(pos)
    if count == 0:
        return names, stamp, np.zeros((2, 0), dtype=np.int64), [np.zeros((0, 0))] * 4
    starts, layouts = [], []  # each point read: its start, (count, data, size) x 4, time offset
    while len(layouts) < count:
        starts.append(pos)
        fields = []
        for _ in range(4):
            count_at = (pos + 3) & ~3
            n, pos = u32(pos)
            if n:
                pos = (pos + 7) & ~7
            fields.append((count_at, pos, n))
            pos += 8 * n
        pos = (pos + 3) & ~3
        layouts.append((fields, pos))
        pos += 8
        if any((pos - s) % 8 == 0 for s in starts):
            break
    sizes = [n for _, _, n in layouts[0][0]]
    if any([n for _, _, n in fields] != sizes for fields, _ in layouts):
        return None
    # points from `head` on repeat every `period` points, `block` bytes
    head = next((i for i, s in enumerate(starts) if (pos - s) % 8 == 0), len(layouts))
    period, block = len(layouts) - head, pos - starts[head] if head < len(starts) else 8
    arrays = [np.empty((count, n)) for n in sizes]
    times = np.empty((2, count), dtype=np.int64)
    for q, (fields, time_at) in enumerate(layouts):
        rows, index = ((1, slice(q, q + 1)) if q < head
                       else (len(range(q, count, period)), slice(q, None, period)))
        for k, (count_at, data_at, n) in enumerate(fields):
            if np.any(np.ndarray((rows,), "<u4", body, count_at, (block,)) != n):
                return None
            if n:
                arrays[k][index] = np.ndarray((rows, n), "<f8", body, data_at, (block, 8))
        times[0, index] = np.ndarray((rows,), "<i4", body, time_at, (block,))
        times[1, index] = np.ndarray((rows,), "<u4", body, time_at + 4, (block,))
    return names, stamp, times, arrays


_U32, _STAMP = struct.Struct("<I"), struct.Struct("<iI")
# far beyond any robot's joints; decoding this many names costs the reader a few milliseconds
MAX_JOINT_STATE_NAMES = 4096


class JointStateReader:
    """Serialized sensor_msgs/JointState into (stamp, names, position, velocity, effort), the arrays as
    views of the bytes. At 1 kHz rclpy's conversion into a message object (a header, a name list,
    four arrays, every field through its checking setter) costs a controller more than its law;
    a driver sends the same names every time, so they are decoded only when their bytes change
    and ``names`` stays the same list while they are the same (the padding between the strings,
    which serializers leave unwritten, may differ); :meth:`take` takes such a state in one
    compiled call.
    Big-endian bytes are deserialized. ValueError when the bytes end early or name more than
    MAX_JOINT_STATE_NAMES joints."""

    def __init__(self, message_type):
        self._type = message_type
        self.names: list[str] = []
        self._block = bytes(4)   # the names' bytes: their count (none yet), then the strings
        #: the names' bytes as a kernel reads them (``take``, ``ControlLoop.answer``)
        self.names_bytes = np.frombuffer(self._block, np.uint8)
        #: the stamp (sec, nanosec) ``take`` read
        self.stamp = np.zeros(2, dtype=np.int64)
        TAKE_SERIALIZED_STATE.ready()   # at setup, not at the first state

    def read(self, raw: bytes) -> tuple[Time, list[str], np.ndarray, np.ndarray, np.ndarray]:
        if raw[1:2] != b"\x01":
            msg = deserialize_message(raw, self._type)
            return (Time(msg.header.stamp.sec, msg.header.stamp.nanosec), msg.name,
                    *(np.asarray(v, dtype=float) for v in (msg.position, msg.velocity, msg.effort)))
        # little-endian CDR read inline: the helpers' calls cost more than the reading (~10 us)
        try:
            body = memoryview(raw)[4:]
            stamp = Time(*_STAMP.unpack_from(body, 0))
            start = (12 + _U32.unpack_from(body, 8)[0] + 3) & ~3   # after frame_id
            block = self._block
            if body[start:start + len(block)] == block:
                pos = start + len(block)
            else:
                count = _U32.unpack_from(body, start)[0]
                if count > MAX_JOINT_STATE_NAMES:
                    raise ValueError(f"{count} names, more than the {MAX_JOINT_STATE_NAMES} a "
                                     "joint state may have")
                names, pos = _strings(body, _reader(raw)[1], start + 4, count)
                if names != self.names:   # not only other padding between the strings
                    self.names = names
                self._block = bytes(body[start:pos])
                self.names_bytes = np.frombuffer(self._block, np.uint8)
            arrays = []
            for _ in range(3):   # position, velocity, effort: a count, doubles aligned to 8 bytes
                pos = (pos + 3) & ~3
                n = _U32.unpack_from(body, pos)[0]
                pos = (pos + 4 + 7) & ~7 if n else pos + 4
                if pos + 8 * n > len(body):
                    raise struct.error(f"{n} doubles at byte {pos} of {len(body)}")
                arrays.append(np.frombuffer(body, "<f8", n, pos))
                pos += 8 * n
        except struct.error as exc:
            raise ValueError(f"a serialized JointState ends early: {exc}") from exc
        return (stamp, self.names, *arrays)

    def take(self, raw: bytes, match: np.ndarray, q: np.ndarray, qd: np.ndarray) -> Time | None:
        """The stamp of the state ``raw``, with q and qd written from its position and velocity
        at ``match`` (where the chain's joints are among ``names``), when it names the joints the
        last one read did, little-endian, with one finite position and velocity per name and a
        valid stamp (``cycle_steps.take_serialized_state``); None otherwise: :meth:`read` it."""
        if TAKE_SERIALIZED_STATE.call(raw, self.names_bytes, match, q, qd, self.stamp):
            return Time(*self.stamp.tolist())
        return None


def _strings_end(u32, pos, count) -> int:
    """The offset after ``count`` CDR strings from ``pos``."""
    for _ in range(count):
        size, pos = u32(pos)
        pos += size
    return pos


def _strings(body, u32, pos, count) -> tuple[list[str], int]:
    """``count`` CDR strings from ``pos`` and the offset after them."""
    strings = []
    for _ in range(count):
        size, pos = u32(pos)
        strings.append(bytes(body[pos:pos + size - 1]).decode(errors="replace"))
        pos += size
    return strings, pos
