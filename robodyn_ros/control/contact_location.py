"""Where on the arm a contact is, from the residual and the URDF's collision shapes
(doc/collisions.md, "Judged on MuJoCo's contacts"), and the wrench estimate.

The residual r ≈ τ_ext = J_k(p)ᵀ f for a force f at a point p of link k, J_k(p) the Jacobian of
that point, whose columns after k are zero. ``contact`` tries the points on the surfaces of the
shapes (``link_shapes``) of the links the residual allows (at or after the last joint that
crossed its threshold) and keeps the one where a force pressing into the surface explains r best
and that an obstacle can reach: a least-squares fit per point under the contact's own constraint,
the measurement model of Manuelli & Tedrake's contact particle filter (IROS 2016) without the
filter. A shape on a link fixed to a moving one (a hand, a tool, a payload) is that link's. ROS-free.
"""
from __future__ import annotations

import numpy as np

from .link_shapes import SPACING, Shape, link_shapes, nearest, padded, through

__all__ = ["Shape", "contact", "link_shapes", "locate", "wrench_estimate"]

SINGULARITY_THRESHOLD = 1e-3   # ε on the eigenvalues of J Jᵀ (wrench_estimate)
RAY = 0.3         # m: how far out against the force a contact point must be clear of the arm
SEEDS = 2         # the best samples of each shape the search over its surface starts from
ITERATIONS = 6    # Gauss–Newton steps of that search
STEP = 0.02       # m: its longest step (the samples' spacing or so)
SETTLED = 1e-4    # m: its steps once it has found the point


def wrench_estimate(model, q, r, eps: float = SINGULARITY_THRESHOLD) -> np.ndarray:
    """F̂ = (Jᵀ)⁺ r, the tip wrench [f; n] (base frame) nearest to causing the residual r: J Jᵀ =
    U diag(σ) Uᵀ inverted direction by direction as the task-space laws invert J M⁻¹ Jᵀ, 1/σ for
    σ ≥ ε and σ/ε² below, so a singular direction gets no force and F̂ stays finite. The wrench the
    contact exerts on the arm, at the tip frame's origin (doc/collisions.md, "Conventions")."""
    J = model.frame_jacobian(q)
    sigma, U = np.linalg.eigh(J @ J.T)
    inverse = np.where(sigma >= eps, 1.0 / np.maximum(sigma, eps), np.maximum(sigma, 0.0) / eps ** 2)
    return U @ (inverse * (U.T @ (J @ r)))


def locate(model, shapes, q, r, first: int = 0) -> int | None:
    """The joint whose body most probably carries the contact (``contact``'s shape's), among the
    joints ``first`` and after; None when no shape is there or r is zero."""
    found = contact(model, shapes, q, r, first)
    return None if found is None else found[0].joint


def contact(model, shapes, q, r, first: int = 0):
    """(shape, point, force): the contact that explains the residual r best among the shapes on
    the joints ``first`` and after, the point in the base frame and the force it exerts on the arm.
    Of the points on their surfaces, the one where a force pressing into the surface (f·n <= 0,
    n the outward normal) gives the least |J_k(p)ᵀ f − r| and that an obstacle can reach: the ray
    from it against the force, out to RAY, meets no other shape of the arm. Points on one line of
    force explain r alike; the contact is where the line, coming from the obstacle's side, first
    meets the arm, and the others lie behind it. The surfaces are searched on their samples, then
    from the best few of each shape over the surface itself (``_refine``): a sample a few mm off
    the line of force fits worse, by |f| times that, than a point of another link on it. None
    when no shape is there or r is zero."""
    chosen = [k for k, s in enumerate(shapes) if s.joint >= first]
    if not chosen or not np.any(r):
        return None
    frames = model.link_frames(q)
    placed = _Placed(shapes, frames)
    columns = _columns(model, frames)
    points = np.concatenate([placed.world(k, shapes[k].points) for k in chosen])
    normals = np.concatenate([placed.world(k, shapes[k].normals, turn_only=True) for k in chosen])
    owner = np.repeat(chosen, [len(shapes[k].points) for k in chosen])
    f, misfit = _pressing(columns, points, normals, placed.joints[owner], r)
    # a sample is within SPACING of any point of its surface, where the fit can be better by at
    # most |f| SPACING per joint: a shape whose best sample is further off cannot win
    best = int(np.argmin(misfit))
    near = misfit <= misfit[best] + np.linalg.norm(f[best]) * SPACING * np.sqrt(len(r))
    start = np.concatenate([np.flatnonzero(owner == k)[np.argsort(misfit[owner == k])[:SEEDS]]
                            for k in np.unique(owner[near])])
    owner = owner[start]
    points, normals = _refine(columns, placed, owner, points[start], normals[start], r)
    f, misfit = _pressing(columns, points, normals, placed.joints[owner], r)
    order = np.argsort(misfit, kind="stable")
    clear = _clear(placed, points[order], f[order], owner[order])
    best = order[int(np.argmax(clear))]   # the best fit all the same if every point is hidden
    return shapes[owner[best]], points[best], f[best]


class _Placed:
    """The shapes at the arm's pose: each one's rotation and origin in the base frame, its joint,
    kind and ``padded`` size, as arrays a batch of points (one shape each) indexes."""

    def __init__(self, shapes, frames):
        poses = np.array([frames[s.joint] @ s.pose for s in shapes])
        self.R, self.t = poses[:, :3, :3], poses[:, :3, 3]
        self.joints = np.array([s.joint for s in shapes])
        self.kinds = np.array([s.kind for s in shapes])
        self.sizes = np.array([padded(s.size) for s in shapes])
        self._frames = frames
        self._shapes = shapes

    def world(self, k, points, turn_only=False):
        """Shape k's points (its joint's frame) in the base frame; directions ``turn_only``."""
        frame = self._frames[self._shapes[k].joint]
        return points @ frame[:3, :3].T + (0.0 if turn_only else frame[:3, 3])

    def local(self, owner, points):
        """Points (base frame) in the frames of their shapes ``owner``."""
        return np.einsum("kji,kj->ki", self.R[owner], points - self.t[owner])

    def nearest(self, owner, points):
        """``link_shapes.nearest`` for points each on its own shape: base frame in and out."""
        out, normals = np.empty_like(points), np.empty_like(points)
        local = self.local(owner, points)
        for kind in np.unique(self.kinds[owner]):
            rows = self.kinds[owner] == kind
            p, n = nearest(kind, local[rows], self.sizes[owner[rows]])
            R = self.R[owner[rows]]
            out[rows] = np.einsum("kij,kj->ki", R, p) + self.t[owner[rows]]
            normals[rows] = np.einsum("kij,kj->ki", R, n)
        return out, normals


def _columns(model, frames):
    """(z_j, o_j, revolute_j): each joint's axis and origin (base frame), and its kind."""
    n = model.dof
    return (np.array([f[:3, 2] for f in frames[:n]]), np.array([f[:3, 3] for f in frames[:n]]),
            np.array([kind != "prismatic" for kind in model.joint_types]))


def _jacobians(columns, points, joints):
    """A[p, j] = z_j × (p − o_j) (revolute) or z_j (prismatic), zero for j after p's body: the
    joint torques of a unit force at p are A[p] f."""
    z, o, revolute = columns
    A = np.where(revolute[None, :, None], _cross(z[None], points[:, None] - o[None]), z[None])
    return A * (np.arange(len(z))[None, :] <= joints[:, None])[:, :, None]


def _pressing(columns, points, normals, joints, r):
    """Per point, the force f with f·n <= 0 nearest to explaining r, and |J_k(p)ᵀ f − r|."""
    A = _jacobians(columns, points, joints)
    AtA = np.einsum("pji,pjk->pik", A, A) + 1e-12 * np.eye(3)
    Atr = np.einsum("pji,j->pi", A, r)
    f = np.linalg.solve(AtA, Atr[..., None])[..., 0]
    pulling = np.einsum("pi,pi->p", f, normals) > 0.0
    if pulling.any():   # the constraint holds: the best force in the tangent plane f·n = 0
        B = _tangents(normals[pulling])
        M = np.einsum("kia,kij,kjb->kab", B, AtA[pulling], B)
        g = np.linalg.solve(M, np.einsum("kia,ki->ka", B, Atr[pulling])[..., None])[..., 0]
        f[pulling] = np.einsum("kia,ka->ki", B, g)
    return f, np.linalg.norm(np.einsum("pji,pi->pj", A, f) - r, axis=1)


def _tangents(normals):
    """(k, 3, 2): two unit vectors spanning the plane normal to each of ``normals``."""
    t1 = _cross(normals, np.eye(3)[np.argmin(np.abs(normals), axis=1)])
    t1 /= np.linalg.norm(t1, axis=1)[:, None]
    return np.stack([t1, _cross(normals, t1)], axis=2)


def _cross(a, b):
    """a × b over the last axis (broadcast): np.cross's own checks cost more than the products
    for these small arrays."""
    a, b = np.broadcast_arrays(a, b)
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def _refine(columns, placed, owner, points, normals, r):
    """Gauss–Newton on each point's shape: the point moved in its tangent plane (at most STEP a
    time) and back onto the surface, the force fitted anew each time (variable projection), to
    the least |J_k(p)ᵀ f − r|. A torque (z_j × (p − o_j))·f = (p − o_j)·(f × z_j) moves with p
    by f × z_j (a revolute joint; a prismatic one's not at all)."""
    z, _, revolute = columns
    joints = placed.joints[owner]
    mask = (np.arange(len(z))[None, :] <= joints[:, None]) & revolute[None, :]
    for _ in range(ITERATIONS):
        A = _jacobians(columns, points, joints)
        f = np.linalg.solve(np.einsum("pji,pjk->pik", A, A) + 1e-12 * np.eye(3),
                            np.einsum("pji,j->pi", A, r)[..., None])[..., 0]
        e = np.einsum("pji,pi->pj", A, f) - r
        T = _tangents(normals)
        G = _cross(f[:, None], z[None]) * mask[:, :, None]            # ∂τ/∂p, (k, n, 3)
        J = np.concatenate([np.einsum("pji,pia->pja", G, T), A], axis=2)  # (k, n, 5)
        JtJ = np.einsum("pja,pjb->pab", J, J)
        damped = JtJ + 1e-9 * np.trace(JtJ, axis1=1, axis2=2)[:, None, None] * np.eye(5)
        step = -np.linalg.solve(damped, np.einsum("pja,pj->pa", J, e)[..., None])[..., 0]
        move = np.einsum("pia,pa->pi", T, step[:, :2])
        size = np.linalg.norm(move, axis=1)
        if size.max() < SETTLED:
            break
        points, normals = placed.nearest(
            owner, points + move * np.minimum(1.0, STEP / np.maximum(size, 1e-12))[:, None])
    return points, normals


def _clear(placed, points, forces, owner):
    """Whether the segment from each point out against its force, RAY long, stays out of every
    shape of the arm but the point's own (which a ray leaving a convex surface outward does not
    enter); a point inside another shape is hidden."""
    size = np.linalg.norm(forces, axis=1)
    away = -forces / np.where(size > 0.0, size, 1.0)[:, None]
    blocked = size == 0.0
    # every (point, shape) pair but a point's own shape, by kind
    k, shape = np.divmod(np.arange(len(points) * len(placed.kinds)), len(placed.kinds))
    k, shape = k[shape != owner[k]], shape[shape != owner[k]]
    o = placed.local(shape, points[k])
    d = np.einsum("kji,kj->ki", placed.R[shape], RAY * away[k])
    for kind in np.unique(placed.kinds[shape]):
        rows = placed.kinds[shape] == kind
        hit = through(kind, o[rows], d[rows], placed.sizes[shape[rows]])
        blocked[k[rows][hit]] = True
    return ~blocked
