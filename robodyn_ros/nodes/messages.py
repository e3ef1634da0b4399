"""Messages shared by the nodes: the one trajectory_msgs/JointTrajectory conversion to the ROS-free
:class:`~robodyn_ros.control.JointTrajectory`, and the one place control_msgs is imported.

control_msgs is not on PyPI (a ROS machine has ros-jazzy-control-msgs from apt; ``make`` builds it
into the venv when its source is at hand). Without it the nodes run with topics only and say so.
"""
from __future__ import annotations

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
