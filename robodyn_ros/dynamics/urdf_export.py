"""DH table (``config/*_dh.yaml``) -> URDF string, from the canonical chain the DH parser (``dh``) gives.

URDF puts a joint's motion at the start of its child link's frame, which is what a canonical joint
frame is: the URDF link ``link_i`` is joint frame i (not DH frame i), joint i's origin is the link's
``pre``, the body is written as it is in that frame, and the tip frame, which includes the optional
``tool`` transform, becomes a fixed joint to ``tool0``. (For modified DH the joint frame is the DH
frame itself; for standard DH, ``dh`` has moved each body from DH frame i into it.)

A link's ``shape`` in the table, ``{radius: r, from: [x, y, z], to: [x, y, z]}`` with the points in
DH frame i (as ``com``), becomes a cylinder of that radius between them, as the link's <visual> and
<collision>: what a simulator's contacts and a viewer see, and nothing the dynamics read.

URDF has no armature and only symmetric Coulomb friction: ``<dynamics>`` carries the viscous
coefficient and the mean Coulomb magnitude, and a top-level ``<robodyn_ros>`` element (ignored by
urdfdom) carries armature and both Coulomb magnitudes per joint. URDF requires every limit, so a
table whose link lacks one is refused.
"""
import xml.etree.ElementTree as ET

import numpy as np

from .dh import LIMIT_KEYS, chain_from_table, dh_frame_in_joint_frame, link_where
from .link import ModelError
from .transforms import homogeneous, matrix_to_rpy, rotation_taking_z_to

GZ_CONTROLLERS_YAML = "$(find robodyn_ros)/config/ros2_controllers.yaml"


def _fmt(x):
    # repr is the shortest string that round-trips (nothing is lost); + 0.0 turns -0.0 into 0.0.
    return repr(float(x) + 0.0)


def _vec(values):
    return " ".join(_fmt(v) for v in values)


def _sub(parent, tag, **attrs):
    return ET.SubElement(parent, tag, {k: str(v) for k, v in attrs.items()})


def _origin(parent, t):
    _sub(parent, "origin", xyz=_vec(t[:3, 3]), rpy=_vec(matrix_to_rpy(t[:3, :3])))


def _fixed_joint(robot, name, parent, child, t):
    joint = _sub(robot, "joint", name=name, type="fixed")
    _origin(joint, t)
    _sub(joint, "parent", link=parent)
    _sub(joint, "child", link=child)


def _inertial(link_elem, link):
    if link.mass == 0.0 and not link.inertia.any():
        return  # massless: no <inertial> (an inertial-less link is massless to every parser)
    # A zero mass with a non-zero inertia is kept as it is (PUMA link 1: rotor-like 0.35 kg m^2).
    i = link.inertia
    inertial = _sub(link_elem, "inertial")
    _sub(inertial, "origin", xyz=_vec(link.com), rpy="0.0 0.0 0.0")
    _sub(inertial, "mass", value=_fmt(link.mass))
    _sub(inertial, "inertia", ixx=_fmt(i[0, 0]), ixy=_fmt(i[0, 1]), ixz=_fmt(i[0, 2]),
         iyy=_fmt(i[1, 1]), iyz=_fmt(i[1, 2]), izz=_fmt(i[2, 2]))


def _shape(link_elem, spec, convention, where):
    """The cylinder of a link's ``shape`` (module docstring) as its <visual> and <collision>."""
    shape = spec.get("shape")
    if shape is None:
        return
    try:
        if sorted(shape) != ["from", "radius", "to"]:
            raise ValueError
        radius = float(shape["radius"])
        ends = np.array([shape["from"], shape["to"]], dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: shape must be {{radius: r, from: [x, y, z], to: [x, y, z]}}, "
                         f"got {shape!r}") from None
    length = float(np.linalg.norm(ends[1] - ends[0])) if ends.shape == (2, 3) else 0.0
    if not (np.isfinite(radius) and radius > 0.0 and np.all(np.isfinite(ends)) and length > 0.0):
        raise ModelError(f"{where}: shape needs a finite radius > 0 and two distinct finite "
                         f"points, got {shape!r}")
    A = dh_frame_in_joint_frame(spec, convention)
    a, b = (A[:3, :3] @ p + A[:3, 3] for p in ends)
    pose = homogeneous(rotation_taking_z_to((b - a) / length), (a + b) / 2.0)
    for tag in ("visual", "collision"):
        element = _sub(link_elem, tag)
        _origin(element, pose)
        _sub(_sub(element, "geometry"), "cylinder", radius=_fmt(radius), length=_fmt(length))


def _ros2_control(robot, name, links, gazebo):
    rc = _sub(robot, "ros2_control", name=name, type="system")
    hardware = _sub(rc, "hardware")
    plugin = "gz_ros2_control/GazeboSimSystem" if gazebo else "mock_components/GenericSystem"
    ET.SubElement(hardware, "plugin").text = plugin
    for link in links:
        joint = _sub(rc, "joint", name=link.name)
        command = _sub(joint, "command_interface", name="effort")
        effort = link.effort
        ET.SubElement(command, "param", name="min").text = _fmt(-effort)
        ET.SubElement(command, "param", name="max").text = _fmt(effort)
        _sub(joint, "state_interface", name="position")
        _sub(joint, "state_interface", name="velocity")


def dh_to_urdf(spec, *, ros2_control=True, gazebo=False, source=None):
    """URDF XML for a DH-table spec (see config/puma560_dh.yaml for the format).

    ``source`` names the YAML in the header comment and in errors.  ``gazebo`` fixes the base to a
    ``world`` link and uses the gz_ros2_control hardware and plugin (controllers from
    config/ros2_controllers.yaml).
    """
    chain = chain_from_table(spec, source)
    for i, link in enumerate(chain.links):
        lacking = [k for k in LIMIT_KEYS if not np.isfinite(getattr(link, k))]
        if lacking:  # URDF requires effort and velocity; position limits we will not invent either
            raise ModelError(f"{source or 'the table'}: {link_where(i, link.name)}: limits lack a finite "
                             f"{lacking}")
    links = chain.links

    robot = ET.Element("robot", name=chain.name)
    if gazebo:  # a fixed joint to "world" is how Gazebo welds a URDF model to the ground
        _sub(robot, "link", name="world")
        _fixed_joint(robot, "world_to_base", "world", "base_link", np.eye(4))
    _sub(robot, "link", name="base_link")
    parent = "base_link"
    convention = spec.get("convention", "standard")
    for i, (link, row) in enumerate(zip(links, spec["links"]), start=1):
        child = f"link_{i}"
        link_elem = _sub(robot, "link", name=child)
        _inertial(link_elem, link)
        _shape(link_elem, row, convention, f"{source or 'the table'}: {link_where(i - 1, link.name)}")
        joint = _sub(robot, "joint", name=link.name, type=link.joint)
        _origin(joint, link.pre)
        _sub(joint, "parent", link=parent)
        _sub(joint, "child", link=child)
        _sub(joint, "axis", xyz="0 0 1")
        _sub(joint, "limit", lower=_fmt(link.lower), upper=_fmt(link.upper),
             effort=_fmt(link.effort), velocity=_fmt(link.velocity))
        _sub(joint, "dynamics", damping=_fmt(link.viscous),
             friction=_fmt((link.coulomb_positive + link.coulomb_negative) / 2.0))
        parent = child
    _sub(robot, "link", name="tool0")
    _fixed_joint(robot, "tool0_joint", parent, "tool0", chain.tip)

    ext = _sub(robot, "robodyn_ros")
    for link in links:
        _sub(ext, "joint", name=link.name, armature=_fmt(link.armature),
             coulomb_positive=_fmt(link.coulomb_positive), coulomb_negative=_fmt(link.coulomb_negative))
    if ros2_control:
        _ros2_control(robot, chain.name, links, gazebo)
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

