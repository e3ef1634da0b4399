"""Task-space laws for arms: ``operational_space`` (Khatib 1987) and ``cartesian_impedance``.

Both control one frame of the arm (``task_link``: a joint's frame, or the tip; ``RobotModel.
frame_index``) in the base frame, with J the frame's geometric Jacobian ([v; ω], base frame),
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

The reference: through ``compute``'s joint interface, x_d = FK(q_d), ẋ_d = J(q_d) q̇_d and ẍ_d =
J(q_d) q̈_d + J̇(q_d, q̇_d) q̇_d, the posture pulls towards q_d; ``set_target`` overrides x_d, ẋ_d,
ẍ_d until ``clear_target``. Each law is one compiled call per cycle.
"""
from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

import numba
import numpy as np

from ..dynamics.crba import crba
from ..dynamics.forward import cholesky_solve_into
from ..dynamics.kinematics import frame_motion_kernel
from ..dynamics.newton_euler import FRICTION, GRAVITY, NO_WRENCH, rnea
from ..kernels import BOOL, C_MATRIX, FLOAT64, INT, NDARRAY, PARAMETERS, VECTOR, Direct, inline, kernel
from .gains import _numbers, check_definite, gain, per_joint
from .law import ControlLaw
from .laws import _FRICTION, _flag

__all__ = ["CartesianImpedance", "OperationalSpace"]

_EYE3 = np.eye(3)
_REPORT = 2   # report[0]: smallest eigenvalue of J M⁻¹ Jᵀ, report[1]: damping λ² on it


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
def rotation(x, y, z):
    """exp of the rotation vector (x, y, z) (Rodrigues)."""
    theta = np.sqrt(x * x + y * y + z * z)
    R = np.eye(3)
    if theta == 0.0:
        return R
    s = np.sin(theta) / theta
    c = (1.0 - np.cos(theta)) / (theta * theta)
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return R + s * K + c * (K @ K)


@inline
def pose_error(target, pose, e, R):
    """e[0:6] = [p_d − p; log(R_d Rᵀ)]; ``R`` (1, 3, 3) scratch."""
    for a in range(3):
        e[a] = target[a, 3] - pose[a, 3]
        for b in range(3):
            R[0, a, b] = (target[a, 0] * pose[b, 0] + target[a, 1] * pose[b, 1]
                          + target[a, 2] * pose[b, 2])
    e[3], e[4], e[5] = rotation_vector(R, 0)


@inline
def reference(P, q_des, qd_des, qdd_des, frame, explicit, goal, goal_motion, T, J, x):
    """The target pose into T and [ẋ_d; ẍ_d] into x (2, 6): ``goal`` and ``goal_motion`` when
    ``explicit``, else FK(q_d), J(q_d) q̇_d and J(q_d) q̈_d + J̇(q_d, q̇_d) q̇_d."""
    if explicit:
        T[:, :] = goal
        x[:, :] = goal_motion
        return
    frame_motion_kernel(P, q_des, qd_des, frame, False, T, J, x[0], x[1])
    x[1] += J @ qdd_des


@inline
def task_inertia(P, q, J, eps, Lam, half, report):
    """Λ (damped, module docstring) and Λ^½ into ``Lam`` and ``half``; report σ_min and λ²."""
    n = q.shape[0]
    M0 = np.empty((n, n))
    crba(P, q, M0)
    M = np.empty((n, n))
    X = np.empty((6, n))
    for k in range(6):
        M[:, :] = M0                    # cholesky_solve_into factors M in place: a fresh copy for
        X[k, :] = J[k, :]               # each column (an arm's M: ~0.1 us a factorisation)
        cholesky_solve_into(M, X[k])    # X = (M⁻¹ Jᵀ)ᵀ
    sigma, U = np.linalg.eigh(J @ X.T)
    f = np.empty(6)
    for k in range(6):
        s = sigma[k]
        f[k] = 1.0 / s if s >= eps else max(s, 0.0) / (eps * eps)
    Lam[:, :] = (U * f) @ U.T
    half[:, :] = (U * np.sqrt(f)) @ U.T
    report[0] = sigma[0]
    report[1] = max(eps * eps - sigma[0] * sigma[0], 0.0)


@inline
def posture(P, q, qd, q_des, qd_des, qdd_des, feedforward, kp, kd, mode, J, Lam, tau):
    """τ = NE(q, q̇, v_0) and −Λ J v_0 returned: h + τ_0 and the task-space part of N τ_0."""
    v0 = kp @ (q_des - q) + kd @ (qd_des - qd)
    if feedforward:
        v0 += qdd_des
    rnea(P, q, qd, v0, NO_WRENCH, mode, tau)
    return -(Lam @ (J @ v0))


@kernel
def check_sizes(P, q, qd, q_des, qd_des, qdd_des):
    n = P.shape[0] - 1
    if (q.shape[0] != n or qd.shape[0] != n or q_des.shape[0] != n or qd_des.shape[0] != n
            or qdd_des.shape[0] != n):
        raise ValueError("expected q, qd, q_des, qd_des and qdd_des of one value per joint")


@inline
def measure(P, q, qd, q_des, qd_des, qdd_des, frame, explicit, goal, goal_motion, pose, J):
    """The frame's pose and J (into ``pose``, ``J``), [J q̇; J̇ q̇], the target pose and [ẋ_d; ẍ_d]."""
    check_sizes(P, q, qd, q_des, qd_des, qdd_des)
    motion = np.empty((2, 6))
    frame_motion_kernel(P, q, qd, frame, False, pose, J, motion[0], motion[1])
    target = np.empty((4, 4))
    x = np.empty((2, 6))
    reference(P, q_des, qd_des, qdd_des, frame, explicit, goal, goal_motion, target,
              np.empty((6, q.shape[0])), x)
    return motion, target, x


@kernel
def operational_space_step(P, q, qd, q_des, qd_des, qdd_des, frame, explicit, goal, goal_motion,
                           gains, posture_kp, posture_kd, mode, eps, pose, J, report, tau):
    """One cycle: τ, and the measured pose and J kept for the diagnostics. ``gains`` rows: K_p,
    K_d (per task axis)."""
    motion, target, x = measure(P, q, qd, q_des, qd_des, qdd_des, frame, explicit, goal,
                                goal_motion, pose, J)
    e = np.empty(6)
    pose_error(target, pose, e, np.empty((1, 3, 3)))
    Lam = np.empty((6, 6))
    task_inertia(P, q, J, eps, Lam, np.empty((6, 6)), report)
    a = x[1] + gains[1] * (x[0] - motion[0]) + gains[0] * e - motion[1]
    F = Lam @ a + posture(P, q, qd, q_des, qd_des, qdd_des, True, posture_kp, posture_kd, mode,
                          J, Lam, tau)
    tau += J.T @ F


@kernel
def cartesian_impedance_step(P, q, qd, q_des, qd_des, qdd_des, dt, frame, explicit, goal,
                             goal_motion, gains, posture_kp, posture_kd, mode, eps, time_constant,
                             rate, started, held, filtered, pose, J, report, tau):
    """One cycle. ``gains`` rows: K, ζ, w (set), and the filtered K, ẋ_d, w (state); ``held`` the
    filtered target pose; ``filtered`` row 0 the last τ (for the rate limit). ``started`` false:
    the filters start at the set values and τ is not limited (a first command)."""
    motion, target, x = measure(P, q, qd, q_des, qd_des, qdd_des, frame, explicit, goal,
                                goal_motion, pose, J)
    n = q.shape[0]
    # first-order filters, exact for a held input: a step becomes 1 − exp(−t / T_f)
    alpha = 1.0 - np.exp(-dt / time_constant) if started and time_constant > 0.0 else 1.0
    gains[3] += alpha * (gains[0] - gains[3])
    gains[4] += alpha * (x[0] - gains[4])
    gains[5] += alpha * (gains[2] - gains[5])
    step = np.empty(6)
    pose_error(target, held, step, np.empty((1, 3, 3)))
    held[:3, 3] += alpha * step[:3]
    # the held rotation turns by alpha of the way along the geodesic: exp(alpha log(R_d R_hᵀ)) R_h
    held[:3, :3] = rotation(alpha * step[3], alpha * step[4], alpha * step[5]) @ held[:3, :3]
    e = np.empty(6)
    pose_error(held, pose, e, np.empty((1, 3, 3)))
    Lam = np.empty((6, 6))
    half = np.empty((6, 6))
    task_inertia(P, q, J, eps, Lam, half, report)
    # D = Λ^½ Z K^½ + K^½ Z Λ^½ (Albu-Schäffer et al. 2003): 2 ζ √(k λ) when Λ and K commute
    root = np.sqrt(gains[3])
    D = (half * (gains[1] * root)) + (half * (gains[1] * root)).T
    F = gains[3] * e + D @ (gains[4] - motion[0]) + gains[5]
    F += posture(P, q, qd, q_des, qd_des, qdd_des, False, posture_kp, posture_kd, mode, J, Lam,
                 tau)
    tau += J.T @ F
    if started:
        for i in range(n):
            tau[i] = min(max(tau[i], filtered[0, i] - rate[i] * dt), filtered[0, i] + rate[i] * dt)
    filtered[0, :] = tau


_SECONDS = numba.types.float64
_OPERATIONAL = Direct(operational_space_step, PARAMETERS, VECTOR, VECTOR, VECTOR, VECTOR, VECTOR,
                      INT, BOOL, C_MATRIX, C_MATRIX, C_MATRIX, C_MATRIX, C_MATRIX, INT, _SECONDS,
                      C_MATRIX, C_MATRIX, VECTOR, VECTOR)
_IMPEDANCE = Direct(cartesian_impedance_step, PARAMETERS, VECTOR, VECTOR, VECTOR, VECTOR, VECTOR,
                    _SECONDS, INT, BOOL, C_MATRIX, C_MATRIX, C_MATRIX, C_MATRIX, C_MATRIX, INT,
                    _SECONDS, _SECONDS, VECTOR, BOOL, C_MATRIX, C_MATRIX, C_MATRIX, C_MATRIX, VECTOR,
                    VECTOR)


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
    "task_link": "the frame the law controls: '' or 'tip' the model's tip, or a joint's name (the "
                 "frame of the body that joint moves)",
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
        self._frame = model.frame_index(link or None)
        kp, kd = (gain(name, params[name], n) for name in ("posture_kp", "posture_kd"))
        check_definite("posture_kp", kp, joints, strict=False, why="a negative gain pushes away")
        check_definite("posture_kd", kd, joints, strict=False, why="a negative gain excites")
        self._posture = [np.ascontiguousarray(np.diag(g) if g.ndim == 1 else g) for g in (kp, kd)]
        self._eps = _positive("singularity_threshold", params["singularity_threshold"],
                              "1/kg: the largest task-space inertia is 1/ε")
        self._mode = GRAVITY | (FRICTION if _flag("friction", params["friction"]) else 0)
        self._pose, self._J = np.eye(4), np.zeros((6, n))
        self._report = np.zeros(_REPORT)
        self._tau = np.empty(n)
        self._goal, self._goal_motion = np.eye(4), np.zeros((2, 6))
        self._explicit = False

    def set_target(self, position, orientation, twist=(0.0,) * 6, acceleration=(0.0,) * 6) -> None:
        """Track this Cartesian target (base frame) until ``clear_target``: ``position`` (3,),
        ``orientation`` a 3x3 rotation matrix or a quaternion [x, y, z, w], ``twist`` [v; ω] and
        ``acceleration`` [a; α] of the frame's origin."""
        goal = np.eye(4)
        goal[:3, 3] = _vector("position", position, 3)
        goal[:3, :3] = _rotation(orientation)
        motion = np.array([_vector("twist", twist, 6), _vector("acceleration", acceleration, 6)])
        self._goal, self._goal_motion, self._explicit = goal, motion, True

    def clear_target(self) -> None:
        """Back to the forward kinematics of the joint reference."""
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
        return float(self._report[1])

    @property
    def smallest_inverse_inertia(self) -> float:
        """The smallest eigenvalue σ of J M⁻¹ Jᵀ at the last ``compute`` (0 at a singularity)."""
        return float(self._report[0])

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

    def _configure(self, params):
        super()._configure(params)
        kp = _axes("task_kp", params["task_kp"], strict=True)
        kd = _axes("task_kd", params["task_kd"], strict=True)
        self._gains = np.array([kp, kd])

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        q, qd, q_des, qd_des, qdd_des = self._check(q, qd, q_des, qd_des, qdd_des)
        posture_kp, posture_kd = self._posture
        _OPERATIONAL.call(self.model.params, q, qd, q_des, qd_des, qdd_des, self._frame,
                          self._explicit, self._goal, self._goal_motion, self._gains, posture_kp,
                          posture_kd, self._mode, self._eps, self._pose, self._J, self._report,
                          self._tau)
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

    def _configure(self, params):
        super()._configure(params)
        tc = params["filter_time_constant"]
        if not isinstance(tc, Real) or isinstance(tc, bool) or not 0.0 <= tc < np.inf:
            raise ValueError(f"filter_time_constant must be a finite number >= 0 (s), got {tc!r}")
        self._tc = float(tc)
        rate = per_joint("torque_rate_limit", params["torque_rate_limit"], self.dof)
        if np.any(rate == 0.0):
            raise ValueError("torque_rate_limit must be > 0 for every joint (0 freezes the effort)")
        self._rate = rate
        # rows: K, ζ, w as set; the filtered K, ẋ_d and w
        self._gains = np.zeros((6, 6))
        self._gains[0] = _axes("stiffness", params["stiffness"], strict=True)
        self._gains[1] = _axes("damping_ratio", params["damping_ratio"], strict=True)
        self._held = np.eye(4)
        self._last = np.zeros((1, self.dof))
        self._started = False

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        q, qd, q_des, qd_des, qdd_des = self._check(q, qd, q_des, qd_des, qdd_des)
        posture_kp, posture_kd = self._posture
        _IMPEDANCE.call(self.model.params, q, qd, q_des, qd_des, qdd_des, float(dt), self._frame,
                        self._explicit, self._goal, self._goal_motion, self._gains, posture_kp,
                        posture_kd, self._mode, self._eps, self._tc, self._rate, self._started,
                        self._held, self._last, self._pose, self._J, self._report, self._tau)
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
        self._held[:, :] = law._held
        self._last[:, :] = law._last
        self._goal, self._goal_motion, self._explicit = law._goal, law._goal_motion, law._explicit
        self._started = law._started


def warm_up(notify=print):
    """Compile (or load from numba's cache) both laws' kernels and the frame kernel, on a one-link
    arm whose argument types match any model's (a law compiles them at its first call otherwise,
    some 30-60 s on a busy machine)."""
    from ..dynamics.link import Link
    from ..dynamics.model import RobotModel
    from ..kernels import warm_up as _warm_up

    def exercise():
        model = RobotModel([Link("j", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])
        q = np.zeros(1)
        model.frame_motion(q, q)
        for law in (OperationalSpace(model), CartesianImpedance(model)):
            law.compute(q, q, q, q, q, 0.001)
    return _warm_up("task-space law kernels", exercise, notify)
