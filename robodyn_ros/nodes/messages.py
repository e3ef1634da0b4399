"""trajectory_msgs/JointTrajectory to the ROS-free :class:`~robodyn_ros.control.JointTrajectory`,
one conversion for every node that takes trajectories."""
from __future__ import annotations

from ..control import JointTrajectory, TrajectoryError
from .common import stamp_seconds


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
