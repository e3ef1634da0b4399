"""The estimators (robodyn_ros.identification.estimate): least squares against known parameters and
the textbook covariance, the pseudo-inertia and log-Cholesky maps against first principles (a body
of point masses) and Pinocchio, physically consistent estimates on consistent and inconsistent
data, a payload on the PUMA 560, and the 60 s at 1 kHz case timed."""
import time

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.identification import DRIVE_COLUMNS, regressor, standard_parameters
from robodyn_ros.dynamics.base_parameters import base_parameters
from robodyn_ros.identification.estimate import (consistent_estimate, from_log_cholesky, from_pseudo_inertia,
                                                 min_eigenvalues, ordinary_least_squares, payload_estimate,
                                                 project_consistent, pseudo_inertia, weighted_least_squares)
from robodyn_ros.plumbing.resources import find_share_file

PUMA = str(find_share_file("urdf/puma560.urdf"))


def rotation(rng):
    Q, R = np.linalg.qr(rng.standard_normal((3, 3)))
    return Q * np.sign(np.diag(R))


def rigid_body(rng):
    """(mass, COM, inertia about the COM) of a physical rigid body: 0.5-5 kg, its COM within 0.3 m
    of the frame origin, principal inertias from positive second moments (so they satisfy the
    triangle inequality strictly), turned at random."""
    mass = rng.uniform(0.5, 5.0)
    com = rng.standard_normal(3)
    com *= rng.uniform(0.0, 0.3) / np.linalg.norm(com)
    second = mass * rng.uniform(0.02, 0.2, 3) ** 2
    R = rotation(rng)
    return mass, com, R @ (np.sum(second) * np.eye(3) - np.diag(second)) @ R.T


def standard(mass, com, inertia_com):
    """[m, m c, Ī] with Ī the inertia about the frame origin (parallel axes), Pinocchio's order."""
    I = inertia_com + mass * (com @ com * np.eye(3) - np.outer(com, com))
    return np.array([mass, *(mass * com), I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


def random_body(rng):
    return standard(*rigid_body(rng))


def random_arm(rng, bodies):
    """Standard parameters of ``bodies`` random bodies, then positive drive parameters."""
    return np.concatenate([random_body(rng) for _ in range(bodies)] + [rng.uniform(0.1, 2.0, 4 * bodies)])


def puma_states(rng, count):
    q = rng.uniform(-np.pi, np.pi, (count, 6))
    return q, rng.standard_normal((count, 6)), 3.0 * rng.standard_normal((count, 6))


# ---------------------------------------------------------------- rigid bodies
def test_pseudo_inertia_is_the_second_moment_of_the_mass():
    # a body of point masses: J = Σ m_k [r_k; 1][r_k; 1]ᵀ by definition, and its standard
    # parameters are Σ m_k, Σ m_k r_k and Ī = Σ m_k (|r_k|² 1 − r_k r_kᵀ)
    rng = np.random.default_rng(1)
    for _ in range(10):
        m, r = rng.uniform(0.1, 2.0, 7), rng.uniform(-0.5, 0.5, (7, 3))
        I = sum(mk * (rk @ rk * np.eye(3) - np.outer(rk, rk)) for mk, rk in zip(m, r))
        pi = np.array([m.sum(), *(m @ r), I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])
        homogeneous = np.column_stack((r, np.ones(7)))
        J = np.einsum("k,ki,kj->ij", m, homogeneous, homogeneous)
        assert np.allclose(pseudo_inertia(pi), J, rtol=0, atol=1e-14)
        assert np.allclose(from_pseudo_inertia(J), pi, rtol=0, atol=1e-14)


def test_a_random_rigid_body_has_a_positive_pseudo_inertia_and_round_trips():
    rng = np.random.default_rng(2)
    bodies = np.array([random_body(rng) for _ in range(50)])
    for _ in range(5):         # our parallel axes, order and pseudo-inertia are Pinocchio's
        body = rigid_body(rng)
        pi = standard(*body)
        assert np.allclose(pin.Inertia(*body).toDynamicParameters(), pi, rtol=0, atol=1e-14)
        assert np.allclose(pin.PseudoInertia.FromDynamicParameters(pi).toMatrix(), pseudo_inertia(pi),
                           rtol=0, atol=1e-14)
    assert np.all(min_eigenvalues(bodies) > 0.0)
    assert np.allclose(from_pseudo_inertia(pseudo_inertia(bodies)), bodies, rtol=0, atol=1e-15)
    assert np.array_equal(project_consistent(bodies), bodies)


def test_a_body_breaking_the_triangle_inequality_is_not_consistent_until_projected():
    # m = 1 at the origin, principal inertias (1, 1, 3): 1 + 1 < 3, Σ = ½ tr(I) 1 − I = diag(1.5, 1.5, −0.5)
    pi = np.array([[1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 3.0]])
    assert min_eigenvalues(pi)[0] == pytest.approx(-0.5)
    projected = project_consistent(pi)
    assert min_eigenvalues(projected)[0] == pytest.approx(1e-6 * 1.5, rel=1e-9)


def test_log_cholesky_parameters_map_to_pinocchios_bodies_with_their_jacobian():
    rng = np.random.default_rng(3)
    theta = rng.standard_normal((6, 10))
    pi, d_pi = from_log_cholesky(theta)
    for k in range(6):
        reference = pin.LogCholeskyParameters(theta[k])
        assert np.allclose(pi[k], reference.toDynamicParameters(), rtol=1e-13, atol=1e-13)
        assert np.allclose(d_pi[k], reference.calculateJacobian(), rtol=1e-13, atol=1e-13)
    assert np.all(min_eigenvalues(pi) > 0.0)
    step = 1e-6     # and the Jacobian is the derivative (central differences)
    for j in range(10):
        e = np.zeros(10)
        e[j] = step
        numeric = (from_log_cholesky(theta + e)[0] - from_log_cholesky(theta - e)[0]) / (2 * step)
        assert np.allclose(d_pi[:, :, j], numeric, rtol=1e-6, atol=1e-6 * np.max(np.abs(pi)))


# ---------------------------------------------------------------- least squares
def test_ols_recovers_the_parameters_of_noiseless_data():
    rng = np.random.default_rng(4)
    W = rng.standard_normal((200, 3, 12))
    truth = rng.uniform(-2.0, 2.0, 12)
    r = ordinary_least_squares(W, W @ truth)
    assert np.max(np.abs(r.parameters - truth)) < 1e-12 * np.max(np.abs(truth))
    assert r.condition == pytest.approx(np.linalg.cond(W.reshape(-1, 12)), rel=1e-10)
    assert r.residual.shape == (200, 3) and np.max(np.abs(r.residual)) < 1e-12
    # the stacked layout, rows state by state, gives the same
    stacked = ordinary_least_squares(W.reshape(-1, 12), (W @ truth).reshape(-1), joints=3)
    assert np.allclose(stacked.parameters, r.parameters, rtol=1e-13, atol=0)


def test_ols_recovers_the_base_parameters_of_the_puma():
    model = RobotModel.from_urdf(PUMA)
    rng = np.random.default_rng(5)
    q, qd, qdd = puma_states(rng, 300)
    base = base_parameters(model)
    W = base.base_regressor(regressor(model, q, qd, qdd))
    r = ordinary_least_squares(W, model.inverse_dynamics(q, qd, qdd))
    truth = base.from_standard(standard_parameters(model))
    assert np.max(np.abs(r.parameters - truth)) < 1e-10 * np.max(np.abs(truth))
    # the standard regressor's dependent columns are refused, pointing at the base parameters
    with pytest.raises(np.linalg.LinAlgError, match="base_regressor"):
        ordinary_least_squares(regressor(model, q, qd, qdd), model.inverse_dynamics(q, qd, qdd))


def test_the_reported_standard_deviations_are_the_spread_of_the_estimates():
    # σ² (WᵀW)⁻¹ with σ² = |r|²/(rows − p): over 300 noise draws the estimates spread as reported. 40
    # rows for 10 parameters, so that dividing by rows instead of rows − p would be 13 % off.
    rng = np.random.default_rng(6)
    W = rng.standard_normal((20, 2, 10))
    truth = rng.uniform(1.0, 3.0, 10)
    sigma = 0.2
    estimates, stds = [], []
    for _ in range(300):
        r = ordinary_least_squares(W, W @ truth + sigma * rng.standard_normal((20, 2)))
        estimates.append(r.parameters)
        stds.append(r.std)
    textbook = sigma * np.sqrt(np.diag(np.linalg.inv(W.reshape(-1, 10).T @ W.reshape(-1, 10))))
    assert np.allclose(np.mean(stds, axis=0), textbook, rtol=0.05)
    assert np.allclose(np.std(estimates, axis=0), np.mean(stds, axis=0), rtol=0.2)
    assert np.allclose(r.relative_std, 100.0 * r.std / np.abs(r.parameters))


def test_wls_weighs_a_noisy_joint_down_and_estimates_better():
    # joint 2 five times noisier. Joint 1's OLS residual also carries joint 2's noise passed on
    # through the estimate's error, ~1.0 √(p / rows) = 0.05 here: 3 % on its σ (2 states x 1,000).
    rng = np.random.default_rng(7)
    W = rng.standard_normal((1000, 2, 6))
    truth = rng.uniform(1.0, 3.0, 6)
    noise = np.array([0.2, 1.0])
    errors_ols, errors_wls, ratios = [], [], []
    for _ in range(40):
        y = W @ truth + noise * rng.standard_normal((1000, 2))
        ols, wls = ordinary_least_squares(W, y), weighted_least_squares(W, y)
        errors_ols.append(np.sum((ols.parameters - truth) ** 2))
        errors_wls.append(np.sum((wls.parameters - truth) ** 2))
        ratios.append(wls.weights[0] / wls.weights[1])
    assert np.mean(ratios) == pytest.approx(5.0, rel=0.05)
    assert wls.residual_rms == pytest.approx(noise, rel=0.1)
    # variances (σ₁² + σ₂²)/2 against 1/(1/σ₁² + 1/σ₂²): WLS's squared error ~1/13 of OLS's
    assert np.mean(errors_wls) < 0.15 * np.mean(errors_ols)
    # the weighted rows' σ² is ~1, so the reported spread is that of the weighted estimate
    assert np.allclose(wls.residual, y - W @ wls.parameters)


# ---------------------------------------------------------------- physically consistent estimates
def test_consistent_estimate_recovers_consistent_noiseless_data():
    rng = np.random.default_rng(8)
    truth = random_arm(rng, 3)
    W = rng.standard_normal((300, 3, truth.size))
    nominal = truth * rng.uniform(0.7, 1.3, truth.size)
    r = consistent_estimate(W, W @ truth, nominal, 3, DRIVE_COLUMNS, prior_weight=1e-10)
    assert r.converged
    assert np.max(np.abs(r.parameters - truth)) < 1e-7 * np.max(np.abs(truth))
    assert np.all(r.min_eigenvalues > 0.0)


def test_a_massless_nominal_body_is_grown_from_a_tiny_mass():
    rng = np.random.default_rng(8)
    truth = random_arm(rng, 3)
    W = rng.standard_normal((300, 3, truth.size))
    nominal = truth * rng.uniform(0.7, 1.3, truth.size)
    nominal[10:20] = 0.0                       # the second body: nothing
    r = consistent_estimate(W, W @ truth, nominal, 3, DRIVE_COLUMNS, prior_weight=1e-10)
    assert r.converged
    assert np.max(np.abs(r.parameters - truth)) < 1e-7 * np.max(np.abs(truth))


def test_consistent_estimate_on_the_puma_recovers_its_base_parameters():
    model = RobotModel.from_urdf(PUMA)
    rng = np.random.default_rng(9)
    q, qd, qdd = puma_states(rng, 500)
    nominal = standard_parameters(model.scaled(mass=1.3, friction=0.5))
    # the nominal's 30 % heavier bodies pull on what the data identify by ~prior_weight, relatively
    r = consistent_estimate(regressor(model, q, qd, qdd), model.inverse_dynamics(q, qd, qdd), nominal, 6,
                            DRIVE_COLUMNS, prior_weight=1e-6)
    base = base_parameters(model)
    truth = base.from_standard(standard_parameters(model))
    assert r.converged
    assert np.max(np.abs(base.from_standard(r.parameters) - truth)) < 1e-5 * np.max(np.abs(truth))
    assert np.all(r.min_eigenvalues >= 0.0) and np.all(r.parameters[60:] >= 0.0)


def test_inconsistent_data_give_a_consistent_estimate_where_ols_does_not():
    rng = np.random.default_rng(10)
    truth = random_arm(rng, 3)
    inconsistent = truth.copy()
    inconsistent[[4, 6]] *= 0.2                # body 1's I_xx, I_yy: no mass distribution has them
    assert min_eigenvalues(inconsistent[:30].reshape(3, 10))[0] < -0.01
    W = rng.standard_normal((300, 3, truth.size))
    y = W @ inconsistent
    ols = ordinary_least_squares(W, y)
    assert min_eigenvalues(ols.parameters[:30].reshape(3, 10))[0] < -0.01
    r = consistent_estimate(W, y, truth, 3, DRIVE_COLUMNS)
    assert r.converged
    assert np.all(r.min_eigenvalues >= -1e-12)
    assert np.all(min_eigenvalues(r.parameters[:30].reshape(3, 10)) >= -1e-12)
    # it cannot fit exactly, and it fits better than the consistent truth it started near
    assert 0.0 < r.data_cost < np.sum((W @ truth - y) ** 2)


def test_drive_parameters_stay_non_negative_and_the_offset_is_free():
    # A negative viscous friction (energy from nowhere) in the data, its column orthogonal to all
    # others: the best fit that holds it at 0 changes nothing else, so it is the truth with that
    # one parameter at 0. The offset, negative, is free.
    rng = np.random.default_rng(11)
    layout = DRIVE_COLUMNS + ("offset",)
    bodies = np.concatenate([random_body(rng) for _ in range(2)])
    drives = rng.uniform(0.1, 2.0, (2, 5))
    drives[1, 1] = -0.3
    drives[0, 4] = -0.7
    truth = np.concatenate((bodies, drives.reshape(-1)))
    W = rng.standard_normal((600, truth.size))
    viscous = 20 + 5 + 1
    others = np.delete(W, viscous, axis=1)
    W[:, viscous] -= others @ np.linalg.lstsq(others, W[:, viscous], rcond=None)[0]
    y = W @ truth
    assert ordinary_least_squares(W, y, joints=2).parameters[viscous] == pytest.approx(-0.3)
    r = consistent_estimate(W, y, np.abs(truth), 2, layout, prior_weight=1e-10, joints=2)
    expected = truth.copy()
    expected[viscous] = 0.0
    assert r.converged
    assert np.all(r.parameters[20:].reshape(2, 5)[:, :4] >= 0.0)
    assert np.allclose(r.parameters, expected, rtol=0, atol=1e-7)


def test_the_payload_of_a_known_arm_is_recovered():
    model = RobotModel.from_urdf(PUMA)
    rng = np.random.default_rng(12)
    com = np.array([0.02, -0.01, 0.08])
    R = rotation(rng)
    inertia = R @ np.diag([0.004, 0.005, 0.003]) @ R.T
    holding = model.with_payload(2.0, com, inertia)
    q, qd, qdd = puma_states(rng, 300)
    Y = regressor(model, q, qd, qdd)
    y = holding.inverse_dynamics(q, qd, qdd)
    # the tool in the last joint frame (the PUMA's tip frame is that frame), by Pinocchio
    Rt, pt = model.tip[:3, :3], model.tip[:3, 3]
    tool = pin.Inertia(2.0, Rt @ com + pt, Rt @ inertia @ Rt.T).toDynamicParameters()
    r = payload_estimate(Y, y, standard_parameters(model), 6)
    assert r.converged
    assert np.allclose(r.payload, tool, rtol=0, atol=1e-5 * np.max(np.abs(tool)))
    assert r.min_eigenvalues[0] > 0.0
    assert np.allclose(r.parameters, standard_parameters(holding), rtol=0, atol=1e-5)
    # the whole last body when the arm's own last link is unknown too (zeros there)
    known = standard_parameters(model)
    known[50:60] = 0.0
    whole = payload_estimate(Y, y, known, 6)
    assert np.allclose(whole.payload, standard_parameters(holding)[50:60], rtol=0, atol=1e-5)


def test_bad_arguments_are_refused_with_what_is_wrong():
    rng = np.random.default_rng(13)
    W = rng.standard_normal((50, 2, 28))
    y = rng.standard_normal((50, 2))
    nominal = random_arm(rng, 2)
    with pytest.raises(ValueError, match="prior_weight must be positive"):
        consistent_estimate(W, y, nominal, 2, DRIVE_COLUMNS, prior_weight=0.0)
    with pytest.raises(ValueError, match=r"not 2 bodies × 10 \+ 2 joints × 5 drive columns"):
        consistent_estimate(W, y, nominal, 2, DRIVE_COLUMNS + ("offset",))
    with pytest.raises(ValueError, match="must name distinct drive columns"):
        consistent_estimate(W, y, nominal, 2, ("armature", "viscous", "stiction", "offset"))
    with pytest.raises(ValueError, match="nominal must be 28 finite numbers"):
        consistent_estimate(W, y, nominal[:-1], 2, DRIVE_COLUMNS)
    with pytest.raises(ValueError, match="y has 99 values for the 100 rows"):
        ordinary_least_squares(W, y.reshape(-1)[:99])


def test_sixty_seconds_at_one_kilohertz_of_a_six_joint_arm(capsys):
    # 60,000 states: W is 360,000 x 84. Timed, not asserted (doc/testing.md: tests never assert times).
    model = RobotModel.from_urdf(PUMA)
    rng = np.random.default_rng(14)
    q, qd, qdd = puma_states(rng, 60_000)
    Y = regressor(model, q, qd, qdd)
    y = model.inverse_dynamics(q, qd, qdd) + 0.5 * rng.standard_normal((60_000, 6))
    base = base_parameters(model)
    began = time.perf_counter()
    ols = ordinary_least_squares(base.base_regressor(Y), y)
    ols_time = time.perf_counter() - began
    began = time.perf_counter()
    r = consistent_estimate(Y, y, standard_parameters(model.scaled(mass=1.3, friction=0.5)), 6, DRIVE_COLUMNS)
    consistent_time = time.perf_counter() - began
    truth = base.from_standard(standard_parameters(model))
    with capsys.disabled():
        print(f"\n360,000 x 84: OLS of the {base.count} base parameters {ols_time:.2f} s; consistent estimate "
              f"{consistent_time:.2f} s, {r.iterations} iterations")
    assert r.converged and np.all(r.min_eigenvalues >= 0.0)
    # both estimates within a few standard deviations of the truth, base parameter by base parameter
    assert np.max(np.abs(ols.parameters - truth) / ols.std) < 5.0
    assert np.max(np.abs(base.from_standard(r.parameters) - truth) / ols.std) < 5.0
