"""Simulation engines behind ``arm_simulator``, free of ROS: each advances (q, qd) by a fixed step
under a held effort, clamps efforts at the URDF limits and stops the joints at the position limits,
counting both. ``make_engine`` picks one by name."""
from .engine import ENGINES, Engine, StepError, make_engine

__all__ = ["ENGINES", "Engine", "StepError", "make_engine"]
