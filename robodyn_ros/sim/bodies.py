"""The URDF's own link bodies, as written: what a simulator is given."""
import re
import warnings

import numpy as np

# the loader's own reading of an <origin> and of the file (one of each thing; private there,
# shared here)
from robodyn_ros.dynamics.urdf import _origin as origin, _parse, parent_joints

_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")


def parse_urdf(urdf: str, source: str = "<URDF>"):
    """The urdfdom-py robot of a URDF text, refused as the model's loader refuses it (a
    ModelError naming ``source`` and the element: malformed XML, an unknown joint type, a joint
    naming a link the file lacks); its complaints about elements it does not know silenced. The
    text is decoded already: an XML declaration naming its encoding (UR's files have one), which
    lxml refuses in a str, is left out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, robot = _parse(source, _DECLARATION.sub("", urdf, count=1))
    parent_joints(robot, source)
    return robot


def urdf_bodies(robot):
    """{link name: (mass, com, inertia about the com)} of every link of a parsed URDF, in the
    link's own frame, exactly as written (no validity checks: that is the point)."""
    bodies = {}
    for link in robot.links:
        inertial = link.inertial
        if inertial is None or inertial.mass is None:
            bodies[link.name] = (0.0, np.zeros(3), np.zeros((3, 3)))
            continue
        frame = origin(inertial)
        i = inertial.inertia
        inertia = np.zeros((3, 3)) if i is None else np.array(
            [[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]], dtype=float)
        R = frame[:3, :3]
        bodies[link.name] = (float(inertial.mass), frame[:3, 3], R @ inertia @ R.T)
    return bodies
