"""An identified model written back into the URDF it was loaded from, so that the file alone carries
it: ``RobotModel.from_urdf`` of the result is the model whose standard parameters are π, and the
controller, both simulator engines and ``robodyn-ros check-urdf`` take it.

π is in the regressor's layout (``regressor``): per moving body i, (m, h = m c, I about the origin)
in joint frame i, then per joint its drive parameters. The file gets, per body, (m, c, I about the
COM) in the chain's child link's own frame (joint frame i turned back by the loader's Q,
``dynamics.urdf.chain_layout``) as that link's <inertial> (rpy 0, full tensor, numbers written with
repr, so the round trip is exact to rounding). The links the loader lumps into that body (fixed to
it: a flange, ``tool0``, a hand) lose their <inertial>, a comment left in its place: identification
sees only the sum. Per joint, <dynamics> gets damping = viscous and friction = the mean Coulomb
magnitude, and the package's <robodyn_ros> block the joint's armature and both Coulomb magnitudes
(its entries for these joints replaced, the first block kept, one added if the file has none).
Everything else stays: other links, visuals, collisions, limits, <ros2_control>, <gazebo>,
<transmission>, comments inside <robot>. ElementTree drops what lies outside <robot> (the XML
declaration is written anew, a header comment such as "generated from ..., do not edit" no longer
holds) and the file is re-indented.

Bodies. A simulator refuses each moving link whose body is not rigid (``check_urdf.link_problems``:
zero mass, inertia not positive definite or beyond the triangle inequality), while our model only
needs M(q) positive definite. By default such a body is refused with a ``ModelError`` naming its
joint and why, and nothing is written; ``physical=False`` writes it as it is, with a
warning (the controller and ``from_urdf`` take the file, check-urdf and simulators do not). Two
cases are decided apart:

* m = 0, h = 0, I = 0 (a link between two joints of a wrist): no <inertial> at all, which every
  parser reads as massless, as the nominal file presumably had it. Not refused: the body is
  nothing, not a wrong something.
* m = 0 with a non-zero inertia (a rotor: the raw PUMA data set's link 1, which only turns about
  its axis) is no rigid body. It is refused unless ``physical=False``, which writes
  ``<mass value="0.0">`` with the inertia as ``dynamics.urdf_export`` does; a tiny invented mass
  is not written, since it would put a number in the file that no one identified. Give the body a
  mass instead: for a body whose other parameters never reach the torques any mass on the axis
  will do (urdf/puma560.urdf's link 1; config/puma560_dh.yaml says why).

m = 0 with a first moment h ≠ 0 has no centre of mass and is refused always.

A drive ``offset`` (``offset=True``) is a constant torque per joint, which neither URDF nor our
loader has a place for: a nonzero one is not written, and a warning says so.
"""
import warnings
import xml.etree.ElementTree as ET
from typing import NamedTuple

import numpy as np

from ..dynamics.link import ModelError
from ..dynamics.urdf import chain_layout
from ..dynamics.urdf_export import _fmt, _inertial, _sub
from ..sim.check_urdf import link_problems
from ..dynamics.inertial_parameters import BODY_COLUMNS, with_parameters

# a chain that does not match the model's beyond this (metres, or the entries of a rotation) is
# another arm: the nominal file is not the one the model was loaded from
_SAME_PLACE = 1e-9


class _Body(NamedTuple):
    """What ``urdf_export._inertial`` writes: mass, COM and inertia about it, in the link's frame."""
    mass: float
    com: np.ndarray
    inertia: np.ndarray


def identified_urdf(nominal, model, pi, offset=False, *, root_link=None, tip_link=None,
                    xacro_args=None, physical=True):
    """The URDF text of ``nominal`` (a path, .xacro expanded with ``xacro_args``, or XML) with the
    identified parameters ``pi`` of ``model`` written in (module docstring). ``model`` is the
    ``RobotModel`` loaded from ``nominal`` with this ``root_link`` and ``tip_link``; ``offset``
    says whether ``pi`` has the offset column per joint."""
    links = _identified_links(model, pi, offset, physical)
    layout = chain_layout(nominal, root_link, tip_link, xacro_args)
    _check_same_chain(layout, model)
    tree = layout.tree
    elements = {tag: {e.get("name"): e for e in tree.findall(tag)} for tag in ("link", "joint")}
    child = [joint.child for joint in layout.movable]
    for k, (joint, Q, link) in enumerate(zip(layout.movable, layout.turns, links)):
        R = Q[:3, :3]   # joint frame k in the child link's frame: turn the body back
        _put_inertial(elements["link"][joint.child],
                      _Body(link.mass, R @ link.com, R @ link.inertia @ R.T))
        dynamics = elements["joint"][joint.name].find("dynamics")
        if dynamics is None:
            dynamics = _sub(elements["joint"][joint.name], "dynamics")
        dynamics.set("damping", _fmt(link.viscous))
        dynamics.set("friction", _fmt((link.coulomb_positive + link.coulomb_negative) / 2.0))
    for name, k in layout.owner.items():
        if k is not None and name != child[k]:
            _merge_away(elements["link"][name], child[k])
    _put_extension(tree, links)
    ET.indent(tree, space="  ")
    header = (f"<!-- A copy of {_comment_safe(layout.source)} (that file is unchanged) with the "
              f"identified model in it: the {model.dof} moving bodies, their friction and "
              f"armature (robodyn-ros identify) -->")
    return f'<?xml version="1.0"?>\n{header}\n{ET.tostring(tree, encoding="unicode")}\n'


def write_identified_urdf(nominal, model, pi, path, offset=False, **options):
    """``identified_urdf`` written to ``path`` (UTF-8); ``options`` are its keyword arguments."""
    text = identified_urdf(nominal, model, pi, offset, **options)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _identified_links(model, pi, offset, physical):
    """``model``'s links with the bodies (joint frame i, inertia about the COM) and drive parameters
    of ``pi``, after the checks the module docstring describes."""
    links = with_parameters(model, pi, offset).links
    if offset:
        offsets = np.asarray(pi, dtype=float)[len(BODY_COLUMNS) * model.dof:].reshape(model.dof, -1)[:, -1]
        if offsets.any():
            warnings.warn(f"drive offsets {dict(zip(model.joint_names, offsets.tolist()))} not "
                          "written: a URDF has no constant joint torque (nor does the model it "
                          "loads)", stacklevel=3)
    refused = [(link.name, problem) for link in links if link.mass != 0.0 or link.inertia.any()
               for problem in link_problems(link.mass, link.inertia)]
    if refused:
        said = "; ".join(f"joint '{joint}': {problem}" for joint, problem in refused)
        if physical:
            raise ModelError(f"identified parameters: bodies no simulator accepts: {said}. Not "
                             "written; identified_urdf(..., physical=False) writes them anyway")
        warnings.warn(f"identified parameters: written, but no simulator accepts these bodies "
                      f"(robodyn-ros check-urdf reports them): {said}", stacklevel=3)
    return links


def _check_same_chain(layout, model):
    """The chain of the nominal file is the model's: the same joints in the same places."""
    names = [joint.name for joint in layout.movable]
    where = f"{layout.source}: chain {layout.root_link} -> {layout.tip_link}"
    if names != list(model.joint_names):
        raise ModelError(f"{where} has the joints {names}, the model {list(model.joint_names)}: "
                         "give the root_link and tip_link the model was loaded with")
    for joint, pre, link in zip(layout.movable, layout.pre, model.links):
        if not np.allclose(pre, link.pre, rtol=0.0, atol=_SAME_PLACE):
            raise ModelError(f"{where}: joint '{joint.name}' is not where the model has it: the "
                             "model was not loaded from this file")


def _put_inertial(element, body):
    """``body`` as the link's <inertial>, where its own was (first if it had none); none for a
    massless body."""
    old = element.findall("inertial")
    at = list(element).index(old[0]) if old else 0
    for e in old:
        element.remove(e)
    count = len(element)
    _inertial(element, body)
    if len(element) > count:   # written (appended): move it into place
        new = element[-1]
        element.remove(new)
        element.insert(at, new)


def _merge_away(element, into):
    """A lumped link's <inertial> out, a comment saying where it went in its place."""
    for e in element.findall("inertial"):
        at = list(element).index(e)
        element.remove(e)
        element.insert(at, ET.Comment(f" <inertial> merged into '{_comment_safe(into)}' by "
                                      "identification "))


def _put_extension(tree, links):
    """Armature and both Coulomb magnitudes per joint in the <robodyn_ros> block (urdf.py)."""
    names = {link.name for link in links}
    blocks = tree.findall("robodyn_ros") or [_sub(tree, "robodyn_ros")]
    for block in blocks:
        for entry in block.findall("joint"):
            if entry.get("name") in names:
                block.remove(entry)
    for link in links:
        _sub(blocks[0], "joint", name=link.name, armature=_fmt(link.armature),
             coulomb_positive=_fmt(link.coulomb_positive),
             coulomb_negative=_fmt(link.coulomb_negative))


def _comment_safe(text):
    # "--" may not appear inside an XML comment
    return text.replace("--", "- -")
