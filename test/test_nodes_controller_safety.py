"""computed_torque_controller and arm_simulator with real rclpy (loopback DDS, conftest.py): the
ordering of per-joint gains, a failing control law, the stale-to-valid transition, the services
resetting the integral, the timer-driven rate and a simulator whose mass matrix turns singular.

The rig (nodes plus a probe in a namespace of their own) is test_nodes_ros.py's.
"""
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.exceptions import InvalidParameterValueException
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectoryPoint

from robodyn_ros.plumbing.resources import find_share_file
from conftest import JOINTS, Q0, register_laws, wait_for_subscriber

PLANAR2 = str(find_share_file("urdf/planar2.urdf"))  # no armature: M(q) = 0 at mass_scale 0


pytestmark = pytest.mark.usefixtures("ros")


def _discovered(rig):
    rig.spin_until(lambda: rig.joint_states.get_subscription_count() > 0, what="discovery")


def _command_for(rig, q, qd=None):
    rig.publish_state(q, qd)
    return rig.next_command()


# ---------------------------------------------------------------------------- one answer per state
def test_a_state_published_again_with_its_stamp_is_answered_once(rig):
    """rate 0: a copy of a state answered already (a step-locked simulator publishes an
    unanswered state again; the answer may have been late) gets no second answer, which the
    simulator would take for the next state's. A new stamp is answered; unstamped states
    always are."""
    rig.controller(state_timeout=10.0)
    _discovered(rig)
    msg = JointState(name=JOINTS, position=Q0.tolist(), velocity=[0.0] * 6)

    now = int(time.time())   # (state_timeout 10 s: these stamps are young enough)

    def send(sec, copies):
        msg.header.stamp.sec = sec and now + sec
        for _ in range(copies):
            rig.joint_states.publish(msg)
        rig.spin_for(0.3)

    send(1, copies=1)
    rig.spin_until(lambda: len(rig.commands) == 1, what="the first command")
    send(1, copies=2)
    send(2, copies=2)
    assert len(rig.commands) == 2
    send(0, copies=2)   # unstamped
    assert len(rig.commands) == 4


def test_on_simulated_time_the_first_instant_is_answered_once(rig):
    """rate 0 on simulated time: a zero stamp is the simulation's first instant (a step-locked
    simulator standing at t = 0 publishes it until its first command), answered once."""
    rig.controller(state_timeout=10.0, use_sim_time=True)
    _discovered(rig)
    msg = JointState(name=JOINTS, position=Q0.tolist(), velocity=[0.0] * 6)
    for _ in range(3):
        rig.joint_states.publish(msg)
    rig.spin_until(lambda: len(rig.commands) == 1, what="the first command")
    rig.spin_for(0.3)
    msg.header.stamp.nanosec = 1_000_000
    rig.joint_states.publish(msg)
    rig.spin_until(lambda: len(rig.commands) == 2, what="the second command")
    rig.spin_for(0.3)
    assert len(rig.commands) == 2


# ---------------------------------------------------------------------------- gains in joints order
def test_per_joint_gains_in_joints_order_reach_their_joints(rig, model):
    order = JOINTS[::-1]
    o = np.arange(6)[::-1]  # chain index of each name in `order`
    kp = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]  # joints order: 10 for joint_6 ... 60 for joint_1
    ctl = rig.controller(joints=order, kp=kp, kd=[5.0, 6.0, 7.0, 8.0, 9.0, 10.0], friction=False)
    _discovered(rig)
    rig.publish_state(Q0)
    rig.next_command()
    pub = rig.probe.create_publisher(JointTrajectoryPoint,
                                     f"{rig.ns}/computed_torque_controller/reference", 10)
    wait_for_subscriber(rig, pub)
    target = Q0 + np.arange(1, 7) * 0.01  # chain order
    pub.publish(JointTrajectoryPoint(positions=target[o].tolist()))
    kp_chain = np.empty(6)
    kp_chain[o] = kp
    expected = model.inverse_dynamics(Q0, np.zeros(6), kp_chain * (target - Q0), friction=False)
    for _ in range(50):  # one command per state: cycle until the reference has arrived
        count = len(rig.states)
        command = _command_for(rig, Q0)
        rig.spin_until(lambda: len(rig.states) > count, what="~/state")
        if np.allclose(rig.states[-1].points[0].positions, target[o]):
            break
    np.testing.assert_allclose(command, expected[o], rtol=1e-9)

    # a full matrix in joints order: K_joints[i, j] couples order[i] and order[j]
    k = np.diag([100.0, 90.0, 80.0, 70.0, 60.0, 50.0])
    k[0, 1] = k[1, 0] = 30.0  # joint_6 <-> joint_5
    assert ctl.set_parameters([Parameter("kp", value=k.ravel().tolist())])[0].successful
    e = target - Q0
    v_joints = k @ e[o]
    v_chain = np.empty(6)
    v_chain[o] = v_joints
    np.testing.assert_allclose(
        ctl.loop.law.compute(Q0, np.zeros(6), target, np.zeros(6), np.zeros(6), 0.0),
        model.inverse_dynamics(Q0, np.zeros(6), v_chain, friction=False), rtol=1e-12)

    # integral_limit and ki in joints order too: only joint_6 (first in `order`) integrates
    assert ctl.set_parameters([Parameter("ki", value=[1.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
                               Parameter("integral_limit", value=[0.5] + [np.inf] * 5)]
                              )[0].successful
    # and validation names the joint the value was given for
    bad = ctl.set_parameters([Parameter("kp", value=[-1.0, 1.0, 1.0, 1.0, 1.0, 1.0])])[0]
    assert not bad.successful and "joint_6" in bad.reason, bad.reason
    bad = ctl.set_parameters([Parameter("ki", value=[0.0, 0.0, 0.0, 0.0, 0.0, 1.0])])[0]
    assert not bad.successful and "joint_1" in bad.reason, bad.reason  # its limit is inf


# ---------------------------------------------------------------------------- a failing law
LAWS = '''
import numpy as np
from robodyn_ros.control import ControlLaw

class _Bad(ControlLaw):
    parameters = {}
    def _configure(self, params):
        pass

class NanLaw(_Bad):
    def compute(self, q, qd, q_des, qd_des, qdd_des, dt):
        return np.full(self.dof, np.nan)

class RaisingLaw(_Bad):
    def compute(self, q, qd, q_des, qd_des, qdd_des, dt):
        raise RuntimeError("plugin bug")

class ShortLaw(_Bad):
    def compute(self, q, qd, q_des, qd_des, qdd_des, dt):
        return np.zeros(self.dof - 1)
'''


@pytest.fixture
def bad_laws(tmp_path, monkeypatch):
    (tmp_path / "robodyn_test_bad_laws.py").write_text(LAWS)
    register_laws(tmp_path, monkeypatch, "robodyn_test_bad_laws", nan_test="NanLaw",
                  raising_test="RaisingLaw", short_test="ShortLaw")


def test_a_law_that_fails_gives_the_safe_command_and_the_node_runs_on(rig, model, bad_laws):
    reports = []
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)
    ctl = rig.controller(control_law="nan_test", state_timeout=10.0, diagnostic_period=0.2)
    _discovered(rig)
    hold = model.gravity_torques(Q0)
    np.testing.assert_allclose(_command_for(rig, Q0), hold, atol=1e-9)
    assert ctl.loop.rejected.count == 1 and "NaN" in ctl.loop.rejected.last_reason

    def ours():
        return [s for r in reports for s in r.status
                if f"{rig.ns}/computed_torque_controller" in s.name]
    rig.spin_until(lambda: any(s.level == DiagnosticStatus.ERROR and "law" in s.message
                               for s in ours()), what="an ERROR report of the failing law")

    for law, reason in (("raising_test", "plugin bug"), ("short_test", "shape")):
        assert ctl.set_parameters([Parameter("control_law", value=law)])[0].successful
        before = ctl.loop.rejected.count
        np.testing.assert_allclose(_command_for(rig, Q0), hold, atol=1e-9)
        assert ctl.loop.rejected.count == before + 1 and reason in ctl.loop.rejected.last_reason

    ctl.set_parameters([Parameter("on_timeout", value="zero")])
    np.testing.assert_array_equal(_command_for(rig, Q0), np.zeros(6))
    # still alive: a sound law works again
    assert ctl.set_parameters([Parameter("control_law", value="gravity_compensation"),
                               Parameter("friction", value=False)])[0].successful
    np.testing.assert_allclose(_command_for(rig, Q0 + 0.1), model.gravity_torques(Q0 + 0.1),
                               atol=1e-9)


# ---------------------------------------------------------------------------- stale, then valid
def test_valid_states_after_stale_hold_the_measured_position(rig, model):
    timeout = 0.2
    ctl = rig.controller(state_timeout=timeout, on_timeout="zero", friction=False,
                         ki=50.0, integral_limit=1.0)
    _discovered(rig)
    _command_for(rig, Q0)  # holds Q0
    for _ in range(3):  # integrate some error
        _command_for(rig, Q0 + 0.05)
    assert np.abs(ctl.loop.law.integral).max() > 0.0
    first = len(rig.commands)
    rig.spin_until(lambda: any(not c.any() for c in rig.commands[first:]), what="stale")
    time.sleep(1.0)  # the reference could have moved on meanwhile
    q = Q0 + 0.1  # the arm sagged while nothing was controlled
    count = len(rig.commands)
    rig.publish_state(q)
    rig.spin_until(lambda: any(c.any() for c in rig.commands[count:]),
                   what="the first command after resuming")
    resumed = next(c for c in rig.commands[count:] if c.any())
    # the hold command at the measured position: no Kp e step, no integral, no dt of a second
    np.testing.assert_allclose(resumed, model.gravity_torques(q), atol=1e-9)
    assert not ctl.loop.law.integral.any()


# ---------------------------------------------------------------------------- ~/hold
def test_hold_forgets_the_integral(rig, model):
    ctl = rig.controller(friction=False, ki=50.0, integral_limit=1.0)
    _discovered(rig)
    _command_for(rig, Q0)
    q = Q0 + 0.05
    for _ in range(3):
        _command_for(rig, q)
    assert np.abs(ctl.loop.law.integral).max() > 0.0
    assert rig.call(Trigger, "computed_torque_controller/hold", Trigger.Request()).success
    assert not ctl.loop.law.integral.any()
    np.testing.assert_allclose(_command_for(rig, q), model.gravity_torques(q), atol=1e-9)


# ---------------------------------------------------------------------------- rate > 0
def test_a_positive_rate_publishes_on_the_timer_once_a_state_arrived(rig, model):
    ctl = rig.controller(rate=200.0, state_timeout=5.0, friction=False)
    _discovered(rig)
    rig.spin_for(0.3)
    assert rig.commands == []  # no state yet: nothing to hold, nothing published
    rig.publish_state(Q0)
    rig.spin_until(lambda: len(rig.commands) >= 20, what="timer-driven commands")
    for command in rig.commands:  # one state, many commands: each holds it
        np.testing.assert_allclose(command, model.gravity_torques(Q0), atol=1e-9)
    assert ctl.loop.rejected.count == 0


# ---------------------------------------------------------------------------- simulator
def test_simulator_refuses_a_zero_mass_scale(rig):
    with pytest.raises(InvalidParameterValueException):
        rig.simulator(urdf_file=PLANAR2, initial_position=[0.0, 0.0], mass_scale=0.0)


def test_simulator_survives_a_singular_mass_matrix(rig):
    sim = rig.simulator(urdf_file=PLANAR2, initial_position=[0.3, 0.2], command_timeout=5.0)
    rig.spin_until(lambda: sim.time_ns > 0, what="simulated time")
    # what a degenerate description does mid-run (the engine integrates the model)
    sim.model = sim.engine.model = sim.model.scaled(mass=0.0)
    pub = rig.probe.create_publisher(Float64MultiArray, f"{rig.ns}/commands", 10)
    wait_for_subscriber(rig, pub)
    pub.publish(Float64MultiArray(data=[1.0, 1.0]))
    rig.spin_until(lambda: not sim._braked, what="the brake release")
    before = sim.time_ns
    rig.spin_until(lambda: sim.time_ns > before + 50_000_000, what="time running on")
    np.testing.assert_array_equal(sim.q, [0.3, 0.2])  # held
    assert sim.integration_failures > 0


# ---------------------------------------------------------------------------- two writers
def test_a_second_writer_of_the_command_topic_is_reported_within_a_second(rig):
    """Issue 23 §4: another node publishing on command_topic (a second controller started by
    mistake) is named on /diagnostics (WARN) within a report period; gone, the WARN goes too."""
    reports = []
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)
    rig.controller(state_timeout=10.0, diagnostic_period=0.2)
    _discovered(rig)
    rig.publish_state(Q0)
    rig.next_command()

    def latest():
        ours = [s for r in reports for s in r.status
                if s.name.endswith(f"{rig.ns}/computed_torque_controller")]
        return ours[-1] if ours else None
    rig.spin_until(lambda: latest() is not None and latest().level == DiagnosticStatus.OK,
                   what="an OK report")
    other = rig.probe.create_publisher(Float64MultiArray, f"{rig.ns}/commands", 10)
    appeared = time.monotonic()
    rig.spin_until(lambda: latest().level == DiagnosticStatus.WARN
                   and rig.probe.get_fully_qualified_name() in latest().message,
                   what="the second writer named")
    assert time.monotonic() - appeared < 1.0 + 0.2   # discovery, then one report period
    rig.probe.destroy_publisher(other)
    rig.spin_until(lambda: latest().level == DiagnosticStatus.OK, what="the WARN gone")


# ---------------------------------------------------------------------------- an identified friction
def test_a_friction_file_is_the_friction_of_the_law_and_of_the_observer(rig, model, tmp_path):
    """issue 46: identify's NAME.friction.yaml (here a smooth Coulomb law and an offset per joint,
    which no URDF carries) is the model's friction for the controller's law and its collision
    observer: the first command, holding the measured position at a measured velocity, is
    NE(q, q̇, −K_d q̇) without the URDF's friction plus the file's, FrictionModel's own NumPy."""
    from robodyn_ros.dynamics.friction import FrictionForm, FrictionModel

    form = FrictionForm.parse("coulomb+tanh=0.05+offset")
    friction = FrictionModel(tuple(JOINTS), (form,) * 6,
                             tuple(np.array([0.3, 0.8, 0.1 * j - 0.2]) for j in range(6)))
    path = friction.save(tmp_path / "puma560_identified.friction.yaml")
    ctl = rig.controller(friction_file=str(path), kp=100.0, kd=20.0, state_timeout=10.0,
                         collision_observer_gain=[50.0], collision_thresholds=[1e3],
                         collision_reaction="none")
    _discovered(rig)
    qd = np.array([0.02, -0.01, 0.04, -0.03, 0.01, 0.0])
    command = _command_for(rig, Q0, qd)
    expected = model.inverse_dynamics(Q0, qd, -20.0 * qd, friction=False) + friction.torques(qd)
    np.testing.assert_allclose(command, expected, rtol=1e-9, atol=1e-12)
    observer = ctl.loop.guard.observer
    np.testing.assert_allclose(observer.model.friction_torques(qd), friction.torques(qd), rtol=1e-12)
    assert observer.friction


def test_a_friction_file_that_lacks_a_joint_is_refused_naming_it(rig, tmp_path):
    from robodyn_ros.dynamics.friction import FrictionForm, FrictionModel

    path = FrictionModel(tuple(JOINTS[:5]), (FrictionForm(),) * 5,
                         tuple(np.zeros(3) for _ in range(5))).save(tmp_path / "short.friction.yaml")
    with pytest.raises(ValueError, match=f"friction_file: {path}: no friction for joint 'joint_6'"):
        rig.controller(friction_file=str(path))
