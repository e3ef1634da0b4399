"""Stewart platform (6-UPS) inverse dynamics after Dasgupta & Mruthyunjaya 1998. No rclpy here."""
from .dynamics import ConstraintForces, InverseDynamicsResult
from .kinematics import ForwardKinematicsError, LegKinematics
from .model import PlatformFileError, PlatformWarning, StewartPlatform
from .trajectory import LinearParabolicPath, PathSample
from .warmup import warm_up

__all__ = [
    "ConstraintForces", "ForwardKinematicsError", "InverseDynamicsResult", "LegKinematics",
    "LinearParabolicPath", "PathSample", "PlatformFileError", "PlatformWarning", "StewartPlatform",
    "warm_up",
]
