"""The URDF's own link bodies, as written: what a simulator is given."""
import io
import re
from contextlib import redirect_stderr

import numpy as np

# the loader's own reading of an <origin> (one of each thing; private there, shared here)
from robodyn_ros.dynamics.urdf import _origin as origin

_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")


def parse_urdf(urdf: str):
    """The urdfdom-py robot of a URDF text (its complaints about <robodyn_ros>, <ros2_control> and
    <gazebo>, which it does not know, silenced). The text is decoded already: an XML declaration
    naming its encoding (UR's files have one), which lxml refuses in a str, is left out."""
    from urdf_parser_py.urdf import URDF
    with redirect_stderr(io.StringIO()):
        return URDF.from_xml_string(_DECLARATION.sub("", urdf, count=1))


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
