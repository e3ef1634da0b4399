"""``robodyn-ros check-urdf FILE``: what a simulator will refuse in a URDF, and what only our model
tolerates.

Our dynamics needs only a positive definite joint-space mass matrix, so it takes bodies no rigid
body can be: a link that turns about its own axis only may have zero mass and zero moments about
the other axes (the PUMA data set's link 1), and a triangle-inequality violation never stops the
recursion (the PUMA's link 3). A simulator integrates bodies in space and refuses them, each link
on its own: MuJoCo says "mass and inertia of moving bodies must be larger than mjMINVAL",
"inertia must have positive eigenvalues" and "inertia must satisfy A + B >= C"; Gazebo's physics
engines need a positive mass and a physical inertia too. This checks every body a joint moves.
"""
from __future__ import annotations


import numpy as np

from robodyn_ros.dynamics.model import combine_bodies

from .bodies import origin, parse_urdf, urdf_bodies

# a simulator's smallest mass and principal moment (MuJoCo's mjMINVAL)
MIN_VALUE = 1e-15
_MOVABLE = ("revolute", "continuous", "prismatic", "floating", "planar")


def moving_bodies(robot):
    """{child link of a movable joint: (the joint, (mass, com, inertia))}: each body as a simulator
    sees it, the child link with everything fixed to it lumped in (MuJoCo and Gazebo both fuse
    fixed joints), in the child link's frame."""
    bodies = urdf_bodies(robot)
    children = {}
    for joint in robot.joints:
        children.setdefault(joint.parent, []).append(joint)
    found = {}
    for joint in robot.joints:
        if joint.type not in _MOVABLE:
            continue
        parts, stack = [], [(joint.child, np.eye(4))]
        while stack:
            link, pose = stack.pop()
            mass, com, inertia = bodies[link]
            R = pose[:3, :3]
            parts.append((mass, R @ com + pose[:3, 3], R @ inertia @ R.T))
            stack.extend((j.child, pose @ origin(j)) for j in children.get(link, [])
                         if j.type not in _MOVABLE)
        found[joint.child] = (joint.name, combine_bodies(*parts))
    return found


def link_problems(mass, inertia):
    """What a simulator refuses in one moving link's body (empty: nothing)."""
    if not np.isfinite(mass) or not np.all(np.isfinite(inertia)):
        return ["a non-finite mass or inertia"]
    if mass == 0.0 and not inertia.any():
        return ["no mass and no inertia (a massless moving link)"]
    problems = []
    if mass < MIN_VALUE:
        problems.append(f"mass {mass:g} is not positive")
    moments = np.linalg.eigvalsh(inertia)
    if moments.min() < MIN_VALUE:
        problems.append(f"inertia is not positive definite (principal moments "
                        f"{np.array2string(moments, precision=4)})")
    a, b, c = np.sort(moments)
    if a + b < c - 1e-12 * max(c, 1.0):
        problems.append(f"principal moments violate the triangle inequality "
                        f"({a:.4g} + {b:.4g} < {c:.4g})")
    return problems


def check(urdf: str, source: str = "<URDF>"):
    """[(link, joint that moves it, [problems])] for every moving link a simulator refuses; a file
    nobody can read (malformed XML, an unknown joint type, a joint naming a missing link) raises
    the loader's ModelError, naming ``source`` and the element."""
    found = []
    for link, (joint, (mass, _, inertia)) in moving_bodies(parse_urdf(urdf, source)).items():
        problems = link_problems(mass, inertia)
        if problems:
            found.append((link, joint, problems))
    return found


def tolerated_by_our_model(urdf: str, root_link=None, tip_link=None):
    """Whether robodyn_ros's model builds the chain (``root_link`` to ``tip_link``; None: the
    file's root, its one leaf, or the tool frame among several) anyway (its only need: M(q)
    positive definite at q = 0) and the warnings it gives (the tip it chose is one of them)."""
    import warnings
    from robodyn_ros.dynamics import RobotModel
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            model = RobotModel.from_urdf(urdf, root_link=root_link, tip_link=tip_link)
            np.linalg.cholesky(model.mass_matrix(np.zeros(model.dof)))
        except (ValueError, np.linalg.LinAlgError) as exc:
            return False, [str(exc)]
    return True, [w.message for w in said]

