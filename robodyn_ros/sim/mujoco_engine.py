"""The MuJoCo engine: the same URDF as the model, simulated by MuJoCo (an optional extra,
``pip install robodyn_ros[mujoco]``), a plant nobody here wrote.

Loading it so that it is the same arm takes care (measured: without ``mj_setConst`` the PUMA's
inverse dynamics is off by up to 108 % of its largest torque, with no error):

* MuJoCo refuses inertias our model accepts (the PUMA data set's massless link 1, a slender rod's
  zero moment), so every body is compiled with a placeholder inertial and the URDF's exact mass,
  centre of mass and full inertia (diagonalised: MuJoCo keeps principal moments and their frame)
  are written back, scaled by ``mass_scale``, then ``mj_setConst`` recomputes what depends on them;
* fixed links stay bodies (MuJoCo's URDF compiler would fuse them), so the payload is a point mass
  on the tip link's own body;
* armature and viscous damping come from the model; Coulomb friction does not (MujocoEngine);
* RK4 at the node's step (MuJoCo's default, semi-implicit Euler at 2 ms, would make integration
  error dominate), gravity the model's, no contacts;
* position limits are MuJoCo joint limits (soft constraints, stiffened to a time constant of two
  steps); effort limits a motor actuator per joint whose ctrlrange clamps the command; an external
  wrench is ``qfrc_applied`` (Jᵀ w, unclamped, as in the robodyn engine).
"""
from __future__ import annotations

import numpy as np

from robodyn_ros.dynamics.model import combine_bodies
from robodyn_ros.dynamics.newton_euler import FRICTION, GRAVITY

from .bodies import parse_urdf, urdf_bodies
from .engine import Engine, StepError

try:
    import mujoco
except ImportError:  # the optional extra is not installed
    mujoco = None

_PLACEHOLDER_INERTIA = (1.0, 1.0, 1.0)
# Limit stiffness: a critically damped constraint with a time constant of this many steps, the
# stiffest MuJoCo advises (its default, 0.02 s, lets the PUMA's joint 3 sink 3 degrees past its
# limit under full effort)
_LIMIT_TIME_STEPS = 2.0


def require_mujoco():
    if mujoco is None:
        raise ImportError("the 'mujoco' engine needs the MuJoCo Python package: "
                          "pip install robodyn_ros[mujoco] (or pip install mujoco)")
    return mujoco


def principal(inertia):
    """(principal moments, quaternion of their frame in the body frame): I = R diag(m) R^T."""
    moments, R = np.linalg.eigh(inertia)
    if np.linalg.det(R) < 0.0:
        R[:, 0] = -R[:, 0]
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(R).ravel())
    return np.maximum(moments, 0.0), quat  # eigh's rounding may give -1e-20 for a zero moment


def compile_urdf(urdf: str, model, dt: float, *, payload=None, mass_scale=1.0, root=None):
    """(MjModel, MjData) of the URDF, dynamics written back exactly; joints in ``model``'s order
    are dof i = joint i (checked). ``root``: the chain's root link (None: the URDF's root)."""
    require_mujoco()
    spec = mujoco.MjSpec.from_string(urdf)
    spec.compiler.fusestatic = False
    for geom in list(spec.geoms):  # no contacts, and no mesh files to look for
        spec.delete(geom)
    for mesh in list(spec.meshes):
        spec.delete(mesh)
    for body in spec.bodies[1:]:
        body.explicitinertial = True
        body.mass, body.inertia, body.ipos = 1.0, _PLACEHOLDER_INERTIA, (0.0, 0.0, 0.0)
        body.fullinertia = (np.nan, 0.0, 0.0, 0.0, 0.0, 0.0)
        body.iquat = (1.0, 0.0, 0.0, 0.0)
    joints = {j.name: j for j in spec.joints}
    extra = sorted(set(joints) - set(model.joint_names))
    if extra:
        raise ValueError(f"the mujoco engine simulates the whole URDF tree, and the joints {extra} "
                         f"are not on the chain {model.joint_names}")
    for i, name in enumerate(model.joint_names):
        j = joints[name]
        j.armature = model.armature[i]
        j.damping = (model.viscous[i], 0.0, 0.0)
        j.frictionloss = 0.0  # see MujocoEngine: Coulomb friction is not MuJoCo's frictionloss
        bounded = np.isfinite(model.lower[i]) and np.isfinite(model.upper[i])
        j.limited = _limited(bounded)
        if bounded:
            j.range = (model.lower[i], model.upper[i])
            j.solref_limit = (_LIMIT_TIME_STEPS * dt, 1.0)
        motor = spec.add_actuator(name=f"{name}_motor", target=name,
                                  trntype=mujoco.mjtTrn.mjTRN_JOINT)
        motor.gear = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        effort = model.effort_limit[i]
        motor.ctrllimited = _limited(np.isfinite(effort))
        if np.isfinite(effort):
            motor.ctrlrange = (-effort, effort)
    spec.option.timestep = dt
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    m = spec.compile()
    order = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name) for name in model.joint_names]
    if [m.jnt_dofadr[j] for j in order] != list(range(model.dof)):
        raise ValueError(f"MuJoCo orders the joints {[m.joint(j).name for j in range(m.njnt)]}, "
                         f"the chain {model.joint_names}")

    bodies = {name: (mass * mass_scale, com, inertia * mass_scale)
              for name, (mass, com, inertia) in urdf_bodies(parse_urdf(urdf)).items()}
    if payload is not None:  # (mass, com in the tip link's frame, tip link or None: the leaf)
        mass, com, tip = payload
        tip = tip or _leaf(m)
        bodies[tip] = combine_bodies(bodies[tip], (mass, np.asarray(com, dtype=float),
                                                   np.zeros((3, 3))))
    for b in range(1, m.nbody):
        mass, com, inertia = bodies[m.body(b).name]
        m.body_mass[b] = mass
        m.body_ipos[b] = com
        m.body_inertia[b], m.body_iquat[b] = principal(inertia)
    d = mujoco.MjData(m)
    mujoco.mj_setConst(m, d)
    mujoco.mj_kinematics(m, d)  # gravity: the model's, given in the chain's root frame
    m.opt.gravity = d.xmat[_root_body(m, model, root)].reshape(3, 3) @ model.gravity
    return m, d


def _limited(bounded):
    return mujoco.mjtLimited.mjLIMITED_TRUE if bounded else mujoco.mjtLimited.mjLIMITED_FALSE


def _leaf(m):
    """The one body without children (the URDF's tip when tip_link is not given)."""
    leaves = sorted(set(range(1, m.nbody)) - set(m.body_parentid[1:]))
    if len(leaves) != 1:
        raise ValueError(f"several leaf links {[m.body(b).name for b in leaves]}: set tip_link")
    return m.body(leaves[0]).name


def _root_body(m, model, root):
    """The chain's root link, the frame the model's gravity is given in: ``root`` or else the
    topmost body above the first joint (the URDF's root, or MuJoCo's world when it is called so)."""
    if root:
        return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, root)
    body = m.jnt_bodyid[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, model.joint_names[0])]
    while m.body_parentid[body] != 0:
        body = m.body_parentid[body]
    return body


_last_warning = [""]


def _keep_warning(text):
    """MuJoCo's warnings become the StepError's reason instead of lines in ./MUJOCO_LOG.TXT."""
    _last_warning[0] = text


def drive_bias(m, d, dofs, q, qd, compensates) -> np.ndarray:
    """What a drive adds by MuJoCo's own model ``m`` (the arm's joints at ``dofs``; ``d`` data of
    its own): its bias force at rest (gravity), and its joint damping at q̇ (the plant's only
    friction: see MujocoEngine)."""
    out = np.zeros(len(dofs))
    if compensates & GRAVITY:
        d.qpos[:], d.qvel[:] = 0.0, 0.0
        d.qpos[dofs] = q
        mujoco.mj_forward(m, d)
        out += d.qfrc_bias[dofs]
    if compensates & FRICTION:
        out += m.dof_damping[dofs] * qd
    return out


class MujocoEngine(Engine):
    """One MuJoCo RK4 step per ``step``; position limits are MuJoCo's constraints."""
    name = "mujoco"

    def __init__(self, model, dt, urdf, *, payload=None, mass_scale=1.0, root=None):
        super().__init__(model, dt)
        self.coulomb_dropped = bool(model.coulomb_positive.any() or model.coulomb_negative.any())
        # MuJoCo's frictionloss is a symmetric, regularised constraint force, not the model's
        # discontinuous sign(qd) with a magnitude per direction: it would be another plant.
        self.mj, self.data = compile_urdf(urdf, model, dt, payload=payload, mass_scale=mass_scale,
                                          root=root)
        mujoco.set_mju_user_warning(_keep_warning)
        w = mujoco.mjtWarning
        self._bad = [int(k) for k in (w.mjWARN_BADQPOS, w.mjWARN_BADQVEL, w.mjWARN_BADQACC,
                                      w.mjWARN_BADCTRL)]

    def _advance(self, q, qd, tau, tau_ext):
        m, d = self.mj, self.data
        # the push as MuJoCo's applied generalized force: no actuator's, so no ctrlrange clamps it
        d.qpos[:], d.qvel[:], d.ctrl[:], d.qfrc_applied[:] = q, qd, tau, tau_ext
        before = [d.warning[k].number for k in self._bad]
        mujoco.mj_step(m, d)
        if [d.warning[k].number for k in self._bad] != before:  # MuJoCo reset its data
            raise StepError(f"MuJoCo: {_last_warning[0].strip()}")
        return d.qpos.copy(), d.qvel.copy(), d.nl > 0

    def drive_adds(self, q, qd, compensates):
        """What a drive adds by MuJoCo's own model (``drive_bias``)."""
        if not hasattr(self, "_drive_data"):
            self._drive_data = mujoco.MjData(self.mj)
        return drive_bias(self.mj, self._drive_data, np.arange(self.model.dof), q, qd, compensates)

    def reset(self):
        mujoco.mj_resetData(self.mj, self.data)
