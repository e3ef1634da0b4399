"""Recursive Newton–Euler inverse dynamics (Luh–Walker–Paul; 000 §7.4, 001 §3, 003).

The kernel is written as scalar arithmetic over preallocated arrays, once: numba compiles it for the
fast path, and ``robodyn_ros.dynamics.counting`` runs the very same Python function interpreted on
counting scalars to measure its operation count.

Frames: every joint moves about (revolute) or along (prismatic) the z axis of its own joint frame.
Row i of the packed parameter array ``P`` (see ``layout``) holds the constant transform from joint
frame i-1 to joint frame i before the motion, and the body of link i in joint frame i. The body is
described about the joint-frame origin (mass m, first moment h = m c, inertia I_o), which saves the
COM shift in both recursions.
"""
import numpy as np

from ..plumbing.kernels import as_declared, as_read_only, inline, kernel, scratch, state_kernel
from .joint_frames import inertia, place_joint, rotate_back, to_parent
from .layout import (ARMATURE, COULOMB_NEG, COULOMB_POS, COULOMB_TANH, FIRST_MOMENT, FRICTION_OFFSET,
                     GRAVITY_VECTOR, INERTIA_AT_ORIGIN, JOINT_ORIGIN, MASS, NET_FORCE, NET_MOMENT,
                     PRISMATIC, RNEA_COLUMNS, VISCOUS)

# bits of ``mode``
GRAVITY = 1      # gravity enters as the base acceleration -g (000 eq. 7.44)
FRICTION = 2     # viscous and Coulomb joint friction
TIP_WRENCH = 4   # the wrench the end-effector exerts, in the tip frame


@inline
def base_motion(P, n, gravity):
    """The base's angular velocity, angular acceleration and linear acceleration: at rest, but
    accelerating upwards at g (when ``gravity``) so that every link feels its weight."""
    if gravity:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                -P[n, GRAVITY_VECTOR], -P[n, GRAVITY_VECTOR + 1], -P[n, GRAVITY_VECTOR + 2])
    return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0


@inline
def origin_acceleration(W, i, w0, w1, w2, r0, r1, r2, a0, a1, a2, v0, v1, v2):
    """The acceleration of origin i in frame i-1, v + a × p + r × (w × p), from the motion of
    origin i-1 (angular velocity w, angular acceleration a, linear acceleration v) and p, origin
    i in frame i-1 (row i of W). r = w but in the Slotine–Li pass (``dynamics.regressor``)."""
    px = W[i, JOINT_ORIGIN]
    py = W[i, JOINT_ORIGIN + 1]
    pz = W[i, JOINT_ORIGIN + 2]
    wp0 = w1 * pz - w2 * py
    wp1 = w2 * px - w0 * pz
    wp2 = w0 * py - w1 * px
    return (v0 + (a1 * pz - a2 * py) + (r1 * wp2 - r2 * wp1),
            v1 + (a2 * px - a0 * pz) + (r2 * wp0 - r0 * wp2),
            v2 + (a0 * py - a1 * px) + (r0 * wp1 - r1 * wp0))


@inline
def link_motion(P, W, i, qdi, qddi, w0, w1, w2, a0, a1, a2, v0, v1, v2):
    """One step of the outward recursion: from the angular velocity w, angular acceleration a and
    linear acceleration v of origin i-1 (in frame i-1) to those of origin i (in frame i), for joint
    i moving at qdi, qddi; the pose of frame i in frame i-1 is row i of W (``place_joint``)."""
    e0, e1, e2 = origin_acceleration(W, i, w0, w1, w2, w0, w1, w2, a0, a1, a2, v0, v1, v2)
    v0, v1, v2 = rotate_back(W, i, e0, e1, e2)
    w0, w1, w2 = rotate_back(W, i, w0, w1, w2)
    a0, a1, a2 = rotate_back(W, i, a0, a1, a2)
    if P[i, PRISMATIC] != 0.0:
        # Coriolis 2 w x (z qd) and the sliding acceleration z qdd
        return w0, w1, w2, a0, a1, a2, v0 + 2.0 * w1 * qdi, v1 - 2.0 * w0 * qdi, v2 + qddi
    # the parent's angular velocity, seen from frame i, crossed with the joint rate z qd
    return w0, w1, w2 + qdi, a0 + w1 * qdi, a1 - w0 * qdi, a2 + qddi, v0, v1, v2


@inline
def add_net_wrench(ws, i, f0, f1, f2, n0, n1, n2):
    """One step of the inward recursion: body i's net force and moment (row i of the workspace)
    added to the wrench link i exerts on link i+1 gives the one link i-1 exerts on link i."""
    return (f0 + ws[i, NET_FORCE], f1 + ws[i, NET_FORCE + 1], f2 + ws[i, NET_FORCE + 2],
            n0 + ws[i, NET_MOMENT], n1 + ws[i, NET_MOMENT + 1], n2 + ws[i, NET_MOMENT + 2])


@inline
def joint_friction(P, i, qdi):
    """Joint i's friction at the velocity qdi: viscous, Coulomb (the sign of qdi, or tanh(qdi /
    v_s) where the model has a velocity scale v_s; each direction with its own magnitude) and a
    constant offset (dynamics.friction's forms). The one place it is written: Newton–Euler, the
    drive stage and the momentum observer call it."""
    t = P[i, VISCOUS] * qdi + P[i, FRICTION_OFFSET]
    scale = P[i, COULOMB_TANH]
    if scale > 0.0:
        s = np.tanh(qdi / scale)
        t = t + (P[i, COULOMB_POS] if s > 0.0 else P[i, COULOMB_NEG]) * s
    elif qdi > 0.0:
        t = t + P[i, COULOMB_POS]
    elif qdi < 0.0:
        t = t - P[i, COULOMB_NEG]
    return t


@inline
def joint_torque(P, i, f2, n2, qdi, qddi, friction):
    """What joint i bears of the wrench link i-1 exerts on link i (its z part: force for a
    prismatic joint, moment for a revolute one), plus its drive's armature and, when
    ``friction``, its friction (``joint_friction``)."""
    t = f2 if P[i, PRISMATIC] != 0.0 else n2
    t = t + P[i, ARMATURE] * qddi
    if friction:
        t = t + joint_friction(P, i, qdi)
    return t


@inline
def rnea_into(P, q, qd, qdd, wrench, mode, ws, tau):
    """tau = M(q) qdd + C(q, qd) qd + g(q) [+ friction] [+ J^T wrench], written into ``tau``."""
    n = q.shape[0]
    # Outward recursion: angular velocity w, angular acceleration a, linear acceleration v of the
    # joint-frame origins, each expressed in its own frame. The base is at rest, but accelerates
    # upwards at g so that every link feels its weight.
    w0, w1, w2, a0, a1, a2, v0, v1, v2 = base_motion(P, n, mode & GRAVITY)
    for i in range(n):
        place_joint(P, i, q[i], ws)
        w0, w1, w2, a0, a1, a2, v0, v1, v2 = link_motion(P, ws, i, qd[i], qdd[i], w0, w1, w2,
                                                         a0, a1, a2, v0, v1, v2)
        # net force F = m v + a x h + w x (w x h) and moment N = I a + w x I w + h x v on body i
        m = P[i, MASS]
        h0 = P[i, FIRST_MOMENT]
        h1 = P[i, FIRST_MOMENT + 1]
        h2 = P[i, FIRST_MOMENT + 2]
        Ixx, Iyy, Izz, Ixy, Iyz, Ixz = inertia(P, i, INERTIA_AT_ORIGIN)
        wh0 = w1 * h2 - w2 * h1
        wh1 = w2 * h0 - w0 * h2
        wh2 = w0 * h1 - w1 * h0
        Iw0 = Ixx * w0 + Ixy * w1 + Ixz * w2
        Iw1 = Ixy * w0 + Iyy * w1 + Iyz * w2
        Iw2 = Ixz * w0 + Iyz * w1 + Izz * w2
        ws[i, NET_FORCE] = m * v0 + (a1 * h2 - a2 * h1) + (w1 * wh2 - w2 * wh1)
        ws[i, NET_FORCE + 1] = m * v1 + (a2 * h0 - a0 * h2) + (w2 * wh0 - w0 * wh2)
        ws[i, NET_FORCE + 2] = m * v2 + (a0 * h1 - a1 * h0) + (w0 * wh1 - w1 * wh0)
        ws[i, NET_MOMENT] = (Ixx * a0 + Ixy * a1 + Ixz * a2) + (w1 * Iw2 - w2 * Iw1) + (h1 * v2 - h2 * v1)
        ws[i, NET_MOMENT + 1] = (Ixy * a0 + Iyy * a1 + Iyz * a2) + (w2 * Iw0 - w0 * Iw2) + (h2 * v0 - h0 * v2)
        ws[i, NET_MOMENT + 2] = (Ixz * a0 + Iyz * a1 + Izz * a2) + (w0 * Iw1 - w1 * Iw0) + (h0 * v1 - h1 * v0)

    # Inward recursion: entering step i, (f, n) is the force and moment (about origin i, in frame i)
    # that link i exerts on link i+1 (beyond the last link: the tool on its environment). Adding
    # body i's net force and moment gives what link i-1 exerts on link i, whose z part joint i bears.
    f0 = 0.0
    f1 = 0.0
    f2 = 0.0
    n0 = 0.0
    n1 = 0.0
    n2 = 0.0
    if mode & TIP_WRENCH:
        # the tip frame sits in the last joint frame as a joint frame in its parent: same transform
        f0, f1, f2, n0, n1, n2 = to_parent(P, n, wrench[0], wrench[1], wrench[2],
                                           wrench[3], wrench[4], wrench[5])
    for i in range(n - 1, -1, -1):
        f0, f1, f2, n0, n1, n2 = add_net_wrench(ws, i, f0, f1, f2, n0, n1, n2)
        tau[i] = joint_torque(P, i, f2, n2, qd[i], qdd[i], mode & FRICTION)
        if i > 0:
            f0, f1, f2, n0, n1, n2 = to_parent(ws, i, f0, f1, f2, n0, n1, n2)


@kernel
def check_sizes(P, q, qd, qdd):
    n = P.shape[0] - 1
    if q.ndim != 1 or q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n:
        raise ValueError("expected q, qd and qdd (or tau) of one value per joint of the model")


@state_kernel
def rnea(P, q, qd, qdd, wrench, mode, tau):
    """One state into ``tau``, which the caller allocates: a NumPy allocation in Python costs a
    fraction of handing back an array the compiled code allocated. The workspace is on the stack
    (``scratch``)."""
    check_sizes(P, q, qd, qdd)
    rnea_into(P, q, qd, qdd, wrench, mode, scratch(q.shape[0], RNEA_COLUMNS), tau)


NO_WRENCH = np.zeros(6)   # "no tip wrench"; a compile-time constant inside kernels


@state_kernel
def rnea_no_wrench(P, q, qd, qdd, mode, tau):
    """The control-loop call: one array argument fewer to pass, which is a sizeable part of it."""
    rnea(P, q, qd, qdd, NO_WRENCH, mode, tau)


@kernel
def rnea_batch(P, q, qd, qdd, wrench, mode, tau):
    """``rnea`` on each row into ``tau`` (N, n); ``wrench`` is (N, 6) (ignored unless mode has
    TIP_WRENCH) or one placeholder row. ``rnea``'s compiled version is called, not compiled
    into this kernel once more (some 4 s of numba's time; the call costs a few per cent a row)."""
    last = wrench.shape[0] - 1
    for k in range(q.shape[0]):
        rnea(P, as_declared(q[k]), as_declared(qd[k]), as_declared(qdd[k]),
             as_read_only(wrench[min(k, last)]), mode, as_declared(tau[k]))
