"""The generalized-momentum observer (De Luca & Mattone 2003; Haddadin, De Luca & Albu-Schäffer,
IEEE T-RO 33(6), 2017): an estimate of the external joint torque τ_ext from the torque applied and
the measured motion, without accelerations.

With p = M(q) q̇ (armature included) and M q̈ + C q̇ + g + τ_f = τ + τ_ext, Ṁ = C + Cᵀ gives
ṗ = τ + τ_ext + Cᵀq̇ − g − τ_f, and the residual

    r(t) = K_O (p(t) − p(0) − ∫₀ᵗ (τ + Cᵀq̇ − g − τ_f + r) ds)

obeys ṙ = K_O (τ_ext − r): τ_ext through a first-order filter of bandwidth K_O per joint.

Discrete form (``step``; β = Cᵀq̇ − g − τ_f, a function of the state only; τ_k the torque applied
over (t_{k−1}, t_k], held as a sampled controller holds it):

    u_k = (p_k − p_{k−1})/Δt − τ_k − ½ (β_k + β_{k−1})
    r_k = r_{k−1} + (1 − e^{−K_O Δt}) (u_k − r_{k−1})

p enters only through its increments, which telescope to p_k − p_0 exactly: at a constant Δt this
is the integral form above with the rectangle rule for τ (exact for a held torque), the trapezoid
for β, the previous r in the integral and the gain (1 − e^{−K_O Δt})/Δt (K_O to first order). u_k
is the mean of τ_ext over the step up to the trapezoid's error on β, |ε| ≤ Δt² max|β̈| / 12; r is
u filtered, so that error is filtered, never summed (no drift), and a step of τ_ext at a sample
gives r_k = τ_ext (1 − e^{−K_O t_k}) exactly. What drifts is integrating Cᵀq̇ with a factorisation
that does not satisfy Ṁ = C + Cᵀ, or forming Ṁ by differencing M.

Cᵀq̇ in O(n), in the pass that gives p and g: (Cᵀq̇)_j = ∂T/∂q_j = (v_j × S_j)ᵀ H_j, with S_j joint
j's axis, v_j body j's spatial velocity and H_j the spatial momentum of bodies j..n−1 (all about
origin j, in frame j): moving joint j turns the subtree's axes and inertias about S_j, and the
two changes of the kinetic energy leave −v_iᵀ I_i (S_j × v_j) per body i ≥ j. For a revolute
joint (S = (z, 0)) that is (ω × z)·L + (v_o × z)·P, for a prismatic one (ω × z)·P, with L the
subtree's angular momentum about origin j and P its linear momentum.

The model may change at run time (``follow``): the adaptive law's current parameter estimate
written into the packed parameters the pass reads, each step — the same linear map the law's
regressor applies (p = Y(q, 0, 0, q̇) π̂ − Y(q, 0, 0, 0) π̂, test_momentum_observer.py), so a payload
the law has learned is no external torque.
"""
from __future__ import annotations

import numpy as np

from ..dynamics.friction import FrictionModel
from ..dynamics.base_parameters import base_parameters
from ..dynamics.inertial_parameters import BODY_COLUMNS, DRIVE_COLUMNS, parameter_names, standard_parameters
from ..dynamics.joint_frames import inertia, place_joint, rotate_back, to_parent
from ..dynamics.newton_euler import joint_friction
from ..dynamics.layout import (ARMATURE, COULOMB_NEG, COULOMB_POS, FIRST_MOMENT, GRAVITY_VECTOR,
                               INERTIA_AT_ORIGIN, JOINT_ORIGIN, MASS, PRE_ORIGIN, PRISMATIC, VISCOUS)
from ..plumbing.kernels import (BOOL, C_MATRIX, FLOAT, FLOAT64, INDEX_VECTOR, NDARRAY, VECTOR, Direct,
                                inline, kernel)
from .gains import per_joint

__all__ = ["MomentumObserver", "momentum_terms", "warm_up"]

# workspace row i: the pose of frame i in frame i-1 (columns 0..11), then ω, the velocity of origin
# i and −gravity, all in frame i
OMEGA, VELOCITY, UP = 12, 15, 18
WORKSPACE_COLUMNS = 21
# P's column of each standard parameter of a body (BODY_COLUMNS' order) and of a drive
_BODY_CELLS = (MASS, FIRST_MOMENT, FIRST_MOMENT + 1, FIRST_MOMENT + 2, INERTIA_AT_ORIGIN,
               INERTIA_AT_ORIGIN + 3, INERTIA_AT_ORIGIN + 1, INERTIA_AT_ORIGIN + 5,
               INERTIA_AT_ORIGIN + 4, INERTIA_AT_ORIGIN + 2)
_DRIVE_CELLS = (ARMATURE, VISCOUS, COULOMB_POS, COULOMB_NEG)
assert len(_BODY_CELLS) == len(BODY_COLUMNS) and len(_DRIVE_CELLS) == len(DRIVE_COLUMNS)


@inline
def momentum_into(P, q, qd, friction, ws, p, beta):
    """p = M(q) q̇ and β = Cᵀ(q, q̇) q̇ − g(q) − τ_f(q̇) (τ_f when ``friction``) into ``p`` and
    ``beta``, one outward and one inward pass (module docstring); ``ws`` (n, WORKSPACE_COLUMNS)."""
    n = q.shape[0]
    w0 = w1 = w2 = v0 = v1 = v2 = 0.0
    u0 = -P[n, GRAVITY_VECTOR]
    u1 = -P[n, GRAVITY_VECTOR + 1]
    u2 = -P[n, GRAVITY_VECTOR + 2]
    for i in range(n):
        place_joint(P, i, q[i], ws)
        px = ws[i, JOINT_ORIGIN]
        py = ws[i, JOINT_ORIGIN + 1]
        pz = ws[i, JOINT_ORIGIN + 2]
        v0, v1, v2 = rotate_back(ws, i, v0 + (w1 * pz - w2 * py), v1 + (w2 * px - w0 * pz),
                                 v2 + (w0 * py - w1 * px))
        w0, w1, w2 = rotate_back(ws, i, w0, w1, w2)
        u0, u1, u2 = rotate_back(ws, i, u0, u1, u2)
        ws[i, OMEGA] = w0
        ws[i, OMEGA + 1] = w1
        ws[i, OMEGA + 2] = w2
        ws[i, VELOCITY] = v0
        ws[i, VELOCITY + 1] = v1
        ws[i, VELOCITY + 2] = v2
        ws[i, UP] = u0
        ws[i, UP + 1] = u1
        ws[i, UP + 2] = u2
        if P[i, PRISMATIC] != 0.0:
            v2 = v2 + qd[i]
        else:
            w2 = w2 + qd[i]
    # inward: the subtree's momentum (linear P, angular L about origin i) and weight (force F,
    # moment N about origin i), carried to frame i-1 after joint i has taken its part
    P0 = P1 = P2 = L0 = L1 = L2 = F0 = F1 = F2 = N0 = N1 = N2 = 0.0
    for i in range(n - 1, -1, -1):
        w0 = ws[i, OMEGA]
        w1 = ws[i, OMEGA + 1]
        w2 = ws[i, OMEGA + 2]
        v0 = ws[i, VELOCITY]
        v1 = ws[i, VELOCITY + 1]
        v2 = ws[i, VELOCITY + 2]
        if P[i, PRISMATIC] != 0.0:
            v2 = v2 + qd[i]
        else:
            w2 = w2 + qd[i]
        u0 = ws[i, UP]
        u1 = ws[i, UP + 1]
        u2 = ws[i, UP + 2]
        m = P[i, MASS]
        h0 = P[i, FIRST_MOMENT]
        h1 = P[i, FIRST_MOMENT + 1]
        h2 = P[i, FIRST_MOMENT + 2]
        xx, yy, zz, xy, yz, xz = inertia(P, i, INERTIA_AT_ORIGIN)
        # body i: momentum m v + ω × h, angular momentum Ī ω + h × v; weight m u, moment h × u
        P0 += m * v0 + (w1 * h2 - w2 * h1)
        P1 += m * v1 + (w2 * h0 - w0 * h2)
        P2 += m * v2 + (w0 * h1 - w1 * h0)
        L0 += (xx * w0 + xy * w1 + xz * w2) + (h1 * v2 - h2 * v1)
        L1 += (xy * w0 + yy * w1 + yz * w2) + (h2 * v0 - h0 * v2)
        L2 += (xz * w0 + yz * w1 + zz * w2) + (h0 * v1 - h1 * v0)
        F0 += m * u0
        F1 += m * u1
        F2 += m * u2
        N0 += h1 * u2 - h2 * u1
        N1 += h2 * u0 - h0 * u2
        N2 += h0 * u1 - h1 * u0
        if P[i, PRISMATIC] != 0.0:   # S = (0, z): (v × S)ᵀH = (ω × z)·P
            p[i] = P2
            c = w1 * P0 - w0 * P1
            g = F2
        else:                        # S = (z, 0): (ω × z)·L + (v_o × z)·P
            p[i] = L2
            c = (w1 * L0 - w0 * L1) + (v1 * P0 - v0 * P1)
            g = N2
        p[i] += P[i, ARMATURE] * qd[i]
        b = c - g
        if friction:
            b -= joint_friction(P, i, qd[i])
        beta[i] = b
        if i > 0:
            P0, P1, P2, L0, L1, L2 = to_parent(ws, i, P0, P1, P2, L0, L1, L2)
            F0, F1, F2, N0, N1, N2 = to_parent(ws, i, F0, F1, F2, N0, N1, N2)


@kernel
def momentum_one(P, q, qd, friction, p, beta):
    """``momentum_into`` for one state, the caller's arrays checked."""
    n = P.shape[0] - 1
    if q.shape[0] != n or qd.shape[0] != n or p.shape[0] != n or beta.shape[0] != n:
        raise ValueError("expected q, qd, p and beta of one value per joint of the model")
    momentum_into(P, q, qd, friction, np.empty((n, WORKSPACE_COLUMNS)), p, beta)


@kernel
def observer_step(P, rows, cols, estimate, q, qd, tau, dt, gain, friction, ws, state, r):
    """One step of the discrete observer (module docstring): the estimate written into P's cells
    (rows[k], cols[k]) first; ``state`` rows: p_{k−1}, β_{k−1}, p_k and β_k as scratch, q_{k−1},
    q̇_{k−1}. When the estimate moved, p_{k−1} and β_{k−1} are taken again with it: a change of
    the parameters is no change of the momentum (differenced, it was a spike of
    (M(θ̂_k) − M(θ̂_{k−1})) q̇ / Δt, tens of N m while the adaptive law learns a tool)."""
    n = q.shape[0]
    if (P.shape[0] != n + 1 or qd.shape[0] != n or tau.shape[0] != n or gain.shape[0] != n
            or r.shape[0] != n or estimate.shape[0] != rows.shape[0]):
        raise ValueError("expected q, qd and tau of one value per joint of the model")
    moved = False
    for k in range(rows.shape[0]):
        if P[rows[k], cols[k]] != estimate[k]:
            P[rows[k], cols[k]] = estimate[k]
            moved = True
    p, beta = state[2], state[3]
    # the last state's momentum again if the estimate moved, then this state's: one call written
    # once, so that numba compiles momentum_into once here, not twice (some 1.5 s)
    for now in range(0 if moved else 1, 2):
        if now:
            x, xd, to_p, to_beta = q, qd, p, beta
        else:
            x, xd, to_p, to_beta = state[4], state[5], state[0], state[1]
        momentum_into(P, x, xd, friction, ws, to_p, to_beta)
    for i in range(n):
        u = (p[i] - state[0, i]) / dt - tau[i] - 0.5 * (beta[i] + state[1, i])
        r[i] -= np.expm1(-gain[i] * dt) * (u - r[i])
        state[0, i] = p[i]
        state[1, i] = beta[i]
        state[4, i] = q[i]
        state[5, i] = qd[i]


_MOMENTUM = Direct(momentum_one, C_MATRIX, VECTOR, VECTOR, BOOL, VECTOR, VECTOR)
_STEP = Direct(observer_step, C_MATRIX, INDEX_VECTOR, INDEX_VECTOR, VECTOR, VECTOR, VECTOR, VECTOR,
               FLOAT, VECTOR, BOOL, C_MATRIX, C_MATRIX, VECTOR)
_NOWHERE = np.zeros(0, dtype=np.intp)
_NOTHING = np.zeros(0)


def momentum_terms(model, q, qd, friction=True):
    """(p, β) = (M(q) q̇, Cᵀ(q, q̇) q̇ − g(q) − τ_f(q̇)) of ``model``, one compiled pass."""
    q, qd = (_vector(x, model.dof, name) for x, name in ((q, "q"), (qd, "qd")))
    p, beta = np.empty(model.dof), np.empty(model.dof)
    _MOMENTUM.call(np.array(model.params), q, qd, bool(friction), p, beta)
    return p, beta


def _vector(x, n, name):
    if not (x.__class__ is NDARRAY and x.dtype is FLOAT64 and x.shape == (n,)):
        x = np.asarray(x, dtype=float)
        if x.shape != (n,):
            raise ValueError(f"{name}: expected one value per joint ({n}), got shape {x.shape}")
    return x


def _kinematics(P):
    """The columns of packed parameters that describe the joints and frames, not the bodies."""
    return np.concatenate([P[:-1, :PRE_ORIGIN + 3].ravel(), P[:-1, PRISMATIC], P[-1]])


def _cell(c, n):
    """P's (row, column) of the standard parameter in column c of the regressor."""
    body = len(BODY_COLUMNS) * n
    if c < body:
        return divmod(c, len(BODY_COLUMNS))[0], _BODY_CELLS[c % len(BODY_COLUMNS)]
    return divmod(c - body, len(DRIVE_COLUMNS))[0], _DRIVE_CELLS[(c - body) % len(DRIVE_COLUMNS)]


class MomentumObserver:
    """The residual r ≈ τ_ext of ``model`` (module docstring), a gain K_O (1/s, one value or one
    per joint, each > 0) and the model's friction unless ``friction`` is false; or ``friction`` a
    ``dynamics.friction.FrictionModel`` (an identified URDF's friction file), used instead of the
    model's (the observer's model is then ``model.with_friction(friction)``).

    ``reset(q, q̇)`` starts it (r = 0, p(0) = M q̇); then once per cycle ``step(q, q̇, τ, Δt)`` with
    the torque applied over the Δt that ended at the state (the command sent at the previous
    cycle, or the measured effort); it returns ``residual``, an array updated in place.
    ``follow(law)``: from then on the parameters are the adaptive law's current estimates.
    """

    def __init__(self, model, gain, friction=True):
        if isinstance(friction, FrictionModel):
            model, friction = model.with_friction(friction), True
        self.model, self.dof = model, model.dof
        self.gain = per_joint("gain", gain, model.dof).copy()
        if not np.all((self.gain > 0.0) & np.isfinite(self.gain)):
            raise ValueError(f"gain K_O must be finite and > 0 for every joint (1/s), got "
                             f"{self.gain.tolist()}")
        self.friction = bool(friction)
        self._P = np.array(model.params)   # writable: follow() writes estimates into it
        self._rows, self._cols, self._law = _NOWHERE, _NOWHERE, None
        self._ws = np.zeros((model.dof, WORKSPACE_COLUMNS))
        self._state = np.zeros((6, model.dof))
        self.residual = np.zeros(model.dof)
        self._started = False
        _MOMENTUM.ready()
        _STEP.ready()

    def follow(self, law) -> None:
        """Take the parameters from ``law`` (an ``AdaptiveComputedTorque`` on this observer's arm)
        at every step: ``adapt: payload`` writes its 10 estimates into the last body; ``all`` and
        ``inertial`` a standard parameter vector with the base parameters at their estimates and
        the dependent ones at zero (the same M, C, g and drives: dynamics.base_parameters).
        ``follow(None)`` goes back to the observer's own model. Either way, ``reset`` next: p(0)
        was another model's.

        The estimate may change from one step to the next: the step then takes p_(k−1) and
        β_(k−1) again with the new estimate (one more pass), since a change of the parameters is
        no change of the momentum."""
        self._started = False
        if law is None:
            self._P, self._rows, self._cols, self._law = np.array(self.model.params), _NOWHERE, _NOWHERE, None
            return
        if not (hasattr(law, "estimate_names") and "adapt" in getattr(law, "params", {})):
            raise ValueError(f"follow: {type(law).__name__} has no parameter estimates to follow "
                             "(adaptive_computed_torque has)")
        model, n = law.model, law.dof
        mine = self.model.params
        if (model.joint_names != self.model.joint_names or model.params.shape != mine.shape
                or not np.array_equal(_kinematics(model.params), _kinematics(mine))):
            raise ValueError(f"follow: the law's arm ({model.name}, joints {model.joint_names}) "
                             f"is not the observer's ({self.model.name}, joints "
                             f"{self.model.joint_names}): other joints or kinematics")
        names = parameter_names(model)
        column = {name: c for c, name in enumerate(names)}
        pi = standard_parameters(model)
        if law.params["adapt"] != "payload":
            base = base_parameters(model)
            values = base.from_standard(pi)
            pi = np.zeros_like(pi)
            pi[base.columns] = values
        P = np.array(model.params)
        for c, value in enumerate(pi):
            P[_cell(c, n)] = value
        cells = [_cell(column[name], n) for name in law.estimate_names]
        self._rows = np.array([r for r, _ in cells], dtype=np.intp)
        self._cols = np.array([c for _, c in cells], dtype=np.intp)
        self._P, self._law = P, law

    def _estimate(self):
        return _NOTHING if self._law is None else self._law.estimates

    def terms(self, q, qd):
        """(p, β) at (q, q̇) with the current parameters (the law's estimates when following)."""
        q, qd = _vector(q, self.dof, "q"), _vector(qd, self.dof, "qd")
        self._P[self._rows, self._cols] = self._estimate()
        p, beta = np.empty(self.dof), np.empty(self.dof)
        _MOMENTUM.call(self._P, q, qd, self.friction, p, beta)
        return p, beta

    def reset(self, q, qd) -> None:
        """Start from the state (q, q̇): r = 0 and p(0) from the current parameters."""
        self._state[0], self._state[1] = self.terms(q, qd)
        self._state[4], self._state[5] = q, qd
        self.residual[:] = 0.0
        self._started = True

    def step(self, q, qd, tau, dt):
        """r after the step that ended at (q, q̇), with ``tau`` applied over its ``dt`` seconds."""
        if not self._started:
            raise RuntimeError("MomentumObserver.step before reset(q, qd): p(0) is not known")
        if not (q.__class__ is qd.__class__ is tau.__class__ is NDARRAY and q.dtype is qd.dtype
                is tau.dtype is FLOAT64 and q.ndim == qd.ndim == tau.ndim == 1):
            q, qd, tau = (_vector(x, self.dof, name) for x, name in ((q, "q"), (qd, "qd"),
                                                                   (tau, "tau")))
        if not dt > 0.0 or dt == np.inf:
            raise ValueError(f"dt must be finite and > 0 s, got {dt!r}")
        return self.advance(q, qd, tau, float(dt))

    def advance(self, q, qd, tau, dt: float):
        """:meth:`step` without its checks, for a caller that passes float64 vectors of ``dof``
        values and a float dt > 0 after a reset (the collision guard, at 1 kHz: the checks were
        half of the step's Python)."""
        _STEP.call(self._P, self._rows, self._cols, self._estimate(), q, qd, tau, dt,
                   self.gain, self.friction, self._ws, self._state, self.residual)
        return self.residual


def warm_up(notify=print):
    """Compile (or load from numba's cache) the observer's two kernels."""
    from ..plumbing.kernels import warm_up as _warm_up

    def exercise():
        _MOMENTUM.ready()
        _STEP.ready()
    return _warm_up("momentum observer kernels", exercise, notify)
