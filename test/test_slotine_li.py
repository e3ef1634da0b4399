"""The Slotine–Li regressor: Y(q, q̇, v, a) π = M(q) a + C(q, q̇) v + g(q) + the drive terms, C the
Christoffel Coriolis matrix, on random URDF arms (prismatic joints, any axis, friction) and the
shipped DH tables.

Two formulations of the Christoffel C, neither ours: the Christoffel symbols of the mass matrix
(CRBA) by central differences, and the symmetric part of the package's Coriolis matrix C' (built
from Jacobians, ``dynamics.coriolis``): C' q̇ is the Coriolis force, so its polarisation
½(C'(q, x) y + C'(q, y) x) is the one symmetric bilinear form with that quadratic, the Christoffel
one. C' itself differs from it (checked: it is not symmetric in its velocities).
"""
import warnings

import numpy as np
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.identification import regressor, standard_parameters
from robodyn_ros.dynamics import regressor as regressor_module
from robodyn_ros.dynamics.regressor import payload_regressor, slotine_li_regressor
from robodyn_ros.plumbing.kernels import interpreted
from urdf_factory import random_urdf

REL = 1e-10


def arms():
    for seed in range(5):
        rng = np.random.default_rng(900 + seed)
        arm = random_urdf(rng, 2 + seed, prismatic=0.4, friction=True, fixed_in_chain=0.3)
        with warnings.catch_warnings():   # no velocity or effort limits: none needed here
            warnings.simplefilter("ignore")
            yield f"random-{seed}", RobotModel.from_urdf(arm.xml, tip_link=arm.tip)
    for table in ("config/puma560_dh.yaml", "config/stanford_dh.yaml"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield table, RobotModel.from_yaml(table)


ARMS = list(arms())
IDS = [name for name, _ in ARMS]


def random_state(model, rng):
    q, qd, v, a = rng.normal(0.0, 1.0, (4, model.dof))
    return q, qd, v, a


def christoffel(model, q, qd, step=1e-6):
    """C_ij = Σ_k Γ_ijk q̇_k, Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i), M by CRBA."""
    n = model.dof
    dM = np.empty((n, n, n))   # dM[:, :, k] = ∂M/∂q_k
    for k in range(n):
        e = np.zeros(n)
        e[k] = step
        dM[:, :, k] = (model.mass_matrix(q + e) - model.mass_matrix(q - e)) / (2.0 * step)
    gamma = 0.5 * (dM + dM.transpose(0, 2, 1) - dM.transpose(2, 0, 1))
    return gamma @ qd


def coriolis_from(model, Y_of, q, qd):
    """The C of a regressor, column by column: Y(q, q̇, e_k, 0) π − Y(q, q̇, 0, 0) π."""
    pi, n = standard_parameters(model), model.dof
    zero = np.zeros(n)
    base = Y_of(model, q, qd, zero, zero) @ pi
    return np.column_stack([Y_of(model, q, qd, np.eye(n)[k], zero) @ pi - base for k in range(n)])


@pytest.mark.parametrize("name, model", ARMS, ids=IDS)
def test_regressor_is_mass_christoffel_coriolis_gravity_and_drives(name, model):
    rng = np.random.default_rng(3)
    pi = standard_parameters(model)
    for _ in range(6):
        q, qd, v, a = random_state(model, rng)
        qd[rng.integers(model.dof)] = 0.0                     # Coulomb's zero at rest
        C = model.coriolis_matrix
        expected = (model.mass_matrix(q) @ a + 0.5 * (C(q, qd) @ v + C(q, v) @ qd)
                    + model.gravity_torques(q) + model.friction_torques(qd))   # M has the armature
        got = slotine_li_regressor(model, q, qd, v, a) @ pi
        np.testing.assert_allclose(got, expected, rtol=0, atol=REL * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("name, model", ARMS, ids=IDS)
def test_its_coriolis_matrix_is_christoffels_and_makes_mdot_minus_2c_skew(name, model):
    rng = np.random.default_rng(4)
    q, qd, _, _ = random_state(model, rng)
    C = coriolis_from(model, slotine_li_regressor, q, qd)
    scale = max(1.0, np.abs(C).max())
    np.testing.assert_allclose(C, christoffel(model, q, qd), rtol=0, atol=1e-6 * scale)
    step = 1e-6
    Mdot = (model.mass_matrix(q + step * qd) - model.mass_matrix(q - step * qd)) / (2.0 * step)
    N = Mdot - 2.0 * C
    np.testing.assert_allclose(N + N.T, 0.0, atol=1e-6 * scale)
    # the same Coriolis force as the package's own C'
    np.testing.assert_allclose(C @ qd, model.coriolis_matrix(q, qd) @ qd, rtol=0, atol=REL * scale)


def test_the_package_coriolis_matrix_is_not_the_christoffel_one():
    """Why the first test symmetrises C': on a 6-joint arm C'(q, x) y != C'(q, y) x."""
    _, model = ARMS[-2]        # PUMA 560
    q, x, y, _ = random_state(model, np.random.default_rng(5))
    C = model.coriolis_matrix
    assert np.abs(C(q, x) @ y - C(q, y) @ x).max() > 1e-3


@pytest.mark.parametrize("name, model", ARMS, ids=IDS)
def test_with_v_qd_and_a_qdd_it_is_the_identification_regressor(name, model):
    rng = np.random.default_rng(6)
    for _ in range(4):
        q, qd, _, qdd = random_state(model, rng)
        Y = regressor(model, q, qd, qdd)
        np.testing.assert_allclose(slotine_li_regressor(model, q, qd, qd, qdd), Y, rtol=0,
                                   atol=1e-13 * max(1.0, np.abs(Y).max()))


@pytest.mark.parametrize("name, model", ARMS, ids=IDS)
@pytest.mark.parametrize("friction", [True, False])
def test_payload_pass_is_the_full_regressor_with_another_last_body(name, model, friction):
    rng = np.random.default_rng(7)
    n = model.dof
    pi = standard_parameters(model)
    last = slice(10 * (n - 1), 10 * n)
    for _ in range(4):
        q, qd, v, a = random_state(model, rng)
        Y = slotine_li_regressor(model, q, qd, v, a)
        other = pi.copy()
        other[last] = pi[last] + rng.normal(0.0, 0.5, 10)
        if not friction:
            other[10 * n:] = np.repeat(model.armature, 4) * np.tile([1.0, 0.0, 0.0, 0.0], n)
        tau, Y_last = payload_regressor(model, q, qd, v, a, other[last], friction=friction)
        np.testing.assert_allclose(tau, Y @ other, rtol=0, atol=REL * max(1.0, np.abs(tau).max()))
        np.testing.assert_array_equal(Y_last, Y[:, last])


def test_interpreted_twins_agree_with_the_compiled_kernels():
    _, model = ARMS[3]
    rng = np.random.default_rng(8)
    twins = interpreted(regressor_module)
    n = model.dof
    for _ in range(2):
        q, qd, v, a = random_state(model, rng)
        Y = np.empty((n, 14 * n))
        twins["regressor_one"](model.params, q, qd, v, a, False, Y)
        np.testing.assert_allclose(Y, slotine_li_regressor(model, q, qd, v, a), rtol=1e-13, atol=1e-13)
        Y = np.empty((n, 15 * n))   # the identification regressor, with the offset column
        twins["regressor_one"](model.params, q, qd, qd, a, True, Y)
        np.testing.assert_allclose(Y, regressor(model, q, qd, a, offset=True), rtol=1e-13,
                                   atol=1e-13)
        last, tau, Y_last = rng.normal(size=10), np.empty(n), np.empty((n, 10))
        twins["payload_one"](model.params, q, qd, v, a, True, last, tau, Y_last)
        expected = payload_regressor(model, q, qd, v, a, last)
        np.testing.assert_allclose(tau, expected[0], rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(Y_last, expected[1], rtol=1e-13, atol=1e-13)


def test_bad_arguments_are_refused():
    _, model = ARMS[0]
    n = model.dof
    z = np.zeros(n)
    with pytest.raises(ValueError, match=f"one value per joint \\({n}\\)"):
        slotine_li_regressor(model, np.zeros(n + 1), z, z, z)
    with pytest.raises(ValueError, match="one value per joint"):
        payload_regressor(model, z, z, z, np.zeros((2, n)), np.zeros(10))
    with pytest.raises(ValueError, match="last body's 10 standard parameters"):
        payload_regressor(model, z, z, z, z, np.zeros(9))
