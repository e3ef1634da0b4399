"""The generalized-momentum observer (control/momentum_observer.py), without DDS.

* Its one pass (p = M q̇, β = Cᵀq̇ − g − τ_f) against Pinocchio's CRBA, Christoffel Coriolis matrix
  and gravity on every shipped and random URDF (prismatic joints included), and the friction
  against the model's.
* A step of external torque τ_ext = Jᵀw (the simulator engine's push, held over each step like the
  torque) on the PUMA: r follows the discrete filter of the applied τ_ext within 1e-6 of τ_ext,
  and within the stated bound Δt² max|β̈|/12 of the continuous observer; held at rest, exactly
  τ_ext (1 − e^(−K_O t)).
* Free motion (the 004 PUMA motion under computed torque, exact model): r stays within that bound.
* The adaptive law's estimates: a payload the law has learned gives r ≈ 0, the nominal model the
  payload's torque; the base-parameter estimates (``adapt: all``) give the same M, C, g.
* MuJoCo as the plant with a Cartesian force on the last body (xfrc_applied): r against the joint
  torque MuJoCo makes of it (mj_applyFT).
"""
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros.control.adaptive import AdaptiveComputedTorque
from robodyn_ros.control.laws import ComputedTorque
from robodyn_ros.control.momentum_observer import MomentumObserver, momentum_terms
from robodyn_ros.control.trajectory import JointTrajectory, TrajectorySampler
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.base_parameters import base_parameters
from robodyn_ros.dynamics.inertial_parameters import standard_parameters
from robodyn_ros.dynamics.regressor import slotine_li_regressor
from robodyn_ros.sim.robodyn_engine import RobodynEngine
from test_dynamics_pinocchio import CASES, IDS, Pin

ROOT = Path(__file__).resolve().parents[1]
PUMA_URDF = ROOT / "urdf" / "puma560.urdf"
DT = 1e-3
Q_START = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])   # the 004 motion (robodyn_ros/arm_loop.py)
Q_GOAL = np.radians([45.0, 30.0, 0.0, 45.0, 60.0, 90.0])
K_O = 50.0


def puma():
    """004's PUMA: rigid bodies and armature, no friction (robodyn_ros/demo.py)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        return RobotModel.from_urdf(PUMA_URDF).scaled(friction=0.0)


@pytest.mark.parametrize("name, xml, model", CASES, ids=IDS)
def test_one_pass_against_pinocchio(name, xml, model):
    oracle = Pin(xml, model)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, qd = rng.uniform(-1.5, 1.5, model.dof), rng.uniform(-2.0, 2.0, model.dof)
        p, beta = momentum_terms(model, q, qd, friction=False)
        pin_q = oracle.q(q)
        C = pin.computeCoriolisMatrix(oracle.model, oracle.data, pin_q, qd).copy()
        M = oracle.crba(q)
        expected_beta = C.T @ qd - oracle.gravity(q)
        scale = max(1.0, np.abs(M @ qd).max(), np.abs(expected_beta).max())
        assert np.abs(p - M @ qd).max() <= 1e-10 * scale
        assert np.abs(beta - expected_beta).max() <= 1e-10 * scale


def test_friction_enters_beta_as_the_models():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        model = RobotModel.from_urdf(PUMA_URDF)          # with the data set's friction
    q, qd = np.full(6, 0.3), np.array([1.0, -1.0, 0.5, -0.5, 0.0, 2.0])
    assert model.coulomb_positive.any() and model.viscous.any()
    _, with_friction = momentum_terms(model, q, qd)
    _, without = momentum_terms(model, q, qd, friction=False)
    np.testing.assert_allclose(without - with_friction, model.friction_torques(qd), atol=1e-12)


def filtered(tau_ext, gain, dt):
    """The discrete form's response to τ_ext held over each step: r_k = a r_(k−1) + (1 − a) τ_(k−1)."""
    a = np.exp(-gain * dt)
    r = np.zeros_like(tau_ext)
    for k in range(1, len(tau_ext)):
        r[k] = a * r[k - 1] + (1.0 - a) * tau_ext[k - 1]
    return r


def trapezoid_bound(beta, dt):
    """Δt² max|β̈| / 12, the trapezoid's error on the mean of β over a step (module docstring of
    control/momentum_observer.py), with β̈ by second differences of β along the run — a mean
    over two steps, which may miss the peak: a factor 2 covers that."""
    beta_ddot = np.diff(beta, 2, axis=0) / dt ** 2
    return 2.0 * dt ** 2 * np.abs(beta_ddot).max(axis=0) / 12.0


def run(model, engine, control, steps, wrench=None, observers=()):
    """The plant ``engine`` from rest at Q_START, ``control(t, q, qd)`` held over each step; returns
    per sample the residual of each observer, τ_ext the engine applied over the step that starts
    there, β of the model, q."""
    q, qd = Q_START.copy(), np.zeros(model.dof)
    for o in observers:
        o.reset(q, qd)
    rs = np.zeros((len(observers), steps + 1, model.dof))
    tau_ext = np.zeros((steps + 1, model.dof))
    betas, qs = np.zeros((steps + 1, model.dof)), np.zeros((steps + 1, model.dof))
    for k in range(steps + 1):
        betas[k], qs[k] = momentum_terms(model, q, qd)[1], q
        tau = control(k * DT, q, qd)
        if wrench is not None:
            tau_ext[k] = model.frame_jacobian(q).T @ wrench      # what Engine.step adds
        if k == steps:
            break
        q, qd = engine.step(q, qd, tau, wrench)
        for j, o in enumerate(observers):
            rs[j, k + 1] = o.step(q, qd, engine.applied(tau), DT)
    return rs, tau_ext, betas, qs


def test_step_of_external_torque_follows_the_discrete_filter():
    """Gravity compensation only: the push moves the arm, τ_ext = Jᵀw changes with q."""
    model = puma()
    wrench = np.array([20.0, -10.0, 15.0, 1.0, 2.0, -1.0])
    observer = MomentumObserver(model, K_O)
    (r,), tau_ext, beta, qs = run(model, RobodynEngine(model, DT),
                                  lambda t, q, qd: model.gravity_torques(q), 300, wrench, [observer])
    assert np.abs(qs[-1] - qs[0]).max() > 0.05            # it did move: β is not constant
    reference = filtered(tau_ext, K_O, DT)
    scale = np.abs(tau_ext).max()
    assert np.abs(r - reference).max() <= 1e-6 * scale
    # against the continuous observer, whose response to a held τ_ext is the same at the samples:
    # only the trapezoid's error on β remains, filtered
    bound = trapezoid_bound(beta, DT)
    assert np.all(np.abs(r - reference).max(axis=0) <= bound + 1e-9 * scale)


def test_held_at_rest_the_residual_is_one_minus_exp():
    """The controller cancels the push (τ = g − Jᵀw): nothing moves, r = τ_ext (1 − e^(−K_O t))."""
    model = puma()
    wrench = np.array([0.0, 30.0, -20.0, 0.0, 0.0, 3.0])
    gains = np.array([5.0, 20.0, 50.0, 80.0, 100.0, 200.0])
    observer = MomentumObserver(model, gains)
    J = model.frame_jacobian(Q_START)
    (r,), tau_ext, _, qs = run(model, RobodynEngine(model, DT),
                               lambda t, q, qd: model.gravity_torques(q) - J.T @ wrench, 200,
                               wrench, [observer])
    assert np.abs(qs - Q_START).max() < 1e-9
    t = np.arange(len(r))[:, None] * DT
    np.testing.assert_allclose(r, tau_ext[0] * (1.0 - np.exp(-gains * t)),
                               atol=1e-9 * np.abs(tau_ext).max())


def motion_004(model, duration=3.0):
    """The 004 reference: a quintic rest-to-rest from Q_START to Q_GOAL (the trajectory sampler)."""
    sampler = TrajectorySampler(model.joint_names, Q_START)
    sampler.set_trajectory(JointTrajectory(model.joint_names, [duration], [Q_GOAL],
                                           [np.zeros(model.dof)], [np.zeros(model.dof)]), 0.0)
    return sampler


def computed_torque(model, sampler):
    law = ComputedTorque(model, {"kp": 100.0, "kd": 20.0})
    return lambda t, q, qd: law.compute(q, qd, *sampler.sample(t), DT).copy()


def test_free_motion_with_the_exact_model_stays_at_the_discretisation_error():
    model = puma()
    observer = MomentumObserver(model, K_O)
    (r,), _, beta, _ = run(model, RobodynEngine(model, DT), computed_torque(model, motion_004(model)),
                           3500, None, [observer])
    bound = trapezoid_bound(beta, DT)
    assert np.all(np.abs(r).max(axis=0) <= bound + 1e-9)
    assert np.abs(r).max() < 1e-5      # N m: what the bound comes to on this motion


def test_a_learned_payload_is_no_collision_the_nominal_model_sees_its_torque():
    nominal = puma()
    plant = nominal.with_payload(2.0, com=(0.0, 0.0, 0.05))
    learned = AdaptiveComputedTorque(nominal, {"adapt": "payload"})
    learned.set_estimates(standard_parameters(plant)[-10 - 4 * 6:-4 * 6])   # last body's 10
    everything = AdaptiveComputedTorque(nominal, {"adapt": "all"})
    base = base_parameters(nominal)
    everything.set_estimates(base.from_standard(standard_parameters(plant))[:everything.estimates.size])
    blind, following, following_all = (MomentumObserver(nominal, K_O) for _ in range(3))
    following.follow(learned)
    following_all.follow(everything)
    rs, _, beta, qs = run(plant, RobodynEngine(plant, DT), computed_torque(plant, motion_004(plant, 1.0)),
                          1600, None, [blind, following, following_all])
    bound = trapezoid_bound(beta, DT)
    for r in rs[1:]:
        assert np.all(np.abs(r).max(axis=0) <= bound + 1e-9)
    # at rest at the goal the nominal model misses the payload's weight: r -> g_nominal − g_plant
    payload_torque = nominal.gravity_torques(qs[-1]) - plant.gravity_torques(qs[-1])
    assert np.abs(payload_torque).max() > 2.0
    np.testing.assert_allclose(rs[0][-1], payload_torque, atol=1e-3 * np.abs(payload_torque).max())


def test_a_payload_the_law_learns_on_line_stops_being_an_external_torque():
    """adaptive_computed_torque drives the arm with an unknown 2 kg payload there and back along
    the 004 motion; from the second pass on, the observer that follows the law's estimates sees
    under 1 % of what the nominal model's observer sees (the payload's weight and inertia)."""
    nominal = puma()
    plant = nominal.with_payload(2.0, com=(0.0, 0.0, 0.05))
    law = AdaptiveComputedTorque(nominal, {"adapt": "payload"})
    blind, following = MomentumObserver(nominal, K_O), MomentumObserver(nominal, K_O)
    following.follow(law)
    engine = RobodynEngine(plant, DT)
    q, qd = Q_START.copy(), np.zeros(6)
    seen = []
    for start, goal in ((Q_START, Q_GOAL), (Q_GOAL, Q_START)):
        sampler = TrajectorySampler(nominal.joint_names, start)
        sampler.set_trajectory(JointTrajectory(nominal.joint_names, [3.0], [goal], [np.zeros(6)],
                                               [np.zeros(6)]), 0.0)
        blind.reset(q, qd)
        following.reset(q, qd)
        peak = np.zeros((2, 6))
        for k in range(3500):
            tau = law.compute(q, qd, *sampler.sample(k * DT), DT).copy()
            q, qd = engine.step(q, qd, tau)
            peak = np.maximum(peak, np.abs([blind.step(q, qd, tau, DT), following.step(q, qd, tau, DT)]))
        seen.append(peak)
    assert law.estimates[0] - nominal.links[-1].mass == pytest.approx(2.0, rel=0.1)   # learnt
    blind_peak, following_peak = seen[1]
    assert blind_peak.max() > 5.0
    assert following_peak.max() < 0.01 * blind_peak.max()


def test_estimates_are_read_as_the_regressor_reads_them():
    """Following a law, p = Y(q, 0, 0, q̇) π̂ − Y(q, 0, 0, 0) π̂ (Y the Slotine–Li regressor, π̂ the
    model's π with the law's estimate) and β is that of the model built from π̂."""
    model = puma()
    pi = standard_parameters(model)
    for adapt in ("payload", "all"):
        law = AdaptiveComputedTorque(model, {"adapt": adapt})
        law.set_estimates(law.estimates * np.linspace(1.5, 0.6, law.estimates.size))
        observer = MomentumObserver(model, K_O)
        observer.follow(law)
        if adapt == "payload":
            estimate = pi.copy()
            estimate[-10 - 24:-24] = law.estimates
        else:   # a standard π with those base parameters: base columns set, dependent ones zero
            base = base_parameters(model)
            estimate = np.zeros_like(pi)
            estimate[base.columns] = base.from_standard(pi)
            estimate[base.columns[:law.estimates.size]] = law.estimates
        q, qd, zero = np.full(6, 0.4), np.linspace(-1.0, 1.0, 6), np.zeros(6)
        p, beta = observer.terms(q, qd)
        expected_p = (slotine_li_regressor(model, q, zero, zero, qd)
                      - slotine_li_regressor(model, q, zero, zero, zero)) @ estimate
        np.testing.assert_allclose(p, expected_p, rtol=1e-10, atol=1e-10)
        # β through the dynamics of the estimate's model: Cᵀq̇ = Ṁq̇ − Cq̇, Ṁq̇ by central
        # differences of M along q̇, C q̇ + g from the regressor at q̈ = 0
        h = 1e-6
        M = [(slotine_li_regressor(model, q + s * h * qd, zero, zero, qd)
              - slotine_li_regressor(model, q + s * h * qd, zero, zero, zero)) @ estimate
             for s in (1.0, -1.0)]
        Mdot_qd = (M[0] - M[1]) / (2 * h)
        Cqd_plus_g = slotine_li_regressor(model, q, qd, qd, zero) @ estimate
        g = slotine_li_regressor(model, q, zero, zero, zero) @ estimate
        np.testing.assert_allclose(beta, Mdot_qd - Cqd_plus_g, atol=1e-6 * np.abs(g).max())


def test_follow_refuses_another_arm():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        other = RobotModel.from_urdf(ROOT / "urdf" / "stanford.urdf")
    assert other.joint_names == puma().joint_names          # the names alone would not tell
    with pytest.raises(ValueError, match="kinematics"):
        MomentumObserver(puma(), K_O).follow(AdaptiveComputedTorque(other, {}))
    with pytest.raises(ValueError, match="ComputedTorque has no parameter estimates"):
        MomentumObserver(puma(), K_O).follow(ComputedTorque(puma(), {"kp": 1.0, "kd": 2.0}))


def test_follow_asks_for_a_reset():
    observer = MomentumObserver(puma(), K_O)
    observer.reset(Q_START, np.zeros(6))
    observer.follow(AdaptiveComputedTorque(puma(), {}))
    with pytest.raises(RuntimeError, match="reset"):
        observer.step(Q_START, np.zeros(6), np.zeros(6), DT)


@pytest.mark.parametrize("gain", [0.0, -1.0, np.inf, [1.0, 2.0]])
def test_bad_gain_is_refused(gain):
    with pytest.raises(ValueError, match="gain"):
        MomentumObserver(puma(), gain)


def test_bad_step_is_refused():
    observer = MomentumObserver(puma(), K_O)
    with pytest.raises(RuntimeError, match="reset"):
        observer.step(Q_START, np.zeros(6), np.zeros(6), DT)
    observer.reset(Q_START, np.zeros(6))
    for dt in (0.0, -DT, np.nan, np.inf):
        with pytest.raises(ValueError, match="dt"):
            observer.step(Q_START, np.zeros(6), np.zeros(6), dt)
    with pytest.raises(ValueError, match="tau"):
        observer.step(Q_START, np.zeros(6), np.zeros(5), DT)


def test_against_mujoco_a_force_on_the_last_body():
    """MuJoCo as the plant, pushed by a Cartesian force at the last body's centre of mass
    (xfrc_applied): MuJoCo maps it to joint torques itself; r follows their discrete filter."""
    mujoco = pytest.importorskip("mujoco")
    from robodyn_ros.sim.mujoco_engine import MujocoEngine
    model = puma()
    engine = MujocoEngine(model, DT, PUMA_URDF.read_text())
    m, d = engine.mj, engine.data
    body = m.nbody - 1
    force = np.array([15.0, -25.0, 10.0])
    observer = MomentumObserver(model, K_O)
    q, qd = Q_START.copy(), np.zeros(6)
    observer.reset(q, qd)
    steps = 300
    r, tau_ext = np.zeros((steps + 1, 6)), np.zeros((steps + 1, 6))

    def mujoco_torque(k):   # the joint torque MuJoCo makes of the force at the state of sample k
        d.qpos[:], d.qvel[:] = q, qd
        mujoco.mj_forward(m, d)
        mujoco.mj_applyFT(m, d, force, np.zeros(3), d.xipos[body].copy(), body, tau_ext[k])

    for k in range(steps):
        tau = model.gravity_torques(q)
        mujoco_torque(k)
        d.xfrc_applied[body, :3] = force
        q, qd = engine.step(q, qd, tau)
        r[k + 1] = observer.step(q, qd, tau, DT)
    mujoco_torque(steps)
    assert np.abs(q - Q_START).max() > 0.01
    # MuJoCo applies the force at every RK4 stage where the body then is: its torque changes over
    # a step, and the observer sees its mean; the trapezoid of the end values is that mean to
    # O(Δt²) of the torque's second derivative
    mean = np.zeros_like(tau_ext)
    mean[:-1] = 0.5 * (tau_ext[:-1] + tau_ext[1:])
    reference = filtered(mean, K_O, DT)
    assert np.abs(r - reference).max() <= 1e-6 * np.abs(tau_ext).max()


def test_velocity_noise_gives_the_residual_the_stated_noise():
    """White noise σ on q̇ of an arm at rest: p_k = M q̇_k, so the increment's noise is filtered by
    the discrete form into r_k = c Σ_j a^j (M n_(k−j) − M n_(k−j−1)), c = (1 − a)/Δt, of variance
    c² σ² Σ_j M_ij² (1 + (1 − a)/(1 + a)) — about (K_O M σ)², doc/collisions.md."""
    model = puma()
    observer = MomentumObserver(model, K_O)
    rng = np.random.default_rng(5)
    sigma, steps = 1e-3, 40000
    q = Q_START
    tau = model.gravity_torques(q)
    observer.reset(q, np.zeros(6))
    r = np.array([observer.step(q, rng.normal(0.0, sigma, 6), tau, DT).copy() for _ in range(steps)])
    a = np.exp(-K_O * DT)
    M = model.mass_matrix(q)
    expected = (1 - a) / DT * sigma * np.sqrt((M ** 2).sum(axis=1) * (1 + (1 - a) / (1 + a)))
    np.testing.assert_allclose(r[1000:].std(axis=0), expected, rtol=0.05)
    np.testing.assert_allclose(expected, K_O * sigma * np.sqrt((M ** 2).sum(axis=1)), rtol=0.05)


def test_a_friction_file_replaces_the_models_friction():
    """The observer with the model's own friction as a friction file gives the kernel's residual
    (to rounding); a file with an offset of f_o on joint 2 sees f_o as an external torque, through
    the filter: r = f_o (1 − e^(−K_O t)) beside the other observer's r."""
    from robodyn_ros.dynamics.friction import FrictionForm, FrictionModel

    import dataclasses

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data_set = RobotModel.from_urdf(PUMA_URDF)       # the data set's friction, made symmetric
    links = [dataclasses.replace(link, coulomb_negative=link.coulomb_positive) for link in data_set.links]
    model = RobotModel(links, data_set.tip, data_set.gravity, data_set.name, data_set.frames)
    own = FrictionModel(tuple(model.joint_names), (FrictionForm(),) * model.dof, tuple(
        np.array([link.viscous, link.coulomb_positive, link.coulomb_negative]) for link in links))
    offset = FrictionModel(own.joints, tuple(FrictionForm("symmetric", 0.0, True) for _ in links), tuple(
        np.array([link.viscous, link.coulomb_positive, 0.7 if j == 1 else 0.0]) for j, link in enumerate(links)))
    observers = [MomentumObserver(model, K_O), MomentumObserver(model, K_O, own),
                 MomentumObserver(model, K_O, offset)]
    (kernel, filed, biased), _, _, _ = run(model, RobodynEngine(model, DT),
                                           computed_torque(model, motion_004(model)), 1500, None, observers)
    assert np.abs(kernel).max() > 1e-3                    # the friction did act (Coulomb steps)
    np.testing.assert_allclose(filed, kernel, rtol=0, atol=1e-9 * np.abs(kernel).max() + 1e-12)
    t = np.arange(len(kernel)) * DT
    expected = kernel.copy()
    expected[:, 1] += 0.7 * (1.0 - np.exp(-K_O * t))
    np.testing.assert_allclose(biased, expected, rtol=0, atol=1e-9)
