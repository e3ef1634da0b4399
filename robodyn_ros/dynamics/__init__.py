"""Serial-arm rigid-body dynamics: models from DH, modified DH and URDF; recursive Newton–Euler,
Lagrange–Euler, M(q), C(q, qd), g(q), forward dynamics and integration. No rclpy here."""
from .link import Link, ModelError
from .model import RobotModel
from .warmup import warm_up
from ..plumbing.resources import shipped

__all__ = ["Link", "ModelError", "RobotModel", "shipped", "warm_up"]
