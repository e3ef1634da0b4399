"""Task-space computed-torque control of the Stewart platform without ROS: the core (ForceLoop in
control computed_torque, a fake clock) against the platform's own forward dynamics as the plant
(stewart.plant, RK4), sampled as the node samples: measure the legs, evaluate, hold the forces.

With a perfect model the law makes the error obey e'' + Kv e' + Kp e = 0 on every task axis; the
sampled loop follows that closed form up to a deviation of first order in the sample period. A
payload the controller does not know leaves the static error its closed form predicts. Missing,
stale or malformed measurements withhold or are rejected, as every other input of the node."""
import warnings
from pathlib import Path

import numpy as np
import pytest
from stewart_cases import GOOD

from robodyn_ros.stewart import StewartPlatform
from robodyn_ros.spatial import rotations
from robodyn_ros.stewart.force_loop import Forces, ForceLoop, Idle, Level, Limits, Withheld
from robodyn_ros.stewart.plant import SimulatedPlatform, StepError, with_payload
from robodyn_ros.stewart.tracking import Gains, estimate

CONFIG = Path(__file__).resolve().parents[1] / "config" / "stewart_dasgupta_realisable.yaml"
START = np.array([0.1, 0.0, 0.4]), rotations.rpy_matrix([0.0, 0.0, -0.2])   # Path I's start
LIMITS = Limits(condition_warning=1e3, condition_limit=1e4, force_limit=0.0,
                quaternion_tolerance=1e-3)


@pytest.fixture(scope="module")
def sp():
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # realisable: no warning
        return StewartPlatform.from_yaml(CONFIG)


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def closed_loop(model, plant, period, duration, kp=100.0, kv=20.0, target=None):
    """Run the sampled loop; returns the times and the true errors (t_d - t, log(R_d R^T))."""
    clock = Clock()
    loop = ForceLoop(model, LIMITS, clock, control="computed_torque", gains=Gains(kp, kv))
    position, rotation = target
    assert loop.setpoint(position, rotations.matrix_quaternion(rotation)) is None
    errors = []
    for _ in range(int(round(duration / period))):
        assert loop.measure(*plant.legs()) is None
        evaluation = loop.evaluate()
        assert isinstance(evaluation, Forces), evaluation
        errors.append(np.concatenate([position - plant.position,
                                      rotations.log_so3(rotation @ plant.rotation.T)]))
        plant.step(evaluation.result.forces)
        clock.t += period
    return np.arange(len(errors)) * period, np.array(errors)


def second_order_step(e0, kp, kv, t):
    """e(t) of e'' + kv e' + kp e = 0 from e(0) = e0, e'(0) = 0 (closed form, per axis)."""
    out = np.empty((len(t), len(e0)))
    for j in range(len(e0)):
        disc = kv[j] ** 2 - 4 * kp[j] + 0j
        if abs(disc) < 1e-12:   # a double root -kv/2
            lam = -kv[j] / 2
            out[:, j] = e0[j] * (1 - lam * t) * np.exp(lam * t)
        else:
            l1, l2 = (-kv[j] + np.sqrt(disc)) / 2, (-kv[j] - np.sqrt(disc)) / 2
            c1 = -l2 * e0[j] / (l1 - l2)   # c1 + c2 = e0, l1 c1 + l2 c2 = 0
            out[:, j] = (c1 * np.exp(l1 * t) + (e0[j] - c1) * np.exp(l2 * t)).real
    return out


def step_target(dp=(0.01, -0.005, 0.008), angle=0.02, axis=(1.0, 2.0, 3.0)):
    axis = np.asarray(axis) / np.linalg.norm(axis)
    phi = angle * axis
    return (START[0] + dp, rotations.exp_so3(phi) @ START[1]), np.concatenate([dp, phi])


def test_perfect_model_errors_follow_the_closed_form_to_first_order_in_the_period(sp):
    # a step in all six axes, translations under-, critically and over-damped; the rotation
    # about one fixed axis with the same gains about every axis stays about that axis, which
    # keeps the rate of log(R_d R^T) exactly omega_d - omega
    kp = np.array([100.0, 144.0, 64.0, 100.0, 100.0, 100.0])
    kv = np.array([20.0, 12.0, 25.0, 15.0, 15.0, 15.0])
    target, e0 = step_target()
    deviations = []
    for period in (0.002, 0.001):
        plant = SimulatedPlatform(sp, *START, dt=period)
        t, e = closed_loop(sp, plant, period, 0.8, kp, kv, target)
        deviations.append(np.abs(e - second_order_step(e0, kp, kv, t)).max(axis=0))
        assert np.abs(e[-1]).max() < 0.1 * np.abs(e0).max()   # it did converge
    coarse, fine = deviations
    assert fine.max() < 0.02 * np.abs(e0).max(), fine   # ~ omega_n T: the hold
    ratio = coarse / fine
    assert np.all((ratio > 1.7) & (ratio < 2.3)), ratio   # first order in the period: the hold


def test_universal_legs_obey_the_same_error_dynamics(sp):
    import dataclasses
    universal = dataclasses.replace(sp, leg_model="universal")
    target, e0 = step_target()
    plant = SimulatedPlatform(universal, *START, dt=0.001)
    t, e = closed_loop(universal, plant, 0.001, 0.5, target=target)
    closed_form = second_order_step(e0, np.full(6, 100.0), np.full(6, 20.0), t)
    assert np.abs(e - closed_form).max() < 0.01 * np.abs(e0).max()


def test_an_unknown_payload_leaves_the_static_error_its_closed_form_predicts(sp):
    # at rest the law's M_F Kp e must carry the payload's extra static forces:
    # e = M_F^-1 (F_b,plant - F_b,model) / Kp, both biases at zero acceleration and velocity
    loaded = with_payload(sp, 5.0, [0.05, -0.05, 0.02])
    target = START
    plant = SimulatedPlatform(loaded, *START, dt=0.002)
    t, e = closed_loop(sp, plant, 0.002, 2.0, target=target)
    pose = (plant.position, plant.rotation, np.zeros(3), np.zeros(3))
    model, actual = sp.forward_dynamics(*pose, np.zeros(6)), loaded.forward_dynamics(*pose,
                                                                                     np.zeros(6))
    predicted = np.linalg.solve(model.actuator_mass_matrix,
                                actual.bias_forces - model.bias_forces) / 100.0
    assert np.abs(e[-1] - predicted).max() < 0.02 * np.abs(predicted).max(), (e[-1], predicted)
    assert 1e-3 < np.abs(e).max() < 2 * np.abs(predicted).max()   # bounded, and not zero


def test_the_measured_state_is_the_one_whose_legs_were_measured(sp):
    g = GOOD
    ik = sp.inverse_kinematics(g["t"], g["R"], g["v"], g["w"])
    guess = g["t"] + [0.01, -0.01, 0.005], rotations.exp_so3([0.01, 0.02, -0.01]) @ g["R"]
    measured = estimate(sp, ik.lengths, ik.rates, *guess)
    np.testing.assert_allclose(measured.position, g["t"], atol=1e-12)
    np.testing.assert_allclose(measured.rotation, g["R"], atol=1e-12)
    np.testing.assert_allclose(measured.linear_velocity, g["v"], atol=1e-12)
    np.testing.assert_allclose(measured.angular_velocity, g["w"], atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 0.3, 2.0, np.pi - 1e-6])
def test_log_so3_inverts_the_exponential(angle):
    phi = angle * np.array([2.0, -1.0, 2.0]) / 3.0
    np.testing.assert_allclose(rotations.log_so3(rotations.exp_so3(phi)), phi, atol=1e-9)


def _loop(sp, clock, **limits):
    loop = ForceLoop(sp, LIMITS.replace(limits), clock, control="computed_torque",
                     gains=Gains(100.0, 20.0), measurement_timeout=0.05)
    assert loop.setpoint(START[0], rotations.matrix_quaternion(START[1])) is None
    return loop


def test_without_a_fresh_measurement_forces_are_withheld_and_resume(sp):
    clock = Clock()
    loop = _loop(sp, clock)
    first = loop.evaluate()
    assert isinstance(first, Withheld) and "no leg measurement yet" in first.reason
    lengths, rates = SimulatedPlatform(sp, *START, dt=0.001).legs()
    assert loop.measure(lengths, rates) is None
    assert isinstance(loop.evaluate(), Forces)
    clock.t = 0.06
    stale = loop.evaluate()
    assert isinstance(stale, Withheld) and stale.level is Level.ERROR
    assert "0.06 s old" in stale.reason and "measurement_timeout 0.05" in stale.reason
    assert loop.measurement_stale()
    assert loop.measure(lengths[::-1], rates[::-1], [f"leg{i}" for i in range(6, 0, -1)]) is None
    assert isinstance(loop.evaluate(), Forces) and not loop.measurement_stale()


def test_the_reference_is_sampled_when_the_legs_were_measured_not_when_handled(sp):
    """A measurement stamped t is answered against the reference at t even when the clock has
    moved on (its /clock message handled first): the force is that of a loop whose clock reads t.
    Unstamped, it is taken as measured on arrival."""
    from robodyn_ros.apps.demos.stewart import path_i
    knots = path_i()
    plant = SimulatedPlatform(sp, *START, dt=0.001)
    lengths, rates = plant.legs()
    forces = {}
    for name, clock_time, stamp in (("late clock", 1.01, 1.0), ("on time", 1.0, 0.0),
                                    ("late, unstamped", 1.01, 0.0)):
        clock = Clock()
        loop = _loop(sp, clock)
        assert loop.trajectory(*knots, start=0.5) is None
        clock.t = clock_time
        assert loop.measure(lengths, rates, stamp=stamp) is None
        evaluation = loop.evaluate()
        assert isinstance(evaluation, Forces), evaluation
        forces[name] = evaluation.result.forces
    np.testing.assert_allclose(forces["late clock"], forces["on time"], rtol=1e-12)
    assert np.abs(forces["late, unstamped"] - forces["on time"]).max() > 1e-3 * np.abs(
        forces["on time"]).max()


def test_malformed_measurements_are_rejected_and_the_last_one_kept(sp):
    clock = Clock()
    loop = _loop(sp, clock)
    lengths, rates = SimulatedPlatform(sp, *START, dt=0.001).legs()
    assert loop.measure(lengths, rates) is None
    for bad, why in [((lengths[:5], rates), "needs 6 positions"),
                     ((lengths, rates[:4]), "needs 6 velocities"),
                     ((lengths, np.r_[rates[:5], np.nan]), "leg rates not finite"),
                     ((np.r_[lengths[:5], np.inf], rates), "not finite"),
                     ((-lengths, rates), "must be positive"),
                     ((lengths, rates, ["leg1"] * 6), "names must be")]:
        rejection = loop.measure(*bad)
        assert rejection is not None and rejection.level is Level.WARN, bad
        assert rejection.what == "leg measurement" and why in rejection.reason
    np.testing.assert_array_equal(loop.measurement[0], lengths)
    assert isinstance(loop.evaluate(), Forces)


def test_unreachable_lengths_withhold_with_the_forward_kinematics_reason(sp):
    clock = Clock()
    loop = _loop(sp, clock)
    assert loop.measure(np.full(6, 5.0), np.zeros(6)) is None   # no pose has six legs of 5 m
    evaluation = loop.evaluate()
    assert isinstance(evaluation, Withheld) and "forward kinematics" in evaluation.reason


def test_forces_beyond_the_limit_are_withheld_never_clipped(sp):
    # a 2 cm error asks Kp e = 2 m/s^2 more than holding needs: beyond a limit just above holding
    clock = Clock()
    plant = SimulatedPlatform(sp, *START, dt=0.001)
    hold = sp.inverse_dynamics(*START, None, None, None, None).forces
    loop = _loop(sp, clock, force_limit=float(np.abs(hold).max()) * 1.01)
    assert loop.measure(*plant.legs()) is None
    assert isinstance(loop.evaluate(), Forces)
    assert loop.setpoint(START[0] + [0.0, 0.0, 0.02],
                         rotations.matrix_quaternion(START[1])) is None
    evaluation = loop.evaluate()
    assert isinstance(evaluation, Withheld) and "beyond force_limit" in evaluation.reason


def test_no_target_is_idle_and_feedforward_ignores_measurements(sp):
    clock = Clock()
    loop = ForceLoop(sp, LIMITS, clock, control="computed_torque", gains=Gains(100.0, 20.0))
    assert isinstance(loop.evaluate(), Idle)
    feedforward = ForceLoop(sp, LIMITS, clock)
    state = (START[0] + 0.01, START[1])
    assert feedforward.setpoint(state[0], rotations.matrix_quaternion(state[1])) is None
    assert feedforward.measure(*SimulatedPlatform(sp, *START, dt=0.001).legs()) is None
    np.testing.assert_allclose(feedforward.evaluate().result.forces,
                               sp.inverse_dynamics(*state, None, None, None, None).forces)


@pytest.mark.parametrize("kp, kv", [(0.0, 20.0), (100.0, -1.0), ([1.0] * 5, 1.0),
                                    (float("nan"), 1.0), (True, 1.0)])
def test_gains_must_be_positive_and_one_or_six(kp, kv):
    with pytest.raises(ValueError, match="positive finite"):
        Gains(kp, kv)


def test_computed_torque_needs_gains_and_a_known_mode(sp):
    with pytest.raises(ValueError, match="control must be one of"):
        ForceLoop(sp, LIMITS, Clock(), control="computed_torque")
    with pytest.raises(ValueError, match="control must be one of"):
        ForceLoop(sp, LIMITS, Clock(), control="pid", gains=Gains(1.0, 1.0))


def test_the_plant_clamps_at_its_limit_and_holds_its_state_when_a_step_fails(sp):
    plant = SimulatedPlatform(sp, *START, dt=0.001, force_limit=100.0)
    np.testing.assert_array_equal(plant.applied([150.0, -150.0, 50.0, 0.0, 0.0, 0.0]),
                                  [100.0, -100.0, 50.0, 0.0, 0.0, 0.0])
    plant.step(np.full(6, 150.0))
    assert plant.clamped == 1
    before = (plant.position.copy(), plant.rotation.copy(), plant.linear_velocity.copy())
    with pytest.raises(StepError):
        plant.step([np.nan] * 6)
    for a, b in zip(before, (plant.position, plant.rotation, plant.linear_velocity)):
        np.testing.assert_array_equal(a, b)


def test_the_measurement_noise_is_seeded(sp):
    a, b = (SimulatedPlatform(sp, *START, dt=0.001, seed=3, noise=(1e-4, 1e-3)) for _ in range(2))
    exact = a.legs()
    first = a.measured_legs()
    np.testing.assert_array_equal(first[0], b.measured_legs()[0])
    assert 0 < np.abs(first[0] - exact[0]).max() < 1e-3


def test_a_payload_moves_the_centre_of_mass_and_adds_its_inertia_about_any_point(sp):
    mass, com = 5.0, np.array([0.05, -0.05, 0.02])
    loaded = with_payload(sp, mass, com)

    def about_origin(m, c, inertia):
        return inertia + m * (c @ c * np.eye(3) - np.outer(c, c))

    assert loaded.M == sp.M + mass
    np.testing.assert_allclose(loaded.M * loaded.R0, sp.M * sp.R0 + mass * com)
    np.testing.assert_allclose(about_origin(loaded.M, loaded.R0, loaded.I_p),
                               about_origin(sp.M, sp.R0, sp.I_p) + about_origin(mass, com, 0.0),
                               atol=1e-12)


def test_on_path_i_the_sampled_law_leaves_the_error_of_its_hold(sp):
    # 100 Hz, perfect model: the largest error per axis is the quasi-static answer of Kp e to the
    # hold's lag, M_F^-1 F' T / (2 Kp) (tracking.hold_error, from the model alone); 4 s of the
    # path hold every axis' largest (the rotation's blend ends at 1 s, the translation's at 3.54 s)
    from robodyn_ros.apps.stewart_path import PAPER_PATHS
    from robodyn_ros.spatial.trajectory import PoseTrajectory
    from robodyn_ros.stewart.tracking import hold_error
    from robodyn_ros.apps.demos.stewart import path_i

    period, knots = 0.01, path_i()
    clock = Clock()
    loop = ForceLoop(sp, LIMITS, clock, control="computed_torque", gains=Gains(100.0, 20.0))
    assert loop.trajectory(*knots, start=0.5) is None
    reference = PoseTrajectory(*knots)
    plant = SimulatedPlatform(sp, knots[1][0], rotations.quaternion_matrix(knots[2][0]),
                              dt=period, substeps=5)
    errors = []
    for _ in range(450):
        assert loop.measure(*plant.legs()) is None
        evaluation = loop.evaluate()
        desired = reference.sample(clock.t - 0.5)
        errors.append(np.r_[desired.position - plant.position,
                            rotations.log_so3(desired.rotation @ plant.rotation.T)])
        plant.step(evaluation.result.forces)
        clock.t += period
    observed = np.abs(errors).max(axis=0)
    predicted = hold_error(sp, PAPER_PATHS["I"][0], period, 100.0)
    assert np.all((observed > 0.85 * predicted) & (observed < 1.15 * predicted)), \
        observed / predicted
