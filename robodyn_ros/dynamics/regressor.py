"""The regressors: τ = Y π, linear in the standard parameters π (``dynamics.inertial_parameters``).

``regressor(model, q, q̇, q̈)``: Y with Y π = the inverse dynamics, friction included — the joint-
torque regressor of identification. ``slotine_li_regressor(model, q, q̇, v, a)``: Y with
Y π = M(q) a + C(q, q̇) v + g(q) (+ the drive terms), with C the Christoffel Coriolis matrix — the
adaptive law's (Slotine & Li 1987). The first is the second with v = q̇ and a = q̈: one kernel.

C_ij = Σ_k Γ_ijk q̇_k with Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i): the one C that is
symmetric in its two velocities, C(q, x) y = C(q, y) x, and Ṁ − 2C is skew-symmetric, which is what
the adaptive law's Lyapunov function needs. ``model.coriolis_matrix`` is another factorisation with
the same C q̇ and the same skew property, but not symmetric in x and y; the Christoffel C is its
symmetric part, C(q, q̇) v = ½(C'(q, q̇) v + C'(q, v) q̇). The Christoffel C also keeps the base
parameters (``dynamics.base_parameters``): a standard π with Y(q, q̇, q̈) π ≡ 0 has M = 0, g = 0 and
hence all Christoffel symbols zero, so the same columns regroup in both.

One pass of a Newton–Euler recursion with two velocity sets (Niemeyer & Slotine 1991), arranged
so that each body contributes the Christoffel term of its own kinetic energy. In spatial vectors
(Featherstone), body i with velocity V, reference velocity V_r = J v and reference acceleration
A = J a + J̇ v exerts f = I A + B(I, V) V_r, where B(I, V) = ½[(V×*) I − I (V×) + (I V)×̄*] is the
rigid body's Christoffel factor (Echeandia & Wensing 2021: Σ Jᵀ(I J̇ + B J) is the arm's
Christoffel C). Written out about joint origin i in frame i, with the body's mass m, first moment
h and inertia Ī about that origin, ω and ω_r the body's angular velocity and reference angular
velocity:

    F = m γ + α × h + ω_r × (ω × h)
    N = Ī α + ½[ω × Ī ω_r + ω_r × Ī ω − Ī (ω × ω_r)] + h × γ

where α is the reference angular acceleration and γ the reference acceleration of the origin,
propagated from the base (γ = −g there) as

    revolute j:   ω ← ω + z q̇_j,  ω_r ← ω_r + z v_j,  α ← α + z a_j + ω × z v_j,
                  γ ← γ + α × p + ω_r × (ω × p)
    prismatic j:  γ ← γ + α × p + ω_r × (ω × p) + z a_j + ω × z v_j + ω_r × z q̇_j

(ω, ω_r, α of the parent on the right; p the joint's origin in the parent's frame). With ω_r = ω
these are the Newton–Euler pass of ``dynamics.newton_euler``. Row j of body i's columns is s_jᵀ Φ_i
with s_j joint j's axis carried out to frame i: at frame j, (0, z) for a revolute joint and (z, 0)
for a prismatic one, and from frame i-1 to frame i, s_f ← Rᵀ(s_f + s_n × p), s_n ← Rᵀ s_n — O(n)
work per row, n(n+1)/2 axis transports per state. The drive columns: armature a_j, viscous q̇_j,
Coulomb for each direction at the measured velocity (1 where q̇_j > 0, −1 where q̇_j < 0; a
controller compensates the friction of the motion it measures) and, when asked for, an offset 1.
"""
import numpy as np

from ..plumbing.kernels import (
    BOOL, C_MATRIX, FLOAT64, NDARRAY, PARAMETERS, VECTOR, Direct, by_rows, inline,
    kernel, scratch)
from ..plumbing.kernels import warm_up as _warm_up
from .inertial_parameters import BODY_COLUMNS, DRIVE_COLUMNS, columns
from .joint_frames import place_joint, rotate_back, to_parent
from .layout import FIRST_MOMENT, INERTIA_AT_ORIGIN, JOINT_ORIGIN, MASS, NET_FORCE, NET_MOMENT, PRISMATIC
from .newton_euler import add_net_wrench, base_motion, joint_torque, origin_acceleration

AXIS = 18            # s_j = (s_f, s_n) in a workspace row, after the pose and the net force and moment
WORKSPACE_COLUMNS = AXIS + 6
BODY = len(BODY_COLUMNS)
DRIVE = len(DRIVE_COLUMNS)


@inline
def reference_motion(P, W, i, qdi, vi, ai, w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2):
    """One step of the outward recursion (module docstring): from ω, ω_r, α, γ of origin i-1 (in
    frame i-1) to those of origin i (in frame i), the pose of frame i in frame i-1 in row i of W."""
    e0, e1, e2 = origin_acceleration(W, i, w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2)
    g0, g1, g2 = rotate_back(W, i, e0, e1, e2)
    w0, w1, w2 = rotate_back(W, i, w0, w1, w2)
    r0, r1, r2 = rotate_back(W, i, r0, r1, r2)
    a0, a1, a2 = rotate_back(W, i, a0, a1, a2)
    if P[i, PRISMATIC] != 0.0:
        # ω × z v + ω_r × z q̇: the Christoffel pair of the sliding joint's Coriolis term 2 ω × z q̇
        return (w0, w1, w2, r0, r1, r2, a0, a1, a2,
                g0 + w1 * vi + r1 * qdi, g1 - w0 * vi - r0 * qdi, g2 + ai)
    return w0, w1, w2 + qdi, r0, r1, r2 + vi, a0 + w1 * vi, a1 - w0 * vi, a2 + ai, g0, g1, g2


@inline
def carry_axis(W, i, j):
    """Joint j's axis s_j (W[j, AXIS:AXIS+6], in frame i-1) into frame i: s_f ← Rᵀ(s_f + s_n × p),
    s_n ← Rᵀ s_n, the pose of frame i in frame i-1 in row i of W."""
    px = W[i, JOINT_ORIGIN]
    py = W[i, JOINT_ORIGIN + 1]
    pz = W[i, JOINT_ORIGIN + 2]
    n0 = W[j, AXIS + 3]
    n1 = W[j, AXIS + 4]
    n2 = W[j, AXIS + 5]
    W[j, AXIS], W[j, AXIS + 1], W[j, AXIS + 2] = rotate_back(
        W, i, W[j, AXIS] + (n1 * pz - n2 * py), W[j, AXIS + 1] + (n2 * px - n0 * pz),
        W[j, AXIS + 2] + (n0 * py - n1 * px))
    W[j, AXIS + 3], W[j, AXIS + 4], W[j, AXIS + 5] = rotate_back(W, i, n0, n1, n2)


@inline
def own_axis(P, W, i):
    """Joint i's axis in its own frame: (z, 0) for a prismatic joint, (0, z) for a revolute one."""
    prismatic = P[i, PRISMATIC] != 0.0
    W[i, AXIS] = 0.0
    W[i, AXIS + 1] = 0.0
    W[i, AXIS + 2] = 1.0 if prismatic else 0.0
    W[i, AXIS + 3] = 0.0
    W[i, AXIS + 4] = 0.0
    W[i, AXIS + 5] = 0.0 if prismatic else 1.0


@inline
def frame_step(P, ws, i, qi, qdi, vi, ai, w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2):
    """Out to frame i: its pose placed in row i of ``ws``, the motion of its origin, and the axes
    of joints 0..i carried into it."""
    place_joint(P, i, qi, ws)
    motion = reference_motion(P, ws, i, qdi, vi, ai, w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2)
    for j in range(i):
        carry_axis(ws, i, j)
    own_axis(P, ws, i)
    return motion


@inline
def body_row(W, j, Y, r, c, w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2):
    """Y[r, c:c+10] = s_jᵀ Φ: the force a body moving with (ω, ω_r, α, γ) exerts along joint j's axis
    (row j of W), per unit of each of its standard parameters (module docstring)."""
    sf0 = W[j, AXIS]
    sf1 = W[j, AXIS + 1]
    sf2 = W[j, AXIS + 2]
    sn0 = W[j, AXIS + 3]
    sn1 = W[j, AXIS + 4]
    sn2 = W[j, AXIS + 5]
    Y[r, c] = sf0 * g0 + sf1 * g1 + sf2 * g2
    # h: s_f × α + (s_f·ω) ω_r − (ω·ω_r) s_f + γ × s_n
    sw = sf0 * w0 + sf1 * w1 + sf2 * w2
    wr = w0 * r0 + w1 * r1 + w2 * r2
    Y[r, c + 1] = (sf1 * a2 - sf2 * a1) + sw * r0 - wr * sf0 + (g1 * sn2 - g2 * sn1)
    Y[r, c + 2] = (sf2 * a0 - sf0 * a2) + sw * r1 - wr * sf1 + (g2 * sn0 - g0 * sn2)
    Y[r, c + 3] = (sf0 * a1 - sf1 * a0) + sw * r2 - wr * sf2 + (g0 * sn1 - g1 * sn0)
    # Ī, per symmetric unit matrix E: s_nᵀE(α − ½ ω×ω_r) + dᵀE ω_r + d_rᵀE ω, d = ½ s_n×ω, d_r = ½ s_n×ω_r
    b0 = a0 - 0.5 * (w1 * r2 - w2 * r1)
    b1 = a1 - 0.5 * (w2 * r0 - w0 * r2)
    b2 = a2 - 0.5 * (w0 * r1 - w1 * r0)
    d0 = 0.5 * (sn1 * w2 - sn2 * w1)
    d1 = 0.5 * (sn2 * w0 - sn0 * w2)
    d2 = 0.5 * (sn0 * w1 - sn1 * w0)
    e0 = 0.5 * (sn1 * r2 - sn2 * r1)
    e1 = 0.5 * (sn2 * r0 - sn0 * r2)
    e2 = 0.5 * (sn0 * r1 - sn1 * r0)
    Y[r, c + 4] = sn0 * b0 + d0 * r0 + e0 * w0                                               # xx
    Y[r, c + 5] = sn0 * b1 + sn1 * b0 + d0 * r1 + d1 * r0 + e0 * w1 + e1 * w0                # xy
    Y[r, c + 6] = sn1 * b1 + d1 * r1 + e1 * w1                                               # yy
    Y[r, c + 7] = sn0 * b2 + sn2 * b0 + d0 * r2 + d2 * r0 + e0 * w2 + e2 * w0                # xz
    Y[r, c + 8] = sn1 * b2 + sn2 * b1 + d1 * r2 + d2 * r1 + e1 * w2 + e2 * w1                # yz
    Y[r, c + 9] = sn2 * b2 + d2 * r2 + e2 * w2                                               # zz


@inline
def drive_row(Y, j, c, qdj, aj, offset):
    """Joint j's drive columns from column c: armature a_j, viscous q̇_j, Coulomb per direction,
    the offset."""
    Y[j, c] = aj
    Y[j, c + 1] = qdj
    Y[j, c + 2] = 1.0 if qdj > 0.0 else 0.0
    Y[j, c + 3] = -1.0 if qdj < 0.0 else 0.0
    if offset:
        Y[j, c + 4] = 1.0


@inline
def regressor_into(P, q, qd, v, a, offset, ws, Y):
    """Y(q, q̇, v, a) into ``Y`` (n, columns(n, offset)); ``ws`` is (n, WORKSPACE_COLUMNS)."""
    n = q.shape[0]
    drive = DRIVE + 1 if offset else DRIVE
    for j in range(n):
        for c in range(Y.shape[1]):
            Y[j, c] = 0.0
        drive_row(Y, j, BODY * n + drive * j, qd[j], a[j], offset)
    w0, w1, w2, a0, a1, a2, g0, g1, g2 = base_motion(P, n, True)
    r0, r1, r2 = w0, w1, w2
    for i in range(n):
        w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2 = frame_step(
            P, ws, i, q[i], qd[i], v[i], a[i], w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2)
        for j in range(i + 1):
            body_row(ws, j, Y, j, BODY * i, w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2)


@inline
def payload_into(P, q, qd, v, a, friction, last, ws, tau, Yp):
    """τ = Y(q, q̇, v, a) π for the model's π with the last body's 10 standard parameters replaced by
    ``last``, into ``tau`` (n,), and that body's 10 columns of Y into ``Yp`` (n, 10): one pass, the
    other bodies' columns never formed. ``friction``: the model's viscous and Coulomb terms."""
    n = q.shape[0]
    w0, w1, w2, a0, a1, a2, g0, g1, g2 = base_motion(P, n, True)
    r0, r1, r2 = w0, w1, w2
    for i in range(n):
        w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2 = frame_step(
            P, ws, i, q[i], qd[i], v[i], a[i], w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2)
        if i < n - 1:
            m = P[i, MASS]
            h0 = P[i, FIRST_MOMENT]
            h1 = P[i, FIRST_MOMENT + 1]
            h2 = P[i, FIRST_MOMENT + 2]
            xx = P[i, INERTIA_AT_ORIGIN]
            yy = P[i, INERTIA_AT_ORIGIN + 1]
            zz = P[i, INERTIA_AT_ORIGIN + 2]
            xy = P[i, INERTIA_AT_ORIGIN + 3]
            yz = P[i, INERTIA_AT_ORIGIN + 4]
            xz = P[i, INERTIA_AT_ORIGIN + 5]
        else:   # BODY_COLUMNS' order: m, h, xx, xy, yy, xz, yz, zz
            m = last[0]
            h0 = last[1]
            h1 = last[2]
            h2 = last[3]
            xx = last[4]
            xy = last[5]
            yy = last[6]
            xz = last[7]
            yz = last[8]
            zz = last[9]
        # F = m γ + α × h + ω_r × (ω × h);  N = Ī α + ½[ω × Ī ω_r + ω_r × Ī ω − Ī (ω × ω_r)] + h × γ
        wh0 = w1 * h2 - w2 * h1
        wh1 = w2 * h0 - w0 * h2
        wh2 = w0 * h1 - w1 * h0
        ws[i, NET_FORCE] = m * g0 + (a1 * h2 - a2 * h1) + (r1 * wh2 - r2 * wh1)
        ws[i, NET_FORCE + 1] = m * g1 + (a2 * h0 - a0 * h2) + (r2 * wh0 - r0 * wh2)
        ws[i, NET_FORCE + 2] = m * g2 + (a0 * h1 - a1 * h0) + (r0 * wh1 - r1 * wh0)
        c0 = w1 * r2 - w2 * r1
        c1 = w2 * r0 - w0 * r2
        c2 = w0 * r1 - w1 * r0
        Iw0 = xx * w0 + xy * w1 + xz * w2
        Iw1 = xy * w0 + yy * w1 + yz * w2
        Iw2 = xz * w0 + yz * w1 + zz * w2
        Ir0 = xx * r0 + xy * r1 + xz * r2
        Ir1 = xy * r0 + yy * r1 + yz * r2
        Ir2 = xz * r0 + yz * r1 + zz * r2
        b0 = a0 - 0.5 * c0
        b1 = a1 - 0.5 * c1
        b2 = a2 - 0.5 * c2
        ws[i, NET_MOMENT] = ((xx * b0 + xy * b1 + xz * b2)
                             + 0.5 * ((w1 * Ir2 - w2 * Ir1) + (r1 * Iw2 - r2 * Iw1))
                             + (h1 * g2 - h2 * g1))
        ws[i, NET_MOMENT + 1] = ((xy * b0 + yy * b1 + yz * b2)
                                 + 0.5 * ((w2 * Ir0 - w0 * Ir2) + (r2 * Iw0 - r0 * Iw2))
                                 + (h2 * g0 - h0 * g2))
        ws[i, NET_MOMENT + 2] = ((xz * b0 + yz * b1 + zz * b2)
                                 + 0.5 * ((w0 * Ir1 - w1 * Ir0) + (r0 * Iw1 - r1 * Iw0))
                                 + (h0 * g1 - h1 * g0))
    for j in range(n):
        body_row(ws, j, Yp, j, 0, w0, w1, w2, r0, r1, r2, a0, a1, a2, g0, g1, g2)
    # inward: as in rnea_into, the wrench link i-1 exerts on link i, whose z part joint i bears
    f0 = f1 = f2 = n0 = n1 = n2 = 0.0
    for i in range(n - 1, -1, -1):
        f0, f1, f2, n0, n1, n2 = add_net_wrench(ws, i, f0, f1, f2, n0, n1, n2)
        tau[i] = joint_torque(P, i, f2, n2, qd[i], a[i], friction)
        if i > 0:
            f0, f1, f2, n0, n1, n2 = to_parent(ws, i, f0, f1, f2, n0, n1, n2)


@kernel
def regressor_one(P, q, qd, v, a, offset, Y):
    """One state into ``Y``, which the caller allocates; the workspace on the stack (``scratch``).
    The adaptive law's step calls this compiled version (``as_declared``): its own inlined copy of
    ``regressor_into`` cost numba some 3 s more."""
    n = P.shape[0] - 1
    if (q.shape[0] != n or qd.shape[0] != n or v.shape[0] != n or a.shape[0] != n
            or Y.shape[0] != n or Y.shape[1] != (BODY + DRIVE + offset) * n):
        raise ValueError("expected q, qd, v and a of one value per joint of the model")
    regressor_into(P, q, qd, v, a, offset, scratch(n, WORKSPACE_COLUMNS), Y)


@kernel
def regressor_batch(P, q, qd, qdd, offset, Y):
    """The identification regressor of each row of q, qd, qdd (N, n) into ``Y`` (N, n, columns).
    Inlines ``regressor_into``, unlike the dynamics' batches that call their one-state kernel:
    here the call's five row views, counted on arrays both cores' threads share, halved the
    two-core batch."""
    ws = np.empty((q.shape[1], WORKSPACE_COLUMNS))
    for k in range(q.shape[0]):
        regressor_into(P, q[k], qd[k], qd[k], qdd[k], offset, ws, Y[k])


@kernel
def payload_one(P, q, qd, v, a, friction, last, tau, Yp):
    """``payload_into`` for one state, the caller's arrays checked, the workspace on the stack; the
    adaptive law's step calls it as it does ``regressor_one``."""
    n = P.shape[0] - 1
    if (q.shape[0] != n or qd.shape[0] != n or v.shape[0] != n or a.shape[0] != n
            or last.shape[0] != BODY or tau.shape[0] != n or Yp.shape[0] != n or Yp.shape[1] != BODY):
        raise ValueError("expected q, qd, v, a and tau of one value per joint, 10 parameters of "
                         "the last body and its (n, 10) columns")
    payload_into(P, q, qd, v, a, friction, last, scratch(n, WORKSPACE_COLUMNS), tau, Yp)


_ONE = Direct(regressor_one, PARAMETERS, VECTOR, VECTOR, VECTOR, VECTOR, BOOL, C_MATRIX)
_PAYLOAD = Direct(payload_one, PARAMETERS, VECTOR, VECTOR, VECTOR, VECTOR, BOOL, VECTOR, VECTOR,
                  C_MATRIX)


def _vectors(model, *arrays):
    out = []
    for x in arrays:
        if not (x.__class__ is NDARRAY and x.dtype is FLOAT64 and x.ndim == 1):
            x = np.asarray(x, dtype=float)
        if x.shape != (model.dof,):
            raise ValueError(f"expected one value per joint ({model.dof}), got shape {x.shape}")
        out.append(x)
    return out


def regressor(model, q, qd, qdd, offset=False):
    """Y with Y @ standard_parameters(model, offset) = model.inverse_dynamics(q, qd, qdd): (n, p)
    for one state, (N, n, p) for a batch of N (shared among the cores)."""
    n, p = model.dof, columns(model.dof, offset)
    offset = bool(offset)
    if (q.__class__ is qd.__class__ is qdd.__class__ is NDARRAY and q.dtype is FLOAT64
            and qd.dtype is FLOAT64 and qdd.dtype is FLOAT64 and q.ndim == qd.ndim == qdd.ndim == 1):
        Y = np.empty((n, p))
        _ONE.call(model.params, q, qd, qd, qdd, offset, Y)
        return Y
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    if q.ndim == 1:
        return regressor(model, q, qd, qdd, offset)
    if not (q.ndim == 2 and q.shape[1] == n and q.shape == qd.shape == qdd.shape):
        raise ValueError(f"expected batches of shape (N, {n}) alike, got "
                         f"{[x.shape for x in (q, qd, qdd)]}")
    q, qd, qdd = (np.ascontiguousarray(x) for x in (q, qd, qdd))
    Y = np.empty((q.shape[0], n, p))
    by_rows(lambda a, b: regressor_batch(model.params, q[a:b], qd[a:b], qdd[a:b], offset, Y[a:b]),
            q.shape[0])
    return Y


def slotine_li_regressor(model, q, qd, v, a):
    """Y (n, columns(n)) with Y @ standard_parameters(model) = M(q) a + C(q, q̇) v + g(q) + the
    drive terms (armature a, viscous q̇, Coulomb at q̇), C the Christoffel one."""
    q, qd, v, a = _vectors(model, q, qd, v, a)
    Y = np.empty((model.dof, columns(model.dof)))
    _ONE.call(model.params, q, qd, v, a, False, Y)
    return Y


def payload_regressor(model, q, qd, v, a, last, friction=True):
    """(τ, Y_last): τ as ``slotine_li_regressor(...) @ π`` for the model's π with the last body's 10
    standard parameters replaced by ``last`` (without the viscous and Coulomb terms unless
    ``friction``), and the last body's 10 columns of Y (n, 10), in one pass."""
    q, qd, v, a = _vectors(model, q, qd, v, a)
    last = np.asarray(last, dtype=float)
    if last.shape != (BODY,):
        raise ValueError(f"expected the last body's {BODY} standard parameters {BODY_COLUMNS}, got "
                         f"shape {last.shape}")
    tau, Yp = np.empty(model.dof), np.empty((model.dof, BODY))
    _PAYLOAD.call(model.params, q, qd, v, a, bool(friction), last, tau, Yp)
    return tau, Yp


# CPU seconds of compiling warm_up's kernels from an empty cache (alone in a fresh process on the
# 2-core machine of doc/install.md, 2026-11-28 evening): the estimate a program gives when it
# compiles them
COMPILE_SECONDS = 8


def warm_up(notify=print):
    """Compile (or load from numba's cache) the regressor kernels — one state and a batch, with and
    without the offset column, and the payload's — on a one-link arm whose argument types match
    any model's."""
    def exercise():
        from .link import Link
        from .model import RobotModel
        model = RobotModel([Link("j", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])
        q, Q = np.zeros(1), np.zeros((1, 1))
        for offset in (False, True):
            regressor(model, q, q, q, offset)
            regressor(model, Q, Q, Q, offset)
        payload_regressor(model, q, q, q, q, np.zeros(BODY))
    return _warm_up("regressor kernels", exercise, notify, COMPILE_SECONDS)
