"""The integrators: fixed-step RK4 (rk4_step, simulate) and adaptive Dormand–Prince (simulate_adaptive).

* RK4 is 4th order: on a short PUMA motion, halving dt divides the error at the end by ~16 (the
  reference is simulate_adaptive at rtol 1e-12, some 10^3 below the smallest RK4 error measured).
  The joint forces are constant in time, so RK4's zero-order hold equals the continuous input and
  the comparison is between two integrations of the same ODE. Coulomb friction is dropped (its
  discontinuity at qd = 0 would spoil the order), viscous friction and armature are kept.
* simulate_adaptive conserves the energy of a frictionless arm with no joint forces.
* simulate returns the documented shapes and calls tau(t, q, qd) at the start of every step.
"""
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.integrate import rk4_step, simulate, simulate_adaptive

ROOT = Path(__file__).resolve().parents[1]


def puma(coulomb=False, friction=True):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        model = RobotModel.from_yaml(ROOT / "config/puma560_dh.yaml")
        links = [dataclasses.replace(
            link,
            coulomb_positive=link.coulomb_positive if coulomb else 0.0,
            coulomb_negative=link.coulomb_negative if coulomb else 0.0,
            viscous=link.viscous if friction else 0.0) for link in model.links]
        return RobotModel(links, model.tip, model.gravity, model.name)


Q0 = np.array([0.1, -0.6, 0.4, 0.3, -0.5, 0.2])
QD0 = np.array([0.5, -0.4, 0.8, -1.0, 0.6, 1.2])


def test_rk4_is_fourth_order():
    model = puma()
    tau = model.gravity_torques(Q0) + np.array([5.0, -8.0, 3.0, 0.5, -0.4, 0.3])
    duration = 0.3
    _, qr, qdr = simulate_adaptive(model, Q0, QD0, lambda t, q, qd: tau, duration, rtol=1e-12, atol=1e-13)
    ref = np.concatenate([qr[-1], qdr[-1]])
    errors = []
    for dt in (0.03, 0.015, 0.0075):
        t, q, qd = simulate(model, Q0, QD0, lambda t, q, qd: tau, duration, dt)
        assert t[-1] == pytest.approx(duration)
        errors.append(np.linalg.norm(np.concatenate([q[-1], qd[-1]]) - ref))
    ratios = [errors[0] / errors[1], errors[1] / errors[2]]
    # asymptotically 2^4 = 16
    # (measured 17.0 and 16.5; a 3rd- or 5th-order method would give 8 or 32)
    assert all(13.0 < r < 20.0 for r in ratios), (errors, ratios)
    assert errors[-1] > 1e3 * 1e-12, "the reference is not accurate enough to measure the order"


def test_rk4_step_matches_simulate_and_a_hand_step():
    model = puma()
    tau = np.array([1.0, 20.0, 5.0, 0.1, 0.2, 0.3])
    dt = 0.01
    q1, qd1 = rk4_step(model, Q0, QD0, tau, dt)
    _, q, qd = simulate(model, Q0, QD0, lambda t, q, qd: tau, dt, dt)
    np.testing.assert_array_equal(q[1], q1)
    np.testing.assert_array_equal(qd[1], qd1)
    # the classical tableau written out
    def f(x):
        return np.concatenate([x[6:], model.forward_dynamics(x[:6], x[6:], tau)])
    x = np.concatenate([Q0, QD0])
    k1 = f(x)
    k2 = f(x + dt / 2 * k1)
    k3 = f(x + dt / 2 * k2)
    k4 = f(x + dt * k3)
    expected = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    np.testing.assert_allclose(np.concatenate([q1, qd1]), expected, rtol=1e-14, atol=1e-15)


def test_rk4_step_with_tip_wrench():
    # the wrench the tip exerts is held over the step like tau: each stage's acceleration is
    # forward_dynamics with that wrench
    model = puma()
    tau = model.gravity_torques(Q0)
    w = np.array([3.0, -5.0, 30.0, 0.5, 1.0, -2.0])
    dt = 0.01
    q1, qd1 = rk4_step(model, Q0, QD0, tau, dt, tip_wrench=w)

    def f(x):
        return np.concatenate([x[6:], model.forward_dynamics(x[:6], x[6:], tau, tip_wrench=w)])
    x = np.concatenate([Q0, QD0])
    k1 = f(x)
    k2 = f(x + dt / 2 * k1)
    k3 = f(x + dt / 2 * k2)
    k4 = f(x + dt * k3)
    np.testing.assert_allclose(np.concatenate([q1, qd1]), x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4),
                               rtol=1e-14, atol=1e-15)
    # and the wrench matters: pushing on the world takes M^-1 J^T [R f; R n] off the acceleration
    q0, qd0 = rk4_step(model, Q0, QD0, tau, 1e-4)
    q1, qd1 = rk4_step(model, Q0, QD0, tau, 1e-4, tip_wrench=w)
    J = model.jacobian(Q0)
    R = model.link_frames(Q0)[-1][:3, :3]
    expected = -np.linalg.solve(model.mass_matrix(Q0), J.T @ np.concatenate([R @ w[:3], R @ w[3:]]))
    # (qd1 - qd0) / h = the difference of the mean accelerations over the step: O(h) from the start
    np.testing.assert_allclose((qd1 - qd0) / 1e-4, expected, rtol=0, atol=1e-2 * np.max(np.abs(expected)))


def test_simulate_adaptive_conserves_energy():
    model = puma(friction=False)
    assert not np.any(model.viscous) and not np.any(model.coulomb_positive)
    t, q, qd = simulate_adaptive(model, Q0, 3 * QD0, lambda t, q, qd: np.zeros(6), 2.0, rtol=1e-10, atol=1e-12)
    E = np.array([sum(model.energy(q[k], qd[k])) for k in range(len(t))])
    swing = np.ptp([model.energy(q[k], qd[k])[0] for k in range(len(t))])
    assert swing > 1.0, "the motion should exchange kinetic and potential energy"
    # the local error per step is ~rtol |x|, so the energy's ~rtol E; over the ~160 steps taken the
    # drift is at most ~2e-8 E (measured: 5e-11 E)
    assert np.max(np.abs(E - E[0])) < 1e-8 * (abs(E[0]) + swing), np.max(np.abs(E - E[0]))
    # and it really is an adaptive run: steps of different lengths, ending at the duration
    assert t[-1] == pytest.approx(2.0, abs=1e-12)
    assert np.ptp(np.diff(t)) > 0.0


def test_energy_decreases_with_friction_and_no_torque():
    # gravity compensated, so dT/dt = qd.(tau - g - C qd - B qd) + qd.dM/dt qd / 2 = -qd.B qd <= 0
    model = puma(coulomb=False, friction=True)

    def tau(t, q, qd):
        return model.gravity_torques(q)

    t, q, qd = simulate_adaptive(model, Q0, QD0, tau, 0.5, rtol=1e-9, atol=1e-11)
    kinetic = np.array([model.energy(q[k], qd[k])[0] for k in range(len(t))])
    assert np.all(np.diff(kinetic) <= 1e-9 * kinetic[0])
    assert kinetic[-1] < 0.9 * kinetic[0]


def test_simulate_shapes_and_sampling():
    model = puma()
    calls = []

    def tau(t, q, qd):
        calls.append(t)
        assert q.shape == (6,) and qd.shape == (6,)
        return model.gravity_torques(q)

    t, q, qd = simulate(model, Q0, np.zeros(6), tau, duration=0.05, dt=0.01)
    assert t.shape == (6,) and q.shape == (6, 6) and qd.shape == (6, 6)
    np.testing.assert_allclose(t, np.arange(6) * 0.01)
    np.testing.assert_array_equal(q[0], Q0)
    np.testing.assert_array_equal(qd[0], np.zeros(6))
    np.testing.assert_allclose(calls, t[:-1])     # sampled at the start of every step
    # gravity compensation from rest: the arm stays where it is
    np.testing.assert_allclose(q, np.tile(Q0, (6, 1)), atol=1e-12)
    ta, qa, qda = simulate_adaptive(model, Q0, np.zeros(6), lambda t, q, qd: model.gravity_torques(q), 0.05)
    assert ta.ndim == 1 and qa.shape == (len(ta), 6) and qda.shape == (len(ta), 6)
    assert ta[0] == 0.0 and ta[-1] == pytest.approx(0.05)


def test_simulate_adaptive_gives_up_after_max_steps():
    model = puma()
    with pytest.raises(RuntimeError, match="did not reach"):
        simulate_adaptive(model, Q0, QD0, lambda t, q, qd: np.zeros(6), 1.0, max_steps=3)
