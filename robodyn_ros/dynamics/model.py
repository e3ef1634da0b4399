"""RobotModel: the constant description of a serial arm, and the public dynamics API.

A model is frozen: it is built from a ``Chain`` of frozen ``Link``s (module ``link``), every array it
exposes is a read-only copy, and its attributes cannot be rebound, so the NumPy-side algorithms
(kinematics, Coriolis, Lagrange–Euler), which read the links, and the compiled kernels, which read
the parameter array packed from the same links at construction (``layout.pack``), cannot disagree.
Variants are new models: ``with_payload``, ``scaled``, or ``RobotModel`` on ``dataclasses.replace``d
links. Every call takes the little workspace it needs (one state's inverse dynamics and mass matrix
on the machine stack, ``robodyn_ros.plumbing.kernels.scratch``), so one model may serve several threads;
a large batch is shared among the cores (``robodyn_ros.plumbing.kernels.by_rows``), a small one is not.
Loaders (``dh``, ``urdf``) reduce every convention to the canonical chain.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..plumbing.kernels import (C_MATRIX, FLOAT64, INT, NDARRAY, PARAMETER_VECTOR, PARAMETERS, VECTOR,
                                Direct, by_rows)
from . import coriolis as _coriolis
from . import crba as _crba
from . import dh as _dh
from . import forward as _forward
from . import kinematics as _kinematics
from . import newton_euler as _ne
from . import urdf as _urdf
from .frames import TIP, frame_table, resolve
from .layout import pack
from .link import Chain, ModelError, combine_bodies

_WITH_FRICTION, _NO_FRICTION = _ne.GRAVITY | _ne.FRICTION, _ne.GRAVITY
_empty = np.empty
_NO_WRENCHES = np.zeros((1, 6))
# the single-state fast paths: their guards check every argument's type, so numba need not
_RNEA = Direct(_ne.rnea_no_wrench, PARAMETERS, VECTOR, VECTOR, VECTOR, INT, VECTOR)
_CRBA = Direct(_crba.crba, PARAMETERS, VECTOR, C_MATRIX)   # M: allocated here, C order
_FORWARD = Direct(_forward.forward_dynamics_no_wrench, PARAMETERS, VECTOR, VECTOR, VECTOR, INT, VECTOR)
# any other single state (a tip wrench, other argument types once converted): the kernels those two
# call, with the very types they call them with (NO_WRENCH is a read-only constant inside), so that
# one compiled version of each serves both (another would cost some 6-12 s more of compiling)
_RNEA_WRENCH = Direct(_ne.rnea, PARAMETERS, VECTOR, VECTOR, VECTOR, PARAMETER_VECTOR, INT, VECTOR)
_FORWARD_WRENCH = Direct(_forward.forward_dynamics, PARAMETERS, VECTOR, VECTOR, VECTOR,
                         PARAMETER_VECTOR, INT, VECTOR)
_PER_JOINT = {"lower": "lower", "upper": "upper", "armature": "armature", "viscous": "viscous",
              "coulomb_positive": "coulomb_positive", "coulomb_negative": "coulomb_negative",
              "coulomb_tanh": "coulomb_tanh", "friction_offset": "friction_offset",
              "velocity_limit": "velocity", "effort_limit": "effort"}


def _read_only(values):
    array = np.array(values, dtype=float)
    array.flags.writeable = False
    return array


class RobotModel:
    """A serial arm of revolute and prismatic joints, frozen (module docstring)."""

    def __init__(self, links, tip=None, gravity=(0.0, 0.0, -9.81), name="robot", frames=None):
        chain = Chain(tuple(links), tip, gravity, name, frames)
        set_ = super().__setattr__   # the one place a model is written: its construction
        set_("name", chain.name)
        set_("links", chain.links)
        set_("tip", chain.tip)
        set_("gravity", chain.gravity)
        set_("frames", chain.frames)     # a URDF's links (Chain); every name: ``frame``
        set_("dof", len(chain.links))
        set_("_square", (self.dof, self.dof))
        set_("_joint_names", tuple(link.name for link in chain.links))
        set_("_joint_types", tuple(link.joint for link in chain.links))
        for attr, field in _PER_JOINT.items():
            set_(attr, _read_only([getattr(link, field) for link in chain.links]))
        set_("params", pack(chain.links, chain.tip, chain.gravity))
        set_("_frames", frame_table(chain.links, chain.tip, chain.frames))

    def __setattr__(self, name, value):
        raise AttributeError(f"RobotModel is frozen: cannot set '{name}'; derive a new model "
                             "(with_payload, scaled, or RobotModel on replaced links)")

    __delattr__ = __setattr__

    @property
    def joint_names(self):
        """The joint names in chain order (a new list: the model's own cannot be changed)."""
        return list(self._joint_names)

    @property
    def joint_types(self):
        """'revolute' or 'prismatic' per joint, in chain order (a new list)."""
        return list(self._joint_types)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_chain(cls, chain):
        return cls(chain.links, chain.tip, chain.gravity, chain.name, chain.frames)

    @classmethod
    def from_dh(cls, links, convention="standard", gravity=(0.0, 0.0, -9.81), tool=None, name="robot"):
        return cls.from_chain(_dh.chain_from_dh(links, convention, tool, gravity, name))

    @classmethod
    def from_yaml(cls, path):
        return cls.from_chain(_dh.read_table(path))

    @classmethod
    def from_urdf(cls, path_or_xml, root_link=None, tip_link=None, gravity=(0.0, 0.0, -9.81),
                  xacro_args=None):
        """From a URDF file (a .xacro one expanded with ``xacro_args``, ``name:=value``), URDF XML
        or its bytes, in any declared encoding (robodyn_ros.dynamics.description)."""
        return cls.from_chain(_urdf.read_urdf(path_or_xml, root_link=root_link, tip_link=tip_link,
                                              gravity=gravity, xacro_args=xacro_args))

    # ------------------------------------------------------------------ variants
    def with_payload(self, mass, com=(0.0, 0.0, 0.0), inertia=None):
        """The same arm holding a rigid payload at the tip (com in the tip frame, inertia about it)."""
        last = self.links[-1]
        com_tip = np.asarray(com, dtype=float)
        inertia_tip = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        R, p = self.tip[:3, :3], self.tip[:3, 3]
        merged = combine_bodies((last.mass, last.com, last.inertia),
                                (mass, R @ com_tip + p, R @ inertia_tip @ R.T))
        payload = dataclasses.replace(last, mass=merged[0], com=merged[1], inertia=merged[2])
        return RobotModel(self.links[:-1] + (payload,), self.tip, self.gravity, self.name,
                          self.frames)

    def scaled(self, mass=1.0, friction=1.0, armature=1.0):
        """Scaled inertial and friction parameters: a model mismatch for simulation studies."""
        links = [dataclasses.replace(
            link, mass=link.mass * mass, inertia=link.inertia * mass,
            viscous=link.viscous * friction, coulomb_positive=link.coulomb_positive * friction,
            coulomb_negative=link.coulomb_negative * friction,
            friction_offset=link.friction_offset * friction, armature=link.armature * armature)
            for link in self.links]
        return RobotModel(links, self.tip, self.gravity, self.name, self.frames)

    def with_friction(self, friction):
        """The same arm with the joint friction of ``friction`` (a ``dynamics.friction.
        FrictionModel``: an identified URDF's friction file, whose joints it must name) in place of
        its own: viscous, Coulomb (the sign or tanh law, a magnitude per direction) and offset,
        which Newton–Euler and everything built on it then use. ModelError naming the file's
        missing joint or a negative Coulomb magnitude."""
        known = dict(zip(friction.joints, zip(friction.forms, friction.values)))
        missing = [name for name in self.joint_names if name not in known]
        if missing:
            raise ModelError(f"friction: no friction for joint(s) {', '.join(missing)} of "
                             f"{self.name} (the friction model has {', '.join(friction.joints)})")
        links = []
        for link in self.links:
            form, values = known[link.name]
            named = dict(zip(form.names(), values))
            links.append(dataclasses.replace(
                link, viscous=named["viscous"],
                coulomb_positive=named.get("coulomb_positive", named.get("coulomb")),
                coulomb_negative=named.get("coulomb_negative", named.get("coulomb")),
                coulomb_tanh=form.velocity_scale, friction_offset=named.get("offset", 0.0)))
        return RobotModel(links, self.tip, self.gravity, self.name, self.frames)

    # ------------------------------------------------------------------ dynamics
    def inverse_dynamics(self, q, qd, qdd, tip_wrench=None, friction=True):
        """Joint forces for the motion (q, qd, qdd) under gravity; ``tip_wrench`` = [f; n] that the
        end-effector exerts on its environment, in the tip frame, moment about the tip origin."""
        return self._one_or_batch(_RNEA, _RNEA_WRENCH, _ne.rnea_batch, q, qd, qdd, tip_wrench, friction)

    def gravity_torques(self, q):
        """g(q): the joint forces that hold the arm still."""
        zero = np.zeros_like(np.asarray(q, dtype=float))
        return self.inverse_dynamics(q, zero, zero, friction=False)

    def friction_torques(self, qd):
        """The joint friction at velocity qd, as Newton–Euler's (``newton_euler.joint_friction``):
        viscous, Coulomb (the sign, zero at exactly zero velocity, or tanh(qd / coulomb_tanh)) and
        the offset."""
        qd = np.asarray(qd, dtype=float)
        smooth = self.coulomb_tanh > 0.0
        s = np.where(smooth, np.tanh(qd / np.where(smooth, self.coulomb_tanh, 1.0)), np.sign(qd))
        return (self.viscous * qd + self.coulomb_positive * np.maximum(s, 0.0)
                + self.coulomb_negative * np.minimum(s, 0.0) + self.friction_offset)

    def coriolis_torques(self, q, qd):
        """C(q, qd) qd by one Newton–Euler pass without gravity and friction."""
        zero = np.zeros_like(np.asarray(q, dtype=float))
        return self._dispatch(_RNEA_WRENCH, _ne.rnea_batch, q, qd, zero, None, 0)

    def mass_matrix(self, q, method="crba"):
        """M(q), armature included. ``method="strobe"``: n Newton–Euler passes, for checking."""
        if method == "crba" and q.__class__ is NDARRAY and q.dtype is FLOAT64 and q.ndim == 1:
            M = _empty(self._square)
            _CRBA.call(self.params, q, M)
            return M
        q = np.asarray(q, dtype=float)
        if method == "strobe":
            return _strobe_mass_matrix(self, q)
        if method != "crba":
            raise ValueError(f"unknown mass-matrix method '{method}' (crba, strobe)")
        if q.ndim == 1:   # a list, or another dtype
            return self.mass_matrix(q)
        return self._mass_matrices(q)

    def _mass_matrices(self, q):
        """M of each row of q, on shares of the rows. Apart from ``mass_matrix``: the closure's
        variables would be cells, which every call creates, the fast path's too (0.06 us)."""
        q, = self._batch(q)
        P, n = self.params, self.dof
        M = _empty((q.shape[0], n, n))
        by_rows(lambda a, b: _crba.crba_batch(P, q[a:b], M[a:b]), q.shape[0])
        return M

    def coriolis_matrix(self, q, qd):
        """C(q, qd) with C qd the Coriolis and centrifugal forces and dM/dt - 2C skew-symmetric."""
        return _coriolis.coriolis_matrix(self, q, qd)

    def forward_dynamics(self, q, qd, tau, tip_wrench=None, friction=True):
        """qdd = M^-1 (tau - C qd - g - friction - J^T w), by Cholesky."""
        return self._one_or_batch(_FORWARD, _FORWARD_WRENCH, _forward.forward_dynamics_batch,
                                  q, qd, tau, tip_wrench, friction)

    # ------------------------------------------------------------------ kinematics
    def link_frames(self, q):
        """World poses (4x4) of the n joint frames and, last, of the tip frame."""
        return _kinematics.link_frames(self, np.asarray(q, dtype=float))

    def jacobian(self, q):
        """Geometric Jacobian (6 x n) of the tip frame: [v; w] in the world frame."""
        return _kinematics.tip_jacobian(self, np.asarray(q, dtype=float))

    @property
    def frame_names(self):
        """Every name a frame argument takes (module ``frames``), "tip" first (a new list)."""
        return [TIP, *(name for name in self._frames if name != TIP)]

    def frame(self, link=None):
        """The ``frames.Frame`` of ``link``: None, "" or "tip" the tip, a URDF link's name that
        link's frame, a joint's name its canonical frame (module ``frames``); a ModelError naming
        the unknown link and listing the known ones."""
        return resolve(self, self._frames, link)

    def frame_index(self, link=None):
        """The canonical frame (``link_frames``) the frame of ``link`` is or rides on: n the tip
        (and a URDF link whose frame is the tip's), i joint i's frame or its body, -1 the base."""
        f, tip = self.frame(link), self._frames[TIP]
        if f is tip or (link in self.frames and f.joint == tip.joint
                        and np.array_equal(f.offset, tip.offset)):
            return self.dof
        return f.joint

    def frame_pose(self, q, link=None):
        """Pose (4x4) of the frame of ``link`` (``frame``) in the base frame."""
        return _kinematics.frame_motion(self, q, np.zeros_like(q, dtype=float), link).pose

    def frame_jacobian(self, q, link=None, reference="world"):
        """Geometric Jacobian (6 x n) of the frame of ``link`` (``frame``), [v; w] of its origin,
        in the base frame ("world") or in the frame itself ("body")."""
        return _kinematics.frame_motion(self, q, np.zeros_like(q, dtype=float), link,
                                        reference).jacobian

    def frame_motion(self, q, qd, link=None, reference="world"):
        """(pose, J, J q̇, J̇ q̇) of the frame of ``link`` in one compiled pass (kinematics.FrameMotion)."""
        return _kinematics.frame_motion(self, q, qd, link, reference)

    def energy(self, q, qd):
        """(kinetic, potential) energy; kinetic includes the armature, potential is zero at the base."""
        return _kinematics.energy(self, np.asarray(q, dtype=float), np.asarray(qd, dtype=float))

    # ------------------------------------------------------------------ argument handling
    def _one_or_batch(self, direct, single, batch, a, b, c, tip_wrench, friction):
        """One state of three float64 vectors straight into ``direct`` (every type checked here,
        the sizes by the kernel: the 1 kHz path), anything else through ``_dispatch``."""
        mode = _WITH_FRICTION if friction else _NO_FRICTION
        if (tip_wrench is None and a.__class__ is b.__class__ is c.__class__ is NDARRAY
                and a.dtype is FLOAT64 and b.dtype is FLOAT64 and c.dtype is FLOAT64
                and a.ndim == 1 and b.ndim == 1 and c.ndim == 1):
            out = _empty(self.dof)
            direct.call(self.params, a, b, c, mode, out)
            return out
        return self._dispatch(single, batch, a, b, c, tip_wrench, mode)

    def _dispatch(self, single, batch, a, b, c, tip_wrench, mode):
        """Convert the arguments and call the one-state ``Direct`` (whose kernel checks sizes), or the
        batch kernel on shares of the rows (``by_rows``); either writes into the array returned."""
        a = np.asarray(a, dtype=float)
        if tip_wrench is not None:
            mode |= _ne.TIP_WRENCH
        if a.ndim == 1:
            b, c = np.asarray(b, dtype=float), np.asarray(c, dtype=float)
            if b.ndim != 1 or c.ndim != 1:
                raise ValueError(f"expected one state of three vectors, got shapes "
                                 f"{[x.shape for x in (a, b, c)]}")
            wrench = _ne.NO_WRENCH if tip_wrench is None else self._wrench(tip_wrench, None)
            out = _empty(self.dof)
            single.call(self.params, a, b, c, wrench, mode, out)
            return out
        a, b, c = self._batch(a, b, c)
        out = _empty(a.shape)
        if tip_wrench is None:
            def share(i, j):
                batch(self.params, a[i:j], b[i:j], c[i:j], _NO_WRENCHES, mode, out[i:j])
        else:
            w = self._wrench(tip_wrench, a.shape[0])

            def share(i, j):
                batch(self.params, a[i:j], b[i:j], c[i:j], w[i:j], mode, out[i:j])
        by_rows(share, a.shape[0])
        return out

    def _batch(self, *arrays):
        out = tuple(np.ascontiguousarray(a, dtype=float) for a in arrays)
        shape = out[0].shape
        for a in out:
            if a.ndim != 2 or a.shape[1] != self.dof or a.shape != shape:
                raise ValueError(f"expected batches of shape (N, {self.dof}) alike, got "
                                 f"{[b.shape for b in out]}")
        return out

    def _wrench(self, wrench, batch):
        w = np.asarray(wrench, dtype=float)
        if batch is None:
            if w.shape != (6,):
                raise ValueError(f"tip_wrench must be [fx, fy, fz, nx, ny, nz], got shape {w.shape}")
            return np.ascontiguousarray(w)   # the one-state kernels take a C-order wrench
        return np.array(np.broadcast_to(w, (batch, 6)))   # a writable copy: one compiled type

    def __repr__(self):
        joints = ", ".join(f"{n}:{t[0].upper()}" for n, t in zip(self.joint_names, self.joint_types))
        return f"RobotModel('{self.name}', dof={self.dof}, joints=[{joints}])"


def _strobe_mass_matrix(model, q):
    """Column j of M is the Newton–Euler force for qdd = e_j with no velocity, gravity or friction."""
    if q.ndim == 2:
        return np.stack([_strobe_mass_matrix(model, qk) for qk in q])
    if q.ndim != 1:   # the Direct call reads its arguments as vectors
        raise ValueError(f"expected q of one value per joint, or rows of them, got shape {q.shape}")
    n = model.dof
    zero = np.zeros(n)
    M = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        column = np.empty(n)
        _RNEA_WRENCH.call(model.params, q, zero, e, _ne.NO_WRENCH, 0, column)  # no second version
        M[:, j] = column
    return M
