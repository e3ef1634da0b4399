"""The Panda's contact scenes that judge the collision guard against MuJoCo's contact list
(``contact_trials`` runs them; doc/collisions.md): a sphere where one link's shape will be some
time into a motion from the Cartesian demo's start, rigid or soft, met at speed or slowly; the
hand-height and forearm-height obstacles of ``demo collision --arm panda``; and bodies fixed to the
flange that the URDF does not ship — a tool, a payload — added as links fixed to the hand, whose
contacts are contacts on the last link. ROS-free; the placement needs MuJoCo.
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np

PANDA = "urdf/panda.urdf"
PANDA_START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])   # the Cartesian demo's


@dataclasses.dataclass(frozen=True)
class Scene:
    """A sphere where ``link``'s shape is ``at`` seconds into a quintic of ``duration`` seconds
    from PANDA_START by ``move`` (rad per joint), shifted by ``offset`` (m, world) so that this
    link meets it first; ``soft``: MuJoCo's soft contact (contact_trials.SOFT); the run lasts
    ``length`` s. ``link`` is a link a joint moves; ``body``, if given, the URDF link (that link or
    one fixed to it) whose shapes place the sphere; ``attached``: a body of ATTACHMENTS fixed to
    the hand first."""
    name: str
    link: str
    move: tuple
    duration: float
    at: float
    offset: tuple = (0.0, 0.0, 0.0)
    soft: bool = False
    length: float = 1.5
    body: str = ""
    attached: str = ""


SWEEP = (0.6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)      # the whole arm about the base: across its plane
REACH = (0.0, 0.4, 0.0, 0.4, 0.0, 0.0, 0.0)      # shoulder and elbow: in the arm's plane
ELBOW = (0.0, 0.0, 0.0, 0.6, 0.0, 0.0, 0.0)      # the elbow: the forearm in the arm's plane
FOLD = (0.0, 0.0, 0.0, 0.0, 0.0, -0.6, 0.0)      # the hand about the wrist (joint 6)
SCENES = (
    Scene("hand, rigid, impact", "panda_link7", REACH, 2.0, 1.0),
    Scene("hand, soft, impact", "panda_link7", REACH, 2.0, 1.0, soft=True),
    Scene("hand, soft, slow push", "panda_link7", REACH, 8.0, 2.5, soft=True, length=4.0),
    Scene("hand folding, rigid, impact", "panda_link7", FOLD, 2.0, 1.0),
    Scene("wrist, rigid, impact", "panda_link6", REACH, 2.0, 1.0),
    Scene("wrist, soft, impact", "panda_link6", REACH, 2.0, 1.0, soft=True),
    Scene("forearm, rigid, impact", "panda_link5", ELBOW, 2.0, 1.0),
    Scene("forearm, soft, impact", "panda_link5", ELBOW, 2.0, 1.0, soft=True),
    Scene("forearm, across, soft, slow push", "panda_link5", SWEEP, 8.0, 5.0, soft=True,
          length=6.5),
    Scene("hand, across, rigid, impact", "panda_link7", SWEEP, 2.0, 1.0),
    Scene("hand, across, soft, slow push", "panda_link7", SWEEP, 8.0, 2.5, soft=True, length=4.0),
    Scene("wrist, across, rigid, impact", "panda_link6", SWEEP, 2.0, 1.0),
    Scene("forearm, across, rigid, impact", "panda_link5", SWEEP, 2.0, 1.6, length=2.5),
)

# demo collision --arm panda: one motion, the arm sweeping across and reaching down, and an
# obstacle at the hand's height or at the forearm's where each passes a second into it
ACROSS_AND_DOWN = (0.6, 0.3, 0.0, 0.2, 0.0, -0.2, 0.0)
OBSTACLES = tuple(Scene(f"{part}, {kind}", link, ACROSS_AND_DOWN, 2.0, 1.0, soft=kind == "soft",
                        body=body)
                  for part, link, body in (("hand height", "panda_link7", "panda_hand"),
                                           ("forearm height", "panda_link5", ""))
                  for kind in ("rigid", "soft"))

# bodies fixed to the hand's TCP (parent, origin in it, collision geometry, mass, centre of mass):
# a tool along the hand's axis past the fingers, and a 1 kg box held between them
ATTACHMENTS = {
    "tool": ("panda_hand_tcp", (0.0, 0.0, 0.0866), '<cylinder radius="0.015" length="0.16"/>',
             0.3, (0.0, 0.0, 0.0)),
    "payload": ("panda_hand_tcp", (0.0, 0.0, 0.0266), '<box size="0.08 0.08 0.08"/>', 1.0,
                (0.0, 0.0, 0.0)),
}
ON_THE_FLANGE = tuple(
    Scene(f"{name}, {kind}{', across' if move is SWEEP else ''}", "panda_link7", move, 2.0, 1.0,
          soft=kind == "soft", body=name, attached=name)
    for name in ATTACHMENTS for move in (REACH, SWEEP) for kind in ("rigid", "soft"))


def attach(urdf: str, name: str) -> str:
    """``urdf`` (text) with ATTACHMENTS[``name``] as link ``name`` on a fixed joint: its shape
    and its inertia (a solid of the shape's size is near enough: the model and MuJoCo share it)."""
    parent, origin, geometry, mass, com = ATTACHMENTS[name]
    root = ET.fromstring(urdf)
    xyz = " ".join(repr(float(x)) for x in origin)
    link = ET.fromstring(
        f'<link name="{name}"><inertial><origin xyz="{" ".join(map(str, com))}"/>'
        f'<mass value="{mass}"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" '
        f'iyz="0"/></inertial><collision><geometry>{geometry}</geometry></collision></link>')
    joint = ET.fromstring(f'<joint name="{name}_joint" type="fixed"><parent link="{parent}"/>'
                          f'<child link="{name}"/><origin xyz="{xyz}"/></joint>')
    root.extend([link, joint])
    return ET.tostring(root, encoding="unicode")


def scene_shapes(plant, scene: Scene) -> list:
    """The geoms of ``plant`` (a ContactScene) on the scene's link — or on ``body`` only."""
    m = plant.mj
    return [g for g in range(m.ngeom)
            if m.geom_contype[g] and plant.link_of_geom(g) == scene.link
            and (not scene.body or m.body(m.geom_bodyid[g]).name == scene.body)]


def reach(mujoco, m, d, g, u) -> float:
    """How far geom ``g`` reaches from its centre along the unit vector ``u``."""
    size, R = m.geom_size[g], d.geom_xmat[g].reshape(3, 3)
    local = np.abs(R.T @ u)
    if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
        return float(local @ size)
    if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE:
        return float(size[0])
    return float(size[0] * np.sqrt(max(0.0, 1.0 - local[2] ** 2)) + size[1] * local[2])
