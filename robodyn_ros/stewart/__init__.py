"""Stewart platform (6-UPS) inverse dynamics after Dasgupta & Mruthyunjaya 1998. No rclpy here."""
from .dynamics import ConstraintForces, InverseDynamicsResult
from .forward import (ForwardDynamicsResult, PlatformMotion, SingularPoseError, forward_dynamics,
                      integrate)
from .kinematics import ForwardKinematicsError, LegKinematics
from .model import PlatformFileError, PlatformWarning, StewartPlatform
from .trajectory import LinearParabolicPath, PathSample
from .warmup import warm_up

__all__ = [
    "ConstraintForces", "ForwardDynamicsResult", "ForwardKinematicsError", "InverseDynamicsResult",
    "LegKinematics", "LinearParabolicPath", "PathSample", "PlatformFileError", "PlatformMotion",
    "PlatformWarning", "SingularPoseError", "StewartPlatform", "forward_dynamics", "integrate",
    "warm_up",
]
