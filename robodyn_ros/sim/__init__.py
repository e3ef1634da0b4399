"""Simulation engines behind ``arm_simulator``, free of ROS: each advances (q, qd) by a fixed step
under a held effort, clamps efforts at the URDF limits and stops the joints at the position limits,
counting both. ``make_engine`` picks one by name."""
from .engine import ENGINES, MAX_WRENCH, Engine, StepError, wrench_refusal

__all__ = ["ENGINES", "MAX_WRENCH", "Engine", "StepError", "make_engine", "make_plant",
           "wrench_refusal"]


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


def make_plant(name: str, model, dt: float, urdf: str, *, mass_scale: float = 1.0,
               friction_scale: float = 1.0, payload_mass: float = 0.0, payload_com=(0.0, 0.0, 0.0),
               tip=None, root=None):
    """The arm a simulator runs: ``model`` with its masses and friction scaled (a model mismatch)
    and the engines (without the payload, with it) of the arm that picks a payload of
    ``payload_mass`` at ``payload_com`` (tip frame) up — the same engine twice without one.
    ValueError naming the option for a payload_com that is no point."""
    if mass_scale != 1.0 or friction_scale != 1.0:
        model = model.scaled(mass=mass_scale, friction=friction_scale)
    bare = make_engine(name, model, dt, urdf, mass_scale=mass_scale, root=root)
    if payload_mass <= 0.0:
        return bare, bare
    if len(payload_com) != 3:
        raise ValueError(f"payload_com must be [x, y, z], got {list(payload_com)}")
    loaded = model.with_payload(payload_mass, com=payload_com)
    return bare, make_engine(name, loaded, dt, urdf, mass_scale=mass_scale, root=root,
                             payload=(payload_mass, payload_com, tip))
