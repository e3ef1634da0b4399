"""Where on the arm a contact is, from the residual and the URDF's collision shapes
(doc/collisions.md, "Judged on MuJoCo's contacts"), and the wrench estimate.

The residual r ≈ τ_ext = J_k(p)ᵀ f for a force f at a point p of link k, J_k(p) the Jacobian of
that point, whose columns after k are zero. ``locate`` tries points on every shape of the links
the residual allows (at or after the last joint that crossed its threshold) and keeps the link of
the point where some force explains r best — a least-squares fit per point, the measurement model
of Manuelli & Tedrake's contact particle filter (IROS 2016) without the filter. A shape is its axis
segment (a cylinder's, a capsule's, a box's longest side) and points a radius around it; meshes
are skipped. ROS-free.
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np

from ..dynamics.link import ModelError
from ..dynamics.transforms import homogeneous, rpy_to_matrix

SINGULARITY_THRESHOLD = 1e-3   # ε on the eigenvalues of J Jᵀ (wrench_estimate)


def wrench_estimate(model, q, r, eps: float = SINGULARITY_THRESHOLD) -> np.ndarray:
    """F̂ = (Jᵀ)⁺ r, the tip wrench [f; n] (base frame) nearest to causing the residual r: J Jᵀ =
    U diag(σ) Uᵀ inverted direction by direction as the task-space laws invert J M⁻¹ Jᵀ, 1/σ for
    σ ≥ ε and σ/ε² below, so a singular direction gets no force and F̂ stays finite. The wrench the
    contact exerts on the arm, at the tip frame's origin (doc/collisions.md, "Conventions")."""
    J = model.frame_jacobian(q)
    sigma, U = np.linalg.eigh(J @ J.T)
    inverse = np.where(sigma >= eps, 1.0 / np.maximum(sigma, eps), np.maximum(sigma, 0.0) / eps ** 2)
    return U @ (inverse * (U.T @ (J @ r)))


@dataclasses.dataclass(frozen=True)
class Shape:
    """A collision shape on the body joint ``joint`` moves: the segment ±``half`` along the z axis
    of ``pose`` (4x4, in that joint's canonical frame), thickened by ``radius``."""
    joint: int
    pose: np.ndarray
    half: float
    radius: float


def _numbers(text, count, where):
    try:
        values = [float(x) for x in (text or "").split()]
    except ValueError:
        values = []
    if len(values) != count or not np.all(np.isfinite(values)):
        raise ModelError(f"{where}: expected {count} finite numbers, got {text!r}")
    return values


def _segment(geometry, where):
    """(rotation taking the shape's axis to z, half length, radius), or None for a mesh."""
    kind = geometry[0] if len(geometry) else None
    if kind is None or kind.tag == "mesh":
        return None
    if kind.tag in ("cylinder", "capsule"):
        radius, length = (_numbers(kind.get(k), 1, f"{where} {kind.tag} {k}")[0]
                          for k in ("radius", "length"))
        return np.eye(3), length / 2.0, radius
    if kind.tag == "sphere":
        return np.eye(3), 0.0, _numbers(kind.get("radius"), 1, f"{where} sphere radius")[0]
    if kind.tag == "box":
        size = np.array(_numbers(kind.get("size"), 3, f"{where} box size"))
        longest = int(np.argmax(size))
        axes = np.eye(3)[[(longest + 1) % 3, (longest + 2) % 3, longest]].T   # z along it
        return axes, size[longest] / 2.0, float(np.hypot(*np.delete(size, longest)) / 2.0)
    raise ModelError(f"{where}: unknown geometry <{kind.tag}>")


def link_shapes(model, urdf: str) -> tuple[Shape, ...]:
    """The <collision> primitives of the URDF text's links that ride on ``model``'s joints (a link
    the model does not place, or the fixed base, is left out)."""
    shapes = []
    for link in ET.fromstring(urdf).findall("link"):
        name = link.get("name")
        try:
            frame = model.frame(name)
        except ModelError:
            continue
        if frame.joint < 0 or link.find("collision") is None:
            continue
        offset = np.eye(4)
        offset[:3, :3], offset[:3, 3] = frame.offset[:9].reshape(3, 3), frame.offset[9:]
        for i, collision in enumerate(link.findall("collision")):
            where = f"link '{name}' collision {i + 1}"
            origin = collision.find("origin")
            xyz = _numbers(origin.get("xyz", "0 0 0"), 3, f"{where} origin xyz") \
                if origin is not None else [0.0, 0.0, 0.0]
            rpy = _numbers(origin.get("rpy", "0 0 0"), 3, f"{where} origin rpy") \
                if origin is not None else [0.0, 0.0, 0.0]
            geometry = collision.find("geometry")
            segment = None if geometry is None else _segment(geometry, where)
            if segment is None:
                continue
            axes, half, radius = segment
            pose = offset @ homogeneous(rpy_to_matrix(rpy) @ axes, xyz)
            pose.flags.writeable = False
            shapes.append(Shape(frame.joint, pose, half, radius))
    return tuple(shapes)


ALONG = np.linspace(-1.0, 1.0, 5)   # the points tried along a shape's axis, in half lengths
AROUND = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])   # in radii


def _points(shapes, frames):
    """(points (P, 3) on or in the shapes, base frame; the joint whose body carries each)."""
    points, joints = [], []
    for shape in shapes:
        pose = frames[shape.joint] @ shape.pose
        x, y, z = pose[:3, 0], pose[:3, 1], pose[:3, 2]
        grid = (pose[:3, 3] + (ALONG * shape.half)[:, None, None] * z
                + shape.radius * (AROUND[:, 0, None] * x + AROUND[:, 1, None] * y)[None])
        points.append(grid.reshape(-1, 3))
        joints.append(np.full(len(points[-1]), shape.joint))
    return np.concatenate(points), np.concatenate(joints)


def locate(model, shapes, q, r, first: int = 0) -> int | None:
    """The joint whose body most probably carries the contact, among the joints ``first`` and
    after: of points on every shape, the one where a force f best explains the residual r, the
    least |J_k(p)ᵀ f − r| over f (J_k(p) the Jacobian of point p of body k, its columns after k
    zero: a force on link k gives the joints after it no torque). None when no shape is there or
    r is zero."""
    chosen = [s for s in shapes if s.joint >= first]
    if not chosen or not np.any(r):
        return None
    frames = model.link_frames(q)
    points, joints = _points(chosen, frames)
    n = model.dof
    z = np.array([f[:3, 2] for f in frames[:n]])
    o = np.array([f[:3, 3] for f in frames[:n]])
    revolute = np.array([kind != "prismatic" for kind in model.joint_types])
    # A[p, j] = z_j × (p − o_j) (revolute) or z_j (prismatic), zero for j after p's body
    A = np.where(revolute[None, :, None], np.cross(z[None], points[:, None] - o[None]), z[None])
    A *= (np.arange(n)[None, :] <= joints[:, None])[:, :, None]
    AtA = np.einsum("pji,pjk->pik", A, A) + 1e-12 * np.eye(3)
    Atr = np.einsum("pji,j->pi", A, r)
    f = np.linalg.solve(AtA, Atr[..., None])[..., 0]
    misfit = np.linalg.norm(np.einsum("pji,pi->pj", A, f) - r, axis=1)
    return int(joints[int(np.argmin(misfit))])
