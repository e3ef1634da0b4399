"""Control laws: closed-loop behaviour checked through the model's forward dynamics, the other laws
against their defining formulas written out here, gain validation and plugin discovery."""
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.control.law import ControlLaw, UnknownLawError, available_laws, load_law
from robodyn_ros.control import laws
from robodyn_ros.control.cycle_steps import SATURATE
from robodyn_ros.control.laws import ComputedTorque, Feedforward, GravityCompensation, PDGravity
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.plumbing.kernels import interpreted

PUMA_YAML = Path(__file__).resolve().parents[1] / "config" / "puma560_dh.yaml"
# A spatial arm with a prismatic joint, armature and asymmetric friction on every joint: the terms
# a law may forget to pass through.
ARM_LINKS = [
    dict(name="waist", joint="revolute", a=0.1, alpha=np.pi / 2, d=0.4, mass=4.0,
         com=[-0.05, 0.0, 0.02], inertia=[0.05, 0.06, 0.04, 0.001, 0.0, 0.002],
         armature=0.3, viscous=0.8, coulomb=[1.2, 0.9]),
    dict(name="shoulder", joint="revolute", a=0.5, alpha=0.0, d=0.1, mass=3.0,
         com=[-0.25, 0.01, 0.0], inertia=[0.01, 0.08, 0.08, 0.0, 0.0, 0.0],
         armature=0.2, viscous=0.5, coulomb=[0.7, 1.1]),
    dict(name="slide", joint="prismatic", a=0.0, alpha=0.0, theta=np.pi / 2, mass=1.5,
         com=[0.0, 0.0, -0.1], inertia=[0.02, 0.02, 0.005, 0.0, 0.0, 0.0],
         armature=0.1, viscous=2.0, coulomb=[3.0, 2.0]),
]
ARM = RobotModel.from_dh(ARM_LINKS, name="test_arm")
PUMA = RobotModel.from_yaml(PUMA_YAML)
MODELS = {"test_arm": ARM, "puma560": PUMA}
RNG = np.random.default_rng(2024)


def random_spd(n, low, high):
    """A symmetric positive definite matrix with eigenvalues in [low, high]."""
    Q, _ = np.linalg.qr(RNG.normal(size=(n, n)))
    return Q @ np.diag(RNG.uniform(low, high, n)) @ Q.T


def random_state(n):
    """q, q̇ (all non-zero, so every Coulomb term is active) and a desired q, q̇, q̈."""
    q, q_des = RNG.uniform(-2, 2, n), RNG.uniform(-2, 2, n)
    qd, qd_des = RNG.choice([-1, 1], n) * RNG.uniform(0.1, 2, n), RNG.uniform(-2, 2, n)
    return q, qd, q_des, qd_des, RNG.uniform(-3, 3, n)


def gains(kind, n):
    if kind == "per_joint":
        kp, kd = RNG.uniform(50, 150, n), RNG.uniform(10, 30, n)
        return {"kp": kp, "kd": kd}, np.diag(kp), np.diag(kd)
    Kp, Kd = random_spd(n, 50, 150), random_spd(n, 10, 30)
    return {"kp": Kp, "kd": Kd}, Kp, Kd


# ------------------------------------------------------------------ computed torque (004 eq. 4.1)

@pytest.mark.parametrize("model", MODELS.values(), ids=MODELS.keys())
@pytest.mark.parametrize("kind", ["per_joint", "matrix"])
def test_computed_torque_closes_the_loop_on_the_error_dynamics(model, kind):
    # With a perfect model the arm's acceleration under τ is q̈_d + Kv ė + Kp e, i.e.
    # ë + Kv ė + Kp e = 0 (eq. 4.3): forward dynamics (Cholesky of M, friction, armature) is an
    # independent route back from τ to q̈.
    params, Kp, Kd = gains(kind, model.dof)
    law = ComputedTorque(model, params)
    for _ in range(20):
        q, qd, q_des, qd_des, qdd_des = random_state(model.dof)
        tau = law.compute(q, qd, q_des, qd_des, qdd_des, 0.001)
        qdd = model.forward_dynamics(q, qd, tau)
        expected = qdd_des + Kd @ (qd_des - qd) + Kp @ (q_des - q)
        np.testing.assert_allclose(qdd, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_computed_torque_without_friction_leaves_the_friction_to_the_loop():
    law = ComputedTorque(ARM, {"kp": 100.0, "kd": 20.0, "friction": False})
    q, qd, q_des, qd_des, qdd_des = random_state(ARM.dof)
    tau = law.compute(q, qd, q_des, qd_des, qdd_des, 0.001)
    qdd = ARM.forward_dynamics(q, qd, tau, friction=False)
    np.testing.assert_allclose(qdd, qdd_des + 20.0 * (qd_des - qd) + 100.0 * (q_des - q),
                               rtol=1e-9, atol=1e-9)
    assert not np.allclose(ARM.forward_dynamics(q, qd, tau), qdd)  # friction mattered here


def test_computed_torque_integral_enters_the_commanded_acceleration():
    ki, dt, steps = np.array([5.0, 10.0, 2.0]), 0.01, 4
    law = ComputedTorque(ARM, {"kp": 100.0, "kd": 20.0, "ki": ki, "integral_limit": 10.0})
    q, qd, q_des, qd_des, qdd_des = random_state(ARM.dof)
    for _ in range(steps):
        tau = law.compute(q, qd, q_des, qd_des, qdd_des, dt)
    e = q_des - q
    expected = qdd_des + 20.0 * (qd_des - qd) + 100.0 * e + ki * (steps * dt * e)
    np.testing.assert_allclose(ARM.forward_dynamics(q, qd, tau), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("model", MODELS.values(), ids=MODELS.keys())
@pytest.mark.parametrize("kind", ["per_joint", "matrix"])
@pytest.mark.parametrize("friction", [True, False])
def test_the_loops_one_call_equals_compute_then_saturate(model, kind, friction):
    """saturating (the control loop's path) against compute and the loop's saturate_into,
    bit for bit: the torque, the clamped efforts in joints order, the integral it carries on; and
    the kernel's source, interpreted, the same."""
    params = {**gains(kind, model.dof)[0], "ki": 3.0, "integral_limit": 0.05, "friction": friction}
    source = interpreted(laws)["computed_torque_into"]
    n = model.dof
    index = RNG.permutation(n)
    one, two, three = (ComputedTorque(model, params) for _ in range(3))
    for step in range(5):
        q, qd, *reference = random_state(n)
        reference = np.array(reference)
        tau = one.compute(q, qd, *reference, 0.01)
        limit = np.abs(tau) * np.where(np.arange(n) % 2, 0.5, 1.5)   # every other one clamped
        expected = np.empty(n)
        clamped = SATURATE.call(tau, limit, index, expected)
        effort = np.empty(n)
        assert two.saturating(limit, index, effort)(q, qd, reference, 0.01) == clamped
        np.testing.assert_array_equal(two.torque, tau)
        np.testing.assert_array_equal(effort, expected)
        np.testing.assert_array_equal(two.integral, one.integral)
        assert clamped == n // 2
        mode = three._mode
        interpreted_effort = np.empty(n)
        assert source(model.params, mode, three._gains, three._full, three._integral,
                      three._limit, three._integrates, three._work, three._v, three.torque, limit,
                      index, interpreted_effort, q, qd, reference, 0.01) == clamped
        np.testing.assert_allclose(interpreted_effort, expected, rtol=1e-12, atol=1e-12)
    q[0] = np.nan
    assert two.saturating(limit, index, effort)(q, qd, reference, 0.01) == -1


# ------------------------------------------------------------------ PD + gravity, feedforward

@pytest.mark.parametrize("model", MODELS.values(), ids=MODELS.keys())
def test_pd_gravity_at_rest_on_the_reference_is_the_gravity_load(model):
    law = PDGravity(model, {"kp": 100.0, "kd": 20.0})
    zero = np.zeros(model.dof)
    for _ in range(5):
        q = RNG.uniform(-2, 2, model.dof)
        tau = law.compute(q, zero, q, zero, RNG.uniform(-3, 3, model.dof), 0.001)
        # held still by τ: forward dynamics gives no acceleration
        np.testing.assert_allclose(model.forward_dynamics(q, zero, tau), 0.0, atol=1e-9)
        np.testing.assert_allclose(tau, model.inverse_dynamics(q, zero, zero), rtol=1e-12)


@pytest.mark.parametrize("kind", ["per_joint", "matrix"])
def test_pd_gravity_is_pd_plus_gravity(kind):
    params, Kp, Kd = gains(kind, PUMA.dof)
    law = PDGravity(PUMA, params)
    q, qd, q_des, qd_des, qdd_des = random_state(PUMA.dof)
    tau = law.compute(q, qd, q_des, qd_des, qdd_des, 0.001)
    zero = np.zeros(PUMA.dof)
    expected = Kp @ (q_des - q) + Kd @ (qd_des - qd) + PUMA.inverse_dynamics(q, zero, zero)
    np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("model", MODELS.values(), ids=MODELS.keys())
def test_feedforward_at_zero_error_is_the_inverse_dynamics_of_the_reference(model):
    law = Feedforward(model, {"kp": 100.0, "kd": 20.0})
    _, _, q_des, qd_des, qdd_des = random_state(model.dof)
    tau = law.compute(q_des, qd_des, q_des, qd_des, qdd_des, 0.001)
    # the reference's own motion comes out of forward dynamics
    np.testing.assert_allclose(model.forward_dynamics(q_des, qd_des, tau), qdd_des,
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", ["per_joint", "matrix"])
def test_feedforward_adds_pd_on_the_error(kind):
    params, Kp, Kd = gains(kind, ARM.dof)
    law = Feedforward(ARM, params)
    q, qd, q_des, qd_des, qdd_des = random_state(ARM.dof)
    tau = law.compute(q, qd, q_des, qd_des, qdd_des, 0.001)
    feedforward = ARM.forward_dynamics(q_des, qd_des, np.zeros(ARM.dof))  # q̈ under zero effort
    # M(q_d) (q̈_d - q̈_0) is the model term NE(q_d, q̇_d, q̈_d), rebuilt from M and forward dynamics
    model_term = ARM.mass_matrix(q_des) @ (qdd_des - feedforward)
    np.testing.assert_allclose(tau, model_term + Kp @ (q_des - q) + Kd @ (qd_des - qd),
                               rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ gravity compensation

def test_gravity_compensation_at_rest_is_the_gravity_load():
    law = GravityCompensation(ARM)
    q, zero = RNG.uniform(-2, 2, ARM.dof), np.zeros(ARM.dof)
    tau = law.compute(q, zero)
    np.testing.assert_allclose(ARM.forward_dynamics(q, zero, tau), 0.0, atol=1e-9)


def test_gravity_compensation_cancels_gravity_and_friction_when_moving():
    # Outside the Coulomb band the arm under τ moves as it would with no gravity and no friction.
    free = RobotModel.from_dh(ARM_LINKS, gravity=(0.0, 0.0, 0.0))
    law = GravityCompensation(ARM, {"coulomb_velocity": 0.05})
    for _ in range(5):
        q, qd, *_ = random_state(ARM.dof)
        tau = law.compute(q, qd)
        np.testing.assert_allclose(ARM.forward_dynamics(q, qd, tau),
                                   free.forward_dynamics(q, qd, np.zeros(ARM.dof), friction=False),
                                   rtol=1e-9, atol=1e-9)


def test_gravity_compensation_ramps_coulomb_within_the_band():
    band = 0.05
    law = GravityCompensation(ARM, {"coulomb_velocity": band})
    q = RNG.uniform(-2, 2, ARM.dof)
    g = law.compute(q, np.zeros(ARM.dof))
    qd = np.array([0.5, -0.25, 0.0]) * band  # half and quarter of the band, and at rest
    expected = np.array([0.5 * 1.2, -0.25 * 1.1, 0.0]) + ARM.viscous * qd
    np.testing.assert_allclose(law.compute(q, qd) - g, expected, rtol=1e-12, atol=1e-12)


def test_gravity_compensation_band_zero_is_the_model_friction_step():
    law = GravityCompensation(ARM, {"coulomb_velocity": 0.0})
    q, tiny = np.zeros(ARM.dof), np.array([1e-9, -1e-9, 1e-9])
    step = law.compute(q, tiny) - law.compute(q, np.zeros(ARM.dof))
    np.testing.assert_allclose(step, [1.2, -1.1, 3.0], atol=1e-6)


def test_gravity_compensation_without_friction():
    law = GravityCompensation(ARM, {"friction": False})
    q, qd, *_ = random_state(ARM.dof)
    zero = np.zeros(ARM.dof)
    np.testing.assert_allclose(law.compute(q, qd), ARM.inverse_dynamics(q, zero, zero), rtol=1e-12)


# ------------------------------------------------------------------ integral and anti-windup

def test_integral_is_clamped_and_unwinds_at_once():
    limit = np.array([0.05, 0.1, 0.02])
    ki = np.array([30.0, 20.0, 50.0])
    law = PDGravity(ARM, {"kp": 100.0, "kd": 20.0, "ki": ki, "integral_limit": limit})
    q, zero, dt = RNG.uniform(-1, 1, ARM.dof), np.zeros(ARM.dof), 0.01
    e = np.array([0.3, -0.4, 0.2])
    g = ARM.inverse_dynamics(q, zero, zero)
    for step in range(1, 200):
        tau = law.compute(q, zero, q + e, zero, zero, dt)
        integral = np.clip(step * dt * e, -limit, limit)
        np.testing.assert_allclose(law.integral, integral, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(tau - g, 100.0 * e + ki * integral, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(law.integral, limit * np.sign(e))  # saturated, not 2 rad s wound up
    # the error reverses: the integral leaves the clamp on the very next step
    law.compute(q, zero, q - e, zero, zero, dt)
    np.testing.assert_allclose(law.integral, limit * np.sign(e) - dt * e, rtol=1e-12)
    law.reset()
    np.testing.assert_array_equal(law.integral, 0.0)


def test_matrix_integral_gain_couples_the_joints():
    Ki = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 2.0]])
    law = Feedforward(ARM, {"kp": 100.0, "kd": 20.0, "ki": Ki, "integral_limit": 1.0})
    q, qd, q_des, qd_des, qdd_des = random_state(ARM.dof)
    tau = law.compute(q, qd, q_des, qd_des, qdd_des, 0.02)
    e = q_des - q
    expected = (ARM.inverse_dynamics(q_des, qd_des, qdd_des) + 100.0 * e + 20.0 * (qd_des - qd)
                + Ki @ np.clip(0.02 * e, -1.0, 1.0))
    np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-9)


# ------------------------------------------------------------------ parameter validation

BAD_PARAMS = {
    "kp has shape \\(2,\\)": dict(kp=[100.0, 100.0]),
    "kd has shape \\(3, 2\\)": dict(kd=np.ones((3, 2))),
    "kp for joint 'shoulder' is -5": dict(kp=[100.0, -5.0, 100.0]),
    "kp for joint 'waist' is 0": dict(kp=[0.0, 100.0, 100.0]),
    "kd for joint 'slide' is -1": dict(kd=[20.0, 20.0, -1.0]),
    "kd for joint 'slide' is 0.*oscillates": dict(kd=[20.0, 20.0, 0.0]),
    "kp matrix is not symmetric": dict(kp=[[100, 1, 0], [0, 100, 0], [0, 0, 100]]),
    "kp matrix is not positive definite": dict(kp=np.diag([100.0, 100.0, 0.0])),
    "kd matrix is not positive semi-definite": dict(kd=np.diag([20.0, -1.0, 20.0])),
    "rank .* undamped": dict(kp=np.eye(3) * 100, kd=np.outer([1, 1, 0], [1, 1, 0]) * 10.0),
    "kp contains NaN": dict(kp=[100.0, np.nan, 100.0]),
    "kd must be numbers": dict(kd="fast"),
    "ki for joint 'waist' is -1": dict(ki=[-1.0, 0.0, 0.0], integral_limit=1.0),
    "integral_limit for joint 'shoulder' is inf": dict(ki=[0.0, 2.0, 0.0],
                                                        integral_limit=[1.0, np.inf, np.inf]),
    "integral_limit must be non-negative": dict(ki=1.0, integral_limit=-0.1),
    "integral_limit must be one number or 3": dict(ki=1.0, integral_limit=[1.0, 1.0]),
    "does not take parameter\\(s\\) \\['kv'\\]": dict(kv=20.0),
    "friction must be true or false": dict(friction="yes"),
}


@pytest.mark.parametrize("law, reason", [
    (law, reason) for law in (ComputedTorque, PDGravity, Feedforward) for reason in BAD_PARAMS
    if set(BAD_PARAMS[reason]) <= set(law.parameters) or "does not take" in reason])
def test_invalid_parameters_are_refused_with_the_reason(law, reason):
    params = {"kp": 100.0, "kd": 20.0, **BAD_PARAMS[reason]}
    with pytest.raises(ValueError, match=reason):
        law(ARM, params)


def test_required_gains_must_be_given():
    with pytest.raises(ValueError, match=r"needs parameter\(s\) \['kd'\]"):
        ComputedTorque(ARM, {"kp": 100.0})


def test_gravity_compensation_parameters():
    with pytest.raises(ValueError, match="does not take"):
        GravityCompensation(ARM, {"kp": 100.0})
    with pytest.raises(ValueError, match="coulomb_velocity must be a finite number >= 0"):
        GravityCompensation(ARM, {"coulomb_velocity": -0.1})


def test_a_coupled_damping_matrix_of_low_rank_can_still_damp_every_mode():
    # 004's condition (c), not "Kv positive definite": Kv = diag(1, 0) with a coupling Kp gives
    # rank [Kv | Kp Kv] = 2, so every error mode is damped and the gains are accepted.
    two = RobotModel.from_dh(ARM_LINKS[:2])
    ComputedTorque(two, {"kp": [[2.0, 1.0], [1.0, 2.0]], "kd": [[1.0, 0.0], [0.0, 0.0]]})
    with pytest.raises(ValueError, match="rank"):  # without the coupling it is not
        ComputedTorque(two, {"kp": [[2.0, 0.0], [0.0, 2.0]], "kd": [[1.0, 0.0], [0.0, 0.0]]})


def test_flat_row_major_matrix_equals_the_nested_matrix():
    Kp = random_spd(ARM.dof, 50, 150)
    q, qd, q_des, qd_des, qdd_des = random_state(ARM.dof)
    nested = ComputedTorque(ARM, {"kp": Kp, "kd": 20.0})
    flat = ComputedTorque(ARM, {"kp": Kp.ravel().tolist(), "kd": 20.0})
    np.testing.assert_array_equal(nested.compute(q, qd, q_des, qd_des, qdd_des, 0.0),
                                  flat.compute(q, qd, q_des, qd_des, qdd_des, 0.0))


def test_every_law_names_its_parameters_and_defaults():
    for cls in (ComputedTorque, PDGravity, Feedforward, GravityCompensation):
        assert set(cls.defaults) <= set(cls.parameters)
        assert all(isinstance(text, str) and text for text in cls.parameters.values())
    assert {"kp", "kd", "ki", "integral_limit", "friction"} == set(ComputedTorque.parameters)
    assert set(GravityCompensation.parameters) == {"friction", "coulomb_velocity"}


# ------------------------------------------------------------------ plugins

SHIPPED = {"computed_torque": ComputedTorque, "pd_gravity": PDGravity,
           "gravity_compensation": GravityCompensation, "feedforward": Feedforward}


def test_shipped_laws_load_by_name():
    assert set(SHIPPED) <= set(available_laws())
    for name, cls in SHIPPED.items():
        assert load_law(name) is cls


def test_unknown_law_lists_the_available_ones():
    with pytest.raises(UnknownLawError, match="unknown control law 'computed_torqe'") as info:
        load_law("computed_torqe")
    for name in SHIPPED:
        assert name in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.fixture
def plugin_distribution(tmp_path, monkeypatch):
    """A distribution installed only for this test, registering two laws as another package
    would in its setup.py: one real, one that is not a ControlLaw."""
    (tmp_path / "damped_hold_law.py").write_text(textwrap.dedent("""
        from robodyn_ros.control.law import ControlLaw

        class DampedHold(ControlLaw):
            parameters = {"damping": "viscous damping injected"}
            defaults = {"damping": 1.0}

            def _configure(self, params):
                self.damping = float(params["damping"])

            def compute(self, q, qd, q_des, qd_des, qdd_des, dt):
                return self.model.gravity_torques(q) - self.damping * qd

        NOT_A_LAW = object()
    """))
    info = tmp_path / "damped_hold_law-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: damped-hold-law\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[robodyn_ros.control_laws]\n"
        "damped_hold = damped_hold_law:DampedHold\n"
        "broken = damped_hold_law:NOT_A_LAW\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("damped_hold_law", None)


def test_a_law_registered_by_another_distribution_loads_by_name(plugin_distribution):
    assert "damped_hold" in available_laws()
    cls = load_law("damped_hold")
    assert issubclass(cls, ControlLaw)
    law = cls(ARM, {"damping": 2.0})
    q, qd, *_ = random_state(ARM.dof)
    zero = np.zeros(ARM.dof)
    np.testing.assert_allclose(law.compute(q, qd, q, zero, zero, 0.0),
                               ARM.inverse_dynamics(q, zero, zero) - 2.0 * qd, rtol=1e-12)
    with pytest.raises(TypeError, match="'broken'.*not a ControlLaw"):
        load_law("broken")
