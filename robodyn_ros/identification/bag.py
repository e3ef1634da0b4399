"""Recorded runs as rosbag2 files, read and written with the rosbags library (pure Python, no ROS
install, no rclpy): MCAP or sqlite3 storage, a bag directory or a single .mcap / .db3 file, as
``ros2 bag record`` writes them or :class:`robodyn_ros.nodes.recorder.BagRecorder`.

:func:`read_joint_states` turns a bag's sensor_msgs/JointState messages (and, optionally, the
controller's effort commands) into arrays in one joint order; :class:`BagWriter` writes serialized
messages into a new bag, and :func:`write_joint_states` writes joint states from arrays.
Anything wrong with a bag is a :class:`BagError` naming the bag and what is missing or wrong.
"""
from __future__ import annotations

import os
import struct
import sys
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.rosbag2 import ReaderError, StoragePlugin, Writer, WriterError
from rosbags.typesys import Stores, TypesysError, get_types_from_msg, get_typestore
from rosbags.typesys.base import Nodetype

JOINT_STATE = "sensor_msgs/msg/JointState"
FLOAT64_MULTI_ARRAY = "std_msgs/msg/Float64MultiArray"
STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
# rosbag2 metadata version 8 (Jazzy's); every rosbag2 reader from Jazzy on reads it
VERSION = 8


class BagError(ValueError):
    """A bag that cannot be read as asked: the message names the bag and what is wrong."""


@dataclass(frozen=True)
class Recording:
    """Joint states of a bag as arrays, row k one state, columns in ``joint_names`` order.

    ``t`` is in seconds from the first state, ``time_ns`` the same instants on the bag's clock
    (``time_source``: "header", the messages' stamps, or "receive", the bag's receive times when
    every stamp is zero); ``velocity`` / ``effort`` are None when the messages carry none;
    ``effort_source`` is "joint_states", the effort topic, or None; ``dropped`` counts the states
    left out: ``repeated`` of them for a stamp that repeats the one before (the same state
    published again), the rest for want of an effort command."""
    t: np.ndarray
    time_ns: np.ndarray
    joint_names: list[str]
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None
    source: str
    time_source: str
    effort_source: str | None
    dropped: int = 0
    repeated: int = 0

    def rows(self, keep):
        """The recording of the states where ``keep`` (bool (N,)), its times from the first kept."""
        times = self.time_ns[keep]
        fields = {f: None if getattr(self, f) is None else getattr(self, f)[keep]
                  for f in ("position", "velocity", "effort")}
        return replace(self, t=(times - times[0]) * 1e-9, time_ns=times, **fields)


def read_joint_states(bag, joints: Sequence[str] | None = None, topic: str = "/joint_states",
                      effort_topic: str | None = None, effort_joints: Sequence[str] | None = None,
                      min_samples: int = 100) -> Recording:
    """The joint states on ``topic`` of ``bag`` (a rosbag2 directory, or a .mcap / .db3 file).

    The columns are ``joints`` if given, else the first message's names; every message is
    reordered by its own names (a driver may list its joints in any order). A field that no
    message fills (velocity, effort) is None; one that some messages fill and others not is an
    error.

    ``effort_topic``: the torque is the controller's command instead of the joint states'
    effort, for a drive that reports none (given, it is used even when they carry one). The
    controller answers each state with one command, which acts until the next state; a state
    without its command is left out (``dropped``). The topic is either

    - the controller's std_msgs/Float64MultiArray effort command (values in ``effort_joints``
      order, by default the columns' order), which has no stamp: the torque of state k is the
      first command received at or after state k and before state k + 1 (by the bag's receive
      times; for the last state, any later command). This is only as right as the order in which
      the recorder stamped the two topics: in a 1 kHz run of the demo on a loaded 2-core
      machine, our recorder (stamping in its callback) gave 2.5 % of the states the command of
      a neighbour;
    - or the controller's state (control_msgs/JointTrajectoryControllerState, or our
      controller's stand-in trajectory_msgs/JointTrajectory of the four points reference,
      feedback, error, output): the torque of state k is the output effort of the controller
      state stamped as state k, exactly (our controller stamps its state with the joint
      state's own stamp; a controller that stamps it otherwise matches no state).

    BagError (naming the bag) when the path is missing or not a rosbag2, the topic is absent (the
    bag's topics are listed) or of another type, a joint is missing from a message (the
    message's joints are listed), a position, velocity or effort is NaN or infinite (the joint
    and the time named), the times do not increase, an effort command has the wrong length, or
    fewer than ``min_samples`` states remain.
    """
    path = Path(bag)
    with _opened(path) as reader:
        received, stamps, joint_names, fields = _joint_states(reader, path, topic, joints)
        if len(received) < min_samples:
            raise BagError(f"{path}: {len(received)} messages on {topic}, fewer than "
                           f"min_samples = {min_samples}")
        time_ns, time_source, keep = _time_base(path, topic, stamps, received)
        repeated = int(len(keep) - np.count_nonzero(keep))
        effort_source = "joint_states" if fields["effort"] is not None else None
        if effort_topic is not None:
            paired, torques = _efforts(reader, path, effort_topic, joint_names, effort_joints,
                                       received, stamps)
            torques = torques[keep[paired]]
            keep &= paired
            fields["effort"], effort_source = None, effort_topic
    for name, values in fields.items():
        _check_finite(path, topic, name, values, joint_names, time_ns)
    fields = {name: None if v is None else v[keep] for name, v in fields.items()}
    time_ns = time_ns[keep]
    if effort_topic is not None:
        _check_finite(path, effort_topic, "effort", torques, joint_names, time_ns)
        fields["effort"] = torques
        if len(time_ns) < min_samples:
            raise BagError(f"{path}: {len(time_ns)} of {len(received)} states on {topic} have an "
                           f"effort command on {effort_topic}, fewer than min_samples = "
                           f"{min_samples}")
    return Recording(t=_frozen((time_ns - time_ns[0]) * 1e-9), time_ns=_frozen(time_ns),
                     joint_names=list(joint_names),
                     **{name: None if v is None else _frozen(v) for name, v in fields.items()},
                     source=str(path), time_source=time_source, effort_source=effort_source,
                     dropped=len(received) - len(time_ns), repeated=repeated)


@contextmanager
def _opened(path: Path):
    if not path.exists():
        raise BagError(f"{path}: no such file or directory")
    if path.is_dir() and not (path / "metadata.yaml").is_file():
        raise BagError(f"{path}: not a rosbag2: the directory has no metadata.yaml")
    if not path.is_dir() and path.suffix not in (".mcap", ".db3"):
        raise BagError(f"{path}: not a rosbag2: neither a directory with metadata.yaml nor a "
                       ".mcap or .db3 file")
    try:
        reader = AnyReader([path], default_typestore=get_typestore(Stores.ROS2_JAZZY))
        reader.open()
    except (AnyReaderError, ReaderError, TypesysError, OSError, KeyError, ValueError,
            struct.error) as exc:
        raise BagError(f"{path}: unreadable rosbag2: {exc}") from exc
    try:
        yield reader
    finally:
        reader.close()


def _connections(reader, path, topic, msgtype=None):
    conns = [c for c in reader.connections if c.topic == topic]
    if not conns:
        present = ", ".join(f"{name} ({info.msgtype})" for name, info in sorted(
            reader.topics.items())) or "none"
        raise BagError(f"{path}: no topic {topic}; the bag's topics: {present}")
    wrong = sorted({c.msgtype for c in conns} - {msgtype or conns[0].msgtype})
    if wrong:
        raise BagError(f"{path}: {topic} is {', '.join(wrong)}, not "
                       f"{msgtype or conns[0].msgtype}")
    return conns


def read_messages(bag, topic: str, msgtype: str | None = None):
    """(receive time ns, message) of each message on ``topic`` of ``bag`` in the bag's order, as
    rosbags message objects; BagError when the topic is absent or not of ``msgtype`` (if given)."""
    path = Path(bag)
    with _opened(path) as reader:
        for _, receive_ns, msg in _messages(reader, path, topic, msgtype):
            yield receive_ns, msg


def topic_type(bag, topic: str) -> str:
    """The message type of ``topic`` in ``bag``; BagError (listing the bag's topics) when absent."""
    path = Path(bag)
    with _opened(path) as reader:
        return _connections(reader, path, topic)[0].msgtype


def _messages(reader, path, topic, msgtype):
    """(index, receive time ns, message) of the messages on ``topic``. The bytes after a message
    are ignored, as DDS readers do: rclpy's serialize_message pads to its size estimate, so bytes
    published from it (as our nodes publish) may end in unused ones, which rosbags' own
    ``deserialize`` refuses."""
    conns = _connections(reader, path, topic, msgtype)
    store = reader.typestore
    for k, (conn, receive_ns, raw) in enumerate(reader.messages(connections=conns)):
        try:
            msgdef = store.get_msgdef(conn.msgtype)
            if raw[:2] not in (b"\0\0", b"\0\1"):
                raise ValueError(f"encapsulation {raw[:2].hex()} is not CDR's")
            deserialize = msgdef.deserialize_cdr_le if raw[1] else msgdef.deserialize_cdr_be
            msg = deserialize(memoryview(raw)[4:], 0, msgdef.cls, store)[0]
        except (KeyError, struct.error, UnicodeDecodeError, ValueError) as exc:
            raise BagError(f"{_where(path, topic, k, receive_ns)}: not a {conn.msgtype}: "
                           f"{exc}") from exc
        yield k, receive_ns, msg


def _joint_states(reader, path, topic, joints):
    """(receive times, header stamps (ns), joint names, {field: (N, n) array or None})."""
    received, stamps = [], []
    rows = {"position": [], "velocity": [], "effort": []}
    names = index = None
    for k, receive_ns, msg in _messages(reader, path, topic, JOINT_STATE):
        if msg.name != names:  # a driver sends the same names every time: match them once
            names = list(msg.name)
            joints = list(names) if joints is None else joints
            index = _index(names, joints, _where(path, topic, k, receive_ns))
        for field, values in rows.items():
            data = getattr(msg, field)
            if len(data) not in (0, len(names)) or (field == "position" and not len(data)):
                raise BagError(f"{_where(path, topic, k, receive_ns)}: {len(data)} {field} "
                               f"values for {len(names)} names")
            values.append(np.asarray(data, dtype=float)[index] if len(data) else None)
        received.append(receive_ns)
        stamps.append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)
    fields = {field: _stacked(path, topic, field, values, len(joints or ()))
              for field, values in rows.items()}
    return np.array(received, dtype=np.int64), np.array(stamps, dtype=np.int64), joints, fields


def _where(path, topic, k, receive_ns):
    return f"{path}: {topic} message {k} (received at {receive_ns * 1e-9:.9f} s)"


def _index(names, joints, where):
    """Positions in ``names`` of ``joints``."""
    seen = {}
    for i, name in enumerate(names):
        if name in seen:
            raise BagError(f"{where}: joint {name} is listed twice")
        seen[name] = i
    missing = [j for j in joints if j not in seen]
    if missing:
        raise BagError(f"{where}: no joint {', '.join(missing)}; the message has "
                       f"{', '.join(names) or 'no joints'}")
    return np.array([seen[j] for j in joints], dtype=np.intp)


def _stacked(path, topic, field, values, n):
    absent = [k for k, v in enumerate(values) if v is None]
    if len(absent) == len(values):
        return None if field != "position" else np.zeros((0, n))
    if absent:
        raise BagError(f"{path}: {topic}: {len(absent)} of {len(values)} messages have no "
                       f"{field} (the first is message {absent[0]}) and the others have: a "
                       f"{field} for some states only cannot be used")
    return np.array(values)


def _time_base(path, topic, stamps, received):
    """The states' times (ns): their header stamps, or the receive times when every stamp is 0;
    and which states to keep: a state whose stamp repeats the one before is the same state
    published again (a lockstep simulator does, for a controller that restarted) and is left out."""
    # a zero stamp among others is an instant (simulated time starts at 0); if it is not the
    # first, the times do not increase
    if not stamps.any():
        time_ns, source = received, "receive"
    else:
        time_ns, source = stamps, "header"
    steps = np.diff(time_ns)
    back = np.flatnonzero(steps < 0 if source == "header" else steps <= 0)
    if back.size:
        k = int(back[0]) + 1
        raise BagError(f"{path}: {topic}: the {source} times are not increasing: message {k} at "
                       f"{time_ns[k] * 1e-9:.9f} s follows message {k - 1} at "
                       f"{time_ns[k - 1] * 1e-9:.9f} s")
    return time_ns, source, np.concatenate(([True], steps > 0))


def _check_finite(path, topic, field, values, joint_names, time_ns):
    if values is None:
        return
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        k, j = bad[0]
        raise BagError(f"{path}: {topic}: {field} of {joint_names[j]} is {values[k, j]} at "
                       f"{time_ns[k] * 1e-9:.9f} s")


def _efforts(reader, path, topic, joint_names, effort_joints, received, stamps):
    """(states kept, their torques) from the effort topic, by its type."""
    msgtype = _connections(reader, path, topic)[0].msgtype
    if msgtype == FLOAT64_MULTI_ARRAY:
        return _align(received, *_commands(reader, path, topic, joint_names, effort_joints))
    if msgtype in CONTROLLER_STATES:
        return _outputs(reader, path, topic, msgtype, joint_names, stamps)
    raise BagError(f"{path}: {topic} is {msgtype}, neither {FLOAT64_MULTI_ARRAY} nor a "
                   f"controller state ({', '.join(CONTROLLER_STATES)})")


def _outputs(reader, path, topic, msgtype, joint_names, stamps):
    """(states kept, their torques): the output effort of the controller state stamped as each
    joint state (read_joint_states)."""
    if not stamps.any():
        raise BagError(f"{path}: the joint states have no header stamps to find their controller "
                       f"states on {topic} by")
    output = CONTROLLER_STATES[msgtype]
    by_stamp, names = {}, None
    for k, receive_ns, msg in _messages(reader, path, topic, msgtype):
        where = _where(path, topic, k, receive_ns)
        if msg.joint_names != names:
            names = list(msg.joint_names)
            index = _index(names, joint_names, where)
        effort = output(msg, where).effort
        if len(effort) != len(names):
            raise BagError(f"{where}: {len(effort)} output efforts for {len(names)} joints")
        by_stamp[msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec] = \
            np.asarray(effort, dtype=float)[index]
    keep = np.array([ns in by_stamp for ns in stamps.tolist()], dtype=bool)
    return keep, np.array([by_stamp[ns] for ns in stamps[keep].tolist()]).reshape(
        -1, len(joint_names))


def _stand_in_output(msg, where):
    if len(msg.points) != 4:
        raise BagError(f"{where}: {len(msg.points)} points, not the 4 of a controller state "
                       "(reference, feedback, error, output)")
    return msg.points[3]


# a controller state's type -> its output point: control_msgs' (ros2_controllers and ours), and
# our controller's stand-in without control_msgs (~/state, the four points as a JointTrajectory)
CONTROLLER_STATES = {"control_msgs/msg/JointTrajectoryControllerState": lambda msg, _: msg.output,
                     "trajectory_msgs/msg/JointTrajectory": _stand_in_output}


def _commands(reader, path, topic, joint_names, effort_joints):
    """(receive times, (M, n) efforts in ``joint_names`` order) of the effort commands."""
    effort_joints = list(joint_names if effort_joints is None else effort_joints)
    missing = [j for j in joint_names if j not in effort_joints]
    if missing:
        raise BagError(f"{path}: effort_joints ({', '.join(effort_joints)}) lack "
                       f"{', '.join(missing)}")
    index = [effort_joints.index(j) for j in joint_names]
    times, rows = [], []
    for k, receive_ns, msg in _messages(reader, path, topic, FLOAT64_MULTI_ARRAY):
        data = msg.data
        if len(data) != len(effort_joints):
            raise BagError(f"{_where(path, topic, k, receive_ns)}: {len(data)} values for the "
                           f"{len(effort_joints)} effort joints ({', '.join(effort_joints)})")
        times.append(receive_ns)
        rows.append(np.asarray(data, dtype=float)[index])
    if not times:
        raise BagError(f"{path}: no messages on {topic}")
    return np.array(times, dtype=np.int64), np.array(rows)


def _align(received, command_times, commands):
    """(states kept, their torques): the first command at or after each state's receipt and
    before the next state's (read_joint_states says why)."""
    j = np.searchsorted(command_times, received, side="left")
    following = np.append(received[1:], np.iinfo(np.int64).max)
    keep = j < len(command_times)
    keep[keep] = command_times[j[keep]] < following[keep]
    return keep, commands[j[keep]]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


class BagWriter:
    """A new rosbag2 (a bag is never overwritten), written message by message: ``add_topic``,
    then ``write`` serialized CDR bytes or ``write_message`` a message of ``typestore`` (rosbags'
    ROS 2 Jazzy types), each with its receive time in ns; ``close`` (or the end of a ``with``
    block, also on an exception, so that what was recorded is kept) writes metadata.yaml.
    A type outside Jazzy's core set (control_msgs) is read from its .msg file
    (:func:`register_type`)."""

    def __init__(self, path, storage: str = "mcap"):
        self.path = Path(path)
        if storage not in STORAGES:
            raise BagError(f"{self.path}: storage {storage!r} is not one of {', '.join(STORAGES)}")
        self.typestore = get_typestore(Stores.ROS2_JAZZY)
        try:
            self._writer = Writer(self.path, version=VERSION, storage_plugin=STORAGES[storage])
            self._writer.open()
        except WriterError as exc:
            raise BagError(f"{self.path}: {exc}") from exc
        self._topics = {}  # topic -> (connection, message type)

    def add_topic(self, topic: str, msgtype: str) -> None:
        if msgtype not in self.typestore.fielddefs:
            register_type(self.typestore, msgtype)
        self._topics[topic] = (self._writer.add_connection(topic, msgtype,
                                                           typestore=self.typestore), msgtype)

    def write(self, topic: str, time_ns: int, raw) -> None:
        if topic not in self._topics:
            raise BagError(f"{self.path}: topic {topic} was not added")
        self._writer.write(self._topics[topic][0], time_ns, raw)

    def write_message(self, topic: str, time_ns: int, msg) -> None:
        self.write(topic, time_ns, self.typestore.serialize_cdr(msg, self._topics[topic][1]))

    def close(self) -> None:
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def register_type(typestore, msgtype: str) -> None:
    """Add ``msgtype`` ("pkg/msg/Name") and the types it uses that ``typestore`` lacks, from their
    .msg files under ``share/`` of each AMENT_PREFIX_PATH entry, then of this Python's prefix
    (where the ROS wheels and a venv build of control_msgs install them), as ros2 bag finds them."""
    parts = msgtype.split("/")
    if len(parts) != 3 or parts[1] != "msg":
        raise BagError(f"message type {msgtype!r} is not of the form package/msg/Name")
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    files = [Path(p, "share", parts[0], "msg", parts[2] + ".msg") for p in [*prefixes, sys.prefix]]
    file = next((f for f in files if f.is_file()), None)
    if file is None:
        raise BagError(f"no definition of {msgtype}: none of {', '.join(map(str, files))} exists")
    types = get_types_from_msg(file.read_text(), msgtype)
    typestore.register(types)
    for _, fields in types.values():
        for _, desc in fields:
            while desc[0] in (Nodetype.ARRAY, Nodetype.SEQUENCE):
                desc = desc[1][0]
            if desc[0] == Nodetype.NAME and desc[1] not in typestore.fielddefs:
                register_type(typestore, desc[1])


def write_joint_states(path, t, names: Sequence[str], position, velocity=None, effort=None,
                       storage: str = "mcap", extra: Mapping | None = None, stamped: bool = True,
                       topic: str = "/joint_states") -> Path:
    """A new bag of one sensor_msgs/JointState per row of ``position`` (N, n), received at ``t``
    (N,) seconds (>= 0) and stamped with it (``stamped=False``: zero stamps, as some drivers
    send); ``velocity`` / ``effort`` (N, n) or None (empty in every message).
    ``extra``: more topics, {topic: (message type, [(receive time s, message or CDR bytes)])}.
    Messages are written in time order, a joint state before another message of the same time."""
    t = np.asarray(t, dtype=float)
    position = np.asarray(position, dtype=float)
    empty = np.zeros((len(t), 0))
    velocity = empty if velocity is None else np.asarray(velocity, dtype=float)
    effort = empty if effort is None else np.asarray(effort, dtype=float)
    with BagWriter(path, storage) as bag:
        types = bag.typestore.types
        header, time_msg = types["std_msgs/msg/Header"], types["builtin_interfaces/msg/Time"]
        bag.add_topic(topic, JOINT_STATE)
        queue = []  # (time ns, 0 for a joint state, index, topic, message)
        for k, ns in enumerate(np.round(t * 1e9).astype(np.int64).tolist()):
            stamp = time_msg(*divmod(ns, 1_000_000_000)) if stamped else time_msg(0, 0)
            queue.append((ns, 0, k, topic, types[JOINT_STATE](
                header=header(stamp=stamp, frame_id=""), name=list(names),
                position=position[k], velocity=velocity[k], effort=effort[k])))
        for other, (msgtype, messages) in (extra or {}).items():
            bag.add_topic(other, msgtype)
            queue += [(round(s * 1e9), 1, len(queue) + i, other, m)
                      for i, (s, m) in enumerate(messages)]
        for ns, _, _, name, msg in sorted(queue, key=lambda m: m[:3]):
            if isinstance(msg, (bytes, bytearray, memoryview)):
                bag.write(name, ns, msg)
            else:
                bag.write_message(name, ns, msg)
    return Path(path)
