"""Estimators of a serial arm's dynamic parameters from a stacked regressor (no rclpy here).

Given W, the regressor of N states stacked state by state (rows k·n + j: joint j of state k; or the
(N, n, p) array of ``regressor``) and the measured joint forces y:

* ``ordinary_least_squares`` and ``weighted_least_squares`` (Gautier & Khalil's per-joint weights)
  for a full-rank W, i.e. the base regressor, with each parameter's standard deviation;
* ``consistent_estimate``: the full standard parameter set (10 per body, then the drive parameters)
  with every body a physical rigid body, through the log-Cholesky parametrisation of its
  pseudo-inertia (Rucker & Wensing 2022, "Smooth parameterization of rigid-body inertia", RA-L);
* ``payload_estimate``: the same for one rigid body added to the last one, the arm being known.

A body's standard parameters are [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz], the
inertia Ī about the frame origin (Pinocchio's order). Its pseudo-inertia, the second moments of the
mass distribution, is J = [[Σ, h], [hᵀ, m]] with h = m c and Σ = ∫ r rᵀ dm = ½ tr(Ī) 1 − Ī; a mass
distribution exists exactly when J is positive semidefinite (Wensing, Kim & Slotine 2017).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from scipy.optimize import least_squares

from ..plumbing.kernels import one_blas_thread
from ..dynamics.inertial_parameters import BODY_COLUMNS, DRIVE_COLUMNS, OFFSET

BODY_PARAMETERS = len(BODY_COLUMNS)
_ROUND, _ROUNDS = 20, 100   # least-squares evaluations per round about one centre, rounds at most (_fit)
# the sign each drive parameter must have (its regressor column puts the sign in: the negative
# Coulomb column is −1 where q̇ < 0, so all four magnitudes are non-negative); the offset is free
_DRIVE_LOWER = {**{name: 0.0 for name in DRIVE_COLUMNS}, "coulomb": 0.0, OFFSET: -np.inf}
# Σ's symmetric entries in the order of π's inertia entries I_xx, I_xy, I_yy, I_xz, I_yz, I_zz
_ROWS, _COLS = np.array([0, 0, 1, 0, 1, 2]), np.array([0, 1, 1, 2, 2, 2])


# ---------------------------------------------------------------- ordinary and weighted least squares
@dataclasses.dataclass(frozen=True)
class LeastSquaresEstimate:
    """``parameters`` (p,); ``std`` their standard deviations, σ² (WᵀW)⁻¹'s diagonal with
    σ² = |r|² / (rows − p) (of the weighted rows for WLS); ``relative_std`` in % of |parameter|;
    ``residual`` y − W π per state and joint (N, n); ``condition`` cond(W) (of the weighted W for
    WLS); ``weights`` per joint (ones for OLS, 1/σ_j for WLS)."""
    parameters: np.ndarray
    std: np.ndarray
    relative_std: np.ndarray
    residual: np.ndarray | None
    condition: float
    weights: np.ndarray
    rms: np.ndarray | None = None   # per joint, when the residual itself is not kept (from_gram)

    @property
    def residual_rms(self):
        """The root-mean-square residual of each joint (n,)."""
        return self.rms if self.residual is None else np.sqrt(np.mean(self.residual ** 2, axis=0))


def ordinary_least_squares(W, y, joints=None):
    """π minimising |W π − y|² for a full-rank W: (N, n, p) with y (N, n), or (N·n, p) with y (N·n,)
    and ``joints`` = n (default 1). Solved by QR, never through the normal equations."""
    W, y, n = _stacked(W, y, joints)
    return _qr_estimate(W, y, n, np.ones(n))


def weighted_least_squares(W, y, joints=None):
    """Gautier & Khalil's weighted least squares: a first OLS pass gives each joint's residual
    variance σ_j² = |r_j|² / (N − p/n) (the rows − p degrees of freedom shared out evenly), then
    joint j's rows are weighted by 1/σ_j, so that a noisy joint counts less. Same inputs as
    ``ordinary_least_squares``. σ_j also carries the other joints' noise, passed on through the first
    estimate's error (~σ_k √(p / rows)): negligible for a long run, a few % for a short one."""
    W, y, n = _stacked(W, y, joints)
    N, p = W.shape[0] // n, W.shape[1]
    first = _qr_estimate(W, y, n, np.ones(n))
    weights = wls_weights(np.sum(first.residual ** 2, axis=0), N, p)
    rows_weight = np.tile(weights, N)[:, None]
    return _qr_estimate(W * rows_weight, y * rows_weight[:, 0], n, weights, unweighted=(W, y))


def wls_weights(residual_squares, states, p):
    """Gautier & Khalil's weight 1/σ_j per joint of its OLS residual |r_j|² over ``states`` states
    and ``p`` parameters: σ_j² = |r_j|² / (N − p/n)."""
    n = len(residual_squares)
    sigma = np.sqrt(np.asarray(residual_squares, dtype=float) / (states - p / n))
    if sigma.max() == 0.0:
        sigma = np.ones(n)      # an exact fit: nothing to weigh
    # a joint fitted exactly would get an infinite weight: hold its σ_j at a millionth of the largest
    return 1.0 / np.maximum(sigma, 1e-6 * sigma.max())


def _stacked(W, y, joints):
    """(W (rows, p), y (rows,), n) from the stacked or the (N, n, p) layout, checked."""
    W = np.asarray(W, dtype=float)
    y = np.asarray(y, dtype=float)
    if W.ndim == 3:
        if joints is not None and joints != W.shape[1]:
            raise ValueError(f"joints = {joints} but W has shape {W.shape} (N, n, p) with n = {W.shape[1]}")
        joints = W.shape[1]
        W = W.reshape(-1, W.shape[2])
    elif W.ndim != 2:
        raise ValueError(f"W must be (rows, p) or (N, n, p), got shape {W.shape}")
    n = 1 if joints is None else int(joints)
    y = y.reshape(-1)
    if y.size != W.shape[0]:
        raise ValueError(f"y has {y.size} values for the {W.shape[0]} rows of W")
    if n < 1 or W.shape[0] % n:
        raise ValueError(f"W's {W.shape[0]} rows are not N states of {n} joints")
    if W.shape[0] <= W.shape[1]:
        raise ValueError(f"W has {W.shape[0]} rows for {W.shape[1]} parameters: least squares needs more rows")
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(y))):
        raise ValueError("W and y must be finite")
    return W, y, n


def _qr_estimate(W, y, n, weights, unweighted=None):
    rows, p = W.shape
    Ry = triangular_factor(W, y)
    parameters, std, relative, condition = _solved(Ry[:p, :p], Ry[:p, p], abs(Ry[p, p]), rows)
    W0, y0 = (W, y) if unweighted is None else unweighted
    return LeastSquaresEstimate(parameters=parameters, std=std, relative_std=relative,
                                residual=(y0 - W0 @ parameters).reshape(-1, n),
                                condition=condition, weights=weights)


def least_squares_from_gram(M, rows, weights=None, joint_rms=None):
    """The least-squares estimate of M = [W y]ᵀ[W y] ((p + 1) square, of ``rows`` rows), for a
    regressor accumulated chunk by chunk (``gram.JointGrams``): R = chol(WᵀW) is W's triangular
    factor up to signs, Qᵀy = R⁻ᵀ Wᵀy and |y − Wπ|² = yᵀy − |Qᵀy|². Forming WᵀW squares cond(W), so
    the columns are scaled to unit norm first (Cholesky's error then grows with the scaled
    condition only, van der Sluis 1969): ~1e-16 cond(W_unit)² relative, 1e-11 at cond 300.
    ``joint_rms``: the residual RMS per joint, kept as ``rms``."""
    M = np.asarray(M, dtype=float)
    p = M.shape[0] - 1
    d = np.sqrt(np.diag(M)[:p])
    d = np.where(d > 0.0, d, 1.0)
    G = M[:p, :p] / np.outer(d, d)
    try:
        R = np.linalg.cholesky(G).T * d           # upper, Rᵀ R = WᵀW
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(f"WᵀW ({p} parameters) is not positive definite: the columns are "
                                    "not independent; estimate the base parameters") from None
    Qty = solve_triangular(R, M[:p, p], trans="T")
    residual_norm = np.sqrt(max(M[p, p] - Qty @ Qty, 0.0))
    parameters, std, relative, condition = _solved(R, Qty, residual_norm, rows)
    return LeastSquaresEstimate(parameters=parameters, std=std, relative_std=relative, residual=None,
                                condition=condition, weights=np.ones(1) if weights is None else weights,
                                rms=joint_rms)


def _solved(R, Qty, residual_norm, rows):
    """(π, σ, relative σ %, cond) of the triangular factor R of W, Qᵀy and |y − Wπ|."""
    p = R.shape[0]
    singular = np.linalg.svd(R, compute_uv=False)
    if singular[-1] <= singular[0] * rows * np.finfo(float).eps:
        rank = int(np.sum(singular > singular[0] * rows * np.finfo(float).eps))
        raise np.linalg.LinAlgError(
            f"W has rank {rank} < {p} parameters: its columns are not independent; estimate the base "
            "parameters (base_parameters(model).base_regressor(W)) or use consistent_estimate")
    parameters = solve_triangular(R, Qty)
    R_inv = solve_triangular(R, np.eye(p))
    sigma2 = residual_norm ** 2 / (rows - p)
    std = np.sqrt(sigma2 * np.sum(R_inv ** 2, axis=1))    # diag((RᵀR)⁻¹) = row norms² of R⁻¹
    with np.errstate(divide="ignore"):
        relative = 100.0 * std / np.abs(parameters)
    return parameters, std, relative, float(singular[0] / singular[-1])


def triangular_factor(W, y, block=16384):
    """R of [W y] = QR: R[:p, :p] is W's, R[:p, p] = Qᵀy and |R[p, p]| = min |y − Wπ|. Householder QR
    block by block, each block stacked under the R so far (a sequential TSQR): Q is never formed,
    and the rows × p copy [W y] neither (2-3x faster than one LAPACK QR of 360,000 × 85 here)."""
    R = np.zeros((0, W.shape[1] + 1))
    for start in range(0, W.shape[0], block):
        rows = slice(start, start + block)
        R = np.linalg.qr(np.vstack((R, np.column_stack((W[rows], y[rows])))), mode="r")
    return R


# ---------------------------------------------------------------- rigid bodies: pseudo-inertia, log-Cholesky
def pseudo_inertia(parameters):
    """J (..., 4, 4) of standard body parameters (..., 10)."""
    pi = np.asarray(parameters, dtype=float)
    inertia = np.empty(pi.shape[:-1] + (3, 3))
    inertia[..., _ROWS, _COLS] = pi[..., 4:]
    inertia[..., _COLS, _ROWS] = pi[..., 4:]
    J = np.zeros(pi.shape[:-1] + (4, 4))
    J[..., :3, :3] = 0.5 * np.trace(inertia, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - inertia
    J[..., :3, 3] = J[..., 3, :3] = pi[..., 1:4]
    J[..., 3, 3] = pi[..., 0]
    return J


def from_pseudo_inertia(J):
    """Standard body parameters (..., 10) of pseudo-inertias J (..., 4, 4): Ī = tr(Σ) 1 − Σ, since
    tr Σ = ½ tr Ī. Linear, so it maps derivatives of J too."""
    J = np.asarray(J, dtype=float)
    sigma = J[..., :3, :3]
    inertia = np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma
    return np.concatenate((J[..., 3, 3:], J[..., :3, 3], inertia[..., _ROWS, _COLS]), axis=-1)


def from_log_cholesky(theta):
    """Standard body parameters π (B, 10) of log-Cholesky parameters θ (B, 10) and dπ/dθ (B, 10, 10).

    θ = [α, d₁, d₂, d₃, s₁₂, s₂₃, s₁₃, t₁, t₂, t₃] (Rucker & Wensing's order) gives the upper
    triangular U = e^α [[e^d₁, s₁₂, s₁₃, t₁], [0, e^d₂, s₂₃, t₂], [0, 0, e^d₃, t₃], [0, 0, 0, 1]] and
    J = U Uᵀ, positive definite for every real θ.
    """
    theta = np.asarray(theta, dtype=float)
    U, dU = _upper_factor(theta)
    J = U @ np.swapaxes(U, -1, -2)
    dJ = dU @ np.swapaxes(U, -1, -2)[:, None]               # (B, 10, 4, 4): ∂J/∂θ_k = ∂U Uᵀ + U ∂Uᵀ
    dJ = dJ + np.swapaxes(dJ, -1, -2)
    return from_pseudo_inertia(J), np.swapaxes(from_pseudo_inertia(dJ), -1, -2)


def _upper_factor(theta):
    B = theta.shape[0]
    scale = np.exp(theta[:, 0])
    U = np.zeros((B, 4, 4))
    dU = np.zeros((B, 10, 4, 4))
    for k, i in enumerate(range(3), start=1):                       # d₁, d₂, d₃ on the diagonal
        U[:, i, i] = scale * np.exp(theta[:, k])
        dU[:, k, i, i] = U[:, i, i]
    for k, (i, j) in enumerate(((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)), start=4):
        U[:, i, j] = scale * theta[:, k]
        dU[:, k, i, j] = scale
    U[:, 3, 3] = scale
    dU[:, 0] = U                                                    # α scales all of U
    return U, dU


def project_consistent(parameters, floor=1e-6):
    """Standard body parameters (B, 10) made consistent: the eigenvalues of each pseudo-inertia below
    ``floor`` × its largest raised to that floor. A body whose largest is under a thousandth of the
    heaviest body's counts as that thousandth, so that a massless body gets a tiny mass, not a
    vanishing one (from 1e-12 of its size no solver grows it back in a few steps). A body already
    consistent above the floor is returned as is."""
    values, vectors = np.linalg.eigh(pseudo_inertia(parameters))
    least = floor * np.maximum(values[:, -1:], max(1e-3 * values[:, -1].max(), 1e-12))
    if np.all(values >= least):
        return np.array(parameters, dtype=float)
    J = (vectors * np.maximum(values, least)[:, None, :]) @ np.swapaxes(vectors, -1, -2)
    return from_pseudo_inertia(J)


def min_eigenvalues(parameters):
    """The smallest eigenvalue of each body's pseudo-inertia (B,): ≥ 0 for a physical body."""
    return np.linalg.eigvalsh(pseudo_inertia(parameters))[:, 0]


# ---------------------------------------------------------------- physically consistent estimates
@dataclasses.dataclass(frozen=True)
class ConsistentEstimate:
    """``parameters`` the full standard vector (p,); ``min_eigenvalues`` the smallest pseudo-inertia
    eigenvalue of each estimated body; ``cost`` = |W π − y|² + λ |π − π₀|²_D and ``data_cost``
    = |W π − y|² at the estimate; ``iterations`` of the trust-region solver (its Jacobian
    evaluations, all rounds); ``converged``; ``payload`` the added body's 10 parameters
    (``payload_estimate`` only)."""
    parameters: np.ndarray
    min_eigenvalues: np.ndarray
    cost: float
    data_cost: float
    iterations: int
    converged: bool
    payload: np.ndarray | None = None


def consistent_estimate(W_standard, y, nominal, n_bodies, drive_layout, prior_weight=1e-4, joints=None):
    """The standard parameters (10 per body, then per joint the ``drive_layout`` columns, e.g.
    DRIVE_COLUMNS) minimising |W π − y|² + λ |π − π_nominal|²_D over physical bodies and drive
    parameters of the right sign (offset free); ``drive_layout``: the drive columns of every joint,
    or one such tuple per joint (``layout.Layout.drive_layout``).

    The prior, λ = ``prior_weight`` > 0, pulls toward the nominal model where the data say nothing
    (the standard parameters are never all identifiable). D = diag(WᵀW), so that a parameter's
    deviation is priced as the torque it alone would explain: every term is in (N·m)², and λ is the
    fraction of that price the prior asks; it bends directions the data identify less well than
    ~λ (relative to the best identified) toward the nominal. Solved over each body's log-Cholesky
    parameters and the drive parameters (bounded) by ``scipy.optimize.least_squares``
    (trust-region reflective, analytic Jacobian) from the nominal, projected onto consistency, in
    rounds that recentre the coordinates on the estimate (``_fit``). W and y as in
    ``ordinary_least_squares`` (``joints`` for the stacked layout).
    """
    W, y, _ = _stacked(W_standard, y, joints)
    return consistent_from_gram(gram(W, y), W.shape[0], nominal, n_bodies, drive_layout, prior_weight)


def consistent_from_gram(M, rows, nominal, n_bodies, drive_layout, prior_weight=1e-4):
    """``consistent_estimate`` of the regressor's M = [W y]ᵀ[W y] ((p + 1) square) over ``rows`` rows
    (``gram.JointGrams``): the estimate needs nothing else of the data."""
    p = M.shape[0] - 1
    layouts = ([tuple(drive_layout)] * n_bodies if all(isinstance(name, str) for name in drive_layout)
               else [tuple(layout) for layout in drive_layout])
    for layout in layouts:
        unknown = [name for name in layout if name not in _DRIVE_LOWER]
        if unknown or len(set(layout)) != len(layout):
            raise ValueError(f"drive_layout {layout} must name distinct drive columns among {tuple(_DRIVE_LOWER)}")
    if len(layouts) != n_bodies or p != n_bodies * BODY_PARAMETERS + sum(map(len, layouts)):
        drives = (f"{n_bodies} joints × {len(layouts[0])} drive columns {layouts[0]}" if len(set(layouts)) == 1
                  else f"the drive columns of {len(layouts)} joints {layouts}")
        raise ValueError(f"W has {p} columns, not {n_bodies} bodies × {BODY_PARAMETERS} + {drives}")
    nominal = _vector(nominal, p, "nominal")
    lower = np.array([_DRIVE_LOWER[name] for layout in layouts for name in layout])
    return _fit(M, rows, slice(None), nominal, n_bodies, lower, prior_weight, offset=np.zeros(p), start="nominal")


def gram(W, y):
    """M = [W y]ᵀ [W y], the sufficient statistic of every least-squares fit of y by W π."""
    Wy = np.column_stack((W, y))
    return Wy.T @ Wy


def payload_estimate(W_standard, y, known, n_bodies, nominal_payload=None, prior_weight=1e-6, joints=None):
    """A rigid payload fixed to the last body (its 10 standard parameters in the last joint frame),
    the arm's standard parameters ``known`` (p,) (the last body without the payload; zeros there to
    estimate the whole last body), consistent: y − W π_known = W_last π_payload. The prior pulls
    toward ``nominal_payload`` (default: none, zeros) with weight ``prior_weight``, as in
    ``consistent_estimate``. ``parameters`` is the arm with its payload, ``payload`` the body added."""
    W, y, _ = _stacked(W_standard, y, joints)
    return payload_from_gram(gram(W, y), W.shape[0], known, n_bodies, nominal_payload, prior_weight)


def payload_from_gram(M, rows, known, n_bodies, nominal_payload=None, prior_weight=1e-6):
    """``payload_estimate`` of M = [W y]ᵀ[W y] over ``rows`` rows: [W, y − W π_known] = [W y] T with
    T = [[1, −π_known], [0, 1]], so its M is Tᵀ M T."""
    p = M.shape[0] - 1
    if p < BODY_PARAMETERS * n_bodies:
        raise ValueError(f"W has {p} columns, fewer than the {BODY_PARAMETERS * n_bodies} of {n_bodies} bodies")
    known = _vector(known, p, "known")
    nominal = np.zeros(BODY_PARAMETERS) if nominal_payload is None else _vector(
        nominal_payload, BODY_PARAMETERS, "nominal_payload")
    last = slice(BODY_PARAMETERS * (n_bodies - 1), BODY_PARAMETERS * n_bodies)
    T = np.eye(p + 1)
    T[:p, p] = -known
    result = _fit(T.T @ M @ T, rows, last, nominal, 1, np.zeros(0), prior_weight, offset=known,
                  start="unconstrained")
    return dataclasses.replace(result, payload=result.parameters[last] - known[last])


def _vector(value, size, name):
    v = np.asarray(value, dtype=float).reshape(-1)
    if v.size != size or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be {size} finite numbers, got shape {np.shape(value)}")
    return v


def _fit(M, rows, columns, nominal, bodies, lower, prior_weight, offset, start):
    """Minimise |W[:, columns] π − y|² + λ |π − nominal|²_D over π = [bodies × 10 | rest ≥ lower]
    from ``start`` ("nominal", or "unconstrained": the minimiser without the constraints), its
    bodies projected onto consistency; the result is ``offset`` with π added into ``columns``.
    The data enter as M = [W y]ᵀ[W y] of ``rows`` rows."""
    if not prior_weight > 0.0:
        raise ValueError(f"prior_weight must be positive (it fixes what the data cannot), got {prior_weight}")
    G = M[:-1, :-1][columns, columns]
    Wty, yy = M[:-1, -1][columns], M[-1, -1]
    # D: diag(WᵀW), held at a millionth of its largest entry for columns the data barely excite (those
    # they never excite are zero only up to rounding, and a prior of weight ~1e-30 holds nothing)
    scale = np.maximum(np.diag(G), 1e-6 * np.max(np.diag(G)))
    if not scale.max() > 0.0:
        raise ValueError("the regressor columns to estimate are all zero: the data excite none of them")
    # |Wπ − y|² + λ|π − π₀|²_D = πᵀAπ − 2πᵀb + k with A = WᵀW + λD, b = Wᵀy + λDπ₀, k = yᵀy + λπ₀ᵀDπ₀:
    # p × p and p, formed once, so that an iteration costs O(p²) whatever N. With A = L Lᵀ (Cholesky),
    # r = Lᵀπ − L⁻¹b has |r|² = πᵀAπ − 2πᵀb + |L⁻¹b|²: the objective is |r|² + ρ² with the constant
    # ρ² = k − |L⁻¹b|² (the unconstrained minimum), appended to r so that least_squares' cost is the
    # whole objective, which its ftol and the rounds below measure gains against. It sees p + 1
    # residuals; their Jacobian is Lᵀ dπ/dθ (and a zero row).
    A = G + prior_weight * np.diag(scale)
    b = Wty + prior_weight * scale * nominal
    factor = cho_factor(A, lower=True)
    L = np.tril(factor[0])
    c = solve_triangular(L, b, lower=True)
    rho = np.sqrt(max(yy + prior_weight * np.sum(scale * nominal ** 2) - c @ c, 0.0))
    nb = BODY_PARAMETERS * bodies

    first = nominal if start == "nominal" else cho_solve(factor, b)
    # Each body in log-Cholesky coordinates centred on a reference J₀ = T Tᵀ: J = T U(θ) U(θ)ᵀ Tᵀ,
    # θ = 0 the reference (T U is upper triangular too: an affine change of the coordinates). Masses,
    # first moments and inertias are then measured against the body's own, so that the trust region
    # is a ball of comparable changes (in raw coordinates a wrist's 1e-5 kg m² and a shoulder's 17 kg
    # share one radius). An optimum on the boundary of the consistent set (a body whose
    # pseudo-inertia the data make singular: common for light wrist links under noise) lies at
    # infinity in these coordinates, and from a fixed centre the solver creeps toward it for
    # thousands of iterations; so the centre follows the estimate: rounds of at most ``_ROUND``
    # evaluations, each from θ = 0 about the previous round's bodies (T ← T U(θ)), until a round gains
    # less than a thousandth of a row's mean squared residual, far below what the data can tell.
    T = _upper_root(pseudo_inertia(project_consistent(first[:nb].reshape(bodies, BODY_PARAMETERS))))
    drives = np.maximum(first[nb:], lower)
    bounds = (np.concatenate((np.full(nb, -np.inf), lower)), np.full(first.size, np.inf))

    def parameters_of(theta, relative):
        pi_unit, d_unit = from_log_cholesky(theta[:nb].reshape(bodies, BODY_PARAMETERS))
        return (np.concatenate((np.einsum("bij,bj->bi", relative, pi_unit).reshape(-1), theta[nb:])),
                relative @ d_unit)

    def residual(theta, relative):
        return np.append(L.T @ parameters_of(theta, relative)[0] - c, rho)

    def jacobian(theta, relative):
        d_pi = parameters_of(theta, relative)[1]
        body = np.einsum("rbk,bkj->rbj", L.T[:, :nb].reshape(-1, bodies, BODY_PARAMETERS), d_pi)
        return np.vstack((np.concatenate((body.reshape(-1, nb), L.T[:, nb:]), axis=1), np.zeros(L.shape[1])))

    degrees_of_freedom = max(rows - A.shape[0], 1)
    objective, iterations, converged = np.inf, 0, False
    # a trial step may overflow exp(): trf then sees a non-finite residual and shrinks its trust region
    with one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
        for _ in range(_ROUNDS):
            theta0, relative = np.concatenate((np.zeros(nb), drives)), _congruence(T)
            if objective == np.inf:
                objective = float(np.sum(residual(theta0, relative) ** 2))
            solution = least_squares(residual, theta0, jac=jacobian, bounds=bounds, method="trf", ftol=1e-12,
                                     xtol=1e-12, gtol=1e-12, max_nfev=_ROUND, args=(relative,))
            iterations += solution.njev
            T = T @ _upper_factor(solution.x[:nb].reshape(bodies, BODY_PARAMETERS))[0]
            drives = solution.x[nb:]
            gain, objective = objective - 2.0 * solution.cost, 2.0 * solution.cost
            if gain <= 1e-3 * objective / degrees_of_freedom:
                converged = True
                break
    pi = np.concatenate((from_pseudo_inertia(T @ np.swapaxes(T, -1, -2)).reshape(-1), drives))
    full = offset.copy()
    full[columns] += pi
    data_cost = float(max(pi @ G @ pi - 2.0 * pi @ Wty + yy, 0.0))
    prior_cost = float(prior_weight * np.sum(scale * (pi - nominal) ** 2))
    return ConsistentEstimate(parameters=full, min_eigenvalues=min_eigenvalues(pi[:nb].reshape(bodies, -1)),
                              cost=data_cost + prior_cost, data_cost=data_cost, iterations=iterations,
                              converged=converged)


def _upper_root(J):
    """Upper triangular T with J = T Tᵀ: the Cholesky factor of J with rows and columns reversed."""
    return np.linalg.cholesky(J[:, ::-1, ::-1])[:, ::-1, ::-1]


def _congruence(T):
    """(B, 10, 10): the standard parameters of T J Tᵀ from those of J, a linear map, column by column."""
    unit = pseudo_inertia(np.eye(BODY_PARAMETERS))                          # (10, 4, 4)
    mapped = T[:, None] @ unit[None] @ np.swapaxes(T, -1, -2)[:, None]      # (B, 10, 4, 4)
    return np.swapaxes(from_pseudo_inertia(mapped), -1, -2)
