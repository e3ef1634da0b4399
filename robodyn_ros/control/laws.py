"""The control laws shipped with robodyn_ros (registered in setup.py as entry points).

e = q_d - q and ė = q̇_d - q̇. ``kd`` is 004's Kv. The feedback Kp e + Kv ė (+ Ki ∫e) is one
compiled call (``pid_into``) into a buffer allocated once: a per-joint gain multiplies element-wise,
a matrix gain row by row.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from numbers import Real
from typing import Any

import numpy as np

from ..dynamics.newton_euler import FRICTION, GRAVITY, NO_WRENCH, rnea
from ..plumbing.kernels import (BOOL, BOOL_VECTOR, C_ARRAY3, C_MATRIX, FLOAT, FLOAT64, INDEX_VECTOR, INT,
                                NDARRAY, PARAMETERS, VECTOR, Direct, inline, kernel)
from .cycle_steps import DECLINED, ORDINARY_STATE, answered_state_into, ordinary_dt, saturate_into
from .gains import check_damping, check_definite, gain, per_joint
from .law import ControlLaw

__all__ = ["ComputedTorque", "Feedforward", "GravityCompensation", "PDGravity"]


@inline
def gain_times(gains, k, full, i, x):
    """Row i of gain k times x: the diagonal element alone for a per-joint gain (``full[k]``
    false), as NumPy multiplies element-wise."""
    if not full[k]:
        return gains[k, i, i] * x[i]
    s = 0.0
    for j in range(x.shape[0]):
        s += gains[k, i, j] * x[j]
    return s


@kernel
def pid_into(q, qd, q_des, qd_des, gains, full, integral, limit, dt, integrates, work, u):
    """u = Kp e + Kv ė (+ Ki ∫e with ``integrates``: ∫e first takes e dt, each component clamped
    to ±limit); ``gains`` (3, n, n) Kp, Kv, Ki, ``work`` (2, n) takes e and ė. One compiled call:
    the same in NumPy took six ufunc calls, 2.9 us of a cycle."""
    n = u.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or q_des.shape[0] != n or qd_des.shape[0] != n:
        raise ValueError("expected q, qd, q_des and qd_des of one value per joint")
    e, ed = work[0], work[1]
    for j in range(n):
        e[j] = q_des[j] - q[j]
        ed[j] = qd_des[j] - qd[j]
    for i in range(n):
        u[i] = gain_times(gains, 0, full, i, e) + gain_times(gains, 1, full, i, ed)
    if integrates:
        for j in range(n):
            integral[j] = max(min(integral[j] + e[j] * dt, limit[j]), -limit[j])
        for i in range(n):
            u[i] += gain_times(gains, 2, full, i, integral)


PID = Direct(pid_into, VECTOR, VECTOR, VECTOR, VECTOR, C_ARRAY3, BOOL_VECTOR, VECTOR, VECTOR, FLOAT,
             BOOL, C_MATRIX, VECTOR)


@inline
def computed_torque_step(P, mode, gains, full, integral, limit, integrates, work, v, tau, q, qd,
                         reference, dt):
    """ComputedTorque.compute at the reference's rows ``reference`` (3, n: q_d, q̇_d, q̈_d) into
    ``tau`` (``v`` takes the commanded acceleration)."""
    pid_into(q, qd, reference[0], reference[1], gains, full, integral, limit, dt, integrates,
             work, v)
    for j in range(v.shape[0]):
        v[j] += reference[2, j]
    rnea(P, q, qd, v, NO_WRENCH, mode, tau)


@kernel
def computed_torque_into(P, mode, gains, full, integral, limit, integrates, work, v, tau,
                         effort_limit, index, effort, q, qd, reference, dt):
    """computed_torque_step, then the loop's saturate_into of ``tau`` into ``effort``, in one
    call: the 1 kHz path, where the law's Python between its compiled calls cost more than they
    did. Returns saturate_into's count (-1: tau has NaN or inf). What changes from call to call
    comes last, so that the rest is bound once (``ComputedTorque.saturating``)."""
    computed_torque_step(P, mode, gains, full, integral, limit, integrates, work, v, tau, q, qd,
                         reference, dt)
    return saturate_into(tau, effort_limit, index, effort)


@kernel
def answer_computed_torque(P, mode, gains, full, integral, limit, integrates, work, v, tau,
                           effort_limit, index, effort, message, names, match, q, qd, stamp, times,
                           knots, origins, stacked, samples, listened, state, starts, head):
    """A joint state's bytes to the command and the state's message in one call
    (``ComputedTorque.answering``): the state taken, its reference sampled
    (``cycle_steps.ordinary_dt``), computed_torque_into at it, then the state's message
    (``cycle_steps.answered_state_into``) unless the torque was NaN or inf. Returns DECLINED,
    the law untouched, when the state is not the ordinary next one."""
    dt = ordinary_dt(message, names, match, q, qd, stamp, times, knots, origins, stacked, samples)
    if dt < 0.0:
        return DECLINED
    clamped = computed_torque_into(P, mode, gains, full, integral, limit, integrates, work, v, tau,
                                   effort_limit, index, effort, q, qd, samples, dt)
    if clamped >= 0:
        answered_state_into(listened, state, starts, head, stamp, samples, q, qd, effort, index)
    return clamped


_BOUND = (PARAMETERS, INT, C_ARRAY3, BOOL_VECTOR, VECTOR, VECTOR, BOOL, C_MATRIX, VECTOR, VECTOR,
          VECTOR, INDEX_VECTOR, VECTOR)   # computed_torque_into's arguments bound once
COMPUTED_TORQUE = Direct(computed_torque_into, *_BOUND, VECTOR, VECTOR, C_MATRIX, FLOAT)
ANSWER_COMPUTED_TORQUE = Direct(answer_computed_torque, *_BOUND, *ORDINARY_STATE)


def _flag(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return bool(value)


class _PIDFeedback(ControlLaw):
    """Kp e + Kv ė + Ki ∫e, the feedback part shared by the laws that track a reference.

    Anti-windup by clamping: each component of ∫e stays within ±``integral_limit``, so after a
    long saturation or a blocked joint the integral term is bounded and unwinds in bounded time.
    """

    parameters = {
        "kp": "position gain Kp: one value, one per joint, or an n x n symmetric positive "
              "definite matrix",
        "kd": "velocity gain Kv: one value, one per joint, or an n x n symmetric non-negative "
              "definite matrix damping every error mode (004 eq. 4.3)",
        "ki": "integral gain Ki on the integral of e (0 = no integral term): one value, one per "
              "joint, or an n x n symmetric non-negative definite matrix",
        "integral_limit": "anti-windup clamp of each component of the integral of e (rad s or "
                          "m s): one value or one per joint; finite wherever Ki acts",
    }
    defaults = {"ki": 0.0, "integral_limit": 0.1}  # rad s: bounded from the start

    @classmethod
    def warm_up(cls, notify=print) -> None:
        PID.ready()

    def _configure(self, params: Mapping[str, Any]) -> None:
        n, joints = self.dof, self.model.joint_names
        kp, kd, ki = (gain(name, params[name], n) for name in ("kp", "kd", "ki"))
        check_definite("kp", kp, joints, strict=True, why="Kp positive definite, 004 eq. 4.3")
        check_definite("kd", kd, joints, strict=False, why="Kv non-negative definite, 004 eq. 4.3")
        check_damping(kp, kd, joints)
        check_definite("ki", ki, joints, strict=False, why="a negative integral gain diverges")
        limit = per_joint("integral_limit", params["integral_limit"], n)
        integrated = ki != 0.0 if ki.ndim == 1 else np.any(ki != 0.0, axis=0)  # columns ∫e feeds
        unbounded = np.flatnonzero(integrated & np.isinf(limit))
        if unbounded.size:
            raise ValueError(f"integral_limit for joint '{joints[unbounded[0]]}' is inf while ki "
                             "acts on it: an unbounded integral winds up (give a finite clamp)")
        self._gains = np.stack([np.diag(g) if g.ndim == 1 else g for g in (kp, kd, ki)])
        self._full = np.array([g.ndim == 2 for g in (kp, kd, ki)])
        self._integrates = bool(np.any(integrated))
        self._limit = limit
        self._integral = np.zeros(n)
        self._work, self._u = np.empty((2, n)), np.empty(n)
        self.warm_up()  # at configure, not in the first cycle

    def reset(self) -> None:
        self._integral.fill(0.0)

    @property
    def integral(self) -> np.ndarray:
        """∫e as clamped so far (a copy)."""
        return self._integral.copy()

    def _feedback(self, q, qd, q_des, qd_des, dt: float) -> np.ndarray:
        """Kp e + Kv ė (+ Ki ∫e) in a buffer that the next call overwrites."""
        if not (q.__class__ is qd.__class__ is q_des.__class__ is qd_des.__class__ is NDARRAY
                and q.dtype is qd.dtype is q_des.dtype is qd_des.dtype is FLOAT64
                and q.ndim == qd.ndim == q_des.ndim == qd_des.ndim == 1):
            q, qd, q_des, qd_des = (np.asarray(x, dtype=float) for x in (q, qd, q_des, qd_des))
            if not q.ndim == qd.ndim == q_des.ndim == qd_des.ndim == 1:
                raise ValueError("expected q, qd, q_des and qd_des of one value per joint")
        PID.call(q, qd, q_des, qd_des, self._gains, self._full, self._integral, self._limit,
                 float(dt), self._integrates, self._work, self._u)
        return self._u


_FRICTION = {"friction": "compensate the model's joint friction (viscous and Coulomb)"}


class _InverseDynamicsFeedback(_PIDFeedback):
    """Feedback plus a Newton–Euler pass, with or without the model's friction."""

    parameters = {**_PIDFeedback.parameters, **_FRICTION}
    defaults = {**_PIDFeedback.defaults, "friction": True}

    def _configure(self, params):
        super()._configure(params)
        self._friction = _flag("friction", params["friction"])


class ComputedTorque(_InverseDynamicsFeedback):
    """004 eq. (4.1) in its Newton–Euler form (4.4): τ = NE(q, q̇, q̈_d + Kv ė + Kp e [+ Ki ∫e]).

    One inverse-dynamics pass with the commanded acceleration substituted for q̈, so the gains are
    in acceleration units (Kp in 1/s², Kv in 1/s, Ki in 1/s³). With a perfect model the closed loop
    is ë + Kv ė + Kp e (+ Ki ∫e) = 0 (eq. 4.3).
    """

    @classmethod
    def warm_up(cls, notify=print) -> None:
        super().warm_up(notify)
        COMPUTED_TORQUE.ready()
        ANSWER_COMPUTED_TORQUE.ready()

    def _configure(self, params):
        super()._configure(params)
        self._mode = GRAVITY | (FRICTION if self._friction else 0)
        self._v, self.torque = np.empty(self.dof), np.empty(self.dof)

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        v = self._feedback(q, qd, q_des, qd_des, dt)
        v += qdd_des
        return self.model.inverse_dynamics(q, qd, v, friction=self._friction)

    def saturating(self, limit, index, effort) -> Callable[..., int]:
        """The control loop's path (``ControlLaw``), one compiled call (``computed_torque_into``)
        bound to the loop's arrays: ``(q, qd, reference, dt)`` → :meth:`compute` at
        ``reference`` (3, n rows q_d, q̇_d, q̈_d) into ``torque``, clamped to ±``limit`` into
        ``effort`` in joints order (``index``: the chain joint of each entry); the number of
        joints clamped, -1 when ``torque`` has NaN or inf. The caller passes float64 arrays of
        this arm (q, qd, limit, effort vectors; ``reference`` C-ordered; an intp ``index``) and
        a float ``dt``."""
        return partial(COMPUTED_TORQUE.call, *self._bound(limit, index, effort))

    def answering(self, limit, index, effort) -> Callable[..., int]:
        """The control loop's ordinary path (``ControlLaw``): ``saturating``'s step, preceded by
        taking a serialized joint state and sampling its reference, in one compiled call
        (``answer_computed_torque``)."""
        return partial(ANSWER_COMPUTED_TORQUE.call, *self._bound(limit, index, effort))

    def _bound(self, limit, index, effort) -> tuple:
        return (self.model.params, self._mode, self._gains, self._full, self._integral,
                self._limit, self._integrates, self._work, self._v, self.torque, limit, index,
                effort)


class PDGravity(_PIDFeedback):
    """PD plus gravity compensation (Takegaki & Arimoto 1981): τ = Kp e + Kv ė [+ Ki ∫e] + g(q).

    Gains are in effort units (Kp in N·m/rad or N/m). Stable for a set point without a model of
    the inertia; it lags a moving reference.
    """

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        tau = self.model.gravity_torques(q)
        tau += self._feedback(q, qd, q_des, qd_des, dt)
        return tau


class Feedforward(_InverseDynamicsFeedback):
    """Inverse-dynamics feedforward of the reference plus PD: τ = NE(q_d, q̇_d, q̈_d) + Kp e + Kv ė
    [+ Ki ∫e]. The model term depends on the reference only (it can be computed ahead); gains are
    in effort units as for ``pd_gravity``."""

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        tau = self.model.inverse_dynamics(q_des, qd_des, qdd_des, friction=self._friction)
        tau += self._feedback(q, qd, q_des, qd_des, dt)
        return tau


class GravityCompensation(ControlLaw):
    """τ = g(q) + friction compensation at the measured q̇; the reference is ignored.

    Coulomb friction is a step at q̇ = 0, and the measured q̇ of a resting joint is noise: feeding
    sign(q̇) would chatter the full ±Fc on every sample. Within ``coulomb_velocity`` of zero the
    Coulomb term therefore ramps linearly (a boundary layer), so a joint at rest gets none and a
    moving one the model's full Fc; outside the band the compensation equals the model's
    friction. ``coulomb_velocity = 0`` gives the discontinuous model term.
    """

    parameters = {
        **_FRICTION,
        "coulomb_velocity": "half-width (rad/s or m/s) of the band around zero velocity where "
                            "the Coulomb compensation ramps linearly; set it above the velocity "
                            "noise (0 = sign(q̇))",
    }
    defaults = {"friction": True, "coulomb_velocity": 0.01}

    def _configure(self, params):
        self._friction = _flag("friction", params["friction"])
        band = params["coulomb_velocity"]
        if not isinstance(band, Real) or isinstance(band, bool) or not 0.0 <= band < np.inf:
            raise ValueError(f"coulomb_velocity must be a finite number >= 0, got {band!r}")
        self._band = float(band)

    def compute(self, q, qd, q_des=None, qd_des=None, qdd_des=None, dt=0.0):
        tau = self.model.gravity_torques(q)
        if self._friction:
            tau += self.friction_compensation(qd)
        return tau

    def friction_compensation(self, qd) -> np.ndarray:
        """The model's friction at velocity ``qd`` with its sign-law Coulomb band-limited (a
        joint whose model has the smooth tanh law keeps it: it is a boundary layer already)."""
        m = self.model
        qd = np.asarray(qd, dtype=float)
        if self._band == 0.0:
            return m.friction_torques(qd)
        s = np.clip(qd / self._band, -1.0, 1.0)
        banded = (m.viscous * qd + np.where(s > 0.0, m.coulomb_positive, m.coulomb_negative) * s
                  + m.friction_offset)
        return np.where(m.coulomb_tanh > 0.0, m.friction_torques(qd), banded)
