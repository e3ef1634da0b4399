"""The canonical form every loader reduces a serial arm to, frozen and validated at construction.

A ``Link`` is one joint and the body it moves: a constant transform ``pre`` from the previous joint
frame, then a motion about (revolute) or along (prismatic) the new frame's z axis, then the body,
given in that frame. A ``Chain`` is the links, the tip frame in the last joint frame, gravity and,
from a URDF, where each of its links sits (``frames``; module ``frames`` resolves the names).
Both copy what they are given into read-only arrays, so nothing the caller still holds can change
them, and neither can be changed afterwards: derive a variant with ``dataclasses.replace`` (which
validates again) or ``RobotModel.with_payload`` / ``scaled``.
"""
from __future__ import annotations

import dataclasses
import numbers
import types
import warnings

import numpy as np

REVOLUTE, PRISMATIC = "revolute", "prismatic"
JOINT_KINDS = (REVOLUTE, PRISMATIC)


class ModelError(ValueError):
    """A robot description that cannot describe a physical arm; the message says where and why."""


def number(value, where):
    """A float from a real number; a string (PyYAML 1.1 reads ``2e-1``, with no dot, as one) or a
    boolean is refused, not converted."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        hint = (" (a string: YAML 1.1 reads an exponent without a dot as text, write e.g. 2.0e-1)"
                if isinstance(value, str) else "")
        raise ModelError(f"{where}: expected a number, got {value!r}{hint}")
    return float(value)


def numbers_array(value, where):
    """A float array from nested lists (or an array) of real numbers, refusing strings and booleans."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return value.astype(float)
    if isinstance(value, (list, tuple, np.ndarray)):
        items = [numbers_array(v, where) for v in value]
        try:
            return np.array(items, dtype=float)
        except ValueError:
            raise ModelError(f"{where}: rows of different lengths in {value!r}") from None
    return np.array(number(value, where))


def _frozen(array):
    array.flags.writeable = False
    return array


@dataclasses.dataclass(frozen=True, eq=False)
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
    # the Coulomb law's shape: 0 the sign of q̇, v_s > 0 the smooth tanh(q̇ / v_s) (rad/s or m/s);
    # and a constant friction offset (N m or N): an identified friction file's forms
    # (dynamics.friction), which no URDF carries
    coulomb_tanh: float = 0.0
    friction_offset: float = 0.0
    lower: float = -np.inf
    upper: float = np.inf
    velocity: float = np.inf
    effort: float = np.inf

    def __post_init__(self):
        where = f"joint '{self.name}'"
        set_ = object.__setattr__     # the one place a frozen Link is written: its construction
        set_(self, "name", str(self.name))
        if self.joint not in JOINT_KINDS:
            raise ModelError(f"{where}: joint must be one of {JOINT_KINDS}, got {self.joint!r}")
        set_(self, "joint", str(self.joint))
        for field, shape, text in (("pre", (4, 4), "a 4x4 homogeneous transform"),
                                   ("com", (3,), "[x, y, z]"), ("inertia", (3, 3), "a 3x3 matrix")):
            value = numbers_array(getattr(self, field), f"{where}: {field}")   # always a copy
            if value.shape != shape or not np.all(np.isfinite(value)):
                raise ModelError(f"{where}: {field} must be {text} of finite numbers, "
                                 f"got {getattr(self, field)!r}")
            set_(self, field, _frozen(value))
        for field in ("mass", "armature", "viscous", "coulomb_positive", "coulomb_negative",
                      "coulomb_tanh", "friction_offset", "lower", "upper", "velocity", "effort"):
            set_(self, field, number(getattr(self, field), f"{where}: {field}"))
        _check_body(self, where)


def _check_body(link, where):
    if link.mass < 0.0:
        raise ModelError(f"{where}: negative mass {link.mass}")
    if not np.isfinite(link.mass):
        raise ModelError(f"{where}: mass {link.mass} is not finite")
    if not np.allclose(link.inertia, link.inertia.T, rtol=1e-9, atol=1e-12):
        raise ModelError(f"{where}: inertia matrix is not symmetric:\n{link.inertia}")
    for name in ("armature", "viscous", "coulomb_positive", "coulomb_negative", "coulomb_tanh"):
        if not getattr(link, name) >= 0.0:
            raise ModelError(f"{where}: {name} {getattr(link, name)} must be non-negative")
    if not (np.isfinite(link.coulomb_tanh) and np.isfinite(link.friction_offset)):
        raise ModelError(f"{where}: coulomb_tanh and friction_offset must be finite, got "
                         f"{link.coulomb_tanh} and {link.friction_offset}")
    if link.lower > link.upper:
        raise ModelError(f"{where}: lower limit {link.lower} exceeds upper limit {link.upper}")
    principal = np.linalg.eigvalsh(link.inertia)
    if link.mass > 0.0 and (principal.min() < -1e-12 or
                            2.0 * principal.max() > principal.sum() + 1e-9 * max(principal.sum(), 1.0)):
        # Inverse dynamics does not care, a simulation of such a body may: warn, do not refuse.
        warnings.warn(f"{where}: inertia principal moments {principal} violate the triangle inequality "
                      "(not a physical rigid body)", stacklevel=4)


@dataclasses.dataclass(frozen=True, eq=False)
class Chain:
    """A serial arm as every loader produces it and ``RobotModel`` is built from: at least one link,
    unique joint names, the tip frame in the last joint frame, gravity in the base frame, and
    ``frames``: link name -> (index of the joint whose body the link rides on, -1 the base; the
    link's pose in that joint's frame), the URDF's links (none from a DH table)."""
    links: tuple
    tip: np.ndarray = None
    gravity: np.ndarray = (0.0, 0.0, -9.81)
    name: str = "robot"
    frames: dict = None

    def __post_init__(self):
        set_ = object.__setattr__
        links = tuple(self.links)
        if not links:
            raise ModelError("a robot model needs at least one joint")
        if not all(isinstance(link, Link) for link in links):
            raise ModelError("the links of a chain must be Link objects")
        names = [link.name for link in links]
        if len(set(names)) != len(names):
            raise ModelError(f"joint names are not unique: {names}")
        tip = numbers_array(np.eye(4) if self.tip is None else self.tip, "tip")
        if tip.shape != (4, 4) or not np.all(np.isfinite(tip)):
            raise ModelError(f"tip must be a 4x4 homogeneous transform, got {self.tip!r}")
        gravity = numbers_array(self.gravity, "gravity")
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ModelError(f"gravity must be a 3-vector, got {self.gravity!r}")
        set_(self, "links", links)
        set_(self, "tip", _frozen(tip))
        set_(self, "gravity", _frozen(gravity))
        set_(self, "name", str(self.name))
        set_(self, "frames", types.MappingProxyType(
            {name: _placement(name, where, len(links)) for name, where in (self.frames or {}).items()}))


def _placement(name, placement, n):
    """A link frame's (joint index, read-only 4x4 pose), checked."""
    where = f"link frame {name!r}"
    if not isinstance(name, str) or not name:
        raise ModelError(f"{where}: a link frame's name must be a non-empty string")
    try:
        joint, pose = placement
    except (TypeError, ValueError):
        raise ModelError(f"{where}: expected (joint index, 4x4 pose), got {placement!r}") from None
    if isinstance(joint, (bool, np.bool_)) or not isinstance(joint, numbers.Integral) or not -1 <= joint < n:
        raise ModelError(f"{where}: joint index must be -1 (the base) to {n - 1}, got {joint!r}")
    pose = numbers_array(pose, f"{where}: pose")
    if pose.shape != (4, 4) or not np.all(np.isfinite(pose)):
        raise ModelError(f"{where}: pose must be a 4x4 homogeneous transform, got {placement[1]!r}")
    return int(joint), _frozen(pose)


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
