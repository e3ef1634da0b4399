"""Task-space laws for arms: ``operational_space`` (Khatib 1987) and ``cartesian_impedance``.

Both control one frame of the arm (``task_link``: the tip, a URDF link or a joint's frame;
``RobotModel.frame``) in the base frame, with J the frame's geometric Jacobian ([v; ω], base frame),
M(q) the joint-space inertia and h(q, q̇) = C q̇ + g (+ the model's friction with ``friction``):

    operational_space:    τ = Jᵀ Λ (ẍ_d + K_d ė + K_p e − J̇ q̇) + h + N τ_0
    cartesian_impedance:  τ = Jᵀ (K e + D ė + w) + h + N τ_0

Λ = (J M⁻¹ Jᵀ)⁻¹ is the task-space inertia, N = I − Jᵀ J̄ᵀ with J̄ = M⁻¹ Jᵀ Λ the dynamically
consistent projector, and τ_0 = M v_0 the posture task, v_0 = [q̈_d +] K_p,n (q_d − q) + K_d,n
(q̇_d − q̇) (q̈_d in operational_space only). Since J̄ᵀ M v_0 = Λ J v_0, N τ_0 + h = NE(q, q̇, v_0) −
Jᵀ Λ J v_0: one Newton–Euler pass gives h and the posture together. With an exact model, the
operational-space closed loop is ë + K_d ė + K_p e = 0 whatever v_0 (J M⁻¹ N = 0).

Errors: e = [p_d − p; log(R_d Rᵀ)], the rotation vector of the rotation from the frame to the
target (angle times axis, base frame): its size is the angle itself up to π and it is computed
without a singularity (near π from the symmetric part of R_d Rᵀ), unlike Euler angles; unlike a
quaternion's vector part (sin θ/2 times the axis) the stiffness acts on the angle, not on its sine,
so a 90° error pulls as hard as the gain says. ė = [v_d − v; ω_d − ω] (ω the angular velocity).

Singularities: J M⁻¹ Jᵀ = U diag(σ) Uᵀ is inverted direction by direction, 1/σ where σ ≥ ε and
σ/ε² below (damped least squares with λ² = ε² − σ², which falls continuously to 0 at σ = 0): Λ
never exceeds 1/ε, a singular direction gets no force, and the torque stays finite. ``damping``
(λ² of the weakest direction) and ``manipulability`` (Yoshikawa's √det(J Jᵀ)) say how close.
The cycle factors M once (M⁻¹ Jᵀ: six columns) and J M⁻¹ Jᵀ too; as every σ ≥ 1/trace((J M⁻¹
Jᵀ)⁻¹), when that bound is ≥ ε the rule is Λ = (J M⁻¹ Jᵀ)⁻¹, a solve with the factor. Else, and
for the impedance's Λ^½, the eigenvalues come from Jacobi rotations started from the last cycle's
eigenvectors (``eigen``): no LAPACK call, one or two sweeps a cycle.

The reference: through ``compute``'s joint interface, x_d = FK(q_d), ẋ_d = J(q_d) q̇_d and ẍ_d =
J(q_d) q̈_d + J̇(q_d, q̇_d) q̇_d, the posture pulls towards q_d; ``set_target`` overrides x_d, ẋ_d,
ẍ_d until ``clear_target``. Each law is one compiled call per cycle, on one buffer of the law's
(``views``): no allocation, one array to pass.
"""
from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

import numpy as np

from ..dynamics.crba import crba_into
from ..dynamics.forward import cholesky, cholesky_solve
from ..dynamics.kinematics import frame_motion_into
from ..dynamics.layout import CRBA_COLUMNS
from ..dynamics.newton_euler import FRICTION, GRAVITY, NO_WRENCH, rnea_into
from ..plumbing.kernels import (BOOL, C_VECTOR, FLOAT, FLOAT64, INT, NDARRAY, PARAMETERS, PARAMETER_VECTOR,
                                VECTOR, Direct, inline, kernel)
from .gains import _numbers, check_definite, gain, per_joint
from .law import ControlLaw
from .laws import _FRICTION, _flag

__all__ = ["CartesianImpedance", "OperationalSpace"]

_EYE3 = np.eye(3)


# ------------------------------------------------------------------ the law's arrays

@inline
def views(buf, n):
    """Every array of a law, one after another in ``buf`` (the law's and the kernel's view of it
    alike): a cycle passes one array, not twenty, and allocates none. Written out, not through
    a helper per array: each inlined call costs numba a pass of its own (a fifth of the law's
    compile)."""
    at = 0
    pose = buf[at:at + 16].reshape((4, 4))  # the frame's pose, measured
    at += 16
    goal = buf[at:at + 16].reshape((4, 4))  # set_target's pose
    at += 16
    reference = buf[at:at + 16].reshape((4, 4))  # FK(q_d)
    at += 16
    held = buf[at:at + 16].reshape((4, 4))  # cartesian_impedance: the filtered target pose
    at += 16
    goal_motion = buf[at:at + 12].reshape((2, 6))  # set_target's [ẋ_d; ẍ_d]
    at += 12
    reference_motion = buf[at:at + 12].reshape((2, 6))  # from q_d, q̇_d, q̈_d (``reference``)
    at += 12
    motion = buf[at:at + 12].reshape((2, 6))  # [J q̇; J̇ q̇], measured
    at += 12
    task = buf[at:at + 24].reshape((4, 6))  # scratch: e, the force, f(σ), √f(σ)
    at += 24
    gains = buf[at:at + 36].reshape((6, 6))  # per task axis: each law's rows (its _configure)
    at += 36
    rotation = buf[at:at + 9].reshape((3, 3))  # pose_error's scratch
    at += 9
    inverse_inertia = buf[at:at + 36].reshape((6, 6))  # J M⁻¹ Jᵀ, kept for the diagnostics
    at += 36
    factor = buf[at:at + 36].reshape((6, 6))  # its Cholesky factor
    at += 36
    inertia = buf[at:at + 36].reshape((6, 6))  # Λ
    at += 36
    half = buf[at:at + 36].reshape((6, 6))  # Λ^½
    at += 36
    eigenvectors = buf[at:at + 36].reshape((6, 6))  # U of J M⁻¹ Jᵀ = U diag(σ) Uᵀ: kept, the
    # next start
    at += 36
    rotated = buf[at:at + 36].reshape((6, 6))  # Uᵀ (J M⁻¹ Jᵀ) U, diagonalised
    at += 36
    jacobian = buf[at:at + 6 * n].reshape((6, n))  # J, measured
    at += 6 * n
    reference_jacobian = buf[at:at + 6 * n].reshape((6, n))
    at += 6 * n
    mobility = buf[at:at + 6 * n].reshape((6, n))  # (M⁻¹ Jᵀ)ᵀ
    at += 6 * n
    mass = buf[at:at + n * n].reshape((n, n))  # M, then its Cholesky factor
    at += n * n
    posture_kp = buf[at:at + n * n].reshape((n, n))
    at += n * n
    posture_kd = buf[at:at + n * n].reshape((n, n))
    at += n * n
    joint = buf[at:at + 4 * n].reshape((4, n))  # rows TAU, LAST, RATE, V0
    at += 4 * n
    # the frame, CRBA and Newton–Euler passes'
    workspace = buf[at:at + (n + 1) * CRBA_COLUMNS].reshape((n + 1, CRBA_COLUMNS))
    at += (n + 1) * CRBA_COLUMNS
    return (pose, goal, reference, held, goal_motion, reference_motion, motion, task, gains,
            rotation, inverse_inertia, factor, inertia, half, eigenvectors, rotated, jacobian,
            reference_jacobian, mobility, mass, posture_kp, posture_kd, joint, workspace, at)


TAU, LAST, RATE, V0 = range(4)   # rows of ``joint``


def buffer_size(n: int) -> int:
    """The length ``views`` lays out for n joints, measured on a buffer surely long enough (its
    plain Python source, here and in the law: called compiled from Python, numba would compile it
    apart, 1.2 s of every compile)."""
    return views.py_func(np.empty(400 + 30 * (n + 1) ** 2), n)[-1]


# ------------------------------------------------------------------ kernel pieces

@inline
def rotation_vector(R, i):
    """log of the rotation R[i] (3x3) as angle times axis, for any angle in [0, π]."""
    s0 = 0.5 * (R[i, 2, 1] - R[i, 1, 2])
    s1 = 0.5 * (R[i, 0, 2] - R[i, 2, 0])
    s2 = 0.5 * (R[i, 1, 0] - R[i, 0, 1])
    c = 0.5 * (R[i, 0, 0] + R[i, 1, 1] + R[i, 2, 2] - 1.0)
    sn = np.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    theta = np.arctan2(sn, c)
    if c > -0.5:   # below 120°, sin θ u is well conditioned
        k = theta / sn if sn > 1e-300 else 1.0
        return k * s0, k * s1, k * s2
    # near π: (R + Rᵀ)/2 − c I = (1 − c) u uᵀ; its largest diagonal gives u, s = sin θ u the sign
    k = 0
    if R[i, 1, 1] > R[i, k, k]:
        k = 1
    if R[i, 2, 2] > R[i, k, k]:
        k = 2
    b = np.sqrt((R[i, k, k] - c) * (1.0 - c))
    u0 = (0.5 * (R[i, 0, k] + R[i, k, 0]) - (c if k == 0 else 0.0)) / b
    u1 = (0.5 * (R[i, 1, k] + R[i, k, 1]) - (c if k == 1 else 0.0)) / b
    u2 = (0.5 * (R[i, 2, k] + R[i, k, 2]) - (c if k == 2 else 0.0)) / b
    if u0 * s0 + u1 * s1 + u2 * s2 < 0.0:
        theta = -theta
    return theta * u0, theta * u1, theta * u2


@inline
def turn(T, x, y, z):
    """T's rotation turned by the rotation vector (x, y, z), in the base frame: exp([x, y, z]×) R,
    column by column (Rodrigues: v cos θ + sin θ/θ ω × v + (1 − cos θ)/θ² (ω·v) ω)."""
    theta = np.sqrt(x * x + y * y + z * z)
    if theta == 0.0:
        return
    c = np.cos(theta)
    s = np.sin(theta) / theta
    k = (1.0 - c) / (theta * theta)
    for j in range(3):
        v0, v1, v2 = T[0, j], T[1, j], T[2, j]
        d = k * (x * v0 + y * v1 + z * v2)
        T[0, j] = c * v0 + s * (y * v2 - z * v1) + d * x
        T[1, j] = c * v1 + s * (z * v0 - x * v2) + d * y
        T[2, j] = c * v2 + s * (x * v1 - y * v0) + d * z


@inline
def pose_error(target, pose, e, R):
    """e[0:6] = [p_d − p; log(R_d Rᵀ)]; ``R`` (3, 3) scratch."""
    for a in range(3):
        e[a] = target[a, 3] - pose[a, 3]
        for b in range(3):
            R[a, b] = (target[a, 0] * pose[b, 0] + target[a, 1] * pose[b, 1]
                       + target[a, 2] * pose[b, 2])
    e[3], e[4], e[5] = rotation_vector(R.reshape((1, 3, 3)), 0)


@inline
def trace_of_inverse(L, y):
    """trace((L Lᵀ)⁻¹) = ‖L⁻¹‖²_F, column by column of L⁻¹ (``y``: a scratch vector)."""
    n = L.shape[0]
    total = 0.0
    for j in range(n):
        for i in range(j, n):       # column j of L⁻¹ is zero above row j
            s = 1.0 if i == j else 0.0
            for k in range(j, i):
                s -= L[i, k] * y[k]
            y[i] = s / L[i, i]
            total += y[i] * y[i]
    return total


@inline
def mat_vec(A, x, y, add):
    """y = A x, or y += A x (``add``)."""
    for i in range(A.shape[0]):
        s = y[i] if add else 0.0
        for k in range(A.shape[1]):
            s += A[i, k] * x[k]
        y[i] = s


@inline
def task_inertia(P, q, J, M, X, A, L, mass_factored):
    """M (factored in place), X = (M⁻¹ Jᵀ)ᵀ, A = J M⁻¹ Jᵀ and its Cholesky factor L; whether A
    is positive definite. One factorisation of M for the six columns."""
    n = q.shape[0]
    if not mass_factored:
        raise ValueError("mass matrix is not positive definite")
    for k in range(6):
        for j in range(n):
            X[k, j] = J[k, j]
        cholesky_solve(M, X[k])
    for i in range(6):
        for j in range(i + 1):
            s = 0.0
            for k in range(n):
                s += J[i, k] * X[j, k]
            A[i, j] = s
            A[j, i] = s
            L[i, j] = s
            L[j, i] = s
    return cholesky(L)


SWEEPS = 16   # Jacobi sweeps at most: from a cold start a 6 x 6 takes 5-7, from the last cycle's U 1-2


@inline
def orthonormalise(U):
    """Modified Gram–Schmidt on U's columns, so that rounding does not build up over the cycles
    that refine the same U; the identity again if U is lost (a NaN)."""
    for j in range(6):
        for k in range(j):
            d = 0.0
            for i in range(6):
                d += U[i, j] * U[i, k]
            for i in range(6):
                U[i, j] -= d * U[i, k]
        norm = 0.0
        for i in range(6):
            norm += U[i, j] * U[i, j]
        if not 0.5 < norm < 2.0:
            for i in range(6):
                for k in range(6):
                    U[i, k] = 1.0 if i == k else 0.0
            return
        norm = np.sqrt(norm)
        for i in range(6):
            U[i, j] /= norm


@inline
def eigen(A, U, B, T):
    """A = U diag(B) Uᵀ for a symmetric 6 x 6 A by cyclic Jacobi rotations, starting from the U of
    the last cycle (A changes little from one cycle to the next): B = Uᵀ A U is then nearly
    diagonal already. Converged to rounding whatever the start (Λ and Λ^½ do not depend on it).
    ``T``: 6 x 6 scratch."""
    orthonormalise(U)
    for i in range(6):
        for j in range(6):
            s = 0.0
            for k in range(6):
                s += A[i, k] * U[k, j]
            T[i, j] = s
    for i in range(6):
        for j in range(i, 6):
            s = 0.0
            for k in range(6):
                s += U[k, i] * T[k, j]
            B[i, j] = B[j, i] = s
    for _ in range(SWEEPS):
        off = 0.0
        diagonal = 0.0
        for i in range(6):
            diagonal += B[i, i] * B[i, i]
            for j in range(i + 1, 6):
                off += B[i, j] * B[i, j]
        if off <= 1e-32 * diagonal:
            return
        for p in range(5):
            for r in range(p + 1, 6):
                if B[p, r] != 0.0:
                    rotate(B, U, p, r)


@inline
def rotate(B, U, p, r):
    """The Jacobi rotation in the (p, r) plane that zeroes B[p, r]: B ← Gᵀ B G, U ← U G."""
    theta = (B[r, r] - B[p, p]) / (2.0 * B[p, r])
    t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + np.sqrt(theta * theta + 1.0))
    c = 1.0 / np.sqrt(t * t + 1.0)
    s = t * c
    for k in range(6):
        x = B[k, p]
        y = B[k, r]
        B[k, p] = c * x - s * y
        B[k, r] = s * x + c * y
    for k in range(6):
        x = B[p, k]
        y = B[r, k]
        B[p, k] = c * x - s * y
        B[r, k] = s * x + c * y
    for k in range(6):
        x = U[k, p]
        y = U[k, r]
        U[k, p] = c * x - s * y
        U[k, r] = s * x + c * y


@inline
def damped(A, eps, Lam, half, f, r, U, B):
    """Λ and Λ^½ by the documented rule (module docstring): A = U diag(σ) Uᵀ (``eigen``; U kept
    for the next cycle), f(σ) = 1/σ for σ ≥ ε, σ/ε² below. ``f``, ``r``: scratch 6-vectors."""
    eigen(A, U, B, Lam)
    for k in range(6):
        s = B[k, k]
        f[k] = 1.0 / s if s >= eps else max(s, 0.0) / (eps * eps)
        r[k] = np.sqrt(f[k])
    for i in range(6):
        for j in range(i + 1):
            a = 0.0
            b = 0.0
            for k in range(6):
                u = U[i, k] * U[j, k]
                a += u * f[k]
                b += u * r[k]
            Lam[i, j] = Lam[j, i] = a
            half[i, j] = half[j, i] = b


@inline
def posture(P, q, qd, q_des, qd_des, qdd_des, feedforward, kp, kd, mode, J, ws, v0, tau, b):
    """τ = NE(q, q̇, v_0) = h + τ_0, and b −= J v_0: N τ_0 + h = τ − Jᵀ Λ J v_0 (module
    docstring), the force Λ b then carries that task-space part."""
    n = q.shape[0]
    for i in range(n):
        s = qdd_des[i] if feedforward else 0.0
        for k in range(n):
            s += kp[i, k] * (q_des[k] - q[k]) + kd[i, k] * (qd_des[k] - qd[k])
        v0[i] = s
    rnea_into(P, q, qd, v0, NO_WRENCH, mode, ws, tau)
    for a in range(6):
        s = 0.0
        for k in range(n):
            s += J[a, k] * v0[k]
        b[a] -= s


@inline
def add_force(J, F, tau):
    """τ += Jᵀ F."""
    for k in range(J.shape[1]):
        s = 0.0
        for a in range(6):
            s += J[a, k] * F[a]
        tau[k] += s


@inline
def check_sizes(P, q, qd, q_des, qd_des, qdd_des):
    n = P.shape[0] - 1
    if (q.shape[0] != n or qd.shape[0] != n or q_des.shape[0] != n or qd_des.shape[0] != n
            or qdd_des.shape[0] != n):
        raise ValueError("expected q, qd, q_des, qd_des and qdd_des of one value per joint")


@inline
def measure(P, q, qd, q_des, qd_des, qdd_des, carrier, offset, explicit, buf):
    """A step's first part, after ``check_sizes``: into the law's ``buf`` (``views``) the pose, J
    and [J q̇; J̇ q̇] of the frame (``offset`` on joint ``carrier``'s body) at the state and M(q),
    factored; the target: ``goal`` and ``goal_motion`` when ``explicit``, else FK(q_d), J(q_d) q̇_d
    and J(q_d) q̈_d + J̇(q_d, q̇_d) q̇_d (into ``reference`` and ``reference_motion``), returned
    with its motion, after the law's ``views`` (one laying-out per step: each inlined copy costs
    numba a typing of its own). Also whether M is positive definite."""
    check_sizes(P, q, qd, q_des, qd_des, qdd_des)
    arrays = views(buf, q.shape[0])
    (pose, goal, reference, _, goal_motion, reference_motion, motion, _, _, _, _, _, _, _, _, _, J,
     Jd, _, M, _, _, _, ws, size) = arrays
    if buf.shape[0] != size:
        raise ValueError("the law's buffer is not this model's")
    # the frame at the state, then (unless explicit) at the reference: one pass written once, so
    # that numba compiles frame_motion_into once, not twice (some 2 s)
    for at_reference in range(1 if explicit else 2):
        if at_reference:
            x, xd, T, JT, m = q_des, qd_des, reference, Jd, reference_motion
        else:
            x, xd, T, JT, m = q, qd, pose, J, motion
        frame_motion_into(P, x, xd, carrier, offset, False, ws, T, JT, m[0], m[1])
    if explicit:
        target, target_motion = goal, goal_motion
    else:
        mat_vec(Jd, qdd_des, reference_motion[1], True)
        target, target_motion = reference, reference_motion
    crba_into(P, q, ws, M)
    return arrays, target, target_motion, cholesky(M)


@kernel
def operational_space_step(P, q, qd, q_des, qd_des, qdd_des, carrier, offset, explicit, mode, eps,
                           buf):
    """One cycle into the law's ``buf`` (``views``): τ, and the measured pose, J and J M⁻¹ Jᵀ kept
    for the diagnostics. ``gains`` rows: K_p, K_d (per task axis)."""
    arrays, target, target_motion, mass_factored = measure(P, q, qd, q_des, qd_des, qdd_des,
                                                           carrier, offset, explicit, buf)
    (pose, _, _, _, _, _, motion, task, gains, R, A, L, Lam, half, U, B, J, _, X, M, kp, kd, joint,
     ws, _) = arrays
    e, b, F = task[0], task[1], task[2]
    pose_error(target, pose, e, R)
    for a in range(6):   # the commanded task acceleration, less J̇ q̇
        b[a] = (target_motion[1, a] + gains[1, a] * (target_motion[0, a] - motion[0, a])
                + gains[0, a] * e[a] - motion[1, a])
    definite = task_inertia(P, q, J, M, X, A, L, mass_factored)
    tau = joint[TAU]
    posture(P, q, qd, q_des, qd_des, qdd_des, True, kp, kd, mode, J, ws, joint[V0], tau, b)
    # every σ ≥ 1/trace(A⁻¹) ≥ ε: the rule is Λ = A⁻¹, a solve with A's factor; else its eigenvalues
    if definite and trace_of_inverse(L, F) * eps <= 1.0:
        cholesky_solve(L, b)
        for a in range(6):
            F[a] = b[a]
    else:
        damped(A, eps, Lam, half, task[2], task[3], U, B)
        mat_vec(Lam, b, F, False)
    add_force(J, F, tau)


@kernel
def cartesian_impedance_step(P, q, qd, q_des, qd_des, qdd_des, dt, carrier, offset, explicit, mode,
                             eps, time_constant, started, buf):
    """One cycle into the law's ``buf``. ``gains`` rows: K, ζ, w (set), and the filtered K, ẋ_d,
    w (state); ``held`` the filtered target pose; ``joint`` row LAST the last τ (for the rate
    limit, RATE). ``started`` false: the filters start at the set values and τ is not limited (a
    first command)."""
    arrays, target, target_motion, mass_factored = measure(P, q, qd, q_des, qd_des, qdd_des,
                                                           carrier, offset, explicit, buf)
    (pose, _, _, held, _, _, motion, task, gains, R, A, L, Lam, half, U, B, J, _, X, M, kp, kd,
     joint, ws, _) = arrays
    n = q.shape[0]
    e, F = task[0], task[1]
    # first-order filters, exact for a held input: a step becomes 1 − exp(−t / T_f)
    alpha = 1.0 - np.exp(-dt / time_constant) if started and time_constant > 0.0 else 1.0
    for a in range(6):
        gains[3, a] += alpha * (gains[0, a] - gains[3, a])
        gains[4, a] += alpha * (target_motion[0, a] - gains[4, a])
        gains[5, a] += alpha * (gains[2, a] - gains[5, a])
    pose_error(target, held, e, R)
    for a in range(3):
        held[a, 3] += alpha * e[a]
    # the held rotation turns by alpha of the way along the geodesic: exp(alpha log(R_d R_hᵀ)) R_h
    turn(held, alpha * e[3], alpha * e[4], alpha * e[5])
    pose_error(held, pose, e, R)
    task_inertia(P, q, J, M, X, A, L, mass_factored)
    damped(A, eps, Lam, half, task[2], task[3], U, B)
    # F = K e + D (ẋ_d − J q̇) + w with D = Λ^½ Z K^½ + K^½ Z Λ^½ (Albu-Schäffer et al. 2003):
    # 2 ζ √(k λ) when Λ and K commute; D ė = Λ^½ (z ∘ ė) + z ∘ (Λ^½ ė) with z = ζ √k
    z, zed = task[2], task[3]
    for a in range(6):
        z[a] = gains[1, a] * np.sqrt(gains[3, a])
        zed[a] = z[a] * (gains[4, a] - motion[0, a])
    for a in range(6):
        s = 0.0
        for k in range(6):
            s += half[a, k] * (zed[k] + z[a] * (gains[4, k] - motion[0, k]))
        F[a] = s
    tau = joint[TAU]
    b = task[3]   # the posture's task-space part, Λ (−J v_0)
    for a in range(6):
        b[a] = 0.0
    posture(P, q, qd, q_des, qd_des, qdd_des, False, kp, kd, mode, J, ws, joint[V0], tau, b)
    for a in range(6):
        F[a] += gains[3, a] * e[a] + gains[5, a]
    mat_vec(Lam, b, F, True)
    add_force(J, F, tau)
    if started:
        for i in range(n):
            tau[i] = min(max(tau[i], joint[LAST, i] - joint[RATE, i] * dt),
                         joint[LAST, i] + joint[RATE, i] * dt)
    for i in range(n):
        joint[LAST, i] = tau[i]


_OPERATIONAL = Direct(operational_space_step, PARAMETERS, VECTOR, VECTOR, VECTOR, VECTOR, VECTOR,
                      INT, PARAMETER_VECTOR, BOOL, INT, FLOAT, C_VECTOR)
_IMPEDANCE = Direct(cartesian_impedance_step, PARAMETERS, VECTOR, VECTOR, VECTOR, VECTOR, VECTOR,
                    FLOAT, INT, PARAMETER_VECTOR, BOOL, INT, FLOAT, FLOAT, BOOL, C_VECTOR)


# ------------------------------------------------------------------ parameters

def _axes(name: str, value, strict: bool) -> np.ndarray:
    """One value per task axis [x, y, z, rx, ry, rz] from one value, [translational, rotational]
    or six, each finite and > 0 (``strict``) or >= 0."""
    v = _numbers(name, value, "one number, [translational, rotational] or 6 numbers")
    if v.ndim == 0:
        v = np.full(6, float(v))
    elif v.shape == (2,):
        v = np.repeat(v, 3)
    if v.shape != (6,):
        raise ValueError(f"{name} must be one number, [translational, rotational] or 6 numbers "
                         f"(x, y, z, rx, ry, rz), got {value!r}")
    if not np.all(np.isfinite(v)) or np.any(v <= 0.0 if strict else v < 0.0):
        raise ValueError(f"{name} must be finite and {'> 0' if strict else '>= 0'} on every axis, "
                         f"got {v.tolist()}")
    return v


def _positive(name: str, value, what: str) -> float:
    if not isinstance(value, Real) or isinstance(value, bool) or not 0.0 < value < np.inf:
        raise ValueError(f"{name} must be a finite number > 0 ({what}), got {value!r}")
    return float(value)


def _vector(name: str, value, size: int) -> np.ndarray:
    # a float array as is (a target may come at the loop's rate): _numbers costs ~10 us
    ready = value.__class__ is NDARRAY and value.dtype is FLOAT64
    v = value if ready else _numbers(name, value, f"{size} numbers")
    if v.shape != (size,) or not np.isfinite(v).all():
        raise ValueError(f"{name} must be {size} finite numbers, got {value!r}")
    return v


def _rotation(orientation) -> np.ndarray:
    """A rotation matrix from a 3x3 one or a quaternion [x, y, z, w] (ROS's order)."""
    ready = orientation.__class__ is NDARRAY and orientation.dtype is FLOAT64
    r = orientation if ready else _numbers("orientation", orientation,
                                           "a 3x3 rotation matrix or a quaternion [x, y, z, w]")
    if r.shape == (4,) and np.isfinite(r).all() and r @ r > 0.0:
        x, y, z, w = r / np.sqrt(r @ r)
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    # orthonormal (to 1e-6) and right-handed: the third row is the cross product of the first two
    if (r.shape != (3, 3) or not np.isfinite(r).all() or np.abs(r @ r.T - _EYE3).max() > 1e-6
            or abs(r[0, 1] * r[1, 2] - r[0, 2] * r[1, 1] - r[2, 0]) > 1e-6
            or abs(r[0, 2] * r[1, 0] - r[0, 0] * r[1, 2] - r[2, 1]) > 1e-6
            or abs(r[0, 0] * r[1, 1] - r[0, 1] * r[1, 0] - r[2, 2]) > 1e-6):
        raise ValueError(f"orientation must be a 3x3 rotation matrix or a non-zero quaternion "
                         f"[x, y, z, w], got {orientation!r}")
    return r


_SHARED = {
    "task_link": "the frame the law controls: '' or 'tip' the model's tip, a URDF link's name "
                 "(that link's frame as the URDF defines it, tool0 or a flange too), or a joint's "
                 "name (its frame turned so that z is the axis)",
    "posture_kp": "nullspace posture gain K_p,n (1/s², M-weighted: τ_0 = M (K_p,n e + K_d,n ė)) "
                  "pulling towards q_d: one value, one per joint, or an n x n symmetric "
                  "non-negative definite matrix (0: no posture task)",
    "posture_kd": "nullspace posture damping K_d,n (1/s): one value, one per joint, or an n x n "
                  "symmetric non-negative definite matrix",
    "singularity_threshold": "ε: eigenvalues of the inverse task-space inertia J M⁻¹ Jᵀ (1/kg, "
                             "1/(kg m²) for rotations) below ε are damped (λ² = ε² − σ²), so the "
                             "task-space inertia never exceeds 1/ε and a singular direction gets "
                             "no force",
    **_FRICTION,
}
_SHARED_DEFAULTS = {"task_link": "", "posture_kp": 25.0, "posture_kd": 10.0,
                    "singularity_threshold": 1e-3, "friction": True}


class _TaskSpaceLaw(ControlLaw):
    """What both laws share: the frame, the posture task, the damping, the Cartesian target."""

    def _configure(self, params: Mapping[str, Any]) -> None:
        n, joints, model = self.dof, self.model.joint_names, self.model
        link = params["task_link"]
        if not isinstance(link, str):
            raise ValueError(f"task_link must be a link name (a string), got {link!r}")
        self._carrier, self._offset = model.frame(link)   # resolved once: the cycle takes both
        kp, kd = (gain(name, params[name], n) for name in ("posture_kp", "posture_kd"))
        check_definite("posture_kp", kp, joints, strict=False, why="a negative gain pushes away")
        check_definite("posture_kd", kd, joints, strict=False, why="a negative gain excites")
        self._eps = _positive("singularity_threshold", params["singularity_threshold"],
                              "1/kg: the largest task-space inertia is 1/ε")
        self._mode = GRAVITY | (FRICTION if _flag("friction", params["friction"]) else 0)
        self._P = model.params
        # every array of the law in one buffer, named through the kernel's own views
        self._buf = np.zeros(buffer_size(n))
        (self._pose, self._goal, _, self._held, self._goal_motion, _, _, _, self._gains, _, self._A,
         _, _, _, eigenvectors, _, self._J, _, _, _, posture_kp, posture_kd, joint, _,
         _) = views.py_func(self._buf, n)
        posture_kp[:] = np.diag(kp) if kp.ndim == 1 else kp
        posture_kd[:] = np.diag(kd) if kd.ndim == 1 else kd
        self._tau, self._last, self._rate = joint[TAU], joint[LAST:LAST + 1], joint[RATE]
        self._pose[:] = self._goal[:] = self._held[:] = np.eye(4)
        eigenvectors[:] = np.eye(6)
        self._explicit = False
        # counts the changes of _explicit, which a native handle copies (control.native): one built
        # before a change refuses to step
        self.revision = np.zeros(1, dtype=np.int64)

    def set_target(self, position, orientation, twist=(0.0,) * 6, acceleration=(0.0,) * 6) -> None:
        """Track this Cartesian target (base frame) until ``clear_target``: ``position`` (3,),
        ``orientation`` a 3x3 rotation matrix or a quaternion [x, y, z, w], ``twist`` [v; ω] and
        ``acceleration`` [a; α] of the frame's origin."""
        p, R = _vector("position", position, 3), _rotation(orientation)
        v, a = _vector("twist", twist, 6), _vector("acceleration", acceleration, 6)
        self._goal[:3, 3], self._goal[:3, :3] = p, R      # checked whole before any is changed
        self._goal_motion[0], self._goal_motion[1] = v, a
        self.revision[0] += not self._explicit
        self._explicit = True

    def clear_target(self) -> None:
        """Back to the forward kinematics of the joint reference."""
        self.revision[0] += self._explicit
        self._explicit = False

    def _check(self, q, qd, q_des, qd_des, qdd_des):
        if (q.__class__ is qd.__class__ is q_des.__class__ is qd_des.__class__
                is qdd_des.__class__ is NDARRAY and q.dtype is qd.dtype is q_des.dtype
                is qd_des.dtype is qdd_des.dtype is FLOAT64
                and q.ndim == qd.ndim == q_des.ndim == qd_des.ndim == qdd_des.ndim == 1):
            return q, qd, q_des, qd_des, qdd_des
        return tuple(_vector(name, x, self.dof) for name, x in
                     zip(("q", "qd", "q_des", "qd_des", "qdd_des"), (q, qd, q_des, qd_des, qdd_des)))

    @property
    def pose(self) -> np.ndarray:
        """The frame's pose (4x4, base frame) at the last ``compute`` (a copy)."""
        return self._pose.copy()

    @property
    def damping(self) -> float:
        """λ² on the weakest direction of J M⁻¹ Jᵀ at the last ``compute`` (0: not damped)."""
        if not self._A.any():       # nothing computed yet
            return 0.0
        return max(self._eps ** 2 - self.smallest_inverse_inertia ** 2, 0.0)

    @property
    def smallest_inverse_inertia(self) -> float:
        """The smallest eigenvalue σ of J M⁻¹ Jᵀ at the last ``compute`` (0 at a singularity;
        computed here, from the J M⁻¹ Jᵀ the law kept: the cycle needs only its Cholesky factor)."""
        return float(np.linalg.eigvalsh(self._A)[0])

    @property
    def manipulability(self) -> float:
        """Yoshikawa's √det(J Jᵀ) at the last ``compute`` (0 at a singularity; computed here)."""
        return float(np.sqrt(max(np.linalg.det(self._J @ self._J.T), 0.0)))

    def diagnostics(self) -> dict[str, float]:
        """What the node reports on /diagnostics."""
        return {"manipulability": self.manipulability,
                "smallest eigenvalue of J M^-1 J^T": self.smallest_inverse_inertia,
                "singularity damping": self.damping}


class OperationalSpace(_TaskSpaceLaw):
    """``operational_space``: task-space computed torque (Khatib 1987; module docstring).

    τ = Jᵀ Λ (ẍ_d + K_d ė + K_p e − J̇ q̇) + h(q, q̇) + N τ_0; gains in acceleration units (K_p in
    1/s², K_d in 1/s), per task axis. With an exact model and away from singularities the task
    error obeys ë + K_d ė + K_p e = 0 and the posture task moves only the nullspace.
    """

    parameters = {
        "task_kp": "task-space position gain K_p (1/s²): one value, [translational, rotational], "
                   "or 6 values (x, y, z, rx, ry, rz in the base frame), each > 0",
        "task_kd": "task-space velocity gain K_d (1/s), as task_kp; 2 √K_p is critically damped "
                   "(the default 20 for the default K_p 100)",
        **_SHARED,
    }
    # a value, not "unset": a node parameter must have one (ros2 param dump, --params-file)
    defaults = {"task_kp": 100.0, "task_kd": 20.0, **_SHARED_DEFAULTS}

    @classmethod
    def warm_up(cls, notify=print):
        warm_up(notify, laws=("operational_space",))

    def _configure(self, params):
        super()._configure(params)
        kp = _axes("task_kp", params["task_kp"], strict=True)
        kd = _axes("task_kd", params["task_kd"], strict=True)
        self._gains[0], self._gains[1] = kp, kd
        _OPERATIONAL.ready()  # at configure, not in the first cycle

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        q, qd, q_des, qd_des, qdd_des = self._check(q, qd, q_des, qd_des, qdd_des)
        _OPERATIONAL.call(self._P, q, qd, q_des, qd_des, qdd_des, self._carrier, self._offset,
                          self._explicit, self._mode, self._eps, self._buf)
        return self._tau


class CartesianImpedance(_TaskSpaceLaw):
    """``cartesian_impedance``: τ = Jᵀ (K e + D ė + w) + h(q, q̇) + N τ_0 (module docstring).

    K (N/m, N·m/rad) per task axis; D = Λ^½ Z K^½ + K^½ Z Λ^½ with Z = diag(ζ) (the
    factorisation design of Albu-Schäffer, Ott, Frese & Hirzinger 2003): for one axis 2 ζ √(k Λ),
    critically damped at ζ = 1. w is a wrench the frame exerts (``set_wrench``). A change of K,
    of the target or of w reaches the law through a first-order filter (time constant T_f), and
    the joint torque changes by at most ``torque_rate_limit`` · dt per cycle, so neither a gain
    step nor a target jump steps the torque. The first call after construction or ``reset`` starts
    the filters at the set values and is not rate-limited (nothing to limit against); a law built
    for a gain change continues its predecessor's filters with ``continue_from``.
    """

    parameters = {
        "stiffness": "task-space stiffness K: one value, [translational (N/m), rotational "
                     "(N·m/rad)], or 6 values (x, y, z, rx, ry, rz in the base frame), each > 0",
        "damping_ratio": "ζ of D = Λ^½ ζ K^½ + K^½ ζ Λ^½ (1: critically damped): one value or 6",
        "filter_time_constant": "T_f (s) of the first-order filter a change of stiffness, target "
                                "or wrench goes through (0: no filter)",
        "torque_rate_limit": "largest change of each joint's effort per second (N·m/s or N/s): one "
                             "value or one per joint (inf: no limit)",
        **_SHARED,
    }
    defaults = {"stiffness": [800.0, 80.0], "damping_ratio": 1.0, "filter_time_constant": 0.02,
                "torque_rate_limit": 1000.0, **_SHARED_DEFAULTS}

    @classmethod
    def warm_up(cls, notify=print):
        warm_up(notify, laws=("cartesian_impedance",))

    def _configure(self, params):
        super()._configure(params)
        tc = params["filter_time_constant"]
        if not isinstance(tc, Real) or isinstance(tc, bool) or not 0.0 <= tc < np.inf:
            raise ValueError(f"filter_time_constant must be a finite number >= 0 (s), got {tc!r}")
        self._tc = float(tc)
        rate = per_joint("torque_rate_limit", params["torque_rate_limit"], self.dof)
        if np.any(rate == 0.0):
            raise ValueError("torque_rate_limit must be > 0 for every joint (0 freezes the effort)")
        self._rate[:] = rate
        # rows: K, ζ, w as set; the filtered K, ẋ_d and w
        self._gains[0] = _axes("stiffness", params["stiffness"], strict=True)
        self._gains[1] = _axes("damping_ratio", params["damping_ratio"], strict=True)
        self._started = False
        _IMPEDANCE.ready()  # at configure, not in the first cycle

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        q, qd, q_des, qd_des, qdd_des = self._check(q, qd, q_des, qd_des, qdd_des)
        _IMPEDANCE.call(self._P, q, qd, q_des, qd_des, qdd_des, float(dt), self._carrier,
                        self._offset, self._explicit, self._mode, self._eps, self._tc, self._started,
                        self._buf)
        self._started = True
        return self._tau

    def reset(self) -> None:
        """Forget the filters and the last torque: the next call starts afresh."""
        self._started = False

    def set_stiffness(self, stiffness) -> None:
        """A new K (as the ``stiffness`` parameter), reached through the filter."""
        self._gains[0] = _axes("stiffness", stiffness, strict=True)
        self.params = {**self.params, "stiffness": self._gains[0].tolist()}

    def set_wrench(self, wrench) -> None:
        """w = [f; n] (N, N·m; base frame, moment about the frame's origin) that the frame exerts
        on its environment, reached through the filter; zeros to stop."""
        self._gains[2] = _vector("wrench", wrench, 6)

    def continue_from(self, law: CartesianImpedance) -> None:
        """Take over ``law``'s filtered stiffness, target, wrench and last torque (a law built for
        a gain change), so that the change goes through the filter and the rate limit."""
        if not isinstance(law, CartesianImpedance) or law.model is not self.model:
            raise ValueError("continue_from takes a cartesian_impedance law of the same model")
        self._gains[2:] = law._gains[2:]
        self._held[:] = law._held
        self._last[:] = law._last
        self._goal[:], self._goal_motion[:] = law._goal, law._goal_motion
        self._explicit, self._started = law._explicit, law._started
        self.revision[0] += 1


LAWS = {"operational_space": OperationalSpace, "cartesian_impedance": CartesianImpedance}
# CPU seconds of compiling each law's kernels from an empty cache (alone in a fresh process on the
# 2-core machine of doc/install.md, 2026-11-28 evening): the estimate a node gives when it compiles
COMPILE_SECONDS = {"operational_space": 14, "cartesian_impedance": 15}


def warm_up(notify=print, laws=tuple(LAWS)):
    """Compile (or load from numba's cache) the kernels of ``laws`` (names of LAWS), on a one-link
    arm whose argument types match any model's (a law compiles them at its configure otherwise,
    some 30-60 s from an empty cache). The frame kernel ``frame_motion`` is ``dynamics.warm_up``'s."""
    from ..dynamics.link import Link
    from ..dynamics.model import RobotModel
    from ..plumbing.kernels import warm_up as _warm_up
    unknown = sorted(set(laws) - set(LAWS))
    if unknown:
        raise ValueError(f"unknown task-space law(s) {unknown}; known: {sorted(LAWS)}")

    def exercise():
        model = RobotModel([Link("j", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])
        q = np.zeros(1)
        for law in laws:
            LAWS[law](model).compute(q, q, q, q, q, 0.001)
    what = " and ".join(law.replace("_", "-") for law in laws)
    return _warm_up(f"{what} law kernels", exercise, notify, sum(COMPILE_SECONDS[law] for law in laws))
