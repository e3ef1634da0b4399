"""The arm's collision shapes as the contact locator sees them (``contact_location``): the URDF's
<collision> primitives — sphere, cylinder, capsule, box, exactly — each on the body of the joint
that carries it. A shape on a link fixed to another (a hand on the flange, a tool, a payload) rides
on the joint that moves that link: the residual cannot tell a fixed child from its parent, and a
contact on either is one on the moving link. Meshes are skipped. ROS-free.

Each shape's surface is sampled once (``SPACING`` apart, with its outward normals) in the frame
of its joint, and ``inside`` says which points of space it holds: the surface is where a contact
can be, the inside where none can be.
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np

from ..dynamics.link import ModelError
from ..dynamics.transforms import homogeneous, rpy_to_matrix

__all__ = ["KINDS", "SPACING", "Shape", "closest", "crosses", "inside", "link_shapes", "nearest",
           "padded", "through"]

KINDS = ("sphere", "cylinder", "capsule", "box")
SPACING = 0.02   # m between the surface points of a shape (the search starts there)


@dataclasses.dataclass(frozen=True, eq=False)
class Shape:
    """A collision primitive of URDF link ``link`` on the body joint ``joint`` moves: a ``kind``
    (KINDS) of ``size`` — a sphere's radius; a cylinder's or capsule's radius and half length
    along its z; a box's three half sides — at ``pose`` (4x4, in that joint's canonical frame).
    ``points`` and ``normals`` (m, 3): its surface and the outward normals there, joint frame."""
    joint: int
    link: str
    kind: str
    size: tuple
    pose: np.ndarray
    points: np.ndarray
    normals: np.ndarray


def _numbers(text, count, where, size=False):
    """``count`` finite numbers (> 0 for a ``size``) from the attribute's text."""
    try:
        values = [float(x) for x in (text or "").split()]
    except ValueError:
        values = []
    if len(values) != count or not np.all(np.isfinite(values)) or (size and min(values) <= 0.0):
        raise ModelError(f"{where}: expected {count} finite numbers{' > 0' if size else ''}, "
                         f"got {text!r}")
    return values


def _primitive(geometry, where):
    """(kind, size) of a <geometry>, or None for a mesh."""
    kind = geometry[0] if len(geometry) else None
    if kind is None or kind.tag == "mesh":
        return None
    if kind.tag in ("cylinder", "capsule"):
        radius, length = (_numbers(kind.get(k), 1, f"{where} {kind.tag} {k}", size=True)[0]
                          for k in ("radius", "length"))
        return kind.tag, (radius, length / 2.0)
    if kind.tag == "sphere":
        return "sphere", tuple(_numbers(kind.get("radius"), 1, f"{where} sphere radius", size=True))
    if kind.tag == "box":
        return "box", tuple(x / 2.0 for x in _numbers(kind.get("size"), 3, f"{where} box size",
                                                      size=True))
    raise ModelError(f"{where}: unknown geometry <{kind.tag}>")


def link_shapes(model, urdf: str, spacing: float = SPACING) -> tuple[Shape, ...]:
    """The <collision> primitives of the URDF text's links that ride on ``model``'s joints, those
    of links fixed to a moving one included (a link the model does not place, or the fixed base,
    is left out), their surfaces sampled ``spacing`` apart."""
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
            primitive = None if geometry is None else _primitive(geometry, where)
            if primitive is None:
                continue
            kind, size = primitive
            pose = offset @ homogeneous(rpy_to_matrix(rpy), xyz)
            local, normals = _surface(kind, size, spacing)
            points = local @ pose[:3, :3].T + pose[:3, 3]
            for array in (pose, points, normals):
                array.flags.writeable = False
            shapes.append(Shape(frame.joint, name, kind, size, pose, points,
                                np.ascontiguousarray(normals @ pose[:3, :3].T)))
    return tuple(shapes)


def _ring(radius, spacing):
    """Angles of points ``spacing`` apart around a circle of ``radius`` (at least 8)."""
    count = max(8, int(np.ceil(2.0 * np.pi * radius / spacing)))
    return np.linspace(0.0, 2.0 * np.pi, count, endpoint=False)


def _steps(half, spacing):
    """Points from -half to half at most ``spacing`` apart (both ends)."""
    return np.linspace(-half, half, max(2, int(np.ceil(2.0 * half / spacing)) + 1))


def _sphere(radius, spacing):
    """A Fibonacci lattice on the sphere: (unit directions)."""
    count = max(8, int(np.ceil(4.0 * np.pi * radius ** 2 / spacing ** 2)))
    k = np.arange(count) + 0.5
    z = 1.0 - 2.0 * k / count
    angle = np.pi * (1.0 + 5.0 ** 0.5) * k
    rho = np.sqrt(1.0 - z ** 2)
    return np.column_stack([rho * np.cos(angle), rho * np.sin(angle), z])


def _disc(radius, spacing):
    """Points over a disc of ``radius`` (z = 0): the centre and rings out to the rim."""
    rings = [np.zeros((1, 2))]
    for rho in np.linspace(0.0, radius, max(1, int(np.ceil(radius / spacing))) + 1)[1:]:
        a = _ring(rho, spacing)
        rings.append(rho * np.column_stack([np.cos(a), np.sin(a)]))
    return np.concatenate(rings)


def _surface(kind, size, spacing):
    """(points, outward normals) on the shape, in its own frame."""
    if kind == "sphere":
        n = _sphere(size[0], spacing)
        return size[0] * n, n
    if kind == "box":
        points, normals = [], []
        for axis in range(3):
            u, v = (axis + 1) % 3, (axis + 2) % 3
            a, b = np.meshgrid(_steps(size[u], spacing), _steps(size[v], spacing))
            for side in (-1.0, 1.0):
                face = np.zeros((a.size, 3))
                face[:, u], face[:, v], face[:, axis] = a.ravel(), b.ravel(), side * size[axis]
                points.append(face)
                normals.append(np.tile(side * np.eye(3)[axis], (a.size, 1)))
        return np.concatenate(points), np.concatenate(normals)
    radius, half = size
    a = _ring(radius, spacing)
    around = np.column_stack([np.cos(a), np.sin(a), np.zeros_like(a)])
    z = _steps(half, spacing)
    side = (radius * around[None] + z[:, None, None] * np.eye(3)[2]).reshape(-1, 3)
    side_normals = np.tile(around, (len(z), 1))
    if kind == "cylinder":
        disc = _disc(radius, spacing)
        caps = [np.column_stack([disc, np.full(len(disc), s * half)]) for s in (-1.0, 1.0)]
        cap_normals = [np.tile([0.0, 0.0, s], (len(disc), 1)) for s in (-1.0, 1.0)]
        return np.concatenate([side, *caps]), np.concatenate([side_normals, *cap_normals])
    n = _sphere(radius, spacing)   # capsule: the two half spheres
    ends = [radius * n[s * n[:, 2] > 0] + [0.0, 0.0, s * half] for s in (-1, 1)]
    end_normals = [n[s * n[:, 2] > 0] for s in (-1, 1)]
    return np.concatenate([side, *ends]), np.concatenate([side_normals, *end_normals])


def inside(shape: Shape, points, margin: float = 0.0) -> np.ndarray:
    """Which of ``points`` (k, 3, in the shape's joint frame) lie inside the shape by more than
    ``margin`` (m)."""
    local = (np.asarray(points) - shape.pose[:3, 3]) @ shape.pose[:3, :3]
    size = np.asarray(shape.size)
    if shape.kind == "sphere":
        return np.linalg.norm(local, axis=1) < size[0] - margin
    if shape.kind == "box":
        return np.all(np.abs(local) < size - margin, axis=1)
    radius, half = size
    if shape.kind == "cylinder":
        return (np.abs(local[:, 2]) < half - margin) & (np.hypot(local[:, 0], local[:, 1])
                                                         < radius - margin)
    along = np.clip(local[:, 2], -half, half)   # capsule: the distance to its segment
    return np.linalg.norm(local - along[:, None] * np.eye(3)[2], axis=1) < radius - margin


def closest(shape: Shape, points):
    """(the surface points nearest to ``points`` (k, 3), their outward normals), all in the
    shape's joint frame."""
    R, t = shape.pose[:3, :3], shape.pose[:3, 3]
    p, n = nearest(shape.kind, (np.asarray(points) - t) @ R, padded(shape.size))
    return p @ R.T + t, n @ R.T


def crosses(shape: Shape, starts, ends, margin: float = 1e-6) -> np.ndarray:
    """Whether each segment from ``starts`` to ``ends`` (k, 3, in the shape's joint frame) passes
    through the shape deeper than ``margin`` (m)."""
    R, t = shape.pose[:3, :3], shape.pose[:3, 3]
    o = (np.asarray(starts) - t) @ R
    return through(shape.kind, o, (np.asarray(ends) - t) @ R - o, padded(shape.size), margin)


def padded(size) -> np.ndarray:
    """A shape's size as three numbers (a sphere's radius thrice, a cylinder's or capsule's
    radius, half length and 0), as ``nearest`` and ``through`` take them, one row per point."""
    return np.resize(np.asarray(size, dtype=float), 3) if len(size) != 2 else np.array([*size, 0.0])


def nearest(kind: str, x, size):
    """(the surface points nearest to ``x`` (k, 3), their outward normals) on the shapes of
    ``kind`` and ``size`` (``padded``: one row, or one per point), all in the shapes' own frames
    (a cylinder's or capsule's axis z)."""
    size = np.broadcast_to(size, x.shape)
    if kind == "sphere" or kind == "capsule":
        axis = np.zeros_like(x)
        if kind == "capsule":
            axis[:, 2] = np.clip(x[:, 2], -size[:, 1], size[:, 1])
        n = _unit(x - axis, np.eye(3)[0])
        return axis + size[:, :1] * n, n
    rows = np.arange(len(x))
    if kind == "box":
        p = np.clip(x, -size, size)
        held = np.all(np.abs(x) <= size, axis=1)
        # inside: out through the nearest face; outside: the face it is furthest out of
        face = np.argmin(size - np.abs(x), axis=1)
        side = np.where(x[rows, face] < 0.0, -1.0, 1.0)
        p[held, face[held]] = side[held] * size[held, face[held]]
        n = np.zeros_like(x)
        n[rows, face] = side
        return p, n
    radius, half = size[:, 0], size[:, 1]   # cylinder: the nearer of the side and the cap
    rho = np.hypot(x[:, 0], x[:, 1])
    radial = _unit(np.column_stack([x[:, :2], np.zeros(len(x))]), np.eye(3)[0])
    axial = np.eye(3)[2]
    side = radial * radius[:, None] + np.clip(x[:, 2], -half, half)[:, None] * axial
    s = np.where(x[:, 2] < 0.0, -1.0, 1.0)
    cap = radial * np.minimum(rho, radius)[:, None] + (s * half)[:, None] * axial
    on_cap = np.linalg.norm(cap - x, axis=1) < np.linalg.norm(side - x, axis=1)
    return (np.where(on_cap[:, None], cap, side),
            np.where(on_cap[:, None], s[:, None] * axial, radial))


def through(kind: str, o, d, size, margin: float = 1e-6) -> np.ndarray:
    """Whether each segment o + s d, s in [0, 1] (k, 3, the shapes' own frames), passes through
    the shape of ``kind`` and ``size`` (``padded``, a row or one per segment) deeper than
    ``margin``: an interval of s for a convex solid, from its quadrics and slabs."""
    size = np.broadcast_to(size, o.shape) - margin
    lo, hi = np.zeros(len(o)), np.ones(len(o))
    if kind == "box":
        return _slab(o, d, -size, size, lo, hi)
    if kind == "sphere":
        return _ball(o, d, size[:, 0], lo, hi, 3)
    radius, half = size[:, 0], size[:, 1:2]
    crossing = _slab(o[:, 2:], d[:, 2:], -half, half, *_ball(o, d, radius, lo, hi, 2, interval=True))
    if kind == "capsule":
        for end in (-1.0, 1.0):
            crossing |= _ball(o - end * size[:, 1:2] * np.eye(3)[2], d, radius, lo, hi, 3)
    return crossing


def _ball(o, d, radius, lo, hi, axes, interval=False):
    """Where |x(s)| < radius over the first ``axes`` of x (three: a ball; two: a cylinder without
    ends), within [lo, hi]: the interval (``interval``) or whether it is not empty."""
    a = np.einsum("ki,ki->k", d[:, :axes], d[:, :axes])
    b = np.einsum("ki,ki->k", o[:, :axes], d[:, :axes])
    c = np.einsum("ki,ki->k", o[:, :axes], o[:, :axes]) - radius ** 2
    root = np.sqrt(np.maximum(b * b - a * c, 0.0))
    moving = a > 0.0
    safe = np.where(moving, a, 1.0)
    # along the axis (a = 0): inside throughout, or never
    first = np.where(moving, (-b - root) / safe, np.where(c < 0.0, -np.inf, np.inf))
    last = np.where(moving, (-b + root) / safe, np.where(c < 0.0, np.inf, -np.inf))
    empty = moving & (b * b - a * c <= 0.0)
    lo, hi = np.maximum(lo, np.where(empty, np.inf, first)), np.minimum(hi, last)
    return (lo, hi) if interval else lo < hi


def _slab(o, d, low, high, lo, hi):
    """Whether x(s) lies within [low, high] (rows) on every axis of ``o`` for some s in [lo, hi]."""
    for i in range(o.shape[1]):
        moving = d[:, i] != 0.0
        safe = np.where(moving, d[:, i], 1.0)
        t1, t2 = (low[:, i] - o[:, i]) / safe, (high[:, i] - o[:, i]) / safe
        held = (o[:, i] > low[:, i]) & (o[:, i] < high[:, i])
        lo = np.maximum(lo, np.where(moving, np.minimum(t1, t2), np.where(held, -np.inf, np.inf)))
        hi = np.minimum(hi, np.where(moving, np.maximum(t1, t2), np.where(held, np.inf, -np.inf)))
    return lo < hi


def _unit(v, fallback):
    """``v``'s rows made unit length (``fallback`` where a row is zero)."""
    size = np.linalg.norm(v, axis=1)
    return np.where(size[:, None] > 0.0, v / np.where(size > 0.0, size, 1.0)[:, None], fallback)
