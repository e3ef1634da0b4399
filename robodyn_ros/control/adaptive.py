"""``adaptive_computed_torque``: the adaptive computed-torque law of Slotine & Li (1987).

With e = q − q_d, the sliding variable s = ė + Λe and the reference velocity and acceleration
q̇_r = q̇_d − Λe, q̈_r = q̈_d − Λė:

    τ = Y(q, q̇, q̇_r, q̈_r) π̂ − K_D s,        dπ̂/dt = −Γ Yᵀ s

Y is the Slotine–Li regressor (``dynamics.regressor``: the Christoffel C, so Ṁ − 2C is
skew-symmetric) and π̂ starts from the model's own parameters. With π̃ = π̂ − π, the closed loop is
M ṡ + (C + K_D) s = Y π̃, and V = ½ sᵀ M s + ½ π̃ᵀ Γ⁻¹ π̃ has dV/dt = −sᵀ K_D s ≤ 0: s, hence e and
ė, go to zero whatever π̂ started from; π̂ itself goes to the truth only in the directions the motion
excites (no excitation, no parameter convergence — the tracking converges all the same).

What is adapted (``adapt``): ``payload``, the last body's 10 standard parameters (the body and
whatever it carries; the default, and the cheapest: only those 10 columns of Y are formed);
``all``, every base parameter (``dynamics.base_parameters``: the combinations the joint torques
determine, drive parameters included); ``inertial``, the base parameters but the viscous and
Coulomb ones, which keep the model's values. ``friction: false`` leaves those terms out entirely.

What keeps the estimates sane when the proof's assumptions fail (noise, unmodelled effects, a
motion that excites little), each stated in doc/control_laws.md:

* a dead zone: the adaptation uses s_Δ = s − δ sat(s/δ), each component of s shrunk by
  ``dead_zone`` towards zero (Slotine & Li's robust adaptation), so noise teaches nothing;
* leakage (σ-modification, Ioannou & Kokotović 1983): dπ̂/dt gets −σ (π̂ − π_0), the estimates
  relax to the model's at rate ``leakage`` (1/s) — bounded under any bounded disturbance, at the
  price of a bias of order σ;
* projection (``payload``): the payload mass, m̂ minus the model's last-body mass, stays within
  ``payload_mass_limits``; a projection onto a box in the coordinates of a diagonal Γ, so it never
  increases π̃ᵀ Γ⁻¹ π̃ while the truth lies inside.

Γ is diagonal; by default 150 for a mass and 30 for every other parameter. The update
is explicit Euler over ``dt`` with this cycle's Y and s; one compiled call per cycle (errors,
regressor, effort, update) into buffers allocated once.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from numbers import Real
from typing import Any

import numpy as np

from ..dynamics.base_parameters import base_parameters
from ..dynamics.inertial_parameters import parameter_names, standard_parameters
from ..dynamics.regressor import BODY, payload_one, regressor_one
from ..plumbing.kernels import (BOOL, C_MATRIX, FLOAT, FLOAT64, INDEX_VECTOR, INT, MATRIX, NDARRAY,
                                PARAMETERS, VECTOR, Direct, as_declared, inline, kernel)
from .gains import check_definite, gain, per_joint
from .law import ControlLaw
from .cycle_steps import (DECLINED, ORDINARY_STATE, SATURATE, answered_state_into, ordinary_dt,
                          saturate_into)
from .laws import _FRICTION, _PIDFeedback, _flag

__all__ = ["ADAPT", "AdaptiveComputedTorque"]

ADAPT = ("payload", "all", "inertial")
# Γ by default (issue 20's PUMA at 1 kHz): a mass's estimate may move fast, since its columns load
# the heavy joints; the first moments' and inertias' load the light wrist joints, where a faster
# update rings with a sample or two of delay in the loop
GAMMA, GAMMA_MASS = 30.0, 150.0
_FRICTION_COLUMNS = ("viscous", "coulomb_positive", "coulomb_negative")


@inline
def check_sizes(P, q, qd, q_des, qd_des, qdd_des):
    n = P.shape[0] - 1
    if (q.shape[0] != n or qd.shape[0] != n or q_des.shape[0] != n or qd_des.shape[0] != n
            or qdd_des.shape[0] != n):
        raise ValueError("expected q, qd, q_des, qd_des and qdd_des of one value per joint")


@inline
def reference(q, qd, q_des, qd_des, qdd_des, lam, s, sd, vr, ar, dead):
    """s = ė + Λe, q̇_r = q̇_d − Λe, q̈_r = q̈_d − Λė and the dead-zone s_Δ = s − δ sat(s/δ)."""
    for i in range(q.shape[0]):
        e = q[i] - q_des[i]
        ed = qd[i] - qd_des[i]
        s[i] = ed + lam[i] * e
        vr[i] = qd_des[i] - lam[i] * e
        ar[i] = qdd_des[i] - lam[i] * ed
        if s[i] > dead[i]:
            sd[i] = s[i] - dead[i]
        elif s[i] < -dead[i]:
            sd[i] = s[i] + dead[i]
        else:
            sd[i] = 0.0


@inline
def damp(kd, s, tau):
    """τ −= K_D s."""
    n = s.shape[0]
    for i in range(n):
        t = 0.0
        for k in range(n):
            t += kd[i, k] * s[k]
        tau[i] -= t


@inline
def adapt(Y, columns, adapted, sd, dt, gamma, leakage, initial, low, high, estimate):
    """π̂_k += dt (−γ_k Y[:, c_k]ᵀ s_Δ − σ (π̂_k − π_0,k)), then into [low_k, high_k], for the first
    ``adapted`` entries."""
    for k in range(adapted):
        c = columns[k]
        g = 0.0
        for i in range(sd.shape[0]):
            g += Y[i, c] * sd[i]
        x = estimate[k] - dt * (gamma[k] * g + leakage * (estimate[k] - initial[k]))
        estimate[k] = min(max(x, low[k]), high[k])


@kernel
def payload_step(P, q, qd, q_des, qd_des, qdd_des, dt, lam, kd, dead, friction, gamma, leakage,
                 initial, low, high, estimate, columns, work, Y, tau):
    """One cycle of ``adapt: payload``: the effort into ``tau`` with the current estimate of the
    last body, then the estimate updated. ``work`` rows: s, s_Δ, q̇_r, q̈_r. The regressor's
    compiled versions are called (``as_declared``), not compiled in again."""
    check_sizes(P, q, qd, q_des, qd_des, qdd_des)
    s, sd, vr, ar = work[0], work[1], work[2], work[3]
    reference(q, qd, q_des, qd_des, qdd_des, lam, s, sd, vr, ar, dead)
    payload_one(P, q, qd, as_declared(vr), as_declared(ar), friction, estimate, tau, Y)
    damp(kd, s, tau)
    adapt(Y, columns, BODY, sd, dt, gamma, leakage, initial, low, high, estimate)


@kernel
def base_step(P, q, qd, q_des, qd_des, qdd_des, dt, lam, kd, dead, adapted, gamma, leakage,
              initial, low, high, estimate, columns, work, Y, tau):
    """One cycle of ``adapt: all`` or ``inertial``: τ = Σ_k Y[:, c_k] π_k − K_D s over the
    parameters ``estimate`` (the first ``adapted`` of them adapted, the rest fixed), then the
    update."""
    check_sizes(P, q, qd, q_des, qd_des, qdd_des)
    s, sd, vr, ar = work[0], work[1], work[2], work[3]
    reference(q, qd, q_des, qd_des, qdd_des, lam, s, sd, vr, ar, dead)
    regressor_one(P, q, qd, as_declared(vr), as_declared(ar), as_declared(False), Y)
    n = q.shape[0]
    for i in range(n):
        t = 0.0
        for k in range(columns.shape[0]):
            t += Y[i, columns[k]] * estimate[k]
        tau[i] = t
    damp(kd, s, tau)
    adapt(Y, columns, adapted, sd, dt, gamma, leakage, initial, low, high, estimate)


_PAYLOAD_STEP = Direct(payload_step, PARAMETERS, VECTOR, VECTOR, VECTOR, VECTOR, VECTOR, FLOAT,
                       VECTOR, MATRIX, VECTOR, BOOL, VECTOR, FLOAT, VECTOR, VECTOR, VECTOR, VECTOR,
                       INDEX_VECTOR, C_MATRIX, C_MATRIX, VECTOR)
_BASE_STEP = Direct(base_step, PARAMETERS, VECTOR, VECTOR, VECTOR, VECTOR, VECTOR, FLOAT,
                    VECTOR, MATRIX, VECTOR, INT, VECTOR, FLOAT, VECTOR, VECTOR, VECTOR, VECTOR,
                    INDEX_VECTOR, C_MATRIX, C_MATRIX, VECTOR)


@kernel
def answer_adaptive(payload, P, lam, kd, dead, friction, adapted, gamma, leakage, initial, low, high,
                    estimate, columns, work, Y, tau, effort_limit, index, effort, message, names,
                    match, q, qd, stamp, times, knots, origins, stacked, samples, listened, state,
                    starts, head):
    """A joint state's bytes to the command and the state's message in one call
    (``AdaptiveComputedTorque.answering``): the state taken and its reference sampled
    (``cycle_steps.ordinary_dt``), the step (``payload_step``, or ``base_step``), its torque
    saturated into ``effort``, then the state's message unless the torque was NaN or inf.
    Returns DECLINED, the law untouched, when the state is not the ordinary next one."""
    dt = ordinary_dt(message, names, match, q, qd, stamp, times, knots, origins, stacked, samples)
    if dt < 0.0:
        return DECLINED
    # the rows as the steps' Direct declares them: their compiled versions, not new ones
    q_des, qd_des, qdd_des = as_declared(samples[0]), as_declared(samples[1]), as_declared(samples[2])
    if payload:
        payload_step(P, q, qd, q_des, qd_des, qdd_des, dt, lam, kd, dead, friction, gamma, leakage,
                     initial, low, high, estimate, columns, work, Y, tau)
    else:
        base_step(P, q, qd, q_des, qd_des, qdd_des, dt, lam, kd, dead, adapted, gamma, leakage,
                  initial, low, high, estimate, columns, work, Y, tau)
    clamped = saturate_into(tau, effort_limit, index, effort)
    if clamped >= 0:
        answered_state_into(listened, state, starts, head, stamp, samples, q, qd, effort, index)
    return clamped


_ANSWER = Direct(answer_adaptive, BOOL, PARAMETERS, VECTOR, MATRIX, VECTOR, BOOL, INT, VECTOR, FLOAT,
                 VECTOR, VECTOR, VECTOR, VECTOR, INDEX_VECTOR, C_MATRIX, C_MATRIX, VECTOR,
                 VECTOR, INDEX_VECTOR, VECTOR, *ORDINARY_STATE)


def _vector(x, n):
    x = np.asarray(x, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"expected one value per joint ({n}), got shape {x.shape}")
    return x


def _number(name: str, value, low: float = 0.0) -> float:
    if not isinstance(value, Real) or isinstance(value, bool) or not low <= value < np.inf:
        raise ValueError(f"{name} must be a finite number >= {low:g}, got {value!r}")
    return float(value)


class AdaptiveComputedTorque(ControlLaw):
    """Slotine & Li's adaptive computed torque (module docstring): τ = Y(q, q̇, q̇_r, q̈_r) π̂ − K_D s,
    dπ̂/dt = −Γ Yᵀ s_Δ − σ (π̂ − π_0), the payload mass projected onto its limits.

    ``estimate_names``, ``estimates`` (a copy) and ``initial_estimates`` describe what it has learnt;
    ``reset_estimates()`` goes back to the model's. ``reset()`` — which the controller calls on a
    hold, an enable or an activate — keeps them: what was learnt about the arm stays true when the
    reference changes.
    """

    parameters = {
        "kd": _PIDFeedback.parameters["kd"],
        "lambda": "Λ in s = ė + Λe (1/s): one value or one per joint, each > 0; the error decays "
                  "as e^(−Λt) once s is zero",
        "gamma": "adaptation gain Γ (diagonal): one value for every adapted parameter but the "
                 "masses (gamma_mass), or one per adapted parameter (the order of "
                 "~/parameter_estimates, masses included), each >= 0 (0 freezes one); the defaults "
                 "suit 1 kHz, take a tenth at 100 Hz",
        "gamma_mass": "adaptation gain of every mass when gamma is one value, >= 0",
        "adapt": "what is adapted: payload (the last body's 10 standard parameters), all (every "
                 "base parameter) or inertial (the base parameters but viscous and Coulomb "
                 "friction)",
        "dead_zone": "dead zone on s (rad/s or m/s): one value or one per joint; errors within it "
                     "do not adapt (set it above the noise on s)",
        "leakage": "σ-modification (1/s): the estimates relax towards the model's at this rate "
                   "(0 = off)",
        "payload_mass_limits": "[min, max] of the payload mass (kg) that may be estimated, added "
                               "to the model's last body (adapt: payload); min <= 0 <= max",
        **_FRICTION,
    }
    # kd as the node's (N m s/rad here); Λ = 10/s; Γ and the dead zone: doc/control_laws.md
    defaults = {"kd": 20.0, "lambda": 10.0, "gamma": GAMMA, "gamma_mass": GAMMA_MASS,
                "adapt": "payload", "dead_zone": 1e-3,
                "leakage": 0.0, "payload_mass_limits": [0.0, 10.0], "friction": True}

    @classmethod
    def warm_up(cls, notify=print):
        warm_up(notify)

    def _configure(self, params: Mapping[str, Any]) -> None:
        model, n, joints = self.model, self.dof, self.model.joint_names
        kd = gain("kd", params["kd"], n)
        check_definite("kd", kd, joints, strict=True, why="K_D > 0 makes dV/dt = -s'K_D s < 0")
        self._kd = np.diag(kd) if kd.ndim == 1 else kd.copy()
        self._lambda = per_joint("lambda", params["lambda"], n)
        if not np.all((self._lambda > 0.0) & np.isfinite(self._lambda)):
            raise ValueError(f"lambda must be finite and > 0 for every joint (s = 0 must mean e "
                             f"-> 0), got {self._lambda.tolist()}")
        self._dead = per_joint("dead_zone", params["dead_zone"], n)
        if not np.all(np.isfinite(self._dead)):
            raise ValueError(f"dead_zone must be finite, got {self._dead.tolist()}")
        self._leakage = _number("leakage", params["leakage"])
        self._friction = _flag("friction", params["friction"])
        mode = params["adapt"]
        if mode not in ADAPT:
            raise ValueError(f"adapt must be one of {list(ADAPT)}, got {mode!r}")
        self._mode = mode
        smooth = [name for name, v_s, f_o in zip(model.joint_names, model.coulomb_tanh,
                                                  model.friction_offset) if v_s or f_o]
        if mode != "payload" and smooth:
            # its regressor's friction columns are the sign law without offset
            raise ValueError(f"adapt: {mode} estimates the friction as viscous and sign-law "
                             f"Coulomb terms, and the model's friction (a friction file's) has a "
                             f"smooth Coulomb law or an offset on {', '.join(smooth)}: take adapt: "
                             "payload, or the URDF's friction without the file")
        pi = standard_parameters(model)
        names = parameter_names(model)
        if mode == "payload":
            last = slice(BODY * (n - 1), BODY * n)
            self._columns = np.arange(BODY, dtype=np.intp)
            self._adapted = BODY
            self.estimate_names = tuple(names[last])
            initial = pi[last]
            low, high = self._mass_limits(params["payload_mass_limits"], initial[0])
        else:
            columns, initial, adapted = self._base_coordinates(pi, mode)
            self._columns, self._adapted = columns, adapted
            self.estimate_names = tuple(names[c] for c in columns[:adapted])
            low, high = np.full(len(columns), -np.inf), np.full(len(columns), np.inf)
        self._gamma = self._gains(params["gamma"], params["gamma_mass"], len(self._columns))
        self.initial_estimates = initial[:self._adapted].copy()
        self.initial_estimates.flags.writeable = False
        self._initial, self._low, self._high = initial, low, high
        self._estimate = initial.copy()
        width = BODY if mode == "payload" else pi.size
        self._work = np.zeros((4, n))
        self._Y, self.torque = np.zeros((n, width)), np.zeros(n)
        self.compute(np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), 0.0)  # compile
        _ANSWER.ready()

    def _mass_limits(self, limits, mass):
        try:
            low, high = (float(x) for x in limits)
        except (TypeError, ValueError):
            raise ValueError(f"payload_mass_limits must be [min, max] in kg, got {limits!r}") from None
        if not (np.isfinite(low) and np.isfinite(high) and low <= 0.0 <= high and mass + low >= 0.0):
            raise ValueError(f"payload_mass_limits must be finite with min <= 0 <= max (the model's "
                             f"own mass lies inside) and min >= -{mass:g} (the last body's mass), "
                             f"got {limits!r}")
        lo, hi = np.full(BODY, -np.inf), np.full(BODY, np.inf)
        lo[0], hi[0] = mass + low, mass + high
        return lo, hi

    def _base_coordinates(self, pi, mode):
        """The base columns to sum over, the model's base parameters in that order (adapted ones
        first) and how many are adapted (module docstring)."""
        base = base_parameters(self.model)
        values = base.from_standard(pi)
        kinds = [base.names[c].rpartition(".")[2] for c in base.columns]
        friction = np.array([k in _FRICTION_COLUMNS for k in kinds])
        adapted = ~friction if mode == "inertial" else (np.ones_like(friction) if self._friction
                                                        else ~friction)
        fixed = friction & ~adapted & self._friction
        order = np.concatenate([np.flatnonzero(adapted), np.flatnonzero(fixed)])
        return (np.ascontiguousarray(base.columns[order], dtype=np.intp), values[order].copy(),
                int(adapted.sum()))

    def _gains(self, value, mass, size):
        count = self._adapted
        g = np.asarray(value, dtype=object)
        if g.ndim == 0:
            mass = _number("gamma_mass", mass)
            g = np.array([mass if name.rpartition(".")[2] == "m" else value
                          for name in self.estimate_names], dtype=object)
        try:
            g = np.asarray(g, dtype=float)
        except (TypeError, ValueError):
            g = None
        if (g is None or g.shape != (count,) or isinstance(value, bool)
                or not np.all(np.isfinite(g)) or np.any(g < 0.0)):
            raise ValueError(f"gamma must be one number or {count} (one per adapted parameter: "
                             f"{', '.join(self.estimate_names)}), each finite and >= 0, got {value!r}")
        return np.concatenate([g, np.zeros(size - count)])

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        if not (q.__class__ is qd.__class__ is q_des.__class__ is qd_des.__class__
                is qdd_des.__class__ is NDARRAY and q.dtype is qd.dtype is q_des.dtype
                is qd_des.dtype is qdd_des.dtype is FLOAT64
                and q.ndim == qd.ndim == q_des.ndim == qd_des.ndim == qdd_des.ndim == 1):
            q, qd, q_des, qd_des, qdd_des = (_vector(x, self.dof)
                                             for x in (q, qd, q_des, qd_des, qdd_des))
        self._step(q, qd, q_des, qd_des, qdd_des, float(dt))
        return self.torque

    def saturating(self, limit, index, effort) -> Callable[..., int]:
        """The control loop's path (``ControlLaw``) bound to the loop's arrays: ``(q, qd,
        reference, dt)`` → :meth:`compute` at the rows of ``reference`` into ``torque``, then
        ``saturate_into`` it into ``effort``; the caller passes what
        ``ComputedTorque.saturating``'s caller does."""
        return partial(self._saturated, limit, index, effort)

    def answering(self, limit, index, effort) -> Callable[..., int]:
        """The control loop's ordinary path (``ControlLaw``): ``saturating``'s step, preceded by
        taking a serialized joint state and sampling its reference, and followed by writing the
        state's message, in one compiled call (``answer_adaptive``)."""
        return partial(_ANSWER.call, self._mode == "payload", self.model.params, self._lambda,
                       self._kd, self._dead, self._friction, self._adapted, self._gamma,
                       self._leakage, self._initial, self._low, self._high, self._estimate,
                       self._columns, self._work, self._Y, self.torque, limit, index,
                       effort)

    def _saturated(self, limit, index, effort, q, qd, reference, dt) -> int:
        self._step(q, qd, reference[0], reference[1], reference[2], dt)
        return SATURATE.call(self.torque, limit, index, effort)

    def _step(self, q, qd, q_des, qd_des, qdd_des, dt: float) -> None:
        """One compiled step: the torque into ``torque``, the estimates adapted."""
        args = (self.model.params, q, qd, q_des, qd_des, qdd_des, dt, self._lambda, self._kd,
                self._dead)
        tail = (self._gamma, self._leakage, self._initial, self._low, self._high, self._estimate,
                self._columns, self._work, self._Y, self.torque)
        if self._mode == "payload":
            _PAYLOAD_STEP.call(*args, self._friction, *tail)
        else:
            _BASE_STEP.call(*args, self._adapted, *tail)

    @property
    def estimates(self) -> np.ndarray:
        """The current estimates of the adapted parameters (``estimate_names``), a copy."""
        return self._estimate[:self._adapted].copy()

    def reset_estimates(self) -> None:
        """Back to the model's parameters."""
        self._estimate[:] = self._initial

    def set_estimates(self, values) -> None:
        """Take over ``values`` (say, another instance's ``estimates`` after a gain change),
        within the limits."""
        values = np.asarray(values, dtype=float)
        if values.shape != (self._adapted,) or not np.all(np.isfinite(values)):
            raise ValueError(f"expected {self._adapted} finite estimates, got shape {values.shape}")
        k = self._adapted
        self._estimate[:k] = np.clip(values, self._low[:k], self._high[:k])


# CPU seconds of compiling both steps from an empty cache, the regressor's kernels compiled
# (after them in a fresh process on the 2-core machine of doc/install.md, 2026-11-28 evening)
COMPILE_SECONDS = 6


def warm_up(notify=print):
    """Compile (or load from numba's cache) both steps of the law, on a one-link arm whose argument
    types match any model's (a law compiles them at construction otherwise)."""
    from ..dynamics.link import Link
    from ..dynamics.model import RobotModel
    from ..plumbing.kernels import warm_up as _warm_up

    def exercise():
        model = RobotModel([Link("j", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])
        for adapt in ADAPT[:2]:
            AdaptiveComputedTorque(model, {"adapt": adapt})
    return _warm_up("adaptive computed-torque kernels", exercise, notify, COMPILE_SECONDS)
