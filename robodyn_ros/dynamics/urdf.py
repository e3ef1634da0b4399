"""URDF loader, parsed with urdfdom-py (``urdf_parser_py``), the parser ROS itself ships.

The chain runs from ``root_link`` to ``tip_link``; without one, to the single leaf link or, among
several (a ROS-Industrial description's ``base``, ``tool0``, ``ft_frame``, ...), to its tool frame
``tool0``, else ``flange`` (``TOOL_FRAMES``), said in a one-line ``TipChosen`` warning. Every link
hanging off a chain link through fixed
joints (a flange, a gripper, also beyond the tip) is lumped into that chain link's body; branches off
the chain through movable joints are left out with a warning; a link with no <inertial> is massless.
A joint about any unit axis becomes a joint about z by turning its frame (``Q e_z = axis``). The
model keeps where every link the chain carries sits (``Chain.frames``: the link's own frame, not
turned), so that frames are named by their links (module ``frames``).

URDF has no rotor inertia and only symmetric Coulomb friction, so both may come from an extension
block that URDF parsers ignore:

    <robodyn_ros>
      <joint name="joint_1" armature="0.784" coulomb_positive="24.73" coulomb_negative="27.23"/>
    </robodyn_ros>
"""
import io
import warnings
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr
from typing import NamedTuple

import numpy as np

from .description import DescriptionError, read_description
from .link import PRISMATIC, REVOLUTE, Chain, Link, ModelError, combine_bodies
from .transforms import homogeneous, rotation_taking_z_to, rpy_to_matrix

_MOVABLE = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
# the tool frames of ROS-Industrial's serial-manipulator conventions, in the order a tip is taken
TOOL_FRAMES = ("tool0", "flange")


class TipChosen(UserWarning):
    """The chain's tip taken among several leaf links (``TOOL_FRAMES``)."""
# top-level elements other tools own; urdf_parser_py complains about them, they are not errors
_FOREIGN_TAGS = ("ros2_control", "gazebo", "robodyn_ros", "transmission")


def _read(path_or_xml, xacro_args=None):
    try:
        return read_description(path_or_xml, xacro_args)
    except DescriptionError as exc:
        raise ModelError(str(exc)) from None


def _origin(element):
    if element is None or element.origin is None:
        return np.eye(4)
    o = element.origin
    return homogeneous(rpy_to_matrix(o.rpy or (0.0, 0.0, 0.0)), o.xyz or (0.0, 0.0, 0.0))


def _parse(source, xml):
    try:
        # comments kept, for a writer that puts a model back into the file (``chain_layout``)
        tree = ET.fromstring(xml, ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    except ET.ParseError as exc:
        raise ModelError(f"{source}: malformed XML: {exc}") from None
    if tree.tag != "robot":
        raise ModelError(f"{source}: root element is <{tree.tag}>, expected <robot>")
    from urdf_parser_py.urdf import URDF
    complaints = io.StringIO()
    try:
        with redirect_stderr(complaints):
            robot = URDF.from_xml_string(xml)
    except Exception as exc:  # urdf_parser_py raises bare Exceptions with an element path
        raise ModelError(f"{source}: invalid URDF: {exc}") from None
    for line in complaints.getvalue().splitlines():
        if line.strip() and not any(f'"{tag}"' in line for tag in _FOREIGN_TAGS):
            warnings.warn(f"{source}: {line.strip()}", stacklevel=5)
    return tree, robot


def _extension(tree, source, joint_names):
    """Per-joint armature and asymmetric Coulomb friction from <robodyn_ros><joint .../>."""
    extra = {}
    for block in tree.findall("robodyn_ros"):
        for element in block.findall("joint"):
            name = element.get("name")
            if name not in joint_names:
                raise ModelError(f"{source}: <robodyn_ros><joint name='{name}'>: no such joint")
            values = {}
            for key in ("armature", "coulomb_positive", "coulomb_negative"):
                if element.get(key) is not None:
                    try:
                        values[key] = float(element.get(key))
                    except ValueError:
                        raise ModelError(f"{source}: <robodyn_ros><joint name='{name}'> {key}="
                                         f"'{element.get(key)}' is not a number") from None
            extra[name] = values
    return extra


def _body(link, source):
    """(mass, com, inertia about com) in the link's own frame; massless without <inertial>."""
    inertial = link.inertial
    if inertial is None or inertial.mass is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    where = f"{source}: link '{link.name}' <inertial>"
    mass = float(inertial.mass)
    if not np.isfinite(mass) or mass < 0.0:
        raise ModelError(f"{where}: mass {mass} must be finite and non-negative")
    frame = _origin(inertial)
    i = inertial.inertia
    I = np.zeros((3, 3)) if i is None else np.array([[i.ixx, i.ixy, i.ixz],
                                                     [i.ixy, i.iyy, i.iyz],
                                                     [i.ixz, i.iyz, i.izz]], dtype=float)
    if np.any(np.diag(I) < 0.0):
        raise ModelError(f"{where}: negative moment of inertia {np.diag(I)}")
    R = frame[:3, :3]
    return mass, frame[:3, 3], R @ I @ R.T


def parent_joints(robot, source):
    """{link: the joint it is the child of} of a parsed URDF, whose joints must name links it has
    and give each link one parent (ModelError, naming the joint, otherwise)."""
    links = {link.name for link in robot.links}
    parent_joint = {}
    for joint in robot.joints:
        for end in (joint.parent, joint.child):
            if end not in links:
                raise ModelError(f"{source}: joint '{joint.name}' names link '{end}', which does not exist")
        if joint.child in parent_joint:
            raise ModelError(f"{source}: link '{joint.child}' is the child of joints "
                             f"'{parent_joint[joint.child].name}' and '{joint.name}': a loop")
        parent_joint[joint.child] = joint
    return parent_joint


def _chain(robot, source, root_link, tip_link):
    links = {link.name for link in robot.links}
    parent_joint = parent_joints(robot, source)
    children = {name: [] for name in links}
    for joint in robot.joints:
        children[joint.parent].append(joint)
    if root_link is None:
        roots = sorted(links - set(parent_joint))
        if len(roots) != 1:
            raise ModelError(f"{source}: expected one root link, found {roots}: a loop or several trees")
        root_link = roots[0]
    for role, name in (("root_link", root_link), ("tip_link", tip_link)):
        if name is not None and name not in links:
            raise ModelError(f"{source}: {role} '{name}' is not a link of '{robot.name}' "
                             f"(links: {sorted(links)})")
    if tip_link is None:
        leaves = sorted(_leaves(root_link, children))
        tool = next((name for name in TOOL_FRAMES if name in leaves), None)
        if len(leaves) != 1 and tool is None:
            raise ModelError(f"{source}: several leaf links below '{root_link}': {leaves}, none of them "
                             f"{' or '.join(TOOL_FRAMES)}; say which one is the tip with tip_link")
        tip_link = leaves[0] if len(leaves) == 1 else tool
        if len(leaves) > 1:
            warnings.warn(TipChosen(f"{source}: tip_link '{tool}' (the tool frame) of the leaf links {leaves} "
                                    f"below '{root_link}'; set tip_link to take another"), stacklevel=4)
    chain, link = [], tip_link
    while link != root_link:
        if link not in parent_joint:
            raise ModelError(f"{source}: tip_link '{tip_link}' is not below root_link '{root_link}'")
        chain.append(parent_joint[link])
        link = parent_joint[link].parent
    chain.reverse()
    for joint in chain:
        if joint.type not in _MOVABLE and joint.type != "fixed":
            raise ModelError(f"{source}: joint '{joint.name}' on the chain is of type '{joint.type}'; "
                             "only revolute, continuous, prismatic and fixed joints are supported")
    return root_link, tip_link, chain, children


def _leaves(root, children):
    stack, leaves = [root], []
    while stack:
        link = stack.pop()
        if children[link]:
            stack.extend(j.child for j in children[link])
        else:
            leaves.append(link)
    return leaves


class ChainLayout(NamedTuple):
    """Where the canonical chain sits in a URDF: what ``read_urdf`` reduces, and what a writer that
    puts a model back into the file needs. ``movable[k]`` is the chain's k-th movable joint,
    ``turns[k]`` its Q (Q e_z = axis: joint frame k is the child link's frame turned by Q) and
    ``pre[k]`` joint frame k in the previous one (the canonical link's ``pre``). Every link
    reached from the root without crossing a movable joint off the chain has an ``owner``, the index
    of the joint whose body it rides on (None: the fixed base), and a ``pose`` in that joint's frame
    (in the root link's frame for the base). ``tree`` is the XML, its comments kept."""
    source: str
    tree: ET.Element
    robot: object              # urdf_parser_py's URDF
    root_link: str
    tip_link: str
    movable: tuple
    turns: tuple
    pre: tuple
    owner: dict
    pose: dict
    skipped: tuple             # movable joints off the chain: their branches are left out


def chain_layout(path_or_xml, root_link=None, tip_link=None, xacro_args=None):
    """The ``ChainLayout`` of the chain ``root_link`` -> ``tip_link`` of a URDF (see ``read_urdf``)."""
    source, xml = _read(path_or_xml, xacro_args)
    tree, robot = _parse(source, xml)
    root_link, tip_link, chain, children = _chain(robot, source, root_link, tip_link)
    on_chain = {joint.name for joint in chain}
    if not any(j.type in _MOVABLE for j in chain):
        raise ModelError(f"{source}: no movable joint between '{root_link}' and '{tip_link}'")
    owner, pose = {root_link: None}, {root_link: np.eye(4)}
    movable, turns, pre, skipped = [], [], [], []
    stack = [root_link]
    while stack:
        parent = stack.pop()
        for joint in children[parent]:
            if joint.type == "fixed":
                owner[joint.child], pose[joint.child] = owner[parent], pose[parent] @ _origin(joint)
            elif joint.name in on_chain:
                Q = homogeneous(_turn(joint, source))
                movable.append(joint)
                turns.append(Q)
                pre.append(pose[parent] @ _origin(joint) @ Q)
                owner[joint.child] = len(movable) - 1
                pose[joint.child] = Q.T   # the child link's frame is the joint frame turned back
            else:
                skipped.append(joint.name)
                continue
            stack.append(joint.child)
    return ChainLayout(source, tree, robot, root_link, tip_link, tuple(movable), tuple(turns),
                       tuple(pre), owner, pose, tuple(skipped))


def read_urdf(path_or_xml, root_link=None, tip_link=None, gravity=(0.0, 0.0, -9.81),
              xacro_args=None):
    """The canonical chain from ``root_link`` to ``tip_link`` of a URDF file (a .xacro one
    expanded with ``xacro_args``), URDF XML or its bytes."""
    layout = chain_layout(path_or_xml, root_link, tip_link, xacro_args)
    source, robot, pose = layout.source, layout.robot, layout.pose
    if layout.skipped:
        warnings.warn(f"{source}: left out the branches through movable joints "
                      f"{sorted(layout.skipped)}, which are not on the chain {layout.root_link} -> "
                      f"{layout.tip_link}", stacklevel=3)
    extra = _extension(layout.tree, source, {j.name for j in robot.joints})
    link_by_name = {link.name: link for link in robot.links}
    links, bodies = [], []
    for joint, pre in zip(layout.movable, layout.pre):
        links.append(_joint(joint, pre, extra.get(joint.name, {}), source))
        bodies.append([])
    for name, k in layout.owner.items():
        if k is None:
            continue
        m, c, I = _body(link_by_name[name], source)
        T = pose[name]
        bodies[k].append((m, T[:3, :3] @ c + T[:3, 3], T[:3, :3] @ I @ T[:3, :3].T))
    try:
        for k, parts in enumerate(bodies):
            mass, com, inertia = combine_bodies(*parts) if parts else (0.0, np.zeros(3), np.zeros((3, 3)))
            links[k] = Link(**links[k], mass=mass, com=com, inertia=inertia)
        frames = {name: (-1 if k is None else k, pose[name]) for name, k in layout.owner.items()}
        return Chain(tuple(links), tip=pose[layout.tip_link], gravity=gravity, name=robot.name,
                     frames=frames)
    except ModelError as exc:
        raise ModelError(f"{source}: {exc}") from None


def _turn(joint, source):
    """Q with Q e_z along the joint axis (URDF's default axis is x)."""
    where = f"{source}: joint '{joint.name}'"
    axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    norm = np.linalg.norm(axis)
    if not norm > 0.0 or not np.isfinite(norm):
        raise ModelError(f"{where}: <axis xyz> {axis} has no direction")
    if abs(norm - 1.0) > 1e-6:
        warnings.warn(f"{where}: axis {axis} is not a unit vector; normalised", stacklevel=5)
    return rotation_taking_z_to(axis / norm)


def _joint(joint, pre, extra, source):
    """The canonical link of a movable joint but its body; ``pre`` places its turned frame in the
    previous one."""
    limit, dynamics = joint.limit, joint.dynamics
    kind = _MOVABLE[joint.type]
    friction = float(dynamics.friction or 0.0) if dynamics is not None else 0.0
    bounded = joint.type != "continuous" and limit is not None
    return dict(
        name=joint.name, joint=kind, pre=pre,
        armature=extra.get("armature", 0.0),
        viscous=float(dynamics.damping or 0.0) if dynamics is not None else 0.0,
        coulomb_positive=extra.get("coulomb_positive", friction),
        coulomb_negative=extra.get("coulomb_negative", friction),
        lower=float(limit.lower) if bounded and limit.lower is not None else -np.inf,
        upper=float(limit.upper) if bounded and limit.upper is not None else np.inf,
        velocity=_bound(limit, "velocity", f"{source}: joint '{joint.name}'"),
        effort=_bound(limit, "effort", f"{source}: joint '{joint.name}'"))


def _bound(limit, key, where):
    """A velocity or effort limit; URDF requires both, and parsers read a missing one as 0. A zero
    limit cannot be meant (the joint could not move), so it means "none given": say so."""
    value = getattr(limit, key, None) if limit is not None else None
    if not value:
        warnings.warn(f"{where}: no {key} limit (<limit {key}> absent or 0): none applied",
                      stacklevel=5)
        return np.inf
    return float(value)
