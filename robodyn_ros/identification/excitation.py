"""Excitation trajectories for identification (Swevers, Ganseman, Tükel, De Schutter, Van Brussel
1997): a finite Fourier series per joint whose coefficients make the base regressor well
conditioned, within the joints' position, velocity, acceleration and effort limits.

**The series.** Joint j follows, with ω_f = 2π / T_f,

    q_j(t) = q0_j + Σ_{l=1..L} [a_jl / (ω_f l) sin(ω_f l t) − b_jl / (ω_f l) cos(ω_f l t)]
    q̇_j(t) = Σ_l [a_jl cos(ω_f l t) + b_jl sin(ω_f l t)]
    q̈_j(t) = Σ_l ω_f l [−a_jl sin(ω_f l t) + b_jl cos(ω_f l t)]

**At rest at q_start.** The coefficients are constrained, not the motion blended: q̇(0) = 0 is
Σ_l a_jl = 0, q̈(0) = 0 is Σ_l l b_jl = 0 and q(0) = q_start fixes q0_j = q_start_j +
Σ_l b_jl / (ω_f l). The first harmonic's a_j1, b_j1 and q0_j follow from the 2(L − 1) free
coefficients of harmonics 2..L (:meth:`FourierSeries.from_free`). Why this and not a polynomial
correction or a window: the motion stays a pure band-limited periodic signal (every harmonic
a multiple of 1/T_f, so the excitation bandwidth is what L says and nothing leaks outside it),
and periodicity brings the arm back to rest at q_start at the end of *every* period, so K periods
can be run back to back and averaged period by period (Swevers' time-domain averaging, which also
estimates the measurement noise) with no transient to cut. The cost is 2 of the 2L coefficients
per joint; q and its first two derivatives are continuous, the jerk steps at start and end.

**The criterion.** cond(W_base), W_base the base regressor stacked at M sample points of one
period (periodicity: more periods repeat the same rows), minimised as log cond. Why cond rather
than −log det(W_baseᵀW_base): cond bounds how much the least-squares estimate amplifies relative
errors in the torques, and it is blind to a common scale of W, so it needs nothing but the limits;
log det (d-optimality) rewards sheer size in the parameters' units and needs a weighting of the
joints' torques (Swevers' ML setting supplies one: the measured noise covariance, which a first
run does not have yet). Swevers et al. minimise cond for these Fourier trajectories (ASME J.
Manuf. Sci. Eng. 119, 1997) and use d-optimality with maximum likelihood in the T-RA paper. cond
depends on the parameters' units (SI here) and weighs every joint's torque rows alike.

**The limits**, each with a safety margin m: positions within the central (1 − m) of each joint's
range, |q̇| ≤ (1 − m) velocity_limit, |q̈| ≤ (1 − m) the given acceleration limit (URDF has none)
and |τ| ≤ (1 − m) effort_limit, τ = ``model.inverse_dynamics`` (friction included). They are
imposed at the M sample points, tightened by 1 − ε, ε = (2πL/M)²/8: for a trigonometric
polynomial f of degree L every extremum lies within half a sample spacing Δ of a sample, where
f ≤ f(t_k) + ½ max|f̈| (Δ/2)² and Bernstein's inequality gives max|f̈| ≤ (L ω_f)² max|f|, so the
tightened samples bound q, q̇, q̈ at *every* instant. The torques are not such polynomials: each
optimised trajectory is checked at 1 kHz and scaled down towards q_start until it passes.

**The optimisation**: SLSQP on the free coefficients, the limits as inequality constraints, every
gradient exact up to a forward difference: the linear limits' are constant, the torques' and the
objective's go through ∂Y/∂(q, q̇, q̈) at the samples (one regressor batch; τ = Y π, and the
extreme eigenvalues' perturbation ∂λ = 2 (W v)ᵀ ∂W v). Several random starts (a seed), each scaled
onto the limits first; the best result is kept.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import minimize

from ..control.joints import JointOrder
from ..control.trajectory import JointTrajectory, limit_violation
from ..plumbing.kernels import one_blas_thread
from ..dynamics.base_parameters import base_parameters
from ..dynamics.inertial_parameters import parameter_names, standard_parameters
from ..dynamics.regressor import regressor

__all__ = ["CHECK_RATE", "GOAL_RATE", "LIMIT_KINDS", "Excitation", "ExcitationError", "predicted_std",
           "ExcitationProblem", "FourierSeries", "goal_document", "limit_fractions", "limit_usage",
           "optimise_excitation"]

LIMIT_KINDS = ("position", "velocity", "acceleration", "effort")
CHECK_RATE = 1000.0  # Hz: the torques of a result are checked this finely
GOAL_RATE = 20.0     # Hz: points of a goal; the quintic through each one's q, q̇, q̈ follows the
                     # series to ~1e-10 rad (100 Hz: 1e-14), and a 10 s goal of 6 joints is 94 KiB
_STATE_STEP = 1e-6   # finite-difference step of ∂Y/∂q and ∂Y/∂q̇ (rad, rad/s, m, m/s)


class ExcitationError(ValueError):
    """Settings for which no excitation trajectory can be made; the message says why."""


@dataclasses.dataclass(frozen=True)
class FourierSeries:
    """The finite Fourier series of every joint (module docstring), at rest at ``start`` at t = 0
    and at the end of every period: ``a``, ``b`` (n, L) with Σ_l a_jl = 0 and Σ_l l b_jl = 0, as
    :meth:`from_free` makes them; q0 follows from ``start``. Read-only."""
    joint_names: tuple
    period: float
    start: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __post_init__(self):
        for name in ("start", "a", "b"):
            array = np.array(getattr(self, name), dtype=float)
            array.flags.writeable = False
            object.__setattr__(self, name, array)
        scale = max(1.0, np.abs(self.a).max(), np.abs(self.b).max() * self.harmonics)
        if (np.abs(self.a.sum(axis=1)).max() > 1e-12 * scale
                or np.abs(self.b @ np.arange(1.0, self.harmonics + 1.0)).max() > 1e-12 * scale):
            raise ExcitationError("not at rest at t = 0: Σ_l a_jl and Σ_l l b_jl must be 0")

    @property
    def harmonics(self) -> int:
        return self.a.shape[1]

    @property
    def omega(self) -> float:
        return 2.0 * np.pi / self.period

    @property
    def q0(self) -> np.ndarray:
        """The constant term: q(0) = start."""
        return self.start + (self.b / self._omega_l).sum(axis=1)

    @property
    def _omega_l(self) -> np.ndarray:
        return self.omega * np.arange(1.0, self.harmonics + 1.0)

    @classmethod
    def from_free(cls, joint_names: Sequence[str], start, period: float, free) -> FourierSeries:
        """The series at rest at ``start`` from the free coefficients ``free`` (n, 2(L − 1)):
        [a_j2 .. a_jL, b_j2 .. b_jL] per joint; a_j1 and b_j1 follow (module docstring)."""
        free = np.atleast_2d(np.asarray(free, dtype=float))
        if free.ndim != 2 or free.shape[1] < 2 or free.shape[1] % 2:
            raise ExcitationError(f"free coefficients must be (joints, 2(L − 1)) with L >= 2, got "
                                  f"shape {free.shape}")
        half = free.shape[1] // 2
        a_rest, b_rest = free[:, :half], free[:, half:]
        a = np.column_stack([-a_rest.sum(axis=1), a_rest])                          # Σ a = 0
        b = np.column_stack([-(b_rest * np.arange(2.0, half + 2.0)).sum(axis=1), b_rest])  # Σ l b = 0
        return cls(tuple(joint_names), float(period), start, a, b)

    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, q̇, q̈ at the times ``t`` (s), each (len(t), n)."""
        omega_l = self._omega_l
        phase = np.outer(np.asarray(t, dtype=float), omega_l)
        S, C = np.sin(phase), np.cos(phase)
        q = self.q0 + S @ (self.a / omega_l).T - C @ (self.b / omega_l).T
        qd = C @ self.a.T + S @ self.b.T
        qdd = C @ (self.b * omega_l).T - S @ (self.a * omega_l).T
        return q, qd, qdd

    def sampled(self, rate: float, periods: int = 1):
        """Times and q, q̇, q̈ every 1/rate s or closer over ``periods`` periods, both ends included
        and set to the rest state they are (the series' rounding leaves ~1e-16 there)."""
        if not rate > 0.0 or int(periods) != periods or periods < 1:
            raise ExcitationError(f"rate must be positive and periods a whole number >= 1, got "
                                  f"{rate} Hz and {periods}")
        duration = self.period * periods
        times = np.linspace(0.0, duration, int(np.ceil(duration * rate - 1e-9)) + 1)
        q, qd, qdd = self.evaluate(times)
        q[[0, -1]] = self.start
        qd[[0, -1]] = qdd[[0, -1]] = 0.0
        return times, q, qd, qdd

    def joint_trajectory(self, rate: float = GOAL_RATE, periods: int = 1,
                         joints: Sequence[str] | None = None) -> JointTrajectory:
        """The motion as points with positions, velocities and accelerations every 1/rate s (the
        controller's sampler makes a quintic of each segment), columns in ``joints`` order."""
        order = JointOrder(self.joint_names, joints or ())
        times, q, qd, qdd = self.sampled(rate, periods)
        return JointTrajectory(order.names, times, q[:, order.index], qd[:, order.index],
                               qdd[:, order.index])


def _limit_scales(model, acceleration_limit):
    """Centre and half-width (4, n) of each joint's position, velocity, acceleration and effort
    range, so that |value − centre| / half-width ≤ 1 is within the limit (inf: no limit)."""
    bounded = np.isfinite(model.lower) & np.isfinite(model.upper)
    lower, upper = np.where(bounded, model.lower, 0.0), np.where(bounded, model.upper, 0.0)
    centre = np.zeros((4, model.dof))
    centre[0] = 0.5 * (lower + upper)
    radius = np.array([np.where(bounded, 0.5 * (upper - lower), np.inf), model.velocity_limit,
                       np.broadcast_to(acceleration_limit, model.dof), model.effort_limit])
    return centre, radius


def _fractions(model, centre, radius, q, qd, qdd) -> np.ndarray:
    """(value − centre) / half-width of every state (4, N, n): q, q̇, q̈ and the torques."""
    tau = model.inverse_dynamics(q, qd, qdd)
    return (np.stack([q, qd, qdd, tau]) - centre[:, None, :]) / radius[:, None, :]


def limit_fractions(model, series: FourierSeries, acceleration_limit, rate: float = CHECK_RATE):
    """(times (N,), fractions (4, N, n)): over a period sampled at ``rate`` (the motion is
    periodic), each joint's position as its distance from the middle of the range over half the
    range (±1 at a limit), q̇, q̈ and τ over their limits, signed, in LIMIT_KINDS order; 0 where
    there is no limit."""
    centre, radius = _limit_scales(model, acceleration_limit)
    times = np.linspace(0.0, series.period, int(np.ceil(series.period * rate)), endpoint=False)
    return times, _fractions(model, centre, radius, *series.evaluate(times))


def limit_usage(model, series: FourierSeries, acceleration_limit, rate: float = CHECK_RATE
                ) -> dict[str, np.ndarray]:
    """The largest fraction of each joint's limits the motion uses (``limit_fractions``'
    largest magnitude per joint)."""
    used = np.abs(limit_fractions(model, series, acceleration_limit, rate)[1]).max(axis=1)
    return dict(zip(LIMIT_KINDS, used))


class ExcitationProblem:
    """log cond(W_base) and the limits of the series at rest at ``q_start`` as functions of the
    free coefficients x (n · 2(L − 1), joint by joint as in :meth:`FourierSeries.from_free`)."""

    def __init__(self, model, q_start=None, period: float = 10.0, harmonics: int = 5,
                 samples: int = 100, acceleration_limit=10.0, margin: float = 0.1):
        n = model.dof
        names = model.joint_names
        if not period > 0.0 or not np.isfinite(period):
            raise ExcitationError(f"period must be a positive number of seconds, got {period}")
        if int(harmonics) != harmonics or harmonics < 2:
            raise ExcitationError(f"harmonics must be an integer >= 2 (the first harmonic is spent "
                                  f"on starting at rest), got {harmonics}")
        if not 0.0 <= margin < 1.0:
            raise ExcitationError(f"margin must be a fraction in [0, 1), got {margin}")
        accel = np.array(acceleration_limit, dtype=float)
        if accel.shape not in ((), (n,)) or not np.all(accel > 0.0):
            raise ExcitationError(f"acceleration limit must be one positive value or {n} (one per "
                                  f"joint of {names}), got {np.ravel(accel).tolist()}")
        one_sided = np.isfinite(model.lower) != np.isfinite(model.upper)
        if one_sided.any():
            raise ExcitationError(f"joint '{names[int(np.argmax(one_sided))]}' has one position "
                                  "limit: give both or none")
        #: ε of the module docstring: how much the samples' bounds are tightened
        self.slack = (2.0 * np.pi * harmonics / samples) ** 2 / 8.0
        if self.slack > 0.05:
            raise ExcitationError(f"{samples} samples are too few for {harmonics} harmonics: use at "
                                  f"least {int(np.ceil(2.0 * np.pi * harmonics / np.sqrt(0.4)))}")
        q_start = 0.5 * (np.where(np.isfinite(model.lower), model.lower, 0.0)
                         + np.where(np.isfinite(model.upper), model.upper, 0.0)) \
            if q_start is None else np.asarray(q_start, dtype=float)
        if q_start.shape != (n,) or not np.all(np.isfinite(q_start)):
            raise ExcitationError(f"start pose must be {n} finite values (joints {names}), got "
                                  f"{np.ravel(q_start).tolist()}")
        self.model, self.q_start, self.period = model, q_start, float(period)
        self.harmonics, self.margin, self.acceleration_limit = int(harmonics), float(margin), accel
        self.free = 2 * (self.harmonics - 1)
        self.size = n * self.free
        self.centre, self.radius = _limit_scales(model, accel)
        self.bound = (1.0 - margin) * (1.0 - self.slack)   # ρ: |fraction| at the samples
        offset = (q_start - self.centre[0]) / self.radius[0]
        if np.any(np.abs(offset) > self.bound):
            band = self.bound * self.radius[0]
            why = limit_violation(q_start[None], names, self.centre[0] - band, self.centre[0] + band)
            raise ExcitationError(f"start pose: {why.removeprefix('point 0: ')} (the range less the "
                                  f"margin {margin} and {self.slack:.2g} for the sampling)")
        rest = self.model.inverse_dynamics(q_start, np.zeros(n), np.zeros(n)) / self.radius[3]
        if np.any(np.abs(rest) > self.bound):
            j = int(np.argmax(np.abs(rest)))
            raise ExcitationError(
                f"start pose: holding it takes {abs(rest[j]) * self.radius[3, j]:.4g} on joint "
                f"'{names[j]}', over {self.bound:.3g} of its effort limit {self.radius[3, j]:.4g}")
        # sample midpoints: t = 0, where q̇ = 0 only to rounding and Coulomb's sign is arbitrary,
        # is never a sample, and the wrap-around gap is one spacing like the others
        self.times = (np.arange(samples) + 0.5) * self.period / samples
        unit = FourierSeries.from_free(range(self.free), np.zeros(self.free), self.period,
                                       np.eye(self.free))
        #: Φ, Φ̇, Φ̈ (M, 2(L − 1)): q − q_start, q̇, q̈ of a joint are Φ x_j, Φ̇ x_j, Φ̈ x_j
        self.basis = unit.evaluate(self.times)
        self.base = base_parameters(model)
        if samples * n < self.base.count:
            raise ExcitationError(f"{samples} samples of {n} joints give fewer torques than the "
                                  f"{self.base.count} base parameters")
        self._pi = standard_parameters(model)
        self._coulomb = [name.rsplit(".", 1)[1] in ("coulomb_positive", "coulomb_negative")
                         for name in parameter_names(model)]
        self._derivatives = None
        self._bounded = np.isfinite(self.radius)           # (4, n): the limits there are
        linear = np.zeros((3, samples, n, n, self.free))
        for k, Phi in enumerate(self.basis):
            for j in range(n):
                linear[k, :, j, j] = Phi / self.radius[k, j]
        self._linear_jacobian = self._rows(linear.reshape(3, samples, n, self.size), slice(0, 3))

    # ------------------------------------------------------------------ the motion
    def series(self, x) -> FourierSeries:
        return FourierSeries.from_free(self.model.joint_names, self.q_start, self.period,
                                       np.reshape(x, (self.model.dof, self.free)))

    def states(self, x):
        X = np.reshape(x, (self.model.dof, self.free)).T
        Phi, dPhi, ddPhi = self.basis
        return self.q_start + Phi @ X, dPhi @ X, ddPhi @ X

    def base_regressor(self, x) -> np.ndarray:
        """W_base (M n, base parameters): the base regressor stacked at the samples."""
        W = self.base.base_regressor(regressor(self.model, *self.states(x)))
        return W.reshape(-1, W.shape[-1])

    def log_cond(self, x) -> float:
        """The objective, log cond(W_base) = ½ log(λ_max / λ_min) of W_baseᵀW_base: a small
        symmetric eigenproblem, 4 times faster than W_base's SVD (40 on a busy machine, where
        LAPACK's threads wait for cores), exact to ~1e-16 cond² (1e-8 at cond 1e4)."""
        W = self.base_regressor(x)
        eigenvalues = np.linalg.eigvalsh(W.T @ W)
        return 0.5 * float(np.log(eigenvalues[-1] / eigenvalues[0])) if eigenvalues[0] > 0.0 \
            else np.inf

    def log_cond_gradient(self, x) -> np.ndarray:
        """∂ log cond / ∂x = ½ (∂λ_max / λ_max − ∂λ_min / λ_min), ∂λ = 2 (W v)ᵀ (∂W v) for the
        eigenvector v of λ, ∂W through the states (:meth:`_regressor_derivatives`)."""
        Y, dY = self._regressor_derivatives(x)
        columns = self.base.columns
        W = Y[..., columns].reshape(-1, len(columns))
        eigenvalues, vectors = np.linalg.eigh(W.T @ W)
        gradient = np.zeros((self.model.dof, self.free))
        v = np.zeros(Y.shape[-1])
        for end, sign in ((-1, 0.5), (0, -0.5)):
            v[columns] = vectors[:, end]                               # W v = Y v over all columns
            w = (W @ vectors[:, end]).reshape(len(self.times), -1)     # (M, n)
            along = np.einsum("sjki,ki->sjk", dY @ v, w)
            gradient += sign * 2.0 * np.einsum("sjk,skc->jc", along, self.basis) / eigenvalues[end]
        return gradient.ravel()

    def cond(self, x) -> float:
        """cond(W_base) from its singular values (what is reported)."""
        return float(np.linalg.cond(self.base_regressor(x)))

    def _regressor_derivatives(self, x):
        """Y (M, n, p) at the samples and ∂Y/∂(q_j, q̇_j, q̈_j) (3, n, M, n, p) from one regressor
        batch: forward differences in q and q̇ (Y is smooth there; Coulomb's columns, a step
        in q̇, have zero derivative wherever they have one), exactly in q̈ (Y is linear in it).
        Cached: SLSQP asks for both Jacobians at the same x."""
        if self._derivatives is not None and np.array_equal(self._derivatives[0], x):
            return self._derivatives[1:]
        n, M = self.model.dof, len(self.times)
        states = [np.repeat(s[None], 1 + 3 * n, axis=0) for s in self.states(x)]
        steps = np.array([_STATE_STEP, _STATE_STEP, 1.0])
        for kind in range(3):
            for j in range(n):
                states[kind][1 + kind * n + j, :, j] += steps[kind]
        Y = regressor(self.model, *(s.reshape(-1, n) for s in states)).reshape(1 + 3 * n, M, n, -1)
        dY = ((Y[1:] - Y[0]) / np.repeat(steps, n)[:, None, None, None]).reshape(3, n, M, n, -1)
        dY[1][..., self._coulomb] = 0.0
        self._derivatives = (np.array(x, copy=True), Y[0], dY)
        return Y[0], dY

    # ------------------------------------------------------------------ the limits
    def _rows(self, values, kinds=slice(None)):
        """The rows of the bounded (kind, joint) pairs of values (kinds, M, n, ...): kind by kind,
        joint by joint, sample by sample."""
        moved = np.moveaxis(values, 2, 1)                  # (kinds, n, M, ...)
        return moved[self._bounded[kinds]].reshape(-1, *values.shape[3:])

    def fractions(self, x) -> np.ndarray:
        """(value − centre) / half-width (4, M, n) at the samples."""
        return _fractions(self.model, self.centre, self.radius, *self.states(x))

    def constraints(self, x) -> np.ndarray:
        """ρ ∓ fraction ≥ 0 at every sample, for every bounded limit."""
        rows = self._rows(self.fractions(x))
        return np.concatenate([self.bound - rows, self.bound + rows])

    def constraint_jacobian(self, x) -> np.ndarray:
        """The linear limits' constant rows, then the torques': τ = Y π, so ∂τ = ∂Y π and
        ∂τ_i(t_k)/∂x_jc = Σ over q, q̇, q̈ of ∂τ_i/∂state_j(t_k) Φ(t_k)_c."""
        dtau = self._regressor_derivatives(x)[1] @ self._pi / self.radius[3]   # (3, n_j, M, n_i)
        J = np.einsum("sjki,skc->kijc", dtau, self.basis).reshape(1, len(self.times),
                                                                  self.model.dof, self.size)
        rows = np.concatenate([self._linear_jacobian, self._rows(J, slice(3, 4))])
        return np.concatenate([-rows, rows])

    # ------------------------------------------------------------------ feasible points
    def onto_limits(self, x) -> np.ndarray:
        """``x`` scaled joint by joint until q, q̇ or q̈ reaches its bound at a sample (up or down),
        then all together until the torques are within theirs: a feasible start."""
        rest = self.fractions(np.zeros(self.size))[:3]     # q_start's (0 for q̇, q̈)
        moved = self.fractions(x)[:3] - rest               # linear in x: s x moves s times as far
        room = np.where(moved > 0.0, self.bound - rest, -self.bound - rest)
        factor = np.divide(room, moved, out=np.full_like(moved, np.inf), where=moved != 0.0)
        scale = factor.min(axis=(0, 1))
        X = np.reshape(x, (self.model.dof, self.free)) * np.where(np.isfinite(scale), scale, 1.0)[:, None]
        return self.shrunk(X.ravel(), lambda y: np.abs(self.fractions(y)).max() <= self.bound)

    def within_everywhere(self, x) -> np.ndarray:
        """``x``, shrunk towards the start if its motion exceeds a limit less the margin at
        :data:`CHECK_RATE` (only the torques can: module docstring)."""
        def feasible(y):
            usage = limit_usage(self.model, self.series(y), self.acceleration_limit)
            return max(used.max() for used in usage.values()) <= 1.0 - self.margin
        return self.shrunk(x, feasible)

    def optimise(self, starts: int = 5, seed: int = 0, iterations: int = 200,
                 progress: Callable[[str], None] | None = None):
        """Multi-start: x of the lowest cond(W_base) found, that cond, and the lowest of the
        random starts (each scaled onto the limits) before optimisation."""
        rng = np.random.default_rng(seed)
        best, best_cond, best_start = None, np.inf, np.inf
        for k in range(starts):
            clock = time.perf_counter()
            x0 = self.onto_limits(rng.standard_normal(self.size))
            cond0 = self.cond(x0)
            best_start = min(best_start, cond0)
            x, count = self.solve(x0, iterations)
            x = self.within_everywhere(x)
            cond = self.cond(x)
            if cond > cond0:   # SLSQP may end worse than it began (a failed line search)
                x = self.within_everywhere(x0)
                cond = self.cond(x)
            if cond < best_cond:
                best, best_cond = x, cond
            if progress is not None:
                progress(f"start {k + 1}/{starts}: cond(W_base) {cond0:.4g} -> {cond:.4g} "
                         f"({count} iterations, {time.perf_counter() - clock:.1f} s); "
                         f"best {best_cond:.4g}")
        if best is None:
            raise ExcitationError(f"no start of {starts} gave a base regressor of full rank "
                                  f"({self.base.count}): more harmonics or samples")
        return best, best_cond, best_start

    @staticmethod
    def shrunk(x, feasible: Callable, steps: int = 30) -> np.ndarray:
        """s x with the largest s in [0, 1] that ``feasible`` accepts, by bisection (s = 0, the
        start at rest, is feasible)."""
        if feasible(x):
            return np.asarray(x)
        low, high = 0.0, 1.0
        for _ in range(steps):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if feasible(middle * x) else (low, middle)
        return low * np.asarray(x)

    def solve(self, x0, iterations: int = 200):
        """SLSQP from ``x0``: the optimised x and the number of iterations taken."""
        result = minimize(self.log_cond, x0, method="SLSQP", jac=self.log_cond_gradient,
                          constraints=[{"type": "ineq", "fun": self.constraints,
                                        "jac": self.constraint_jacobian}],
                          options={"maxiter": iterations, "ftol": 1e-8})
        return (result.x if np.all(np.isfinite(result.x)) else np.asarray(x0)), result.nit


@dataclasses.dataclass(frozen=True)
class Excitation:
    """An optimised excitation: the series, cond(W_base) at the samples of a period for it and for
    the best random start before optimisation, the largest fraction of each joint's limits it uses
    at :data:`CHECK_RATE` (:func:`limit_usage`) and the time the optimisation took."""
    series: FourierSeries
    cond: float
    cond_start: float
    usage: dict
    seconds: float


def optimise_excitation(model, q_start=None, *, period: float = 10.0, harmonics: int = 5,
                        samples: int = 100, acceleration_limit=10.0, margin: float = 0.1,
                        starts: int = 5, seed: int = 0, iterations: int = 200,
                        progress: Callable[[str], None] | None = None) -> Excitation:
    """The Fourier series of the lowest cond(W_base) found from ``starts`` random feasible starts
    (module docstring); ``q_start`` defaults to the middle of each joint's range (0 where it has
    none). ``progress`` receives a line per start."""
    began = time.perf_counter()
    with one_blas_thread():
        problem = ExcitationProblem(model, q_start, period, harmonics, samples, acceleration_limit,
                                    margin)
        x, cond, cond_start = problem.optimise(starts, seed, iterations, progress)
    series = problem.series(x)
    return Excitation(series, cond, cond_start,
                      limit_usage(model, series, problem.acceleration_limit),
                      time.perf_counter() - began)


def goal_document(trajectory: JointTrajectory) -> dict:
    """``trajectory`` as a control_msgs/action/FollowJointTrajectory goal in the form
    ``ros2 action send_goal`` reads (YAML of the message's fields)."""
    nanoseconds = np.rint(np.asarray(trajectory.times) * 1e9).astype(np.int64)
    fields = {"positions": trajectory.positions, "velocities": trajectory.velocities,
              "accelerations": trajectory.accelerations}
    points = []
    for i, ns in enumerate(nanoseconds.tolist()):
        point = {name: values[i].tolist() for name, values in fields.items() if values is not None}
        point["time_from_start"] = {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}
        points.append(point)
    return {"trajectory": {"joint_names": list(trajectory.joint_names), "points": points}}


def predicted_std(model, series: FourierSeries, noise: float, rate: float = 1000.0, periods: int = 1):
    """(σ, relative σ in % of the nominal model's value) of each base parameter that OLS would
    report on a recording of ``periods`` periods of ``series`` at ``rate`` Hz with white torque
    noise of standard deviation ``noise`` (N·m or N) and exact states (relative σ is inf for a value of
    0): σ² diag((WᵀW)⁻¹), W the base
    regressor at those samples — the figures ``identify`` prints, before anything is recorded. A
    low-pass filter at f_c leaves samples correlated: ``identify`` scales its σ by √(f_s / 2f_c)
    for that, the noise's own RMS falling by the same factor, so the prediction stands."""
    base = base_parameters(model)
    t = np.arange(0.0, series.period * periods, 1.0 / rate)
    W = base.base_regressor(regressor(model, *series.evaluate(t))).reshape(-1, base.count)
    R = np.linalg.qr(W, mode="r")
    std = noise * np.linalg.norm(np.linalg.inv(R), axis=1)    # diag((RᵀR)⁻¹) = row norms² of R⁻¹
    nominal = np.abs(base.from_standard(standard_parameters(model)))
    nominal[nominal <= 1e-12 * nominal.max()] = 0.0          # a regrouping's rounding is a zero
    with np.errstate(divide="ignore"):
        relative = 100.0 * std / nominal
    return std, relative

