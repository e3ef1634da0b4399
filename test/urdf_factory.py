"""Random URDF serial arms for the dynamics tests (shared by the consistency and Pinocchio tests).

Every generated arm is physically valid: inertias are those of solid boxes turned at random (so the
principal moments always satisfy the triangle inequality), masses are positive or the <inertial> is
absent (a massless link), and the last moving body always has mass, so M(q) is positive definite.
Joint axes are arbitrary unit vectors, origins arbitrary translations and roll-pitch-yaw angles.
Numbers are written with repr() so that every parser reads exactly the same values.

Options add the features the loader must handle: fixed joints inside the chain (a link rigidly
attached to its parent, with its own body), fixed links beyond the tip (a "gripper" with two
"fingers"), and a movable branch off the chain (which the loader must leave out with a warning).
"""
from dataclasses import dataclass, field

import numpy as np


def f(x):
    return repr(float(x))


def vec(v):
    return " ".join(f(x) for x in v)


def random_unit(rng):
    v = rng.standard_normal(3)
    return v / np.linalg.norm(v)


def random_rotation(rng):
    Q, R = np.linalg.qr(rng.standard_normal((3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    if np.linalg.det(Q) < 0.0:
        Q[:, 0] = -Q[:, 0]
    return Q


def box_inertia(mass, rng):
    """Inertia about the COM of a solid box of random sides, turned at random (full 3x3)."""
    a, b, c = rng.uniform(0.05, 0.5, 3)
    box = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R = random_rotation(rng)
    return R @ box @ R.T


def inertial_xml(mass, rng):
    I = box_inertia(mass, rng)
    return (f'    <inertial>\n'
            f'      <origin xyz="{vec(rng.uniform(-0.3, 0.3, 3))}" rpy="{vec(rng.uniform(-np.pi, np.pi, 3))}"/>\n'
            f'      <mass value="{f(mass)}"/>\n'
            f'      <inertia ixx="{f(I[0, 0])}" ixy="{f(I[0, 1])}" ixz="{f(I[0, 2])}" '
            f'iyy="{f(I[1, 1])}" iyz="{f(I[1, 2])}" izz="{f(I[2, 2])}"/>\n'
            f'    </inertial>\n')


def origin_xml(rng):
    return f'    <origin xyz="{vec(rng.uniform(-0.4, 0.4, 3))}" rpy="{vec(rng.uniform(-np.pi, np.pi, 3))}"/>\n'


@dataclass
class RandomArm:
    xml: str
    movable: list                 # names of the chain's movable joints, base to tip
    types: list                   # their URDF types
    tip: str                      # tip link (the leaf when there is no branch)
    branch: list = field(default_factory=list)   # movable joints off the chain
    links_with_mass: dict = field(default_factory=dict)   # link name -> mass, chain and fixed children


def random_urdf(rng, n, prismatic=0.3, continuous=0.2, massless=0.2, fixed_in_chain=0.3,
                gripper=True, branch=False, friction=False, root_inertial=True, name="random_arm"):
    """A random serial arm with n movable joints (see the module docstring)."""
    parts = [f'<?xml version="1.0"?>\n<robot name="{name}">\n']
    masses = {}
    # the root's own body never moves: loaders must ignore it
    parts.append('  <link name="base_link">\n' + (inertial_xml(3.0, rng) if root_inertial else "")
                 + '  </link>\n')
    parent = "base_link"
    movable, types = [], []
    for i in range(n):
        if rng.uniform() < fixed_in_chain:
            # a link rigidly attached to the previous one, with a body of its own
            mid = f"flange_{i}"
            m = rng.uniform(0.2, 2.0)
            masses[mid] = m
            parts.append(f'  <link name="{mid}">\n' + inertial_xml(m, rng) + '  </link>\n')
            parts.append(f'  <joint name="fixed_{i}" type="fixed">\n' + origin_xml(rng) +
                         f'    <parent link="{parent}"/>\n    <child link="{mid}"/>\n  </joint>\n')
            parent = mid
        u = rng.uniform()
        kind = "prismatic" if u < prismatic else ("continuous" if u < prismatic + continuous else "revolute")
        child = f"link_{i + 1}"
        last = i == n - 1
        if last or rng.uniform() >= massless:
            m = rng.uniform(0.5, 5.0)
            masses[child] = m
            parts.append(f'  <link name="{child}">\n' + inertial_xml(m, rng) + '  </link>\n')
        else:
            parts.append(f'  <link name="{child}"/>\n')
        joint = (f'  <joint name="joint_{i + 1}" type="{kind}">\n' + origin_xml(rng) +
                 f'    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
                 f'    <axis xyz="{vec(random_unit(rng))}"/>\n')
        if kind != "continuous":
            lo, hi = (-0.5, 0.5) if kind == "prismatic" else (-3.0, 3.0)
            joint += f'    <limit lower="{lo}" upper="{hi}" effort="100.0" velocity="5.0"/>\n'
        if friction:
            joint += (f'    <dynamics damping="{f(rng.uniform(0.0, 2.0))}" '
                      f'friction="{f(rng.uniform(0.0, 1.0))}"/>\n')
        parts.append(joint + '  </joint>\n')
        movable.append(f"joint_{i + 1}")
        types.append(kind)
        parent = child
    tip = parent
    if gripper:
        # fixed links beyond the tip: a palm and two fingers (the fingers make two leaves, so the
        # palm is the tip and must be named)
        for link, up in (("palm", tip), ("finger_left", "palm"), ("finger_right", "palm")):
            m = rng.uniform(0.1, 1.0)
            masses[link] = m
            parts.append(f'  <link name="{link}">\n' + inertial_xml(m, rng) + '  </link>\n')
            parts.append(f'  <joint name="{link}_joint" type="fixed">\n' + origin_xml(rng) +
                         f'    <parent link="{up}"/>\n    <child link="{link}"/>\n  </joint>\n')
        tip = "palm"
    branches = []
    if branch:
        # a movable side branch off a chain link (with a heavy body: including it would show)
        at = f"link_{rng.integers(1, n + 1)}" if n > 1 else "link_1"
        parts.append('  <link name="camera_mast">\n' + inertial_xml(7.0, rng) + '  </link>\n')
        parts.append('  <joint name="camera_pan" type="revolute">\n' + origin_xml(rng) +
                     f'    <parent link="{at}"/>\n    <child link="camera_mast"/>\n'
                     f'    <axis xyz="{vec(random_unit(rng))}"/>\n'
                     '    <limit lower="-1" upper="1" effort="10" velocity="1"/>\n  </joint>\n')
        branches.append("camera_pan")
    parts.append('</robot>\n')
    return RandomArm("".join(parts), movable, types, tip, branches, masses)


def remove_branch(xml):
    """The same arm without the camera branch (the link and the joint dropped from the text)."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(xml)
    for element in list(root):
        if element.get("name") in ("camera_mast", "camera_pan"):
            root.remove(element)
    return ET.tostring(root, encoding="unicode")
