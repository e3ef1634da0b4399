"""An arm touching an obstacle in MuJoCo: the URDF's <collision> shapes (one geom per link), an
obstacle added with MjSpec at a given place — rigid, or soft through MuJoCo's ``solref`` /
``solimp`` — and, per step, the contacts between them with their normal force (``mj_contactForce``).
What the collision demo measures against: the true instant of first contact, the link touched, the
force. The link touched is the one a joint moves: a shape of a link fixed to it (a hand on the
flange, a tool, a payload) is a contact on it, as the controller can tell it. ROS-free.

The arm's dynamics are the MuJoCo engine's (``mujoco_engine.compile_urdf``: the URDF's bodies
written back exactly, the model's armature and viscous damping, RK4), copied body by body and joint
by joint into this scene, whose only addition is geometry: the arm's geoms collide with the
obstacles and not with each other (contype 1, conaffinity 0 on the arm; 0 and 1 on an obstacle),
so a motion that is free without the obstacle is the engine's motion to rounding. It is an
``Engine``: the effort is clamped at the effort limits and, with a push from outside (τ_ext = Jᵀw),
applied as a generalized force (``qfrc_applied``), as the MuJoCo engine applies them.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .engine import Engine
from .mujoco_engine import compile_urdf, drive_bias, require_mujoco, shapes_spec

SHAPES = ("sphere", "box", "capsule", "cylinder")
# MuJoCo's default contact (solref 0.02 s time constant, damping ratio 1): at 1 kHz RK4 a rigid
# obstacle wants a stiffer one, the time constant of two steps as the engine's joint limits use
RIGID_TIME_STEPS = 2.0


@dataclasses.dataclass(frozen=True)
class Obstacle:
    """A fixed obstacle: MuJoCo geom ``shape`` of ``size`` (MuJoCo's meaning: a sphere's radius;
    a box's half sides; a capsule's or cylinder's radius and half length, along the world z)
    centred at ``position`` (world frame, m). ``solref`` / ``solimp``: MuJoCo's contact softness
    (None: rigid, a time constant of RIGID_TIME_STEPS steps, MuJoCo's default solimp); e.g. solref
    (0.05, 1.0) and solimp (0.5, 0.95, 0.02) stand in for a body that gives centimetres."""
    position: tuple
    shape: str = "sphere"
    size: tuple = (0.05,)
    solref: tuple | None = None
    solimp: tuple | None = None
    name: str = "obstacle"

    def __post_init__(self):
        if self.shape not in SHAPES:
            raise ValueError(f"obstacle '{self.name}': shape must be one of {SHAPES}, got "
                             f"{self.shape!r}")
        size = np.asarray(self.size, dtype=float)
        position = np.asarray(self.position, dtype=float)
        if position.shape != (3,) or not np.all(np.isfinite(position)):
            raise ValueError(f"obstacle '{self.name}': position must be 3 finite numbers, got "
                             f"{self.position!r}")
        if size.ndim != 1 or not 1 <= size.size <= 3 or not np.all((size > 0) & np.isfinite(size)):
            raise ValueError(f"obstacle '{self.name}': size must be 1 to 3 finite numbers > 0, got "
                             f"{self.size!r}")


@dataclasses.dataclass(frozen=True)
class Touch:
    """One contact of a step: the arm's link (the one a joint moves, or the fixed base), the
    obstacle, the normal force (N, >= 0), the URDF link whose shape it is (``link`` or one fixed
    to it), the point and the force on the arm (world frame)."""
    link: str
    obstacle: str
    force: float
    body: str = ""
    point: tuple = ()
    push: tuple = ()


class ContactScene(Engine):
    """An ``Engine`` (``step(q, q̇, τ, wrench)``: the effort clamped at the limits, held over the
    step) for the arm of ``urdf`` / ``model`` among ``obstacles`` (module docstring), so that
    ``arm_simulator`` may run it as it runs the MuJoCo engine.

    After each step ``touches`` holds its contacts (at the step's end) and ``first_contact`` the
    (time, link, force) of the first step that ended in contact — None before it, and again after
    ``reset()``; ``time`` counts the steps since that reset.
    """
    name = "mujoco_contacts"

    def __init__(self, model, dt: float, urdf: str, obstacles=(), root=None):
        super().__init__(model, dt)
        mujoco = require_mujoco()
        exact, _ = compile_urdf(urdf, model, dt, root=root)
        spec = shapes_spec(urdf, conaffinity=0)
        self.obstacles = tuple(obstacles)
        names = [o.name for o in self.obstacles]
        if len(set(names)) != len(names):
            raise ValueError(f"obstacle names repeat: {names}")
        for o in self.obstacles:
            kind = getattr(mujoco.mjtGeom, f"mjGEOM_{o.shape.upper()}")
            geom = spec.worldbody.add_geom(name=o.name, type=kind, pos=np.asarray(o.position, float))
            size = np.zeros(3)
            size[:len(o.size)] = o.size
            geom.size, geom.contype, geom.conaffinity = size, 0, 1
            geom.solref = o.solref if o.solref is not None else (RIGID_TIME_STEPS * dt, 1.0)
            if o.solimp is not None:
                geom.solimp = (*o.solimp, *geom.solimp[len(o.solimp):])
        spec.option.timestep = dt
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
        m = spec.compile()
        self._copy_dynamics(mujoco, exact, m)
        self.mj, self.data = m, mujoco.MjData(m)
        mujoco.mj_setConst(m, self.data)
        self._mujoco = mujoco
        self._obstacle_geoms = {mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, o.name): o.name
                                for o in self.obstacles}
        self._dofs = [m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)]
                      for j in model.joint_names]
        self._moving = [moving_link(m, b) for b in range(m.nbody)]
        self._force = np.zeros(6)
        self.touches, self.first_contact = [], None

    def _copy_dynamics(self, mujoco, exact, m):
        """The engine's bodies, drives, limits and gravity into this scene's model."""
        for b in range(1, m.nbody):
            source = mujoco.mj_name2id(exact, mujoco.mjtObj.mjOBJ_BODY, m.body(b).name)
            if source < 0:
                raise ValueError(f"link '{m.body(b).name}' is not in the engine's model")
            for field in ("body_mass", "body_ipos", "body_inertia", "body_iquat"):
                getattr(m, field)[b] = getattr(exact, field)[source]
        for j in range(m.njnt):
            source = mujoco.mj_name2id(exact, mujoco.mjtObj.mjOBJ_JOINT, m.joint(j).name)
            dof, other = m.jnt_dofadr[j], exact.jnt_dofadr[source]
            for field in ("dof_armature", "dof_damping", "dof_frictionloss"):
                getattr(m, field)[dof] = getattr(exact, field)[other]
            m.jnt_limited[j], m.jnt_range[j] = exact.jnt_limited[source], exact.jnt_range[source]
            m.jnt_solref[j] = exact.jnt_solref[source]
        m.opt.gravity[:] = exact.opt.gravity

    def link_of_geom(self, geom: int) -> str:
        """The link (a joint moves) that carries geom ``geom`` (``moving_link``)."""
        return self._moving[int(self.mj.geom_bodyid[geom])]

    def drive_adds(self, q, qd, compensates):
        """What a drive adds by MuJoCo's own model (``mujoco_engine.drive_bias``)."""
        if not hasattr(self, "_drive_data"):
            self._drive_data = self._mujoco.MjData(self.mj)
        return drive_bias(self.mj, self._drive_data, self._dofs, q, qd, compensates)

    @property
    def time(self) -> float:
        return float(self.data.time)

    def reset(self):
        self._mujoco.mj_resetData(self.mj, self.data)
        self.touches, self.first_contact = [], None

    def _advance(self, q, qd, tau, tau_ext):
        mujoco, m, d = self._mujoco, self.mj, self.data
        d.qpos[self._dofs], d.qvel[self._dofs] = q, qd
        d.qfrc_applied[:] = 0.0
        d.qfrc_applied[self._dofs] = tau + tau_ext
        mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)   # the contacts and their forces at the step's end
        self.touches = self._touches()
        if self.first_contact is None and any(t.force > 0.0 for t in self.touches):
            first = max(self.touches, key=lambda t: t.force)
            self.first_contact = (self.time, first.link, first.force)
        return d.qpos[self._dofs].copy(), d.qvel[self._dofs].copy(), d.nl > 0

    def _touches(self) -> list[Touch]:
        """The contacts between the arm and the obstacles in the current state."""
        mujoco, m, d = self._mujoco, self.mj, self.data
        found = []
        for i in range(d.ncon):
            c = d.contact[i]
            pair = (int(c.geom1), int(c.geom2))
            obstacle = next((g for g in pair if g in self._obstacle_geoms), None)
            if obstacle is None:
                continue
            arm = pair[1] if pair[0] == obstacle else pair[0]
            mujoco.mj_contactForce(m, d, i, self._force)
            # the force geom1 exerts on geom2, contact frame (rows: normal, tangents)
            push = c.frame.reshape(3, 3).T @ self._force[:3] * (1.0 if arm == pair[1] else -1.0)
            body = int(m.geom_bodyid[arm])
            found.append(Touch(self._moving[body], self._obstacle_geoms[obstacle],
                               float(self._force[0]), m.body(body).name, tuple(c.pos), tuple(push)))
        return found


def moving_link(m, body: int) -> str:
    """The link of MuJoCo model ``m`` whose joint moves ``body``: the body itself or the first of
    its ancestors a joint moves (a hand fixed to the flange: the last link); the fixed base's
    bodies are their own."""
    b = body
    while b > 0 and m.body_jntnum[b] == 0:
        b = int(m.body_parentid[b])
    return m.body(b if b > 0 else body).name
