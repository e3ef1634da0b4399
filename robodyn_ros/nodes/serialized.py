"""Messages kept serialized and written in place: a node that publishes the same message every
cycle serializes it once and writes its values and stamp into the bytes (rclpy publishes bytes as
they are), a fraction of what converting a message object costs at 1 kHz."""
from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np
from rclpy.serialization import serialize_message
from rosidl_parser.definition import (AbstractNestedType, AbstractSequence, AbstractString,
                                     BasicType, NamespacedType)


class Time(NamedTuple):
    """A stamp read from CDR bytes, as builtin_interfaces/Time has it (without a message object)."""
    sec: int
    nanosec: int


def serialized(msg) -> bytearray:
    """The CDR bytes of ``msg``, exactly. rclpy's serialize_message returns its buffer at the size
    it estimated, and the bytes past the message are whatever the allocator left there (heap
    addresses, seen: 64 of a controller state's 276): a template published as it is would send
    them on every message. The message's own length is :func:`cdr_length`'s. (Deserializing
    ever shorter prefixes found it too, but rosidl's C deserializer prints "sequence size exceeds
    remaining buffer" to stderr for every prefix cut inside a sequence: twice at each controller
    start.)"""
    raw, length = serialize_message(msg), cdr_length(msg)
    if length > len(raw):
        raise RuntimeError(f"serialized {type(msg).__name__}: {len(raw)} bytes, {length} expected")
    return bytearray(raw[:length])


#: the size (and alignment) of each primitive in CDR
_SIZES = {"boolean": 1, "octet": 1, "char": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2,
          "short": 2, "unsigned short": 2, "int32": 4, "uint32": 4, "long": 4, "unsigned long": 4,
          "float": 4, "int64": 8, "uint64": 8, "long long": 8, "unsigned long long": 8,
          "double": 8}


def cdr_length(msg) -> int:
    """The length of ``msg``'s CDR serialization as rmw_fastrtps writes a ROS message, its 4-byte
    encapsulation header included: each primitive aligned to its size from the body's start, a
    sequence's or a string's count a uint32, a string's bytes and a null, a block of primitives
    aligned once (not when empty)."""
    return 4 + _end_of_message(msg, 0)


def _end_of_message(msg, at: int) -> int:
    for (name, _), slot in zip(msg.get_fields_and_field_types().items(), msg.SLOT_TYPES):
        at = _end_of(slot, getattr(msg, name), at)
    return at


def _end_of(slot, value, at: int) -> int:
    if isinstance(slot, BasicType):
        size = _SIZES[slot.typename]
        return -(-at // size) * size + size
    if isinstance(slot, AbstractString):
        return -(-at // 4) * 4 + 4 + len(value.encode()) + 1
    if isinstance(slot, NamespacedType):
        return _end_of_message(value, at)
    if isinstance(slot, AbstractNestedType):   # an array, or a sequence: its count first
        if isinstance(slot, AbstractSequence):
            at = -(-at // 4) * 4 + 4
        inner = slot.value_type
        if isinstance(inner, BasicType):
            size = _SIZES[inner.typename]
            return -(-at // size) * size + size * len(value) if len(value) else at
        for item in value:
            at = _end_of(inner, item, at)
        return at
    raise TypeError(f"cdr_length: no CDR size for {type(slot).__name__}")


def markers(fields: int, n: int) -> list[np.ndarray]:
    """``fields`` arrays of ``n`` values, every value distinct, for a template's fields (located)."""
    return [(k + 1) * 1e6 + np.arange(n) + 0.5 for k in range(fields)]


def located(raw: bytearray, markers) -> list[np.ndarray]:
    """Views into the serialized message ``raw`` (in its byte order) of the float64 arrays that
    were given the distinct ``markers`` values before serializing: writing a view writes the
    message. Fixed-size fields sit at fixed places, so a message of one value per joint in each
    is serialized once and written in place every cycle."""
    order = "<" if raw[1] == 1 else ">"  # the encapsulation's byte order
    fields = []
    for values in markers:
        marker = np.asarray(values, dtype=order + "f8").tobytes()
        if raw.count(marker) != 1:
            raise RuntimeError("serialized template: a marker is not unique")
        fields.append(np.frombuffer(raw, order + "f8", len(values), raw.find(marker)))
    return fields


def read_stamp(raw) -> Time:
    """header.stamp of a serialized message that opens with a std_msgs/Header."""
    return Time(*struct.unpack_from("<iI" if raw[1] == 1 else ">iI", raw, 4))


def write_stamp(raw: bytearray, sec: int, nanosec: int) -> None:
    """Set header.stamp of a serialized message that opens with a std_msgs/Header."""
    struct.pack_into("<iI" if raw[1] == 1 else ">iI", raw, 4, sec, nanosec)


class SerializedJointState:
    """A sensor_msgs/JointState of fixed ``names`` with a position and a velocity per joint, and
    an effort with ``effort=True`` (else none), kept serialized: write ``position``,
    ``velocity`` (and ``effort``), then ``write(sec, nanosec)`` returns the bytes to publish,
    the same bytes rclpy serializes from the message (filling and converting one took 6.3 us, the
    bytes written in place 3.0 us)."""

    def __init__(self, names, message_type, effort=False):
        values = markers(3 if effort else 2, len(names))
        fields = dict(zip(("position", "velocity", "effort"), (v.tolist() for v in values)))
        self._raw = serialized(message_type(name=list(names), **fields))
        views = located(self._raw, values)
        self.position, self.velocity = views[:2]
        self.effort = views[2] if effort else None

    def write(self, sec: int, nanosec: int) -> bytes:
        write_stamp(self._raw, sec, nanosec)
        return bytes(self._raw)


class SerializedFloat64MultiArray:
    """A std_msgs/Float64MultiArray of ``n`` values (empty layout), kept serialized: write
    ``values``, publish ``bytes()``. rclpy publishes bytes as they are, without converting a
    message object, about 4 us of every cycle. CDR, little-endian: 4 bytes of encapsulation,
    then the layout (no dimensions, data_offset 0), the data's count and, aligned to 8 bytes
    from the start of the body, the doubles."""

    def __init__(self, n: int):
        self._raw = bytearray(20 + 8 * n)
        self._raw[1] = 1  # encapsulation 0x0001: little-endian CDR
        struct.pack_into("<I", self._raw, 12, n)
        self.values = np.frombuffer(self._raw, "<f8", n, 20)

    def __bytes__(self) -> bytes:
        return bytes(self._raw)
