"""DH table (the dict a ``config/*_dh.yaml`` gives) -> URDF string.

URDF puts a joint's motion at the start of its child link's frame, so the URDF link ``link_i`` is the
*joint frame* of joint i, not the DH frame i:

* standard DH (Paul):  frame_i = frame_{i-1} Rz(q_i) . Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i); the
  constant part after the motion moves into the origin of joint i+1, and link i's inertial is
  re-expressed from DH frame i into the joint frame;
* modified DH (Craig): frame_i = frame_{i-1} . Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i) Rz(q_i);
  the constant part is joint i's origin and the URDF link frame is the DH frame itself.

(Rz and Tz commute, so a prismatic Tz(d_i + q_i) splits the same way.) The last DH frame, followed by
the optional ``tool`` transform, becomes a fixed joint to ``tool0``.

URDF has no armature and only symmetric Coulomb friction: ``<dynamics>`` carries the viscous
coefficient and the mean Coulomb magnitude, and a top-level ``<robodyn_ros>`` element (ignored by
urdfdom) carries armature and both Coulomb magnitudes per joint.
"""
import argparse
import math
import sys
import xml.etree.ElementTree as ET

import numpy as np
import yaml

CONVENTIONS = ("standard", "modified")
JOINT_TYPES = ("revolute", "prismatic")
LIMIT_KEYS = ("lower", "upper", "velocity", "effort")
GZ_CONTROLLERS_YAML = "$(find robodyn_ros)/config/ros2_controllers.yaml"


def _num(value, where):
    # bool is an int subclass, and PyYAML reads "200e-6" (no dot) as a string: refuse both.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _fmt(x):
    # repr is the shortest string that round-trips (nothing is lost); + 0.0 turns -0.0 into 0.0.
    return repr(float(x) + 0.0)


def _vec(values):
    return " ".join(_fmt(v) for v in values)


def _rot_x(angle):
    c, s = math.cos(angle), math.sin(angle)
    t = np.eye(4)
    t[1:3, 1:3] = [[c, -s], [s, c]]
    return t


def _rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    t = np.eye(4)
    t[0:2, 0:2] = [[c, -s], [s, c]]
    return t


def _trans(x, y, z):
    t = np.eye(4)
    t[:3, 3] = (x, y, z)
    return t


def _rpy(r):
    """URDF roll-pitch-yaw of a rotation matrix: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cos_pitch = math.hypot(r[0, 0], r[1, 0])
    pitch = math.atan2(-r[2, 0], cos_pitch)
    if cos_pitch > 1e-12:
        return math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])
    # Gimbal lock: only roll - yaw (or roll + yaw) is defined; put it all in roll.
    return math.atan2(-r[1, 2], r[1, 1]), pitch, 0.0


def _inertia_matrix(value, where):
    shape_error = f"{where}: expected [Ixx, Iyy, Izz, Ixy, Iyz, Ixz] or a symmetric 3x3 list"
    if len(value) == 3 and all(isinstance(row, (list, tuple)) and len(row) == 3 for row in value):
        a = np.array([[_num(x, where) for x in row] for row in value])
        if not np.array_equal(a, a.T):  # URDF keeps six numbers: an asymmetric one would be cut
            raise ValueError(shape_error)
        return a
    if len(value) != 6:
        raise ValueError(shape_error)
    ixx, iyy, izz, ixy, iyz, ixz = (_num(x, where) for x in value)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _coulomb(value, where):
    values = value if isinstance(value, (list, tuple)) else [value]
    if len(values) not in (1, 2):
        raise ValueError(f"{where}: expected one magnitude or [for qd>0, for qd<0]")
    mags = [abs(_num(v, where)) for v in values]
    return mags[0], mags[-1]


def _placement(link, convention):
    """(before, after): the constant transforms on either side of the joint motion Rz(q) / Tz(q)."""
    a, alpha, d, theta = (link[k] for k in ("a", "alpha", "d", "theta"))
    if convention == "standard":
        return np.eye(4), _rot_z(theta) @ _trans(0, 0, d) @ _trans(a, 0, 0) @ _rot_x(alpha)
    return _rot_x(alpha) @ _trans(a, 0, 0) @ _rot_z(theta) @ _trans(0, 0, d), np.eye(4)


def _parse_link(i, raw):
    where = f"links[{i}] ({raw.get('name', '?')})"
    if raw.get("joint") not in JOINT_TYPES:
        raise ValueError(f"{where}: joint must be one of {JOINT_TYPES}, got {raw.get('joint')!r}")
    limits = raw.get("limits") or {}
    missing = [k for k in LIMIT_KEYS if k not in limits]
    if missing:  # URDF requires effort and velocity; position limits we will not invent either
        raise ValueError(f"{where}: limits lack {missing}")
    link = {
        "name": raw["name"],
        "joint": raw["joint"],
        **{k: _num(raw.get(k, 0.0), f"{where}.{k}") for k in
           ("a", "alpha", "d", "theta", "mass", "armature", "viscous")},
        "com": np.array([_num(x, f"{where}.com") for x in raw.get("com", [0.0, 0.0, 0.0])]),
        "inertia": _inertia_matrix(raw.get("inertia", [0.0] * 6), f"{where}.inertia"),
        "coulomb": _coulomb(raw.get("coulomb", 0.0), f"{where}.coulomb"),
        "limits": {k: _num(limits[k], f"{where}.limits.{k}") for k in LIMIT_KEYS},
    }
    if link["mass"] < 0:
        raise ValueError(f"{where}: negative mass {link['mass']}")
    return link


def _sub(parent, tag, **attrs):
    return ET.SubElement(parent, tag, {k: str(v) for k, v in attrs.items()})


def _origin(parent, t):
    _sub(parent, "origin", xyz=_vec(t[:3, 3]), rpy=_vec(_rpy(t[:3, :3])))


def _fixed_joint(robot, name, parent, child, t):
    joint = _sub(robot, "joint", name=name, type="fixed")
    _origin(joint, t)
    _sub(joint, "parent", link=parent)
    _sub(joint, "child", link=child)


def _inertial(link_elem, link, dh_in_link):
    """Link inertial re-expressed from its DH frame into the URDF link frame (dh_in_link)."""
    if link["mass"] == 0.0 and not link["inertia"].any():
        return  # massless: no <inertial> (an inertial-less link is massless to every parser)
    # A zero mass with a non-zero inertia is kept as it is (PUMA link 1: rotor-like 0.35 kg m^2).
    rot = dh_in_link[:3, :3]
    com = rot @ link["com"] + dh_in_link[:3, 3]
    i = rot @ link["inertia"] @ rot.T
    inertial = _sub(link_elem, "inertial")
    _sub(inertial, "origin", xyz=_vec(com), rpy="0.0 0.0 0.0")
    _sub(inertial, "mass", value=_fmt(link["mass"]))
    _sub(inertial, "inertia", ixx=_fmt(i[0, 0]), ixy=_fmt(i[0, 1]), ixz=_fmt(i[0, 2]),
         iyy=_fmt(i[1, 1]), iyz=_fmt(i[1, 2]), izz=_fmt(i[2, 2]))


def _ros2_control(robot, name, links, gazebo):
    rc = _sub(robot, "ros2_control", name=name, type="system")
    hardware = _sub(rc, "hardware")
    plugin = "gz_ros2_control/GazeboSimSystem" if gazebo else "mock_components/GenericSystem"
    ET.SubElement(hardware, "plugin").text = plugin
    for link in links:
        joint = _sub(rc, "joint", name=link["name"])
        command = _sub(joint, "command_interface", name="effort")
        effort = link["limits"]["effort"]
        ET.SubElement(command, "param", name="min").text = _fmt(-effort)
        ET.SubElement(command, "param", name="max").text = _fmt(effort)
        _sub(joint, "state_interface", name="position")
        _sub(joint, "state_interface", name="velocity")


def dh_to_urdf(spec, *, ros2_control=True, gazebo=False, source=None):
    """URDF XML for a DH-table spec (see config/puma560_dh.yaml for the format).

    ``source`` names the YAML in the header comment.  ``gazebo`` fixes the base to a ``world`` link
    and uses the gz_ros2_control hardware and plugin (controllers from config/ros2_controllers.yaml).
    """
    convention = spec.get("convention", "standard")
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    links = [_parse_link(i, raw) for i, raw in enumerate(spec.get("links") or [])]
    if not links:
        raise ValueError("spec has no links")
    tool = np.array(spec.get("tool", np.eye(4)), dtype=float)
    if tool.shape != (4, 4):
        raise ValueError("tool must be a 4x4 homogeneous transform")

    robot = ET.Element("robot", name=spec["name"])
    if gazebo:  # a fixed joint to "world" is how Gazebo welds a URDF model to the ground
        _sub(robot, "link", name="world")
        _fixed_joint(robot, "world_to_base", "world", "base_link", np.eye(4))
    _sub(robot, "link", name="base_link")
    parent, after_prev = "base_link", np.eye(4)
    for i, link in enumerate(links, start=1):
        before, after = _placement(link, convention)
        child = f"link_{i}"
        link_elem = _sub(robot, "link", name=child)
        _inertial(link_elem, link, after)
        joint = _sub(robot, "joint", name=link["name"], type=link["joint"])
        _origin(joint, after_prev @ before)
        _sub(joint, "parent", link=parent)
        _sub(joint, "child", link=child)
        _sub(joint, "axis", xyz="0 0 1")
        lim = link["limits"]
        _sub(joint, "limit", lower=_fmt(lim["lower"]), upper=_fmt(lim["upper"]),
             effort=_fmt(lim["effort"]), velocity=_fmt(lim["velocity"]))
        _sub(joint, "dynamics", damping=_fmt(link["viscous"]),
             friction=_fmt(sum(link["coulomb"]) / 2.0))
        parent, after_prev = child, after
    _sub(robot, "link", name="tool0")
    _fixed_joint(robot, "tool0_joint", parent, "tool0", after_prev @ tool)

    ext = _sub(robot, "robodyn_ros")
    for link in links:
        _sub(ext, "joint", name=link["name"], armature=_fmt(link["armature"]),
             coulomb_positive=_fmt(link["coulomb"][0]), coulomb_negative=_fmt(link["coulomb"][1]))
    if ros2_control:
        _ros2_control(robot, spec["name"], links, gazebo)
    if gazebo:
        plugin = _sub(_sub(robot, "gazebo"), "plugin", filename="gz_ros2_control-system",
                      name="gz_ros2_control::GazeboSimROS2ControlPlugin")
        ET.SubElement(plugin, "parameters").text = GZ_CONTROLLERS_YAML

    ET.indent(robot, space="  ")
    # No "--" inside an XML comment, hence the spelled-out option.
    header = (f"<!-- Generated by robodyn_ros.dynamics.urdf_export from {source or 'a DH table'}"
              f"{' with the gazebo option' if gazebo else ''}. Do not edit: change the YAML and "
              f"regenerate with robodyn-ros urdf-from-dh. -->")
    return f'<?xml version="1.0"?>\n{header}\n{ET.tostring(robot, encoding="unicode")}\n'


def main(argv=None):
    """``robodyn-ros urdf-from-dh config/X.yaml [--gazebo] [-o out.urdf]``"""
    parser = argparse.ArgumentParser(prog="robodyn-ros urdf-from-dh",
                                     description="Write the URDF of a DH-table YAML.")
    parser.add_argument("yaml", help="DH-table YAML, e.g. config/puma560_dh.yaml")
    parser.add_argument("--gazebo", action="store_true",
                        help="gz_ros2_control hardware and plugin, base fixed to 'world'")
    parser.add_argument("--no-ros2-control", dest="ros2_control", action="store_false",
                        help="leave out the <ros2_control> block")
    parser.add_argument("-o", "--output", help="output file (default: standard output)")
    args = parser.parse_args(argv)
    with open(args.yaml, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    urdf = dh_to_urdf(spec, ros2_control=args.ros2_control, gazebo=args.gazebo, source=args.yaml)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(urdf)
    else:
        sys.stdout.write(urdf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
