"""Kinematics of the Stewart platform: eqs. (1)-(9) against differencing, FK o IK = identity, the RPY
convention and its rates, and the linear-parabolic planner of section 4.3."""
import warnings
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.stewart import ForwardKinematicsError, LinearParabolicPath, StewartPlatform
from robodyn_ros.spatial import rotations
from robodyn_ros.apps.stewart_path import PAPER_PATHS

CONFIG = Path(__file__).resolve().parents[1] / "config" / "stewart_dasgupta.yaml"


@pytest.fixture(scope="module")
def sp():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return StewartPlatform.from_yaml(CONFIG)


def deriv(f, x, h):
    return (f(x - 2 * h) - 8 * f(x - h) + 8 * f(x + h) - f(x + 2 * h)) / (12 * h)


def elementary(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def test_rpy_is_rz_ry_rx():
    th = np.array([0.3, -0.4, 1.1])
    expected = elementary(2, th[2]) @ elementary(1, th[1]) @ elementary(0, th[0])
    assert np.allclose(rotations.rpy_matrix(th), expected, atol=1e-15)


def test_rpy_rates_give_base_frame_angular_velocity_and_acceleration():
    def theta(x):
        return np.array([0.3 + 0.5 * x + 0.2 * x**2, -0.4 + 0.3 * np.sin(x), 1.1 - x**2])

    def omega(x):
        Rd = deriv(lambda y: rotations.rpy_matrix(theta(y)), x, 1e-4)
        Wx = Rd @ rotations.rpy_matrix(theta(x)).T
        return np.array([Wx[2, 1], Wx[0, 2], Wx[1, 0]])

    x = 0.7
    th, thd = theta(x), deriv(theta, x, 1e-4)
    thdd = deriv(lambda y: deriv(theta, y, 1e-3), x, 1e-3)
    assert np.allclose(rotations.rpy_angular_velocity(th, thd), omega(x), atol=1e-9)
    assert np.allclose(rotations.rpy_angular_acceleration(th, thd, thdd),
                       deriv(omega, x, 1e-3), atol=1e-7)


def test_quaternion_round_trip():
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.standard_normal(4)
        q /= np.linalg.norm(q)
        R = rotations.quaternion_matrix(q)
        assert np.allclose(R @ R.T, np.eye(3), atol=1e-14)
        assert np.isclose(np.linalg.det(R), 1.0)
        back = rotations.matrix_quaternion(R)
        assert np.allclose(back, q if q[3] >= 0 else -q, atol=1e-12)


def test_leg_rates_and_accelerations_match_differencing(sp):
    """Eqs. (5)-(9) (with the dots of eq. 9 restored) against differencing of the leg vectors."""
    t0, R0 = np.array([0.2, 0.05, 0.5]), rotations.rpy_matrix([0.1, -0.2, 0.3])
    v, w = np.array([0.1, -0.2, 0.3]), np.array([0.4, 0.1, -0.5])
    a, al = np.array([1.0, 0.5, -2.0]), np.array([-1.0, 2.0, 0.5])

    def legs(x):
        R = rotations.exp_so3(w * x + 0.5 * al * x**2) @ R0
        S = sp.p @ R.T + t0 + v * x + 0.5 * a * x**2 - sp.b
        return S

    def W(x):
        S = legs(x)
        s = S / np.linalg.norm(S, axis=1)[:, None]
        sd = deriv(lambda y: legs(y) / np.linalg.norm(legs(y), axis=1)[:, None], x, 1e-4)
        return np.cross(s, sd)

    ik = sp.inverse_kinematics(t0, R0, v, w, a, al)
    L = lambda x: np.linalg.norm(legs(x), axis=1)  # noqa: E731
    assert np.allclose(ik.lengths, L(0.0), atol=1e-15)
    assert np.allclose(ik.rates, deriv(L, 0.0, 1e-4), atol=1e-10)
    assert np.allclose(ik.accelerations, deriv(lambda x: deriv(L, x, 1e-3), 0.0, 1e-3), atol=1e-7)
    assert np.allclose(ik.angular_velocity, W(0.0), atol=1e-10)
    assert np.allclose(ik.angular_acceleration, deriv(W, 0.0, 1e-3), atol=1e-7)
    # the universal joint forbids spin about the leg
    assert np.allclose(np.sum(ik.angular_velocity * ik.directions, axis=1), 0.0, atol=1e-15)


def test_forward_kinematics_inverts_inverse_kinematics(sp):
    rng = np.random.default_rng(4)
    for _ in range(5):
        t = np.array([0.2, 0.0, 0.5]) + 0.1 * rng.standard_normal(3)
        R = rotations.rpy_matrix(0.2 * rng.standard_normal(3))
        lengths = sp.inverse_kinematics(t, R).lengths
        guess_t = t + 0.03 * rng.standard_normal(3)
        guess_R = rotations.exp_so3(0.05 * rng.standard_normal(3)) @ R
        t_fk, R_fk = sp.forward_kinematics(lengths, guess_t, guess_R)
        assert np.allclose(t_fk, t, atol=1e-10)
        assert np.allclose(R_fk, R, atol=1e-10)


def test_forward_kinematics_reports_failure(sp):
    with pytest.raises(ForwardKinematicsError, match="no convergence|singular"):
        sp.forward_kinematics(np.full(6, 0.01), [0.2, 0.0, 0.5], np.eye(3), max_iter=20)
    with pytest.raises(ValueError, match="six positive finite"):
        sp.forward_kinematics([0.5, 0.5, np.nan, 0.5, 0.5, 0.5], [0.2, 0.0, 0.5], np.eye(3))


def test_blend_time_and_acceleration_follow_eqs_39_40():
    path, dtau = PAPER_PATHS["I"]
    distance = np.hypot(0.2, 0.2)
    assert np.isclose(path.tau_t, 6.0 - distance / 0.08)               # eq. (39)
    assert np.isclose(path.tau_theta, 6.0 - 0.4 / 0.08)
    early = path.sample([0.5 * path.tau_t])
    a_t = 0.08 / path.tau_t * np.array([0.2, 0.0, 0.2]) / distance      # eq. (40)
    assert np.allclose(early.linear_acceleration[0], a_t)
    cruise = path.sample([3.0])
    assert np.isclose(np.linalg.norm(cruise.linear_velocity[0]), 0.08)
    assert np.allclose(cruise.linear_acceleration[0], 0.0)


@pytest.mark.parametrize("name", sorted(PAPER_PATHS))
def test_planner_is_continuous_and_hits_its_ends(name):
    path, _ = PAPER_PATHS[name]
    ends = path.sample([0.0, path.tau_f])
    assert np.allclose(ends.position, [path.t0, path.t1])
    assert np.allclose(ends.theta, [path.theta0, path.theta1])
    assert np.allclose(ends.linear_velocity, 0.0) and np.allclose(ends.angular_velocity, 0.0)
    eps = 1e-9
    for tb in (path.tau_t, path.tau_f - path.tau_t, path.tau_theta, path.tau_f - path.tau_theta):
        around = path.sample([tb - eps, tb + eps])
        for field in ("position", "theta", "linear_velocity", "theta_dot"):
            values = getattr(around, field)
            assert np.allclose(values[0], values[1], atol=1e-7), (field, tb)
    # velocities are the derivative of positions everywhere (not only at the joints)
    tau = np.linspace(0.05, path.tau_f - 0.05, 37)
    h = 1e-6
    numeric = (path.sample(tau + h).position - path.sample(tau - h).position) / (2 * h)
    assert np.allclose(numeric, path.sample(tau).linear_velocity, atol=1e-6)


def test_planner_rejects_infeasible_speeds():
    with pytest.raises(ValueError, match="blend time"):
        LinearParabolicPath((0, 0, 0), (0, 0, 0), (1, 0, 0), (0, 0, 0), tau_f=1.0, V=0.5, Omega=1)
    with pytest.raises(ValueError, match="blend time"):
        LinearParabolicPath((0, 0, 0), (0, 0, 0), (1, 0, 0), (0, 0, 0), tau_f=1.0, V=3.0, Omega=1)
