"""adaptive_computed_torque (Slotine & Li 1987): its effort and update against their formulas written
out here over the Slotine–Li regressor, its parameters' validation, its estimates' life cycle, and
the closed loop in-process (RK4 at 1 kHz against a plant carrying a payload the model lacks):
V = ½ sᵀM s + ½ π̃ᵀΓ⁻¹π̃ falls as dV/dt = −sᵀK_D s up to the discretisation error, and with
measurement noise the dead zone keeps the estimates from drifting."""
import warnings

import numpy as np
import pytest

from robodyn_ros.control import adaptive as adaptive_module
from robodyn_ros.control.adaptive import AdaptiveComputedTorque
from robodyn_ros.control.cycle_steps import SATURATE
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.control.law import load_law
from robodyn_ros.control.loop import ControlLoop
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.integrate import rk4_step
from robodyn_ros.identification import standard_parameters
from robodyn_ros.dynamics.base_parameters import base_parameters
from robodyn_ros.dynamics.regressor import slotine_li_regressor
from robodyn_ros.plumbing.kernels import interpreted
from robodyn_ros.plumbing.resources import find_share_file
from test_control_laws import ARM

with warnings.catch_warnings():   # the PUMA data's link-3 inertia is not physical
    warnings.simplefilter("ignore")
    PUMA = RobotModel.from_urdf(str(find_share_file("urdf/puma560.urdf")))
NO_FRICTION = PUMA.scaled(friction=0.0)     # 004's arm: rigid bodies and armature
TOOL = dict(mass=2.0, com=(0.0, 0.0, 0.1))  # a 2 kg tool 0.1 m beyond the flange
Q_START = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])
Q_GOAL = np.radians([45.0, 30.0, 0.0, 45.0, 60.0, 90.0])
RNG = np.random.default_rng(20)


def state(n):
    q, qd, q_des, qd_des, qdd_des = RNG.uniform(-1.5, 1.5, (5, n))
    return q, qd, q_des, qd_des, qdd_des


def quintic(t, duration=3.0):
    """The 004 motion: rest to rest from Q_START to Q_GOAL."""
    s = min(max(t / duration, 0.0), 1.0)
    p = s ** 3 * (10 - 15 * s + 6 * s * s)
    dp = 30 * s * s * (1 - s) ** 2 / duration
    ddp = 60 * s * (1 - s) * (1 - 2 * s) / duration ** 2
    d = Q_GOAL - Q_START
    return Q_START + p * d, dp * d, ddp * d


def written_out(model, law, q, qd, q_des, qd_des, qdd_des, lam, kd):
    """τ = Y(q, q̇, q̇_r, q̈_r) π̂ − K_D s over the standard parameters π̂ the law stands for."""
    e, ed = q - q_des, qd - qd_des
    s = ed + lam * e
    Y = slotine_li_regressor(model, q, qd, qd_des - lam * e, qdd_des - lam * ed)
    return Y, s


# ------------------------------------------------------------------ the formulas

@pytest.mark.parametrize("model", [ARM, PUMA], ids=["test_arm", "puma560"])
@pytest.mark.parametrize("friction", [True, False])
def test_payload_mode_effort_and_update_are_the_formulas(model, friction):
    n = model.dof
    kd = np.diag(RNG.uniform(10, 30, n))
    lam, gamma = RNG.uniform(5, 15, n), RNG.uniform(1, 50, 10)
    dead, leakage = RNG.uniform(0, 0.3, n), 0.4
    law = AdaptiveComputedTorque(model, {"kd": kd.tolist(), "lambda": lam.tolist(),
                                         "gamma": gamma.tolist(), "dead_zone": dead.tolist(),
                                         "leakage": leakage, "friction": friction,
                                         "payload_mass_limits": [-model.links[-1].mass, 100.0]})
    pi = standard_parameters(model)
    if not friction:
        pi[10 * n:] = np.repeat(model.armature, 4) * np.tile([1.0, 0.0, 0.0, 0.0], n)
    last = slice(10 * (n - 1), 10 * n)
    assert law.estimate_names == tuple(f"{model.joint_names[-1]}.{c}" for c in
                                       ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz"))
    np.testing.assert_array_equal(law.estimates, pi[last])
    estimate = pi[last] + RNG.normal(0.0, 0.1, 10)
    estimate[0] = pi[last][0] + 0.5
    law.set_estimates(estimate)
    for dt in (0.0, 1e-3, 2e-3):
        q, qd, q_des, qd_des, qdd_des = state(n)
        Y, s = written_out(model, law, q, qd, q_des, qd_des, qdd_des, lam, kd)
        current = pi.copy()
        current[last] = estimate
        tau = law.compute(q, qd, q_des, qd_des, qdd_des, dt)
        np.testing.assert_allclose(tau, Y @ current - kd @ s, rtol=0, atol=1e-10 * np.abs(tau).max())
        s_dead = np.sign(s) * np.maximum(np.abs(s) - dead, 0.0)
        estimate = estimate - dt * (gamma * (Y[:, last].T @ s_dead) + leakage * (estimate - pi[last]))
        estimate[0] = np.clip(estimate[0], 0.0, pi[last][0] + 100.0)    # the mass, projected
        np.testing.assert_allclose(law.estimates, estimate, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("adapt", ["all", "inertial"])
@pytest.mark.parametrize("friction", [True, False])
def test_base_modes_adapt_the_base_parameters(adapt, friction):
    model = ARM
    n = model.dof
    base = base_parameters(model)
    law = AdaptiveComputedTorque(model, {"adapt": adapt, "friction": friction, "gamma": 3.0,
                                         "gamma_mass": 3.0, "dead_zone": 0.0})
    friction_names = ("viscous", "coulomb_positive", "coulomb_negative")
    names = [base.names[c] for c in base.columns]
    expected = [name for name in names if adapt == "all" and friction
                or not name.endswith(friction_names)]
    assert list(law.estimate_names) == expected
    pi = standard_parameters(model)
    if not friction:
        pi[10 * n:] = np.repeat(model.armature, 4) * np.tile([1.0, 0.0, 0.0, 0.0], n)
    by_name = dict(zip([base.names[c] for c in base.columns], base.from_standard(pi)))
    np.testing.assert_allclose(law.estimates, [by_name[name] for name in expected], rtol=1e-12)
    q, qd, q_des, qd_des, qdd_des = state(n)
    Y, s = written_out(model, law, q, qd, q_des, qd_des, qdd_des, 10.0, 20.0 * np.eye(n))
    # base coordinates change nothing in the effort: Y_base π_base = Y π
    tau = law.compute(q, qd, q_des, qd_des, qdd_des, 1e-3)
    np.testing.assert_allclose(tau, Y @ pi - 20.0 * s, rtol=0, atol=1e-9 * np.abs(tau).max())
    columns = [list(base.names).index(name) for name in expected]
    np.testing.assert_allclose(law.estimates, [by_name[name] for name in expected]
                               - 1e-3 * 3.0 * (Y[:, columns].T @ s), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("adapt", ["payload", "all"])
def test_the_loops_path_equals_compute_then_saturate(adapt):
    """saturating (the control loop's path) against compute and the loop's
    saturate_into, bit for bit: the torque, the clamped efforts in joints order, the estimates
    it carries on; and a subclass computing otherwise loses it."""
    one, two = (AdaptiveComputedTorque(ARM, {"adapt": adapt, "gamma": 5.0}) for _ in range(2))
    n = ARM.dof
    index = RNG.permutation(n)
    for _ in range(4):
        q, qd, *reference = state(n)
        reference = np.array(reference)
        tau = one.compute(q, qd, *reference, 1e-3)
        limit = np.abs(tau) * np.where(np.arange(n) % 2, 0.5, 1.5)   # every other one clamped
        expected, effort = np.empty(n), np.empty(n)
        clamped = SATURATE.call(tau, limit, index, expected)
        assert two.saturating(limit, index, effort)(q, qd, reference, 1e-3) == clamped
        assert clamped == n // 2
        np.testing.assert_array_equal(two.torque, tau)
        np.testing.assert_array_equal(effort, expected)
        np.testing.assert_array_equal(two.estimates, one.estimates)
    q[0] = np.nan
    assert two.saturating(limit, index, effort)(q, qd, reference, 1e-3) == -1

    class Halved(AdaptiveComputedTorque):
        def compute(self, *args):
            return 0.5 * super().compute(*args)
    assert Halved.saturating is None and AdaptiveComputedTorque.saturating


def test_interpreted_twins_agree_with_the_compiled_steps():
    twins = interpreted(adaptive_module)
    for adapt in ("payload", "all"):
        compiled = AdaptiveComputedTorque(ARM, {"adapt": adapt, "gamma": 5.0, "leakage": 0.1})
        twin = AdaptiveComputedTorque(ARM, {"adapt": adapt, "gamma": 5.0, "leakage": 0.1})
        step = twins["payload_step" if adapt == "payload" else "base_step"]
        for _ in range(3):
            args = state(ARM.dof)
            tau = compiled.compute(*args, 1e-3).copy()
            t = twin
            step(ARM.params, *args, 1e-3, t._lambda, t._kd, t._dead,
                 t._friction if adapt == "payload" else t._adapted, t._gamma, t._leakage, t._initial,
                 t._low, t._high, t._estimate, t._columns, t._work, t._Y, t.torque)
            np.testing.assert_allclose(t.torque, tau, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(twin.estimates, compiled.estimates, rtol=1e-12, atol=1e-12)


def test_payload_mass_is_projected_onto_its_limits():
    law = AdaptiveComputedTorque(PUMA, {"payload_mass_limits": [-0.05, 1.5], "gamma": 1e4,
                                        "dead_zone": 0.0})
    m0 = law.initial_estimates[0]
    z = np.zeros(6)
    for sign in (1.0, -1.0):   # an error that keeps pushing the mass one way
        for _ in range(200):
            law.compute(Q_START + sign * 0.05, z, Q_START, z, z, 1e-3)
        assert law.estimates[0] == pytest.approx(m0 + (1.5 if sign > 0 else -0.05), abs=1e-12)


def test_estimates_survive_reset_and_hold_and_go_back_on_reset_estimates():
    law = AdaptiveComputedTorque(PUMA)
    start = law.estimates
    np.testing.assert_array_equal(start, law.initial_estimates)
    loop = ControlLoop(PUMA, JointOrder(PUMA.joint_names), {"control_law": "adaptive_computed_torque"},
                       0.1, clock=lambda: 0.0, law_class=lambda name: AdaptiveComputedTorque)
    loop.set_state(PUMA.joint_names, Q_START, np.zeros(6), 0.0)
    z = np.zeros(6)
    for k in range(50):
        loop.set_state(PUMA.joint_names, Q_START - 0.01, z, 1e-3 * (k + 1))
        loop.set_reference(Q_START, z, z)
        loop.cycle()
    learnt = loop.law.estimates
    assert np.abs(learnt - start).max() > 1e-3
    loop.hold()                                  # calls law.reset()
    loop.enable(False)
    loop.enable(True)
    np.testing.assert_array_equal(loop.law.estimates, learnt)
    loop.law.reset_estimates()
    np.testing.assert_array_equal(loop.law.estimates, start)
    with pytest.raises(ValueError, match="expected 10 finite estimates"):
        loop.law.set_estimates(np.zeros(3))


def test_default_adaptation_gain_is_fast_for_masses_moderate_for_the_rest():
    law = AdaptiveComputedTorque(PUMA)
    assert (law.params["gamma"], law.params["gamma_mass"]) == (30.0, 150.0)
    np.testing.assert_array_equal(law._gamma, [150.0] + [30.0] * 9)
    given = [float(k) for k in range(10)]       # one per parameter: as given, gamma_mass aside
    np.testing.assert_array_equal(AdaptiveComputedTorque(PUMA, {"gamma": given})._gamma, given)
    base = AdaptiveComputedTorque(ARM, {"adapt": "all"})
    expected = [150.0 if name.endswith(".m") else 30.0 for name in base.estimate_names]
    assert 150.0 in expected and 30.0 in expected
    np.testing.assert_array_equal(base._gamma[:len(expected)], expected)


@pytest.mark.parametrize("params, match", [
    ({"adapt": "everything"}, "adapt must be one of"),
    ({"lambda": 0.0}, "lambda must be finite and > 0"),
    ({"lambda": [1.0, 2.0]}, "lambda must be one number or 6"),
    ({"kd": -1.0}, "kd for joint 'joint_1'"),
    ({"gamma": -1.0}, "gamma must be one number or 10 .*joint_6.m, joint_6.mx"),
    ({"gamma": [1.0] * 9}, "gamma must be one number or 10"),
    ({"gamma": True}, "gamma must be"),
    ({"gamma_mass": -1.0}, "gamma_mass must be a finite number >= 0"),
    ({"dead_zone": -1e-3}, "dead_zone must be non-negative"),
    ({"leakage": -0.1}, "leakage must be a finite number >= 0"),
    ({"payload_mass_limits": [0.5, 2.0]}, "min <= 0 <= max"),
    ({"payload_mass_limits": [-100.0, 2.0]}, "min >= -"),
    ({"payload_mass_limits": 3.0}, r"payload_mass_limits must be \[min, max\]"),
    ({"friction": "yes"}, "friction must be true or false"),
    ({"kp": 100.0}, "does not take parameter"),
])
def test_bad_parameters_are_refused_with_the_reason(params, match):
    with pytest.raises(ValueError, match=match):
        AdaptiveComputedTorque(PUMA, params)


def test_registered_under_its_name():
    assert load_law("adaptive_computed_torque") is AdaptiveComputedTorque


def test_bad_arguments_are_refused():
    law = AdaptiveComputedTorque(ARM)
    n = ARM.dof
    with pytest.raises(ValueError, match=f"one value per joint \\({n}\\)"):     # converted
        law.compute([0.0] * (n + 1), *np.zeros((4, n)).tolist(), 1e-3)
    with pytest.raises(ValueError, match="qd_des and qdd_des of one value per joint"):   # as given
        law.compute(np.zeros(n + 1), *np.zeros((4, n)), 1e-3)


# ------------------------------------------------------------------ the closed loop

def lyapunov_run(adapt, rate, duration=4.0):
    """The 004 motion against the PUMA carrying the tool, from the model's parameters: V along the
    loop and the dissipation −sᵀK_D s, at each control step."""
    plant = NO_FRICTION.with_payload(TOOL["mass"], com=TOOL["com"])
    kd, lam = 20.0, 10.0
    law = AdaptiveComputedTorque(NO_FRICTION, {"adapt": adapt, "kd": kd, "lambda": lam,
                                               "dead_zone": 0.0, "friction": False})
    gamma = law._gamma[:len(law.estimate_names)]     # the default Γ, diagonal
    truth = standard_parameters(plant)
    if adapt == "payload":
        truth = truth[50:60]
    else:
        base = base_parameters(NO_FRICTION)
        names = [base.names[c] for c in base.columns]
        truth = base.from_standard(truth)[[names.index(name) for name in law.estimate_names]]
    dt = 1.0 / rate
    q, qd = Q_START.copy(), np.zeros(6)
    kinetic, V, dissipation = [], [], []
    for k in range(int(duration * rate)):
        q_des, qd_des, qdd_des = quintic(k * dt)
        s = qd - qd_des + lam * (q - q_des)
        error = law.estimates - truth
        kinetic.append(0.5 * s @ plant.mass_matrix(q) @ s)
        V.append(kinetic[-1] + 0.5 * error @ (error / gamma))
        dissipation.append(kd * s @ s)
        q, qd = rk4_step(plant, q, qd, law.compute(q, qd, q_des, qd_des, qdd_des, dt), dt)
    return np.array(kinetic), np.array(V), np.array(dissipation), dt


@pytest.mark.parametrize("adapt", ["payload", "all"])
def test_lyapunov_function_falls_as_the_proof_says_up_to_the_discretisation_error(adapt):
    residuals = []
    for rate in (1000.0, 2000.0):
        kinetic, V, dissipation, dt = lyapunov_run(adapt, rate)
        # dV/dt = -s'K_D s: what V does beyond that over one step is the discretisation's
        residual = np.diff(V) + 0.5 * dt * (dissipation[1:] + dissipation[:-1])
        residuals.append(np.abs(residual).max())
        assert V.max() <= V[0] + 10 * residuals[-1]      # never grows beyond that error
        assert np.sum(np.maximum(np.diff(V), 0.0)) < 0.02 * V[0]
        # s -> 0 (the tracking converges); π̃ only where this one motion excites the parameters
        assert kinetic.max() > 1e3 * kinetic[-1] and V[-1] < 0.5 * V[0]
    # the residual is the step's error: O(dt^2), a quarter at twice the rate
    assert residuals[1] < 0.35 * residuals[0]


def noisy_hold(dead_zone, duration=20.0, noise=(2e-5, 1e-3)):
    """Holding Q_START with the tool, measurements noisy, from the model's parameters: the estimates
    every second."""
    plant = NO_FRICTION.with_payload(TOOL["mass"], com=TOOL["com"])
    law = AdaptiveComputedTorque(NO_FRICTION, {"dead_zone": dead_zone, "friction": False})
    rng = np.random.default_rng(1)
    q, qd, z, dt = Q_START.copy(), np.zeros(6), np.zeros(6), 1e-3
    estimates, worst = [], 0.0
    for k in range(int(duration / dt)):
        measured = q + rng.normal(0.0, noise[0], 6), qd + rng.normal(0.0, noise[1], 6)
        q, qd = rk4_step(plant, q, qd, law.compute(*measured, Q_START, z, z, dt), dt)
        if k % 1000 == 999:
            estimates.append(law.estimates)
            worst = max(worst, np.abs(q - Q_START).max()) if k > 2000 else worst
    return np.array(estimates), worst


def test_with_noise_the_dead_zone_keeps_the_estimates_bounded():
    """Velocity noise correlates with the q̈_r = q̈_d − Λė of the inertia columns, so without a dead
    zone the inertia estimates climb for as long as the arm holds (linearly, without bound); with
    the dead zone above the noise on s (3σ: σ_s² = σ_v² + (Λσ_q)²) they stay put, the mass where the
    tool's weight put it, and the arm within 004's bound."""
    sigma_s = np.hypot(1e-3, 10.0 * 2e-5)
    with_dead_zone, worst = noisy_hold(3.0 * sigma_s)
    without, _ = noisy_hold(0.0)
    inertia, inertia_without = with_dead_zone[:, 4:], without[:, 4:]     # after 5 s, to the end
    drift = np.abs(inertia[-1] - inertia[4]).max()
    drift_without = np.abs(inertia_without[-1] - inertia_without[4]).max()
    # the tool's weight learnt and kept: its mass within 10 g all along
    assert np.abs(with_dead_zone[4:, 0] - (NO_FRICTION.links[-1].mass + 2.0)).max() < 0.01
    assert drift < 5e-4 and worst < 4.26e-4
    assert drift_without > 20 * drift
    # without: a steady climb of the inertias, the second half as much as the first
    total = inertia_without.sum(axis=1)
    assert total[-1] - total[11] > 0.5 * (total[11] - total[4]) > 0.0


@pytest.mark.parametrize("delay", [0, 2])
def test_defaults_learn_the_tool_in_one_pass_with_up_to_two_samples_of_loop_delay(delay):
    """004's motion there and back twice against the PUMA carrying the tool, the law at 1 kHz with
    its defaults, each command applied ``delay`` samples late (a loop that is not step-locked):
    from the second pass on every joint is within 004's bound."""
    plant = NO_FRICTION.with_payload(TOOL["mass"], com=TOOL["com"])
    law = AdaptiveComputedTorque(NO_FRICTION, {"friction": False})
    q, qd, dt = Q_START.copy(), np.zeros(6), 1e-3
    queue, worst = [np.zeros(6)] * delay, []
    for _ in range(2):
        error = np.zeros(6)
        for sign in (1.0, -1.0):
            for k in range(4000):                  # 3 s of motion, 1 s held
                q_des, qd_des, qdd_des = quintic(k * dt)
                if sign < 0:                        # the way back
                    q_des, qd_des, qdd_des = Q_START + Q_GOAL - q_des, -qd_des, -qdd_des
                queue.append(law.compute(q, qd, q_des, qd_des, qdd_des, dt).copy())
                error = np.maximum(error, np.abs(q_des - q))
                q, qd = rk4_step(plant, q, qd, queue.pop(0), dt)
        worst.append(error.max())
    assert worst[0] > 4.26e-4 > worst[1], worst
