"""The task-space laws (control/task_space.py) on the shipped PUMA (urdf/puma560.urdf) and the
vendor Panda (7 joints, example-robot-data): the operational-space closed loop against its
defining equation (orientation error by SciPy's rotation vector, an independent log map), closed-
loop simulations with the model's own forward dynamics (RK4 at 1 kHz, torques held over each step),
the impedance's static stiffness, its filters and rate limit, singular configurations, and the
parameters' validation.
"""
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robodyn_ros.control.task_space import CartesianImpedance, OperationalSpace
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.integrate import rk4_step
from test_vendor_descriptions import CHAINS, load

ROOT = Path(__file__).resolve().parents[1]
DT = 1e-3
with warnings.catch_warnings():
    warnings.simplefilter("ignore")     # the PUMA data's link-3 inertia is not physical
    PUMA = RobotModel.from_urdf(ROOT / "urdf" / "puma560.urdf")
PANDA = load(*CHAINS[2])
# The simulations run without joint friction, in the plant and the law alike: Coulomb friction
# flips sign inside a sample while the torque is held, which no sampled law compensates (on the
# PUMA, ~5 mm off the circle and a limit cycle at rest, whatever the law)
SMOOTH = {m.name: m.scaled(friction=0.0) for m in (PUMA, PANDA)}
# within the joint limits and away from singularities: the smallest eigenvalue of J M⁻¹ Jᵀ is
# 0.0089 (PUMA; the damping starts below ε = 1e-3), 0.09 (Panda)
START = {"puma560": np.radians([0.0, 30.0, -120.0, 0.0, -60.0, 0.0]),
         "panda": np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])}
ARMS = [PUMA, PANDA]
IDS = [m.name for m in ARMS]


def rotvec(R):
    return Rotation.from_matrix(R).as_rotvec()


def task_error(target, pose):
    return np.r_[target[:3, 3] - pose[:3, 3], rotvec(target[:3, :3] @ pose[:3, :3].T)]


def random_rotation(rng):
    return Rotation.from_rotvec(rng.uniform(-1, 1, 3) * rng.uniform(0, np.pi) / np.sqrt(3)).as_matrix()


# ------------------------------------------------------------------ operational space, algebra

@pytest.mark.parametrize("model", ARMS, ids=IDS)
@pytest.mark.parametrize("explicit", [False, True])
def test_operational_space_closes_the_task_loop(model, explicit):
    """q̈ = FD(τ) gives ẍ = J q̈ + J̇ q̇ = ẍ_d + K_d ė + K_p e exactly, whatever the posture task
    (it acts in the nullspace only), for a target from the joint reference or set directly (any
    rotation error, up to nearly π)."""
    n, rng = model.dof, np.random.default_rng(7)
    kp, kd = np.array([100.0, 120.0, 80.0, 60.0, 50.0, 40.0]), np.array([20.0, 22.0, 18.0, 15.0, 14.0, 12.0])
    common = {"task_kp": kp.tolist(), "task_kd": kd.tolist(), "singularity_threshold": 1e-9}
    laws = [OperationalSpace(model, {**common, "posture_kp": 0.0, "posture_kd": 0.0}),
            OperationalSpace(model, {**common, "posture_kp": 40.0, "posture_kd": 5.0})]
    for _ in range(4):
        q, qd, q_des, qd_des, qdd_des = (rng.uniform(-1.5, 1.5, n) for _ in range(5))
        if explicit:
            target = np.eye(4)
            target[:3, :3], target[:3, 3] = random_rotation(rng), rng.uniform(-0.5, 0.5, 3)
            twist, acceleration = rng.uniform(-1, 1, 6), rng.uniform(-3, 3, 6)
            quaternion = Rotation.from_matrix(target[:3, :3]).as_quat()    # [x, y, z, w]
            for law in laws:
                law.set_target(target[:3, 3], quaternion, twist, acceleration)
        else:
            desired = model.frame_motion(q_des, qd_des)
            target, twist = desired.pose, desired.twist
            acceleration = desired.jacobian @ qdd_des + desired.jdot_qd
        measured = model.frame_motion(q, qd)
        expected = (acceleration + kd * (twist - measured.twist)
                    + kp * task_error(target, measured.pose))
        qdd = [model.forward_dynamics(q, qd, law.compute(q, qd, q_des, qd_des, qdd_des, DT)) for law in laws]
        # rounding grows with the conditioning of J M⁻¹ Jᵀ (up to 1e6 in these random states)
        inverse_inertia = measured.jacobian @ np.linalg.solve(model.mass_matrix(q), measured.jacobian.T)
        tolerance = 1e-15 * np.linalg.cond(inverse_inertia) * np.abs(expected).max()
        for a in qdd:
            np.testing.assert_allclose(measured.jacobian @ a + measured.jdot_qd, expected, rtol=0,
                                       atol=tolerance)
        if n > 6:
            assert np.abs(qdd[1] - qdd[0]).max() > 0.1     # the posture task acted, in the nullspace


def test_orientation_error_near_half_a_turn():
    """A target turned by π − 1e-9 about a random axis: the law's error is SciPy's rotation vector,
    no singularity there (compared through the closed-loop acceleration of a pure-rotation task)."""
    law = OperationalSpace(PUMA, {"task_kp": [1e-9, 50.0], "task_kd": [1e-9, 1e-9],
                                  "singularity_threshold": 1e-9})
    q, zero = START["puma560"], np.zeros(6)
    pose = PUMA.frame_pose(q)
    for axis in np.random.default_rng(8).normal(size=(5, 3)):
        axis /= np.linalg.norm(axis)
        R = Rotation.from_rotvec((np.pi - 1e-9) * axis).as_matrix() @ pose[:3, :3]
        law.set_target(pose[:3, 3], R)
        m = PUMA.frame_motion(q, zero)
        alpha = (m.jacobian @ PUMA.forward_dynamics(q, zero, law.compute(q, zero, q, zero, zero, DT)))[3:]
        np.testing.assert_allclose(alpha / 50.0, rotvec(R @ pose[:3, :3].T), rtol=0, atol=1e-7)


# ------------------------------------------------------------------ closed-loop simulations

def circle(model, radius=0.05, period=2.0, ramp=1.0):
    """The target at time t: a circle in the base x-z plane through the start pose, orientation
    held, its angular speed ramped up smoothly (quintic) over ``ramp`` seconds."""
    start = model.frame_pose(START[model.name])
    e1, e2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    centre, omega = start[:3, 3] - radius * e1, 2 * np.pi / period

    def at(t):
        u = min(t / ramp, 1.0)
        phi = omega * (ramp * (2.5 * u ** 4 - 3 * u ** 5 + u ** 6) + max(t - ramp, 0.0))
        phid = omega * (10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5)
        phidd = omega * (30 * u ** 2 - 60 * u ** 3 + 30 * u ** 4) / ramp if t < ramp else 0.0
        c, s = np.cos(phi), np.sin(phi)
        p = centre + radius * (c * e1 + s * e2)
        v = radius * phid * (-s * e1 + c * e2)
        a = radius * phidd * (-s * e1 + c * e2) - radius * phid ** 2 * (c * e1 + s * e2)
        return p, start[:3, :3], np.r_[v, 0, 0, 0], np.r_[a, 0, 0, 0]
    return at


def track(model, law, target, q_des, duration=3.0):
    """Simulate ``law`` following ``target(t)`` from rest at the start; returns the largest
    position and orientation errors and the final q."""
    q, qd, zero = START[model.name].copy(), np.zeros(model.dof), np.zeros(model.dof)
    worst = np.zeros(2)
    for k in range(int(round(duration / DT))):
        p, R, v, a = target(k * DT)
        pose = model.frame_pose(q)
        # the angle between R and the frame's: ‖R − R_f‖ = 2√2 sin(θ/2) (SciPy's log costs 0.1 ms)
        worst = np.maximum(worst, [np.linalg.norm(p - pose[:3, 3]),
                                   2 * np.arcsin(np.linalg.norm(R - pose[:3, :3]) / np.sqrt(8))])
        law.set_target(p, R, v, a)
        q, qd = rk4_step(model, q, qd, law.compute(q, qd, q_des, zero, zero, DT), DT)
    return worst, q


@pytest.mark.parametrize("model", ARMS, ids=IDS)
def test_operational_space_tracks_a_circle(model):
    """The law's defaults (K_p = 100/s², critically damped), exact model, 1 kHz: a 5 cm circle in
    2 s with the orientation held, within 1e-4 m and 1e-3 rad all along (measured: ~1e-6)."""
    model = SMOOTH[model.name]
    worst, _ = track(model, OperationalSpace(model), circle(model), START[model.name])
    assert worst[0] < 1e-4 and worst[1] < 1e-3, worst


def test_posture_moves_the_nullspace_only():
    """On the Panda, a posture target away from the start: the elbow moves (the self-motion, by
    ~0.3 rad) while the circle is tracked as closely as without the posture task: the largest
    errors differ by < 1e-5 m and 1e-4 rad, a tenth of the tracking bound (measured: 2e-6 m,
    2e-5 rad; the posture's fast self-motion reaches the task only through the held samples)."""
    model = SMOOTH["panda"]
    circ = circle(model)
    away = START["panda"] + np.array([0.4, 0.0, -0.4, 0.0, 0.4, 0.0, 0.0])
    still, q_still = track(model, OperationalSpace(model, {"posture_kp": 0.0, "posture_kd": 5.0}),
                           circ, START["panda"])
    moved, q_moved = track(model, OperationalSpace(model), circ, away)
    assert np.all(np.abs(moved - still) < [1e-5, 1e-4]) and moved[0] < 1e-4, (moved, still)
    assert np.linalg.norm(q_moved - q_still) > 0.1, q_moved - q_still


# ------------------------------------------------------------------ impedance

def settle(model, law, wrench_tip, seconds=6.0):
    """Hold the start (q_d = start) under a constant wrench the tip exerts (its environment pushes
    back with −wrench): the pose at rest."""
    q, qd, zero = START[model.name].copy(), np.zeros(model.dof), np.zeros(model.dof)
    for _ in range(int(round(seconds / DT))):
        tau = law.compute(q, qd, START[model.name], zero, zero, DT)
        q, qd = rk4_step(model, q, qd, tau, DT, tip_wrench=wrench_tip)
    assert np.abs(qd).max() < 1e-5, "not at rest"
    return q


@pytest.mark.parametrize("model", ARMS, ids=IDS)
def test_impedance_static_displacement_is_the_compliance(model):
    """At rest under a wrench w (base frame) the frame sits at x_d − K⁻¹ w (Jᵀ K e = Jᵀ w, gravity
    by the law's own g): every axis within 3 % (measured: < 0.3 %); with the same w set as the
    law's wrench, the frame stays at its target."""
    model = SMOOTH[model.name]
    stiffness = np.array([800.0, 800.0, 800.0, 80.0, 80.0, 80.0])    # the law's default
    law = CartesianImpedance(model)
    target = model.frame_pose(START[model.name])
    w = np.array([8.0, -5.0, 6.0, 0.4, -0.3, 0.5])
    R = target[:3, :3]          # the wrench in the tip frame, at the start (turned by < 1°)
    at_target = np.r_[R.T @ w[:3], R.T @ w[3:]]
    q = settle(model, law, at_target)
    pose = model.frame_pose(q)
    tip = np.r_[pose[:3, :3].T @ w[:3], pose[:3, :3].T @ w[3:]]
    q = settle(model, CartesianImpedance(model), tip)            # the wrench where it came to rest
    e = task_error(target, model.frame_pose(q))
    ratio = e / (w / stiffness)
    assert np.all(np.abs(ratio - 1.0) < 0.03), ratio
    law = CartesianImpedance(model)
    law.set_wrench(w)
    q = settle(model, law, at_target)
    assert np.abs(task_error(target, model.frame_pose(q))).max() < 1e-3 * np.abs(e).max()


def impedance_steps(model, law, change, steps=200):
    """Torques over ``steps`` cycles after ``change(law)`` at rest under a wrench (so that K e ≠ 0)."""
    q, qd, zero = START[model.name].copy(), np.zeros(model.dof), np.zeros(model.dof)
    wrench = np.array([20.0, 10.0, -15.0, 1.0, 0.5, -1.0])
    taus = []
    for k in range(1000 + steps):
        if k == 1000:
            law = change(law)
        taus.append(law.compute(q, qd, START[model.name], zero, zero, DT).copy())
        q, qd = rk4_step(model, q, qd, taus[-1], DT, tip_wrench=wrench)
    return np.abs(np.diff(taus[999:], axis=0)).max(axis=0)


def stiffer(law):
    new = CartesianImpedance(law.model, {**law.params,
                                         "stiffness": (4 * np.array(law.params["stiffness"])).tolist()})
    new.continue_from(law)
    return new


def jump(law):
    pose = law.pose
    law.set_target(pose[:3, 3] + [0.05, -0.03, 0.04], Rotation.from_rotvec([0.2, 0.1, -0.1]).as_matrix()
                   @ pose[:3, :3])
    return law


def stiffer_in_place(law):
    law.set_stiffness(4 * np.array(law.params["stiffness"]))
    return law


@pytest.mark.parametrize("change", [stiffer, stiffer_in_place, jump])
def test_no_torque_step_on_a_gain_step_or_a_target_jump(change):
    """Stiffness ×4 (a new law continuing the old one's filters, or in place) or a target jump of
    7 cm and 0.24 rad: no joint's torque changes by more than torque_rate_limit · dt in a cycle;
    unfiltered and unlimited the same change steps the torque by far more."""
    rate = 1000.0       # N·m/s: the default
    model = SMOOTH["puma560"]
    smooth = impedance_steps(model, CartesianImpedance(model), change)
    assert smooth.max() <= rate * DT * (1 + 1e-9), smooth
    raw = impedance_steps(model, CartesianImpedance(model, {"filter_time_constant": 0.0,
                                                            "torque_rate_limit": np.inf}), change)
    assert raw.max() > 5 * rate * DT, raw
    # the filter alone (no rate limit) keeps the step to about dt / T_f of the raw one
    filtered = impedance_steps(model, CartesianImpedance(model, {"torque_rate_limit": np.inf}), change)
    assert filtered.max() < 0.2 * raw.max(), (filtered, raw)


# ------------------------------------------------------------------ singularities, parameters

SINGULAR = [("puma elbow and wrist", PUMA, np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])),
            ("puma wrist", PUMA, np.radians([0.0, 30.0, -150.0, 0.0, 0.0, 0.0])),
            ("panda stretched", PANDA, np.zeros(7))]


@pytest.mark.parametrize("name,model,q", SINGULAR, ids=[s[0] for s in SINGULAR])
@pytest.mark.parametrize("law_class", [OperationalSpace, CartesianImpedance])
def test_singular_configurations_give_finite_torques(name, model, q, law_class):
    rng = np.random.default_rng(9)
    law = law_class(model)
    for scale in (0.0, 1.0):
        qd = scale * rng.uniform(-1, 1, model.dof)
        tau = law.compute(q, qd, q + scale * 0.3, qd, qd, DT)
        assert np.all(np.isfinite(tau)), tau
        assert np.abs(tau).max() < 1e4
        assert law.damping > 0.0 and law.manipulability < 1e-6
        law.set_target(law.pose[:3, 3] + [0.3, 0.2, -0.1], np.eye(3), rng.uniform(-1, 1, 6))
        assert np.all(np.isfinite(law.compute(q, qd, q, qd, qd, DT)))
        law.clear_target()
    law = law_class(model)
    law.compute(START[model.name], np.zeros(model.dof), START[model.name], np.zeros(model.dof),
                np.zeros(model.dof), DT)
    assert law.damping == 0.0 and law.manipulability > 1e-2


BAD = [
    (OperationalSpace, {"task_kp": -1.0}, "task_kp must be finite and > 0"),
    (OperationalSpace, {"task_kp": [1.0, 2.0, 3.0]}, "task_kp must be one number"),
    (OperationalSpace, {"task_kd": [10.0, 0.0]}, "task_kd must be finite and > 0"),
    (OperationalSpace, {"task_kp": "100"}, "task_kp must be"),
    (OperationalSpace, {"posture_kp": -1.0}, "posture_kp for joint 'joint_1'"),
    (OperationalSpace, {"posture_kd": [1.0] * 5}, "posture_kd has shape"),
    (OperationalSpace, {"singularity_threshold": 0.0}, "singularity_threshold must be"),
    (OperationalSpace, {"task_link": "flange"}, r"unknown link 'flange'.*joint_1"),
    (OperationalSpace, {"task_link": 3}, "task_link must be a link name"),
    (OperationalSpace, {"friction": "yes"}, "friction must be true or false"),
    (OperationalSpace, {"stiffness": 100.0}, r"does not take parameter\(s\) \['stiffness'\]"),
    (CartesianImpedance, {"stiffness": [1.0, 2.0, 3.0]}, "stiffness must be one number"),
    (CartesianImpedance, {"stiffness": [800.0, 0.0]}, "stiffness must be finite and > 0"),
    (CartesianImpedance, {"damping_ratio": -1.0}, "damping_ratio must be finite and > 0"),
    (CartesianImpedance, {"filter_time_constant": -0.1}, "filter_time_constant must be"),
    (CartesianImpedance, {"filter_time_constant": np.inf}, "filter_time_constant must be"),
    (CartesianImpedance, {"torque_rate_limit": 0.0}, "torque_rate_limit must be > 0"),
    (CartesianImpedance, {"torque_rate_limit": [1.0, 2.0]}, "torque_rate_limit must be"),
]


@pytest.mark.parametrize("law_class,params,message", BAD, ids=[str(b[1]) for b in BAD])
def test_bad_parameters_are_refused_by_name(law_class, params, message):
    with pytest.raises(ValueError, match=message):
        law_class(PUMA, params)


def test_bad_targets_are_refused_by_name():
    law = CartesianImpedance(PUMA)
    with pytest.raises(ValueError, match="position must be 3 finite numbers"):
        law.set_target([0.0, 0.0], np.eye(3))
    with pytest.raises(ValueError, match="orientation must be a 3x3 rotation matrix"):
        law.set_target([0.0, 0.0, 0.0], 2 * np.eye(3))
    with pytest.raises(ValueError, match="orientation must be"):
        law.set_target([0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="orientation must be"):     # a reflection
        law.set_target(np.zeros(3), np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="twist must be 6 finite numbers"):
        law.set_target([0.0, 0.0, 0.0], np.eye(3), [np.nan] * 6)
    with pytest.raises(ValueError, match="wrench must be 6 finite numbers"):
        law.set_wrench([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="qd must be 6 finite numbers"):
        law.compute(np.zeros(6), [0.0] * 5, np.zeros(6), np.zeros(6), np.zeros(6), DT)
    with pytest.raises(ValueError, match="continue_from takes a cartesian_impedance law"):
        law.continue_from(OperationalSpace(PUMA))


def test_warm_up_runs_both_laws():
    """The precompile hook: both kernels on a one-link arm (a rank-1 task: finite all the same)."""
    from robodyn_ros.control.task_space import warm_up
    assert warm_up(notify=lambda text: None) >= 0.0


# ------------------------------------------------------------------ the rule, by a second formulation

def inverse_inertia(model, q):
    J = model.frame_jacobian(q)
    return J @ np.linalg.solve(model.mass_matrix(q), J.T)


def rule(A, eps):
    """Λ and Λ^½ by the documented rule: 1/σ for σ ≥ ε, σ/ε² below, eigenvalue by eigenvalue."""
    sigma, U = np.linalg.eigh(A)
    f = np.where(sigma >= eps, 1.0 / np.where(sigma >= eps, sigma, 1.0),
                 np.maximum(sigma, 0.0) / eps ** 2)
    return (U * f) @ U.T, (U * np.sqrt(f)) @ U.T


def expected_torque(model, law, state, eps):
    """τ = Jᵀ F + h + N τ_0 with N = I − Jᵀ J̄ᵀ formed explicitly (not the law's one Newton–Euler
    pass), F = Λ (ẍ_d + K_d ė + K_p e − J̇ q̇) or K e + D ė at a first call (filters at their set
    values), the target from the joint reference."""
    q, qd, q_des, qd_des, qdd_des = state
    m, d = model.frame_motion(q, qd), model.frame_motion(q_des, qd_des)
    J, M = m.jacobian, model.mass_matrix(q)
    Lam, half = rule(J @ np.linalg.solve(M, J.T), eps)
    e, ed = task_error(d.pose, m.pose), d.twist - m.twist
    h = model.inverse_dynamics(q, qd, np.zeros(model.dof))
    kp, kd = (np.diag(np.broadcast_to(law.params[k], (model.dof,))) for k in ("posture_kp", "posture_kd"))
    v0 = kp @ (q_des - q) + kd @ (qd_des - qd)
    if isinstance(law, OperationalSpace):
        v0 = v0 + qdd_des
        kp_t = np.asarray(law.params["task_kp"], float)
        F = Lam @ (d.jacobian @ qdd_des + d.jdot_qd + 2 * np.sqrt(kp_t) * ed + kp_t * e - m.jdot_qd)
    else:
        k = np.repeat(law.params["stiffness"], 3)
        z = law.params["damping_ratio"] * np.sqrt(k)
        F = k * e + (half * z + (half * z).T) @ ed
    J_bar = np.linalg.solve(M, J.T) @ Lam
    N = np.eye(model.dof) - J.T @ J_bar.T
    return J.T @ F + h + N @ (M @ v0)


def near(model, q, rng):
    """A state whose reference is close to q (the rule applies at q; the errors stay small)."""
    n = model.dof
    return (q, rng.uniform(-0.5, 0.5, n), q + rng.uniform(-0.05, 0.05, n), rng.uniform(-0.5, 0.5, n),
            rng.uniform(-1, 1, n))


@pytest.mark.parametrize("law_class", [OperationalSpace, CartesianImpedance])
@pytest.mark.parametrize("model", ARMS, ids=IDS)
def test_torque_is_the_documented_rule_on_either_side_of_the_threshold(model, law_class):
    """Against the rule formed from an eigendecomposition in NumPy, with ε set from each state's
    σ_min: far below it (the law's Cholesky path: every σ ≥ 1/trace ≥ ε), just below it (every
    direction still undamped, though the trace bound no longer says so) and above it (the weakest
    directions damped); and at the singular configurations, where σ_min = 0."""
    model, rng = SMOOTH[model.name], np.random.default_rng(11)
    configurations = [START[model.name], *(rng.uniform(-1.5, 1.5, (3, model.dof))),
                      *(q for _, m, q in SINGULAR if m.name == model.name)]
    for q in configurations:
        sigma = max(np.linalg.eigvalsh(inverse_inertia(model, q))[0], 1e-12)
        # at a singular configuration σ_min is rounding: only a threshold well above it means anything
        for eps in (sigma / 7.0, sigma / 1.5, 3.0 * sigma, 1e-3) if sigma > 1e-6 else (1e-3, 1e-2):
            law = law_class(model, {"singularity_threshold": eps})
            state = near(model, q, rng)
            tau = law.compute(*state, DT)
            expected = expected_torque(model, law, state, eps)
            scale = np.abs(expected).max()
            np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-9 * scale * max(1.0, 1e-3 / sigma),
                                       err_msg=f"{model.name} q={q} ε={eps}")
            A = inverse_inertia(model, q)
            assert law.smallest_inverse_inertia == pytest.approx(np.linalg.eigvalsh(A)[0], abs=1e-12)
            assert law.damping == pytest.approx(max(eps ** 2 - law.smallest_inverse_inertia ** 2, 0.0),
                                                abs=1e-15)


@pytest.mark.parametrize("law_class", [OperationalSpace, CartesianImpedance])
def test_torque_is_continuous_through_a_singularity(law_class):
    """The PUMA's wrist straightened and bent again (q5 from −0.3 to 0.3 rad in 1e-3 rad steps):
    σ_min falls to 0 and back, crossing 6ε, ε and 0, where the law changes path and rule; the
    torque changes by no more from one step to the next than a few times its typical change."""
    model = SMOOTH["puma560"]
    q, zero = START["puma560"].copy(), np.zeros(6)
    unfiltered = {"torque_rate_limit": np.inf, "filter_time_constant": 0.0}   # the impedance's
    law = law_class(model, unfiltered if law_class is CartesianImpedance else {})
    taus, sigmas = [], []
    for q5 in np.arange(-0.3, 0.3 + 1e-9, 1e-3):
        q[4] = q5
        taus.append(law.compute(q, zero + 0.1, START["puma560"], zero, zero, DT).copy())
        sigmas.append(law.smallest_inverse_inertia)
    steps = np.abs(np.diff(taus, axis=0)).max(axis=1)
    assert min(sigmas) < 1e-9 and max(sigmas) > 6e-3          # the path crosses every regime
    assert steps.max() < 10 * np.median(steps), (steps.max(), np.median(steps))


def test_warm_up_names_an_unknown_law():
    from robodyn_ros.control.task_space import warm_up
    with pytest.raises(ValueError, match=r"unknown task-space law\(s\) \['impedance'\]"):
        warm_up(notify=lambda text: None, laws=("impedance",))
