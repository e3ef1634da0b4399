"""The one Denavit–Hartenberg parser: standard (Paul; Luh–Walker–Paul, 001/004) and modified (Craig,
003) DH tables, from a list of link dicts or a DH-table YAML file, into the canonical ``Chain``
(``link``) that ``RobotModel`` and the URDF exporter both consume.

Standard DH puts frame i at the far end of link i:
F_i = F_{i-1} Rz(theta_i + q_i) Tz(d_i) Tx(a_i) Rx(alpha_i).
The joint moves first, so the canonical joint frame is F_{i-1} Rz(q_i) and the constant rest of the
link, A_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i), becomes the next joint's ``pre`` (and, after the
last joint, part of the tip). The body, given in F_i, is moved into the joint frame through A_i.

Modified DH puts frame i on joint i: F_i = F_{i-1} Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i + q_i) Tz(d_i),
which is already canonical: pre = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i).

(Rz and Tz commute, so a prismatic joint, Tz(d_i + q_i), splits the same way.)

The format (config/puma560_dh.yaml): top-level ``name``, ``convention``, ``gravity``, ``tool`` (4x4)
and ``links``; per link ``name``, ``joint`` (revolute, prismatic), ``a``, ``alpha``, ``d``, ``theta``,
``mass``, ``com`` (in DH frame i), ``inertia`` (about the centre of mass, in DH frame i: 3x3,
[Ixx, Iyy, Izz, Ixy, Iyz, Ixz] or [Ixx, Iyy, Izz]), ``armature``, ``viscous``, ``coulomb`` (a
magnitude, or [for qd > 0, for qd < 0]) and ``limits`` (``lower``, ``upper``, ``velocity``,
``effort``), and ``shape``, which the dynamics ignore: the link's outline for a simulator's contacts
and a viewer (``urdf_export``). Every value is a number: a string is refused, not converted. An unknown key is refused.
Errors are ``ModelError``s that name the file, the link (numbered from 1) and its joint.
"""
import numpy as np
import yaml

from .link import Chain, Link, ModelError, number, numbers_array
from .transforms import homogeneous, rot_x, rot_z

CONVENTIONS = ("standard", "modified")
TABLE_KEYS = ("name", "convention", "gravity", "tool", "links")
LINK_KEYS = ("name", "joint", "a", "alpha", "d", "theta", "mass", "com", "inertia", "armature", "viscous",
             "coulomb", "limits", "shape")
LIMIT_KEYS = ("lower", "upper", "velocity", "effort")
GRAVITY = (0.0, 0.0, -9.81)


def link_where(index, name):
    """How errors name link ``index`` (from 0) of a table."""
    return f"link {index + 1}, joint '{name}'"


def inertia_matrix(value, where):
    """3x3 from a 3x3 nested list, [Ixx, Iyy, Izz, Ixy, Iyz, Ixz] (Robotics Toolbox order) or the
    principal moments [Ixx, Iyy, Izz]."""
    I = numbers_array(value, where)
    if I.shape == (6,):
        xx, yy, zz, xy, yz, xz = I
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if I.shape == (3,):
        return np.diag(I)
    if I.shape != (3, 3):
        raise ModelError(f"{where}: inertia must be 3x3, [Ixx, Iyy, Izz] or "
                         f"[Ixx, Iyy, Izz, Ixy, Iyz, Ixz], got {value!r}")
    return I


def _coulomb(value, where):
    """(for qd > 0, for qd < 0) from one magnitude or a pair (whose signs are dropped)."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        c = number(value, where)
        return c, c
    c = numbers_array(value, where)
    if c.shape != (2,):
        raise ModelError(f"{where}: coulomb must be a magnitude or [for qd > 0, for qd < 0], got {value!r}")
    return abs(float(c[0])), abs(float(c[1]))


def _unknown(given, known, where, what="keys"):
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ModelError(f"{where}: unknown {what} {unknown} (known: {list(known)})")


def _parse_link(spec, index, convention, previous):
    """(Link, A): the canonical link of DH row ``spec`` and, for standard DH, its A_i."""
    if not isinstance(spec, dict):
        raise ModelError(f"link {index + 1}: expected a mapping of DH parameters, got {spec!r}")
    name = str(spec.get("name", f"joint_{index + 1}"))
    where = link_where(index, name)
    _unknown(spec, LINK_KEYS, where)
    limits = spec.get("limits") or {}
    if not isinstance(limits, dict):
        raise ModelError(f"{where}: limits must be a mapping of {list(LIMIT_KEYS)}, got {limits!r}")
    _unknown(limits, LIMIT_KEYS, f"{where}: limits", "limit keys")
    a, alpha, d, theta = (number(spec.get(k, 0.0), f"{where}: {k}") for k in ("a", "alpha", "d", "theta"))
    com = numbers_array(spec.get("com", (0.0, 0.0, 0.0)), f"{where}: com")
    if com.shape != (3,):
        raise ModelError(f"{where}: com must be [x, y, z], got {spec.get('com')!r}")
    inertia = inertia_matrix(spec.get("inertia", np.zeros((3, 3))), f"{where}: inertia")
    coulomb = _coulomb(spec.get("coulomb", 0.0), f"{where}: coulomb")
    screw, twist = _screw_and_twist(a, alpha, d, theta)
    if convention == "standard":
        A = screw @ twist       # joint frame -> DH frame i
        pre, com, inertia = previous, A[:3, :3] @ com + A[:3, 3], A[:3, :3] @ inertia @ A[:3, :3].T
    else:
        A, pre = None, twist @ screw
    try:
        link = Link(name=name, joint=spec.get("joint", "revolute"), pre=pre, mass=spec.get("mass", 0.0),
                    com=com, inertia=inertia, armature=spec.get("armature", 0.0),
                    viscous=spec.get("viscous", 0.0), coulomb_positive=coulomb[0],
                    coulomb_negative=coulomb[1], **{k: limits[k] for k in limits})
    except ModelError as exc:     # the link's own checks name the joint; add the row
        raise ModelError(f"link {index + 1}, {exc}") from None
    return link, A


def _screw_and_twist(a, alpha, d, theta):
    return homogeneous(rot_z(theta), (0.0, 0.0, d)), homogeneous(rot_x(alpha), (a, 0.0, 0.0))


def dh_frame_in_joint_frame(spec, convention):
    """DH frame i in the canonical joint frame i of the link dict ``spec`` (``com`` and ``shape``
    are given in the former): A_i for standard DH, the identity for modified DH (frame i is the
    joint frame)."""
    if convention != "standard":
        return np.eye(4)
    screw, twist = _screw_and_twist(*(float(spec.get(k, 0.0)) for k in ("a", "alpha", "d", "theta")))
    return screw @ twist


def chain_from_dh(specs, convention="standard", tool=None, gravity=GRAVITY, name="robot"):
    """The canonical chain of DH link dicts (keys: module docstring)."""
    if convention not in CONVENTIONS:
        raise ModelError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    tool = np.eye(4) if tool is None else numbers_array(tool, "tool")
    if tool.shape != (4, 4):
        raise ModelError(f"tool must be a 4x4 homogeneous transform, got shape {tool.shape}")
    links, previous = [], np.eye(4)
    for i, spec in enumerate(specs):
        link, A = _parse_link(spec, i, convention, previous)
        links.append(link)
        if convention == "standard":
            previous = A
    tip = (previous if convention == "standard" else np.eye(4)) @ tool
    return Chain(tuple(links), tip, gravity, name)


def chain_from_table(doc, source=None):
    """The canonical chain of a DH table as ``yaml.safe_load`` returns it; errors name ``source``."""
    try:
        if not isinstance(doc, dict) or not isinstance(doc.get("links"), list):
            raise ModelError("expected a mapping with a 'links' list")
        _unknown(doc, TABLE_KEYS, "the table", "top-level keys")
        return chain_from_dh(doc["links"], convention=doc.get("convention", "standard"),
                             tool=doc.get("tool"), gravity=doc.get("gravity", GRAVITY),
                             name=doc.get("name", "robot"))
    except ModelError as exc:
        if source is None:
            raise
        raise ModelError(f"{source}: {exc}") from None


def load_table(path):
    """The YAML document of a DH-table file, as ``chain_from_table`` takes it."""
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the DH table: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: malformed YAML: {exc}") from None


def read_table(path):
    """The canonical chain of a DH-table YAML file."""
    return chain_from_table(load_table(path), source=path)
