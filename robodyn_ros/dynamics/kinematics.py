"""Forward kinematics and the energies in plain NumPy (not on the control path), and the motion of
one frame in a compiled kernel (the control path of the task-space laws).

``frame_motion`` gives, in one pass from the base, the pose of a frame, its geometric Jacobian
J = [J_v; J_w] (the velocity of the frame's origin and its angular velocity, J q̇ = [v; ω]), the
twist J q̇ and J̇ q̇, the acceleration [a; α] of the origin (classical, not spatial) at q̈ = 0.
A frame is named (module ``frames``: the tip, a URDF link, a joint's canonical frame) and found
as a constant offset on the body of one joint. ``reference="body"`` gives the same in the frame
itself: J_b = diag(Rᵀ, Rᵀ) J and J̇_b q̇ = d/dt(J_b) q̇ = [Rᵀ(a − ω × v); Rᵀ α] (Rᵀ turns with
the frame).
"""
from typing import NamedTuple

import numpy as np

from ..plumbing.kernels import (BOOL, C_MATRIX, INT, PARAMETER_VECTOR, PARAMETERS, VECTOR, Direct,
                                inline, kernel)
from .joint_frames import place_joint
from .layout import PRISMATIC as _SLIDES
from .link import PRISMATIC

REFERENCES = ("world", "body")


def joint_transform(link, qi):
    """Pose of joint frame i in joint frame i-1: the constant part, then the motion along z."""
    motion = np.eye(4)
    if link.joint == PRISMATIC:
        motion[2, 3] = qi
    else:
        c, s = np.cos(qi), np.sin(qi)
        motion[:2, :2] = [[c, -s], [s, c]]
    return link.pre @ motion


def link_frames(model, q):
    frames = []
    T = np.eye(4)
    for link, qi in zip(model.links, q):
        T = T @ joint_transform(link, qi)
        frames.append(T)
    frames.append(T @ model.tip)
    return frames


def _columns(model, frames, point, upto):
    """Jacobian columns [v; w] of ``point`` (world) for the joints before and including ``upto``."""
    J = np.zeros((6, model.dof))
    for j in range(upto + 1):
        z, o = frames[j][:3, 2], frames[j][:3, 3]
        if model.links[j].joint == PRISMATIC:
            J[:3, j] = z
        else:
            J[:3, j] = np.cross(z, point - o)
            J[3:, j] = z
    return J


def tip_jacobian(model, q):
    return frame_motion(model, q, np.zeros_like(q)).jacobian


def energy(model, q, qd):
    frames = link_frames(model, q)
    kinetic = 0.5 * model.armature @ (qd * qd)
    potential = 0.0
    for i, link in enumerate(model.links):
        R, o = frames[i][:3, :3], frames[i][:3, 3]
        c = o + R @ link.com
        J = _columns(model, frames, c, i)
        v, w = J[:3] @ qd, J[3:] @ qd
        kinetic += 0.5 * link.mass * v @ v + 0.5 * w @ (R @ link.inertia @ R.T) @ w
        potential -= link.mass * model.gravity @ c
    return kinetic, potential


# ------------------------------------------------------------------ one frame, compiled

@inline
def frame_motion_into(P, q, qd, joint, offset, body, ws, T, J, twist, bias):
    """Pose ``T``, Jacobian ``J``, twist J q̇ and J̇ q̇ of the frame at ``offset`` (12 values: a
    pose as ``place_joint`` writes one) in joint frame ``joint`` (-1: the base), world or ``body``
    (module docstring); ``ws`` (at least joint + 2 rows of 12) holds the joint poses and the
    offset.
    Outward: the pose R, o, angular velocity w, velocity v and, at q̈ = 0, accelerations al, a of
    each joint frame's origin in the base frame (001 §3's recursion with the base at rest), then
    of the frame's. Column j of J holds o_j and z_j until the frame's origin p is known, then
    z_j × (p − o_j) and z_j."""
    n = P.shape[0] - 1
    r00 = 1.0
    r01 = 0.0
    r02 = 0.0
    r10 = 0.0
    r11 = 1.0
    r12 = 0.0
    r20 = 0.0
    r21 = 0.0
    r22 = 1.0
    o0 = o1 = o2 = w0 = w1 = w2 = v0 = v1 = v2 = al0 = al1 = al2 = a0 = a1 = a2 = 0.0
    joints = joint + 1
    for i in range(joints + 1):
        if i < joints:
            place_joint(P, i, q[i], ws)
        else:
            for k in range(12):        # the frame in the last joint frame, same columns
                ws[i, k] = offset[k]
        # the new origin, carried by the parent: v += w × d, a += al × d + w × (w × d)
        d0 = r00 * ws[i, 9] + r01 * ws[i, 10] + r02 * ws[i, 11]
        d1 = r10 * ws[i, 9] + r11 * ws[i, 10] + r12 * ws[i, 11]
        d2 = r20 * ws[i, 9] + r21 * ws[i, 10] + r22 * ws[i, 11]
        wd0 = w1 * d2 - w2 * d1
        wd1 = w2 * d0 - w0 * d2
        wd2 = w0 * d1 - w1 * d0
        v0 += wd0
        v1 += wd1
        v2 += wd2
        a0 += (al1 * d2 - al2 * d1) + (w1 * wd2 - w2 * wd1)
        a1 += (al2 * d0 - al0 * d2) + (w2 * wd0 - w0 * wd2)
        a2 += (al0 * d1 - al1 * d0) + (w0 * wd1 - w1 * wd0)
        o0 += d0
        o1 += d1
        o2 += d2
        s00 = r00 * ws[i, 0] + r01 * ws[i, 3] + r02 * ws[i, 6]
        s01 = r00 * ws[i, 1] + r01 * ws[i, 4] + r02 * ws[i, 7]
        s02 = r00 * ws[i, 2] + r01 * ws[i, 5] + r02 * ws[i, 8]
        s10 = r10 * ws[i, 0] + r11 * ws[i, 3] + r12 * ws[i, 6]
        s11 = r10 * ws[i, 1] + r11 * ws[i, 4] + r12 * ws[i, 7]
        s12 = r10 * ws[i, 2] + r11 * ws[i, 5] + r12 * ws[i, 8]
        s20 = r20 * ws[i, 0] + r21 * ws[i, 3] + r22 * ws[i, 6]
        s21 = r20 * ws[i, 1] + r21 * ws[i, 4] + r22 * ws[i, 7]
        s22 = r20 * ws[i, 2] + r21 * ws[i, 5] + r22 * ws[i, 8]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = s00, s01, s02, s10, s11, s12, s20, s21, s22
        if i == joints:
            break
        # the joint's own motion along or about z = R e_z
        qdi = qd[i]
        z0 = r02 * qdi
        z1 = r12 * qdi
        z2 = r22 * qdi
        if P[i, _SLIDES] != 0.0:
            # sliding in a turning frame: Coriolis 2 w × z q̇
            a0 += 2.0 * (w1 * z2 - w2 * z1)
            a1 += 2.0 * (w2 * z0 - w0 * z2)
            a2 += 2.0 * (w0 * z1 - w1 * z0)
            v0 += z0
            v1 += z1
            v2 += z2
            J[0, i] = r02
            J[1, i] = r12
            J[2, i] = r22
            J[3, i] = 0.0
            J[4, i] = 0.0
            J[5, i] = 0.0
        else:
            al0 += w1 * z2 - w2 * z1
            al1 += w2 * z0 - w0 * z2
            al2 += w0 * z1 - w1 * z0
            w0 += z0
            w1 += z1
            w2 += z2
            J[0, i] = o0
            J[1, i] = o1
            J[2, i] = o2
            J[3, i] = r02
            J[4, i] = r12
            J[5, i] = r22
    for j in range(joints):
        if P[j, _SLIDES] == 0.0:
            e0 = o0 - J[0, j]
            e1 = o1 - J[1, j]
            e2 = o2 - J[2, j]
            J[0, j] = J[4, j] * e2 - J[5, j] * e1
            J[1, j] = J[5, j] * e0 - J[3, j] * e2
            J[2, j] = J[3, j] * e1 - J[4, j] * e0
    for j in range(joints, n):
        for k in range(6):
            J[k, j] = 0.0
    T[0, 0] = r00
    T[0, 1] = r01
    T[0, 2] = r02
    T[0, 3] = o0
    T[1, 0] = r10
    T[1, 1] = r11
    T[1, 2] = r12
    T[1, 3] = o1
    T[2, 0] = r20
    T[2, 1] = r21
    T[2, 2] = r22
    T[2, 3] = o2
    T[3, 0] = 0.0
    T[3, 1] = 0.0
    T[3, 2] = 0.0
    T[3, 3] = 1.0
    if body:
        # Rᵀ x for every 3-vector; J̇_b q̇'s linear part is Rᵀ(a − w × v)
        a0 -= w1 * v2 - w2 * v1
        a1 -= w2 * v0 - w0 * v2
        a2 -= w0 * v1 - w1 * v0
        for j in range(n):
            for k in (0, 3):
                x0 = J[k, j]
                x1 = J[k + 1, j]
                x2 = J[k + 2, j]
                J[k, j] = r00 * x0 + r10 * x1 + r20 * x2
                J[k + 1, j] = r01 * x0 + r11 * x1 + r21 * x2
                J[k + 2, j] = r02 * x0 + r12 * x1 + r22 * x2
        v0, v1, v2 = r00 * v0 + r10 * v1 + r20 * v2, r01 * v0 + r11 * v1 + r21 * v2, r02 * v0 + r12 * v1 + r22 * v2
        w0, w1, w2 = r00 * w0 + r10 * w1 + r20 * w2, r01 * w0 + r11 * w1 + r21 * w2, r02 * w0 + r12 * w1 + r22 * w2
        a0, a1, a2 = r00 * a0 + r10 * a1 + r20 * a2, r01 * a0 + r11 * a1 + r21 * a2, r02 * a0 + r12 * a1 + r22 * a2
        al0, al1, al2 = (r00 * al0 + r10 * al1 + r20 * al2, r01 * al0 + r11 * al1 + r21 * al2,
                         r02 * al0 + r12 * al1 + r22 * al2)
    twist[0] = v0
    twist[1] = v1
    twist[2] = v2
    twist[3] = w0
    twist[4] = w1
    twist[5] = w2
    bias[0] = a0
    bias[1] = a1
    bias[2] = a2
    bias[3] = al0
    bias[4] = al1
    bias[5] = al2


@kernel
def frame_motion_kernel(P, q, qd, joint, offset, body, T, J, twist, bias):
    """``frame_motion_into`` after checking every size (the caller allocates the outputs)."""
    n = P.shape[0] - 1
    if q.shape[0] != n or qd.shape[0] != n:
        raise ValueError("expected q and qd of one value per joint of the model")
    if joint < -1 or joint >= n or offset.shape[0] != 12:
        raise ValueError("expected a joint index from -1 to n - 1 and an offset of 12 values")
    if (T.shape[0] != 4 or T.shape[1] != 4 or J.shape[0] != 6 or J.shape[1] != n
            or twist.shape[0] != 6 or bias.shape[0] != 6):
        raise ValueError("outputs must be T (4, 4), J (6, n), twist (6,) and bias (6,)")
    frame_motion_into(P, q, qd, joint, offset, body, np.empty((n + 1, 12)), T, J, twist, bias)


FRAME_MOTION = Direct(frame_motion_kernel, PARAMETERS, VECTOR, VECTOR, INT, PARAMETER_VECTOR, BOOL,
                      C_MATRIX, C_MATRIX, VECTOR, VECTOR)


class FrameMotion(NamedTuple):
    """One frame at one state: ``pose`` (4x4, in the base), ``jacobian`` (6 x n), ``twist`` = J q̇
    and ``jdot_qd`` = J̇ q̇, each [linear; angular] in the base frame or the frame itself."""
    pose: np.ndarray
    jacobian: np.ndarray
    twist: np.ndarray
    jdot_qd: np.ndarray


def frame_motion(model, q, qd, link=None, reference="world"):
    """The ``FrameMotion`` of ``link`` (``RobotModel.frame``) at (q, q̇), in one compiled pass."""
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {REFERENCES}, got {reference!r}")
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    if q.ndim != 1 or qd.ndim != 1:
        raise ValueError(f"expected one state of two vectors, got shapes {q.shape} and {qd.shape}")
    frame = model.frame(link)
    out = FrameMotion(np.empty((4, 4)), np.empty((6, model.dof)), np.empty(6), np.empty(6))
    FRAME_MOTION.call(model.params, q, qd, frame.joint, frame.offset, reference == "body", *out)
    return out
