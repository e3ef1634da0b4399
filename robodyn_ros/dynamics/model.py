"""RobotModel: the constant description of a serial arm, and the public dynamics API.

The model is immutable once built; every call allocates (inside compiled code) the little workspace
it needs, so one model may serve several threads. Loaders (``dh``, ``urdf``) reduce every convention
to one canonical form, a list of ``Link``: a constant transform from the previous joint frame, then a
motion about or along the new frame's z axis, then the body the joint moves, given in that frame.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from . import crba as _crba
from . import forward as _forward
from . import layout
from . import newton_euler as _ne

REVOLUTE, PRISMATIC = "revolute", "prismatic"
_WITH_FRICTION, _NO_FRICTION = _ne.GRAVITY | _ne.FRICTION, _ne.GRAVITY
_NDARRAY, _FLOAT64 = np.ndarray, np.dtype(np.float64)
_NO_WRENCHES = np.zeros((1, 6))


@dataclasses.dataclass
class Link:
    """One joint and the body it moves, in the canonical frames described in the module docstring."""
    name: str
    joint: str = REVOLUTE
    pre: np.ndarray = dataclasses.field(default_factory=lambda: np.eye(4))
    mass: float = 0.0
    com: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((3, 3)))
    armature: float = 0.0
    viscous: float = 0.0
    coulomb_positive: float = 0.0
    coulomb_negative: float = 0.0
    lower: float = -np.inf
    upper: float = np.inf
    velocity: float = np.inf
    effort: float = np.inf


class ModelError(ValueError):
    """A robot description that cannot describe a physical arm; the message says where and why."""


def _validate(link: Link):
    where = f"link of joint '{link.name}'"
    if link.joint not in (REVOLUTE, PRISMATIC):
        raise ModelError(f"{where}: joint type '{link.joint}' is not revolute or prismatic")
    if not np.isfinite(link.mass) or link.mass < 0.0:
        raise ModelError(f"{where}: mass {link.mass} must be finite and non-negative")
    inertia = np.asarray(link.inertia, dtype=float)
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise ModelError(f"{where}: inertia must be a finite 3x3 matrix")
    if not np.allclose(inertia, inertia.T, rtol=1e-9, atol=1e-12):
        raise ModelError(f"{where}: inertia matrix is not symmetric:\n{inertia}")
    for name in ("armature", "viscous", "coulomb_positive", "coulomb_negative"):
        if getattr(link, name) < 0.0:
            raise ModelError(f"{where}: {name} {getattr(link, name)} must be non-negative")
    if link.lower > link.upper:
        raise ModelError(f"{where}: lower limit {link.lower} exceeds upper limit {link.upper}")
    principal = np.linalg.eigvalsh(inertia)
    if link.mass > 0.0 and (principal.min() < -1e-12 or
                            2.0 * principal.max() > principal.sum() + 1e-9 * max(principal.sum(), 1.0)):
        # Inverse dynamics does not care, a simulation of such a body may: warn, do not refuse.
        warnings.warn(f"{where}: inertia principal moments {principal} violate the triangle inequality "
                      "(not a physical rigid body)", stacklevel=3)


class RobotModel:
    """A serial arm of revolute and prismatic joints. See DESIGN.md for the public API."""

    def __init__(self, links, tip=None, gravity=(0.0, 0.0, -9.81), name="robot"):
        links = [dataclasses.replace(link) for link in links]
        if not links:
            raise ModelError("a robot model needs at least one joint")
        for link in links:
            _validate(link)
        self.name = name
        self.links = tuple(links)
        self.tip = np.eye(4) if tip is None else np.array(tip, dtype=float)
        self.gravity = np.array(gravity, dtype=float)
        if self.gravity.shape != (3,):
            raise ModelError(f"gravity must be a 3-vector, got {gravity!r}")
        self.dof = len(links)
        self.joint_names = [link.name for link in links]
        if len(set(self.joint_names)) != self.dof:
            raise ModelError(f"joint names are not unique: {self.joint_names}")
        self.joint_types = [link.joint for link in links]
        for attr in ("lower", "upper", "armature", "viscous", "coulomb_positive", "coulomb_negative"):
            setattr(self, attr, np.array([getattr(link, attr) for link in links], dtype=float))
        self.velocity_limit = np.array([link.velocity for link in links], dtype=float)
        self.effort_limit = np.array([link.effort for link in links], dtype=float)
        self.params = pack(self.links, self.tip, self.gravity)
        self.params.flags.writeable = False

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_dh(cls, links, convention="standard", gravity=(0.0, 0.0, -9.81), tool=None, name="robot"):
        from .dh import links_from_dh
        canonical, tip = links_from_dh(links, convention, tool)
        return cls(canonical, tip=tip, gravity=gravity, name=name)

    @classmethod
    def from_yaml(cls, path):
        from .dh import model_from_yaml
        return model_from_yaml(path)

    @classmethod
    def from_urdf(cls, path_or_xml, root_link=None, tip_link=None, gravity=(0.0, 0.0, -9.81),
                  xacro_args=None):
        """From a URDF file (a .xacro one expanded with ``xacro_args``, ``name:=value``), URDF XML
        or its bytes, in any declared encoding (robodyn_ros.dynamics.description)."""
        from .urdf import model_from_urdf
        return model_from_urdf(path_or_xml, root_link=root_link, tip_link=tip_link, gravity=gravity,
                               xacro_args=xacro_args)

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
        return RobotModel(self.links[:-1] + (payload,), self.tip, self.gravity, self.name)

    def scaled(self, mass=1.0, friction=1.0, armature=1.0):
        """Scaled inertial and friction parameters: a model mismatch for simulation studies."""
        links = [dataclasses.replace(
            link, mass=link.mass * mass, inertia=link.inertia * mass,
            viscous=link.viscous * friction, coulomb_positive=link.coulomb_positive * friction,
            coulomb_negative=link.coulomb_negative * friction, armature=link.armature * armature)
            for link in self.links]
        return RobotModel(links, self.tip, self.gravity, self.name)

    # ------------------------------------------------------------------ dynamics
    def inverse_dynamics(self, q, qd, qdd, tip_wrench=None, friction=True):
        """Joint forces for the motion (q, qd, qdd) under gravity; ``tip_wrench`` = [f; n] that the
        end-effector exerts on its environment, in the tip frame, moment about the tip origin."""
        mode = _WITH_FRICTION if friction else _NO_FRICTION
        if (tip_wrench is None and type(q) is _NDARRAY and type(qd) is _NDARRAY
                and type(qdd) is _NDARRAY and q.dtype is _FLOAT64 and qd.dtype is _FLOAT64
                and qdd.dtype is _FLOAT64 and q.ndim == 1):
            # the 1 kHz path, every check inline: the compiled kernel checks the sizes itself
            return _ne.rnea_no_wrench(self.params, q, qd, qdd, mode)
        return self._dispatch(_ne.rnea, _ne.rnea_batch, q, qd, qdd, tip_wrench, mode)

    def gravity_torques(self, q):
        """g(q): the joint forces that hold the arm still."""
        zero = np.zeros_like(np.asarray(q, dtype=float))
        return self.inverse_dynamics(q, zero, zero, friction=False)

    def friction_torques(self, qd):
        """Viscous plus Coulomb friction at velocity qd (zero Coulomb force at exactly zero velocity)."""
        qd = np.asarray(qd, dtype=float)
        return (self.viscous * qd + self.coulomb_positive * (qd > 0.0)
                - self.coulomb_negative * (qd < 0.0))

    def coriolis_torques(self, q, qd):
        """C(q, qd) qd by one Newton–Euler pass without gravity and friction."""
        zero = np.zeros_like(np.asarray(q, dtype=float))
        return self._dispatch(_ne.rnea, _ne.rnea_batch, q, qd, zero, None, 0)

    def mass_matrix(self, q, method="crba"):
        """M(q), armature included. ``method="strobe"``: n Newton–Euler passes, for checking."""
        q = np.asarray(q, dtype=float)
        if method == "strobe":
            return _strobe_mass_matrix(self, q)
        if method != "crba":
            raise ValueError(f"unknown mass-matrix method '{method}' (crba, strobe)")
        if q.ndim == 1:
            return _crba.crba(self.params, q)
        return _crba.crba_batch(self.params, self._batch(q)[0])

    def coriolis_matrix(self, q, qd):
        """C(q, qd) with C qd the Coriolis and centrifugal forces and dM/dt - 2C skew-symmetric."""
        from .coriolis import coriolis_matrix
        return coriolis_matrix(self, q, qd)

    def forward_dynamics(self, q, qd, tau, tip_wrench=None, friction=True):
        """qdd = M^-1 (tau - C qd - g - friction - J^T w), by Cholesky."""
        mode = _WITH_FRICTION if friction else _NO_FRICTION
        if (tip_wrench is None and type(q) is _NDARRAY and type(qd) is _NDARRAY
                and type(tau) is _NDARRAY and q.dtype is _FLOAT64 and qd.dtype is _FLOAT64
                and tau.dtype is _FLOAT64 and q.ndim == 1):
            return _forward.forward_dynamics_no_wrench(self.params, q, qd, tau, mode)
        return self._dispatch(_forward.forward_dynamics, _forward.forward_dynamics_batch,
                              q, qd, tau, tip_wrench, mode)

    # ------------------------------------------------------------------ kinematics
    def link_frames(self, q):
        """World poses (4x4) of the n joint frames and, last, of the tip frame."""
        from .kinematics import link_frames
        return link_frames(self, np.asarray(q, dtype=float))

    def jacobian(self, q):
        """Geometric Jacobian (6 x n) of the tip frame: [v; w] in the world frame."""
        from .kinematics import tip_jacobian
        return tip_jacobian(self, np.asarray(q, dtype=float))

    def energy(self, q, qd):
        """(kinetic, potential) energy; kinetic includes the armature, potential is zero at the base."""
        from .kinematics import energy
        return energy(self, np.asarray(q, dtype=float), np.asarray(qd, dtype=float))

    # ------------------------------------------------------------------ argument handling
    def _dispatch(self, single, batch, a, b, c, tip_wrench, mode):
        """Convert the arguments and call the one-state or the batch kernel (which check sizes)."""
        a = np.asarray(a, dtype=float)
        if tip_wrench is not None:
            mode |= _ne.TIP_WRENCH
        if a.ndim == 1:
            b, c = np.asarray(b, dtype=float), np.asarray(c, dtype=float)
            wrench = _ne.NO_WRENCH if tip_wrench is None else self._wrench(tip_wrench, None)
            return single(self.params, a, b, c, wrench, mode)
        a, b, c = self._batch(a, b, c)
        wrench = _NO_WRENCHES if tip_wrench is None else self._wrench(tip_wrench, a.shape[0])
        return batch(self.params, a, b, c, wrench, mode)

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
            return w
        return np.ascontiguousarray(np.broadcast_to(w, (batch, 6)))

    def __repr__(self):
        joints = ", ".join(f"{n}:{t[0].upper()}" for n, t in zip(self.joint_names, self.joint_types))
        return f"RobotModel('{self.name}', dof={self.dof}, joints=[{joints}])"


def combine_bodies(*bodies):
    """(mass, com, inertia about com) of rigid bodies given in one frame, lumped into one."""
    mass = sum(b[0] for b in bodies)
    if mass == 0.0:
        # massless bodies may still carry rotational inertia (the PUMA's link 1: a rotor, 0.35 kg m^2)
        return 0.0, np.zeros(3), sum((np.asarray(b[2], dtype=float) for b in bodies), np.zeros((3, 3)))
    com = sum(b[0] * np.asarray(b[1], dtype=float) for b in bodies) / mass
    inertia = np.zeros((3, 3))
    for m, c, I in bodies:
        d = np.asarray(c, dtype=float) - com
        inertia += np.asarray(I, dtype=float) + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


def pack(links, tip, gravity):
    """The constant parameter array the compiled kernels read (columns: ``layout``)."""
    n = len(links)
    P = np.zeros((n + 1, layout.N_COLUMNS))
    for i, link in enumerate(links):
        row = P[i]
        row[layout.R0:layout.R0 + 9] = link.pre[:3, :3].ravel()
        row[layout.P0:layout.P0 + 3] = link.pre[:3, 3]
        c = np.asarray(link.com, dtype=float)
        # inertia about the joint-frame origin: I_o = I_c + m (c.c 1 - c c^T)
        I_o = np.asarray(link.inertia, dtype=float) + link.mass * (c @ c * np.eye(3) - np.outer(c, c))
        row[layout.MASS] = link.mass
        row[layout.H:layout.H + 3] = link.mass * c
        row[layout.INERTIA:layout.INERTIA + 6] = (I_o[0, 0], I_o[1, 1], I_o[2, 2],
                                           I_o[0, 1], I_o[1, 2], I_o[0, 2])
        row[layout.ARMATURE] = link.armature
        row[layout.VISCOUS] = link.viscous
        row[layout.COULOMB_POS] = link.coulomb_positive
        row[layout.COULOMB_NEG] = link.coulomb_negative
        row[layout.PRISMATIC] = 1.0 if link.joint == PRISMATIC else 0.0
    P[n, 0:9] = tip[:3, :3].ravel()
    P[n, 9:12] = tip[:3, 3]
    P[n, layout.GRAVITY_VECTOR:layout.GRAVITY_VECTOR + 3] = gravity
    return P


def _strobe_mass_matrix(model, q):
    """Column j of M is the Newton–Euler force for qdd = e_j with no velocity, gravity or friction."""
    if q.ndim == 2:
        return np.stack([_strobe_mass_matrix(model, qk) for qk in q])
    n = model.dof
    zero = np.zeros(n)
    M = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        M[:, j] = _ne.rnea(model.params, q, zero, e, _ne.NO_WRENCH, 0)
    return M
