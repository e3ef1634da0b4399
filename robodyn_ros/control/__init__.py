"""Control laws (plugins) and joint-trajectory sampling. No rclpy here: the nodes adapt these.

The laws themselves live in :mod:`robodyn_ros.control.laws` and are loaded by name through
:func:`load_law`, so importing this package does not import them.
"""
from .law import ENTRY_POINT_GROUP, ControlLaw, UnknownLawError, available_laws, load_law
from .trajectory import JointTrajectory, TrajectoryError, TrajectorySampler

__all__ = ["ENTRY_POINT_GROUP", "ControlLaw", "JointTrajectory", "TrajectoryError",
           "TrajectorySampler", "UnknownLawError", "available_laws", "load_law"]
