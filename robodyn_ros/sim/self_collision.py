"""Where an arm's collision shapes overlap one another, by MuJoCo's contact list, and the SRDF that
tells a planner which pairs of links never need checking.

MuJoCo loads the URDF's <collision> primitives (meshes are left out: no files to look for), every
link its own body, and collides every geom with every other (parent-child filtering off, so that
what is ignored is decided here, not by MuJoCo's tree); a contact at distance d < 0 is an overlap
of depth −d. Two links are *adjacent* when a joint joins them, links without a shape skipped (a
hand fixed through a frame link to the last link is adjacent to it): their shapes meet at the
joint by construction and are never checked. Every other pair that overlaps at a pose is a
finding, unless an SRDF disables it.

The SRDF is what MoveIt's setup assistant writes: a <disable_collisions> per pair that is
adjacent ("Adjacent") or never in contact over poses sampled uniformly within the joint limits
("Never"); the pairs left are the ones a planner must check, because the arm can really fold one
onto the other. ROS-free; needs the ``mujoco`` extra.
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np

from .mujoco_engine import require_mujoco, shapes_spec

SAMPLES = 10000   # the setup assistant's default sampling density is of this order
_CONTINUOUS_RANGE = np.pi


@dataclasses.dataclass(frozen=True)
class Overlap:
    """Two links' shapes in each other at a pose: the deepest contact between them (m, > 0)."""
    links: tuple
    depth: float

    def __str__(self):
        return f"{self.links[0]} and {self.links[1]} overlap by {1e3 * self.depth:.1f} mm"


def _pair(a: str, b: str) -> tuple:
    return (a, b) if a <= b else (b, a)


class SelfCollision:
    """The collision shapes of ``urdf`` (text) in MuJoCo, posed by joint name (module docstring).
    ``joint_names``: the movable joints in the order ``overlaps`` takes them; ``limits``: their
    (lower, upper) ranges (a continuous joint: ±π)."""

    def __init__(self, urdf: str):
        mujoco = require_mujoco()
        spec = shapes_spec(urdf, conaffinity=1)
        spec.compiler.balanceinertia = True       # only kinematics matter here: any body will do
        spec.compiler.boundmass = spec.compiler.boundinertia = 1e-6
        spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_FILTERPARENT
        self.mj = spec.compile()
        self.data = mujoco.MjData(self.mj)
        self._mujoco = mujoco
        m = self.mj
        self.joint_names = tuple(m.joint(j).name for j in range(m.njnt))
        self._qpos = [int(m.jnt_qposadr[j]) for j in range(m.njnt)]
        self.limits = np.array([m.jnt_range[j] if m.jnt_limited[j]
                                else (-_CONTINUOUS_RANGE, _CONTINUOUS_RANGE)
                                for j in range(m.njnt)], dtype=float).reshape(-1, 2)
        self._link_of_geom = [m.body(m.geom_bodyid[g]).name for g in range(m.ngeom)]
        self.links = tuple(sorted(set(self._link_of_geom)))   # the links with a shape
        self.adjacent = frozenset(_adjacent_pairs(urdf, set(self.links)))

    def pose(self, q) -> None:
        """Place the shapes at joint values ``q`` (``joint_names`` order) and collide them."""
        q = np.asarray(q, dtype=float)
        if q.shape != (len(self.joint_names),) or not np.all(np.isfinite(q)):
            raise ValueError(f"a pose is {len(self.joint_names)} finite joint values "
                             f"({', '.join(self.joint_names)}), got {q.tolist()}")
        self.data.qpos[self._qpos] = q
        self._mujoco.mj_kinematics(self.mj, self.data)
        self._mujoco.mj_collision(self.mj, self.data)

    def overlaps(self, q, ignore=frozenset()) -> list[Overlap]:
        """The non-adjacent pairs of links whose shapes overlap at ``q``, deepest first; pairs in
        ``ignore`` (sorted name pairs, e.g. an SRDF's) left out."""
        self.pose(q)
        deepest = {}
        for i in range(self.data.ncon):
            c = self.data.contact[i]
            pair = _pair(self._link_of_geom[c.geom1], self._link_of_geom[c.geom2])
            if c.dist >= 0.0 or pair[0] == pair[1] or pair in self.adjacent or pair in ignore:
                continue
            deepest[pair] = max(deepest.get(pair, 0.0), -float(c.dist))
        return sorted((Overlap(p, d) for p, d in deepest.items()), key=lambda o: -o.depth)

    def sample(self, count: int, seed: int = 0) -> np.ndarray:
        """``count`` poses uniform within the joint limits (rows)."""
        rng = np.random.default_rng(seed)
        return rng.uniform(self.limits[:, 0], self.limits[:, 1], (count, len(self.joint_names)))

    def pairs_in_contact(self, poses) -> dict:
        """{pair: how many of ``poses`` put it in overlap} over the non-adjacent pairs."""
        seen = {}
        for q in poses:
            for o in self.overlaps(q):
                seen[o.links] = seen.get(o.links, 0) + 1
        return seen


def _adjacent_pairs(urdf: str, shaped: set):
    """Pairs of shaped links joined by a joint, links without a shape passed through."""
    root = ET.fromstring(urdf)
    parent = {j.find("child").get("link"): j.find("parent").get("link")
              for j in root.findall("joint")}
    for link in shaped:
        up = parent.get(link)
        while up is not None and up not in shaped:
            up = parent.get(up)
        if up is not None:
            yield _pair(link, up)


def srdf(urdf: str, samples: int = SAMPLES, seed: int = 0, group: str = "arm") -> str:
    """The SRDF of ``urdf`` (module docstring): one planning group, the chain from the root to its
    leaf, and the pairs disabled as MoveIt's setup assistant disables them, over ``samples``
    random poses."""
    scene = SelfCollision(urdf)
    robot = ET.fromstring(urdf)
    children = {j.find("parent").get("link") for j in robot.findall("joint")}
    child_links = {j.find("child").get("link") for j in robot.findall("joint")}
    base = next(lnk.get("name") for lnk in robot.findall("link") if lnk.get("name") not in child_links)
    tips = [lnk.get("name") for lnk in robot.findall("link") if lnk.get("name") not in children]
    if len(tips) != 1:
        raise ValueError(f"{robot.get('name')}: an SRDF chain needs one leaf link, got {tips}")
    touching = scene.pairs_in_contact(scene.sample(samples, seed))
    lines = ['<?xml version="1.0"?>',
             f"<!-- {robot.get('name')}: written by robodyn-ros check-urdf (its srdf option) from the URDF's "
             f"collision shapes, {samples} poses sampled uniformly within the joint limits "
             f"(seed {seed}); doc/collisions.md -->",
             f'<robot name="{robot.get("name")}">',
             f'  <group name="{group}">', f'    <chain base_link="{base}" tip_link="{tips[0]}"/>',
             "  </group>"]
    for a, b in sorted(scene.adjacent):
        lines.append(f'  <disable_collisions link1="{a}" link2="{b}" reason="Adjacent"/>')
    for i, a in enumerate(scene.links):
        for b in scene.links[i + 1:]:
            if (a, b) not in scene.adjacent and (a, b) not in touching:
                lines.append(f'  <disable_collisions link1="{a}" link2="{b}" reason="Never"/>')
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def disabled_pairs(srdf_text: str) -> dict:
    """{sorted pair: reason} of an SRDF's <disable_collisions>."""
    root = ET.fromstring(srdf_text)
    return {_pair(e.get("link1"), e.get("link2")): e.get("reason")
            for e in root.findall("disable_collisions")}
