"""Denavit–Hartenberg loaders: standard (Paul; Luh–Walker–Paul, 001/004) and modified (Craig, 003),
from a list of link dicts or from a DH-table YAML file.

Standard DH puts frame i at the far end of link i: F_i = F_{i-1} Rz(theta_i + q_i) Tz(d_i) Tx(a_i) Rx(alpha_i).
The joint moves first, so the canonical joint frame is F_{i-1} Rz(q_i) and the constant rest of the
link, A_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i), becomes the next joint's ``pre`` (and, after the
last joint, part of the tip). The body, given in F_i, is moved into the joint frame through A_i.

Modified DH puts frame i on joint i: F_i = F_{i-1} Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i + q_i) Tz(d_i),
which is already canonical: pre = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i).
"""
import numpy as np
import yaml

from .model import PRISMATIC, REVOLUTE, Link, ModelError, RobotModel
from .transforms import homogeneous, rot_x, rot_z

_KEYS = {"name", "joint", "a", "alpha", "d", "theta", "mass", "com", "inertia", "armature",
         "viscous", "coulomb", "limits"}
_LIMIT_KEYS = {"lower", "upper", "velocity", "effort"}


def inertia_matrix(value, where):
    """3x3 from a 3x3 nested list or from [Ixx, Iyy, Izz, Ixy, Iyz, Ixz] (Robotics Toolbox order)."""
    I = np.asarray(value, dtype=float)
    if I.shape == (6,):
        xx, yy, zz, xy, yz, xz = I
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if I.shape == (3,) :
        return np.diag(I)
    if I.shape != (3, 3):
        raise ModelError(f"{where}: inertia must be 3x3, [Ixx, Iyy, Izz] or "
                         f"[Ixx, Iyy, Izz, Ixy, Iyz, Ixz], got {value!r}")
    return I


def _coulomb(value, where):
    c = np.atleast_1d(np.asarray(value, dtype=float))
    if c.shape == (1,):
        return float(c[0]), float(c[0])
    if c.shape == (2,):
        return float(abs(c[0])), float(abs(c[1]))
    raise ModelError(f"{where}: coulomb must be a magnitude or [for qd > 0, for qd < 0], got {value!r}")


def _link_from_dict(spec, index):
    where = f"link {index + 1} ({spec.get('name', 'unnamed')})"
    if not isinstance(spec, dict):
        raise ModelError(f"{where}: expected a mapping of DH parameters, got {spec!r}")
    unknown = set(spec) - _KEYS
    if unknown:
        raise ModelError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(_KEYS)})")
    joint = spec.get("joint", REVOLUTE)
    if joint not in (REVOLUTE, PRISMATIC):
        raise ModelError(f"{where}: joint must be '{REVOLUTE}' or '{PRISMATIC}', got {joint!r}")
    limits = spec.get("limits") or {}
    if set(limits) - _LIMIT_KEYS:
        raise ModelError(f"{where}: unknown limit keys {sorted(set(limits) - _LIMIT_KEYS)}")
    try:
        values = {k: float(spec.get(k, 0.0)) for k in ("a", "alpha", "d", "theta", "mass", "armature",
                                                       "viscous")}
        com = np.asarray(spec.get("com", (0.0, 0.0, 0.0)), dtype=float)
        coulomb = _coulomb(spec.get("coulomb", 0.0), where)
        inertia = inertia_matrix(spec.get("inertia", np.zeros((3, 3))), where)
        lim = {k: float(limits[k]) for k in limits}
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{where}: {exc}") from None
    if com.shape != (3,):
        raise ModelError(f"{where}: com must be [x, y, z], got {spec.get('com')!r}")
    return Link(name=str(spec.get("name", f"joint_{index + 1}")), joint=joint, mass=values["mass"],
                com=com, inertia=inertia, armature=values["armature"], viscous=values["viscous"],
                coulomb_positive=coulomb[0], coulomb_negative=coulomb[1],
                lower=lim.get("lower", -np.inf), upper=lim.get("upper", np.inf),
                velocity=lim.get("velocity", np.inf), effort=lim.get("effort", np.inf)), values


def links_from_dh(specs, convention="standard", tool=None):
    """Canonical links and tip transform from DH link dicts (keys: doc/dynamics.md, Conventions)."""
    if convention not in ("standard", "modified"):
        raise ModelError(f"convention must be 'standard' or 'modified', got {convention!r}")
    tool = np.eye(4) if tool is None else np.asarray(tool, dtype=float)
    if tool.shape != (4, 4):
        raise ModelError(f"tool must be a 4x4 homogeneous transform, got shape {tool.shape}")
    links, previous = [], np.eye(4)
    for i, spec in enumerate(specs):
        link, v = _link_from_dict(spec, i)
        screw = homogeneous(rot_z(v["theta"]), (0.0, 0.0, v["d"]))
        twist = homogeneous(rot_x(v["alpha"]), (v["a"], 0.0, 0.0))
        if convention == "standard":
            A = screw @ twist       # joint frame -> DH frame i
            link.pre = previous
            link.com = A[:3, :3] @ link.com + A[:3, 3]
            link.inertia = A[:3, :3] @ link.inertia @ A[:3, :3].T
            previous = A
        else:
            link.pre = twist @ screw
        links.append(link)
    tip = (previous if convention == "standard" else np.eye(4)) @ tool
    return links, tip


def model_from_yaml(path):
    """A RobotModel from a DH-table YAML (format: config/puma560_dh.yaml)."""
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: malformed YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("links"), list):
        raise ModelError(f"{path}: expected a mapping with a 'links' list")
    unknown = set(doc) - {"name", "convention", "gravity", "tool", "links"}
    if unknown:
        raise ModelError(f"{path}: unknown top-level keys {sorted(unknown)}")
    try:
        return RobotModel.from_dh(doc["links"], convention=doc.get("convention", "standard"),
                                  gravity=doc.get("gravity", (0.0, 0.0, -9.81)), tool=doc.get("tool"),
                                  name=str(doc.get("name", "robot")))
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None
