"""Detection, abort-worthy events and the four reactions in the control loop, without ROS: the PUMA
560 (friction off, as in the 004 demo) on our RK4 engine at 1 kHz, pushed at the tip by a constant
wrench the controller does not know (the simulator's ``~/external_wrench``: τ_ext = Jᵀw after the
effort clamp), with a fake clock. The node tests check only that the wiring reaches this."""
import warnings

import numpy as np
import pytest

from robodyn_ros.control import JointTrajectory
from robodyn_ros.control.collision_guard import guard_from_settings
from robodyn_ros.control.contact_location import wrench_estimate
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.control.loop import ERROR, ControlLoop, Rejection
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.plumbing.resources import find_share_file
from robodyn_ros.sim.robodyn_engine import RobodynEngine

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the PUMA data's link 3 inertia warns, rightly
    PUMA = RobotModel.from_urdf(str(find_share_file("urdf/puma560.urdf"))).scaled(friction=0.0)
CHAIN = list(PUMA.joint_names)
Q0 = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])
DT = 1e-3
GAIN = 50.0                                     # K_O, 1/s
PUSH = np.array([0.0, 0.0, -40.0, 0.0, 0.0, 0.0])   # N on the tip, base frame: pressing down
SETTINGS = {"control_law": "computed_torque", "kp": 100.0, "kd": 20.0, "friction": False,
            "collision_observer_gain": [GAIN], "collision_thresholds": [2.0],
            "collision_thresholds_per_velocity": [0.0]}


class Rig:
    """The loop, its fake clock and the plant: ``run(seconds, wrench)`` closes the loop at 1 kHz."""

    def __init__(self, **settings):
        self.t = 100.0
        self.log = []
        self.loop = ControlLoop(PUMA, JointOrder(CHAIN), {**SETTINGS, **settings}, 0.1,
                                clock=lambda: self.t, steady=lambda: self.t, log=self.log.append,
                                links=[f"link_{i + 1}" for i in range(6)])
        self.events = []
        self.loop.on_collision = self.events.append
        self.engine = RobodynEngine(PUMA, DT)
        self.q, self.qd = Q0.copy(), np.zeros(6)
        self.efforts = []

    def run(self, seconds, wrench=None, drive=1.0):
        """``drive``: the fraction of each command the drives deliver (a torque constant off)."""
        applied = np.zeros(6)
        for _ in range(round(seconds / DT)):
            self.loop.set_state(CHAIN, self.q, self.qd, stamp=self.t, effort=applied)
            effort = self.loop.cycle().effort.copy()
            self.efforts.append(effort)
            applied = self.engine.applied(drive * effort)   # what a driver measures and reports
            self.q, self.qd = self.engine.step(self.q, self.qd, applied, wrench)
            self.t += DT


def test_no_collision_on_free_motion_with_the_exact_model():
    rig = Rig()
    rig.run(0.05)
    zero = np.zeros((1, 6))   # at rest at the end: the 004 demo's quintic
    goal = JointTrajectory(CHAIN, np.array([3.0]), np.radians([[45.0, 30.0, 0.0, 45.0, 60.0, 90.0]]),
                           zero, zero)
    assert not isinstance(rig.loop.set_trajectory(goal), Rejection)
    rig.run(3.2)                                  # 004's motion
    assert rig.events == [] and not rig.loop.collided
    # the residual stayed far below the threshold: only the observer's discretisation error
    assert np.max(np.abs(rig.loop.guard.residual)) < 0.05


def test_a_push_is_detected_within_a_few_cycles_and_named():
    rig = Rig(collision_reaction="none")
    rig.run(0.05)
    rig.run(0.02, PUSH)
    (event,) = rig.events
    tau_ext = PUMA.frame_jacobian(rig.q).T @ PUSH
    # first-order filter: |r| passes 2 N m once 1 - e^(-K_O t) > 2 / |τ_ext| of the largest joint
    expected = -np.log(1.0 - 2.0 / np.max(np.abs(tau_ext))) / GAIN
    assert 0.0 < event.time - 100.05 <= expected + 2 * DT
    # the push is on the tip, after every joint: the last joint crossing is isolated
    assert event.link == f"link_{CHAIN.index(event.joint) + 1}"
    assert abs(tau_ext[CHAIN.index(event.joint)]) > 2.0
    assert rig.loop.report()[0] == ERROR and "collision" in rig.loop.report()[1]


def test_while_a_collision_stands_references_and_goals_are_refused_until_reset():
    rig = Rig(collision_reaction="stop")
    rig.run(0.05)
    rig.run(0.05, PUSH)
    assert rig.loop.collided
    refused = rig.loop.set_reference(Q0)
    assert isinstance(refused, Rejection) and "reset the collision" in refused.reason
    goal = JointTrajectory(CHAIN, np.array([1.0]), Q0[None])
    assert "reset the collision" in rig.loop.check_trajectory(goal)
    assert not isinstance(rig.loop.reset_collision(), Rejection)
    assert not rig.loop.collided
    assert not isinstance(rig.loop.set_reference(rig.q), Rejection)
    assert isinstance(rig.loop.reset_collision(), Rejection)   # nothing left to reset


def test_stop_holds_where_the_collision_was_detected():
    rig = Rig(collision_reaction="stop")
    rig.run(0.05)
    rig.run(0.05, PUSH)
    (event,) = rig.events
    held = rig.loop.reference[0].copy()   # the next cycle writes the rows again
    rig.run(0.5, PUSH)
    np.testing.assert_array_equal(rig.loop.reference[0], held)   # the hold does not move
    assert np.all(rig.loop.reference[1] == 0.0)


def test_float_commands_gravity_only_and_yields():
    rig = Rig(collision_reaction="float")
    rig.run(0.05)
    rig.run(0.03, PUSH)
    assert rig.loop.collided
    rig.run(0.001, PUSH)
    np.testing.assert_allclose(rig.efforts[-1], PUMA.gravity_torques(rig.loop.q), rtol=1e-12)
    drop = rig.q.copy()
    rig.run(0.2, PUSH)   # the arm gives way to the push: nothing holds it
    assert np.linalg.norm(rig.q - drop) > 1e-3


def test_reflex_pushes_along_the_residual_then_floats():
    rig = Rig(collision_reaction="reflex", collision_reflex_gain=2.0,
              collision_reflex_duration=0.05)
    rig.run(0.05)
    rig.run(0.03, PUSH)
    (event,) = rig.events
    rig.run(0.001, PUSH)
    r = rig.loop.guard.residual
    # the command of the cycle just run: g(q) + K_R r at that cycle's state
    expected = PUMA.gravity_torques(rig.loop.q) + 2.0 * r
    np.testing.assert_allclose(rig.efforts[-1], np.clip(expected, -PUMA.effort_limit, PUMA.effort_limit),
                               rtol=1e-9, atol=1e-9)
    rig.run(0.1, PUSH)
    np.testing.assert_allclose(rig.efforts[-1], PUMA.gravity_torques(rig.loop.q), rtol=1e-12)


def test_the_observer_follows_the_adaptive_laws_estimates():
    # a payload the law has learned is no collision (test_momentum_observer.py shows the observer
    # with the law's estimates sees none): the loop hands it every new law object
    rig = Rig(control_law="adaptive_computed_torque", adapt="payload")
    assert rig.loop.guard.observer._law is rig.loop.law
    rig.loop.apply(rig.loop.prepare({"kp": 50.0}))
    assert rig.loop.guard.observer._law is rig.loop.law
    rig.loop.apply(rig.loop.prepare({"control_law": "computed_torque"}))
    assert rig.loop.guard.observer._law is None


@pytest.mark.parametrize("settings, message", [
    ({"collision_observer_gain": [], "collision_thresholds": [2.0]}, "need the observer"),
    ({"collision_thresholds": [1.0, 2.0]}, "collision_thresholds must be one value or 6"),
    ({"collision_joints": ["joint_1"]}, "collision_joints"),
    ({"collision_reaction": "flee"}, "collision_reaction must be one of"),
    ({"collision_observer_gain": [0.0]}, "gain must be finite and > 0"),
])
def test_bad_settings_name_the_parameter(settings, message):
    with pytest.raises(ValueError, match=message):
        guard_from_settings(PUMA, JointOrder(CHAIN), {**SETTINGS, **settings}, CHAIN, False, 0.1)


def test_collision_settings_cannot_change_while_a_collision_stands():
    rig = Rig(collision_reaction="stop")
    rig.run(0.05)
    rig.run(0.05, PUSH)
    with pytest.raises(ValueError, match="a collision stands"):
        rig.loop.prepare({"collision_thresholds": [5.0]})
    rig.loop.prepare({"kp": 50.0})   # a gain change is fine


def test_the_wrench_estimate_inverts_j_transpose_away_from_singularities():
    q = np.radians([10.0, -30.0, 60.0, 20.0, 40.0, 10.0])
    w = np.array([3.0, -1.0, 7.0, 0.2, -0.4, 0.1])
    np.testing.assert_allclose(wrench_estimate(PUMA, q, PUMA.frame_jacobian(q).T @ w), w, rtol=1e-9)
    # at the wrist singularity (θ5 = 0) the estimate stays finite and still explains r
    q[4] = 0.0
    r = PUMA.frame_jacobian(q).T @ w
    f = wrench_estimate(PUMA, q, r)
    assert np.all(np.isfinite(f))
    np.testing.assert_allclose(PUMA.frame_jacobian(q).T @ f, r, atol=1e-3 * np.abs(r).max())


def test_a_drive_that_delivers_less_than_commanded_is_seen_unless_the_effort_is_measured():
    # 20 % less torque than commanded: held at rest against gravity (28 N m on joint 2), that
    # shortfall is an external torque of ~6 N m to an observer of the commands (the stalled-motor
    # case of doc/collisions.md), and nothing to one of the efforts the drives measure
    commanded, measured = Rig(collision_reaction="none"), Rig(collision_reaction="none",
                                                              collision_torque="measured")
    for rig in (commanded, measured):
        rig.run(0.3, drive=0.8)
    assert commanded.events and commanded.events[0].joint == "joint_2"
    assert measured.events == [] and np.max(np.abs(measured.loop.guard.residual)) < 0.05
    assert measured.loop.guard.unmeasured == 0
    measured.loop.set_state(CHAIN, measured.q, measured.qd, stamp=measured.t)   # no effort field
    assert measured.loop.guard.unmeasured == 1   # the command stands in, and /diagnostics says so
    assert "1 states without one" in measured.loop.report()[2]["observer torque"]


def test_the_wrench_conventions_against_mujoco():
    """doc/collisions.md, "Conventions": MuJoCo's mj_applyFT puts a force f and a moment n on the
    last body at the tip frame's origin, base frame — the wrench acting on the arm. Its joint
    torque τ_ext is what the residual estimates: wrench_estimate gives [f; n] back, and
    inverse_dynamics(tip_wrench=) takes the opposite, the wrench the arm exerts, in the tip frame:
    holding still against the push takes g(q) − τ_ext."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_string(find_share_file("urdf/puma560.urdf").read_text())
    d = mujoco.MjData(m)
    q = np.radians([20.0, -30.0, 60.0, 10.0, 40.0, -20.0])
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    tip = PUMA.frame_pose(q)
    on_arm = np.array([10.0, -20.0, 30.0, 1.0, -2.0, 0.5])
    tau_ext = np.zeros(m.nv)
    mujoco.mj_applyFT(m, d, on_arm[:3], on_arm[3:], tip[:3, 3], m.nbody - 1, tau_ext)
    np.testing.assert_allclose(wrench_estimate(PUMA, q, tau_ext), on_arm, atol=1e-9)
    R = tip[:3, :3]
    exerted_in_tip_frame = -np.concatenate([R.T @ on_arm[:3], R.T @ on_arm[3:]])
    hold = PUMA.inverse_dynamics(q, np.zeros(6), np.zeros(6), tip_wrench=exerted_in_tip_frame)
    np.testing.assert_allclose(hold, PUMA.gravity_torques(q) - tau_ext, atol=1e-9)


def test_a_step_whose_residual_would_not_be_finite_is_kept_out_and_the_observer_restarts():
    """A finite state whose momentum overflows (a velocity of 1e200 rad/s: a driver's garbage that
    passes the finite check) gives no residual: the observer keeps nothing of it, detects
    nothing, and starts afresh at the next state (before: r went inf, a collision, then NaN)."""
    guard = guard_from_settings(PUMA, JointOrder(CHAIN), SETTINGS,
                                [f"link_{i + 1}" for i in range(6)], friction=False, max_gap=0.1)
    zero = np.zeros(6)
    holding = PUMA.inverse_dynamics(Q0, zero, zero)   # at rest: no external torque
    for k in range(3):
        assert not guard.observe(k * DT, Q0, zero, holding)
    assert not guard.observe(3 * DT, Q0, np.full(6, 1e200), holding)
    assert np.all(np.isfinite(guard.residual)) and guard.event is None
    for k in range(4, 7):   # the first starts afresh there
        assert not guard.observe(k * DT, Q0, zero, holding)
        assert np.abs(guard.residual).max() < 1e-6
