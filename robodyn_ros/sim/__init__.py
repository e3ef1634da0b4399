"""Simulation engines behind ``arm_simulator``, free of ROS: each advances (q, qd) by a fixed step
under a held effort, clamps efforts at the URDF limits and stops the joints at the position limits,
counting both. ``make_engine`` picks one by name."""
from .engine import ENGINES, MAX_WRENCH, Engine, StepError, wrench_refusal

__all__ = ["ENGINES", "MAX_WRENCH", "Engine", "StepError", "make_engine", "wrench_refusal"]


def make_engine(name: str, model, dt: float, urdf: str = "", *, payload=None,
                mass_scale: float = 1.0, root=None):
    """The engine called ``name`` for ``model`` (already scaled and with its payload); the MuJoCo
    engine also needs the URDF text, the payload (mass, com, tip link), the mass scale and the
    chain's root link to rebuild the same arm."""
    if name == "robodyn":
        from .robodyn_engine import RobodynEngine
        return RobodynEngine(model, dt)
    if name == "mujoco":
        from .mujoco_engine import MujocoEngine
        return MujocoEngine(model, dt, urdf, payload=payload, mass_scale=mass_scale, root=root)
    raise ValueError(f"unknown engine '{name}': one of {', '.join(ENGINES)}")
