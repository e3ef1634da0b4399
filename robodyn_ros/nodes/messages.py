"""Messages shared by the nodes: the one trajectory_msgs/JointTrajectory conversion to the ROS-free
:class:`~robodyn_ros.control.JointTrajectory`, and the one place control_msgs is imported.

control_msgs is not on PyPI (a ROS machine has ros-jazzy-control-msgs from apt; ``make`` builds it
into the venv when its source is at hand). Without it the nodes run with topics only and say so.
"""
from __future__ import annotations

import struct

from ..control import JointTrajectory, TrajectoryError
from .common import stamp_seconds

try:
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTrajectoryControllerState
    from control_msgs.srv import QueryTrajectoryState
except ImportError:  # a machine without control_msgs: topics only
    FollowJointTrajectory = JointTrajectoryControllerState = QueryTrajectoryState = None

NO_CONTROL_MSGS = ("control_msgs is not installed (ros-jazzy-control-msgs; `make` builds it into "
                   ".venv): topics only, no FollowJointTrajectory action")


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


def trajectory_points(raw: bytes) -> int:
    """The number of points of a serialized trajectory_msgs/JointTrajectory, read from its CDR
    bytes without deserializing it: converting a 100,000-point message into Python objects takes
    the subscriber over a second, too long to spend on a trajectory it will refuse for its size.
    ValueError when the bytes end early."""
    order = "<" if raw[1:2] == b"\x01" else ">"  # encapsulation 0x0001: little-endian CDR
    body = memoryview(raw)[4:]

    def u32(pos):  # CDR aligns a uint32 to 4 bytes from the start of the body
        pos = (pos + 3) & ~3
        return struct.unpack_from(order + "I", body, pos)[0], pos + 4

    try:
        size, pos = u32(8)  # header.stamp (sec, nanosec), then header.frame_id
        names, pos = u32(pos + size)
        for _ in range(names):
            size, pos = u32(pos)
            pos += size
        return u32(pos)[0]
    except struct.error as exc:
        raise ValueError(f"a serialized JointTrajectory ends early: {exc}") from exc
