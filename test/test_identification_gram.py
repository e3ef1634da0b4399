"""The regression from per-joint Gram matrices (identification/gram.py) against the QR one on the
whole regressor matrix (estimate.ordinary_least_squares, consistent_estimate): the same estimates,
standard deviations, condition numbers and fits, with the regressor never held whole."""
import warnings

import numpy as np
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.base_parameters import sample_states
from robodyn_ros.identification.estimate import (consistent_estimate, consistent_from_gram, gram,
                                                 least_squares_from_gram, ordinary_least_squares)
from robodyn_ros.identification.gram import accumulate, predictions
from robodyn_ros.identification.layout import Layout
from robodyn_ros.plumbing.resources import find_share_file


@pytest.fixture(scope="module")
def panda():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(find_share_file("urdf/panda.urdf"))


@pytest.fixture(scope="module")
def run(panda):
    q, qd, qdd = sample_states(panda, 3000, np.random.default_rng(2))
    layout = Layout.of(panda, {"panda_joint2": "coulomb+tanh=0.05+offset", "panda_joint7": "coulomb"})
    tau = layout.regressor(q, qd, qdd) @ layout.nominal() + np.random.default_rng(3).normal(0.0, 0.1, q.shape)
    return layout, q, qd, qdd, tau


def test_each_joints_row_is_zero_outside_its_columns(run):
    layout, q, qd, qdd, _ = run
    Y = layout.regressor(q[:200], qd[:200], qdd[:200])
    for j in range(layout.model.dof):
        outside = np.setdiff1d(np.arange(Y.shape[2]), layout.joint_columns(j))
        assert np.all(Y[:, j, outside] == 0.0) and np.any(Y[:, j, layout.joint_columns(j)] != 0.0)


def test_grams_give_the_qr_estimate_and_fits(run):
    layout, q, qd, qdd, tau = run
    base = layout.base
    grams = accumulate(layout, q, qd, qdd, tau, chunk=700)          # chunks that do not divide N
    Y = layout.regressor(q, qd, qdd)
    W = base.base_regressor(Y)
    direct = ordinary_least_squares(W, tau)
    from_grams = least_squares_from_gram(grams.matrix(base.columns), W.shape[0] * W.shape[1])
    scale = np.abs(direct.parameters).max()
    np.testing.assert_allclose(from_grams.parameters, direct.parameters, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(from_grams.std, direct.std, rtol=1e-7)
    assert from_grams.condition == pytest.approx(direct.condition, rel=1e-9)
    np.testing.assert_allclose(grams.matrix(np.arange(Y.shape[2])), gram(Y.reshape(-1, Y.shape[2]), tau.reshape(-1)),
                               rtol=1e-12, atol=1e-9)
    pi = layout.nominal() * 1.1
    np.testing.assert_allclose(grams.residual_squares(pi), np.sum((tau - Y @ pi) ** 2, axis=0), rtol=1e-8)
    np.testing.assert_allclose(predictions(layout, q, qd, qdd, [pi], chunk=512)[0], Y @ pi, rtol=1e-12, atol=1e-12)
    rows = Y.shape[0] * Y.shape[1]
    consistent = consistent_from_gram(grams.matrix(np.arange(Y.shape[2])), rows, layout.nominal(),
                                      layout.model.dof, layout.drive_layout, prior_weight=1e-6)
    whole = consistent_estimate(Y, tau, layout.nominal(), layout.model.dof, layout.drive_layout, prior_weight=1e-6)
    # the same problem: the same cost, and the same torques (directions the data do not see, which
    # only the light prior holds, may stop elsewhere within the solver's tolerance)
    assert consistent.cost == pytest.approx(whole.cost, rel=1e-6)
    np.testing.assert_allclose(Y @ consistent.parameters, Y @ whole.parameters, rtol=0, atol=1e-3 * np.abs(tau).max())


def test_weighted_least_squares_from_grams_is_the_qr_ones(run):
    from robodyn_ros.identification.estimate import weighted_least_squares
    from robodyn_ros.identification.identify import _least_squares

    layout, q, qd, qdd, tau = run
    tau = tau + np.random.default_rng(4).normal(0.0, 1.0, tau.shape) * [0, 0, 0.5, 0, 0, 0, 0]   # joint 3 noisier
    grams = accumulate(layout, q, qd, qdd, tau)
    direct = weighted_least_squares(layout.base.base_regressor(layout.regressor(q, qd, qdd)), tau)
    from_grams = _least_squares(grams, layout.base, "wls")
    np.testing.assert_allclose(from_grams.weights, direct.weights, rtol=1e-8)
    assert direct.weights[2] < 0.5 * direct.weights[0]
    np.testing.assert_allclose(from_grams.parameters, direct.parameters, rtol=0,
                               atol=1e-9 * np.abs(direct.parameters).max())
    np.testing.assert_allclose(from_grams.residual_rms, direct.residual_rms, rtol=1e-7)
