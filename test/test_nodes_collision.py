"""computed_torque_controller's collision wiring over real DDS (conftest.py: loopback, a domain of
this run's own): the simulated PUMA pushed at the tip through arm_simulator's ~/external_wrench
while a FollowJointTrajectory goal runs. The goal aborts with the reason, ~/collision names the
joint and the link, /diagnostics says ERROR, ~/external_torque and ~/external_wrench_estimate show
the push (r → Jᵀw, and F̂ its force, while the stop holds the arm against it), a reference is refused until
~/reset_collision. The detection and the reactions themselves: test_collision_guard.py."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectoryPoint

from conftest import JOINTS, Q0, wait_for_subscriber

pytestmark = pytest.mark.usefixtures("ros")
NODE = "computed_torque_controller"
PUSH = np.array([0.0, 0.0, -40.0, 0.0, 0.0, 0.0])   # N on the tip, base frame


def test_a_push_aborts_the_goal_is_reported_and_holds_until_reset(rig, model):
    import control_msgs.action as messages
    from rclpy.action import ActionClient
    from test_nodes_drop_in import goal_to, result_of, send

    rig.simulator(friction_scale=0.0, publish_rate=1000.0, lockstep=True, command_timeout=5.0)
    ctl = rig.controller(use_sim_time=True, friction=False, state_timeout=5.0,
                         collision_observer_gain=[50.0], collision_thresholds=[3.0],
                         collision_reaction="stop", external_torque_rate=50.0)
    torques, wrenches, events, reports = [], [], [], []
    for kind, topic, sink in ((JointState, "external_torque", torques),
                              (WrenchStamped, "external_wrench_estimate", wrenches),
                              (DiagnosticStatus, "collision", events)):
        rig.probe.create_subscription(kind, f"{rig.ns}/{NODE}/{topic}", sink.append, 10)
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)
    push = rig.probe.create_publisher(WrenchStamped, f"{rig.ns}/arm_simulator/external_wrench", 10)
    wait_for_subscriber(rig, push)
    rig.spin_until(lambda: len(torques) > 5, timeout=60.0, what="the residual")
    assert list(torques[-1].name) == JOINTS and len(torques[-1].effort) == 6
    assert np.max(np.abs(torques[-1].effort)) < 0.1   # held at rest, the exact model: no push

    client = ActionClient(rig.probe, messages.FollowJointTrajectory,
                          f"{rig.ns}/{NODE}/follow_joint_trajectory")
    rig.spin_until(client.server_is_ready, what="the action server")
    handle = send(rig, client, goal_to(Q0 + np.radians([10.0, -10.0, 10.0, 0.0, 10.0, 0.0]), 20.0))
    assert handle.accepted
    rig.spin_for(0.3)
    msg = WrenchStamped()
    msg.wrench.force.z = float(PUSH[2])
    push.publish(msg)

    result = result_of(rig, handle).result
    assert result.error_code == messages.FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    assert "collision" in result.error_string and "contact wrench estimate" in result.error_string
    rig.spin_until(lambda: events, what="the collision event")
    event = events[0]
    values = {v.key: v.value for v in event.values}
    assert event.level == DiagnosticStatus.ERROR
    assert values["isolated link"] in {f"link_{i}" for i in range(1, 7)}
    assert values["reaction"] == "stop"
    rig.spin_until(lambda: any(s.level == DiagnosticStatus.ERROR and "collision" in s.message
                               for r in reports for s in r.status if s.name.startswith(NODE)),
                   what="ERROR on /diagnostics")

    # held against the push: r converges to τ_ext = Jᵀw, and F̂ to w
    rig.spin_for(0.5)
    q = ctl.loop.q
    expected = model.frame_jacobian(q).T @ PUSH
    r = np.array(torques[-1].effort)
    np.testing.assert_allclose(r, expected, atol=0.02 * np.abs(expected).max())
    f = wrenches[-1].wrench
    estimate = np.array([f.force.x, f.force.y, f.force.z, f.torque.x, f.torque.y, f.torque.z])
    # Q0 has the wrist singular (θ5 = 0): the estimate explains r (Jᵀ F̂ = r) and finds the force,
    # while the moment about the singular direction is damped away, not guessed
    np.testing.assert_allclose(model.frame_jacobian(q).T @ estimate, r, atol=0.02 * np.abs(r).max())
    np.testing.assert_allclose(estimate[:3], PUSH[:3], atol=0.05 * np.abs(PUSH).max())
    assert wrenches[-1].header.frame_id == "base_link"

    reference = rig.probe.create_publisher(JointTrajectoryPoint, f"{rig.ns}/{NODE}/reference", 10)
    wait_for_subscriber(rig, reference)
    refused = ctl.loop.rejected.count
    reference.publish(JointTrajectoryPoint(positions=list(map(float, q))))
    rig.spin_until(lambda: ctl.loop.rejected.count > refused, what="the refused reference")
    assert "reset the collision" in ctl.loop.rejected.last_reason

    push.publish(WrenchStamped())   # the push ends
    answer = rig.call(Trigger, f"{NODE}/reset_collision", Trigger.Request())
    assert answer.success and "collision reset" in answer.message
    assert not ctl.loop.collided
    assert not rig.call(Trigger, f"{NODE}/reset_collision", Trigger.Request()).success


def test_the_estimates_are_computed_only_while_someone_listens(rig):
    """~/external_torque and ~/external_wrench_estimate cost a node nothing while nobody listens
    (asked once per diagnostics period, as for ~/controller_state); one that starts listening
    gets them from the next period on."""
    rig.simulator(friction_scale=0.0, publish_rate=1000.0, lockstep=True, command_timeout=5.0)
    ctl = rig.controller(use_sim_time=True, friction=False, state_timeout=5.0,
                         collision_observer_gain=[50.0])
    rig.spin_until(lambda: ctl.loop is not None and ctl.loop.active
                   and ctl._collisions.listened == (False, False), timeout=60.0,
                   what="a diagnostics period with nobody listening")
    commands, published = len(rig.commands), ctl._collisions._next
    rig.spin_until(lambda: len(rig.commands) > commands + 200, what="cycles")
    assert ctl._collisions._next == published   # no estimate computed
    torques = []
    rig.probe.create_subscription(JointState, f"{rig.ns}/{NODE}/external_torque", torques.append, 10)
    rig.spin_until(lambda: len(torques) > 3, timeout=30.0, what="the residual once listened to")
    assert ctl._collisions.listened == (True, False) and ctl._collisions._next > published


def test_an_isolation_that_moves_out_is_published_again(rig, model):
    """Thresholds that joint 2 crosses at once and the last loaded joint only when r has nearly
    reached τ_ext (some 50 ms after, r being τ_ext through a 50/s low-pass): ~/collision carries
    the detection, then the same event again isolated further out."""
    rig.simulator(friction_scale=0.0, publish_rate=1000.0, lockstep=True, command_timeout=5.0)
    tau = model.frame_jacobian(Q0).T @ PUSH
    last = int(np.flatnonzero(np.abs(tau) > 0.5)[-1])
    thresholds = np.full(6, 1e3)
    thresholds[1], thresholds[last] = 0.1 * abs(tau[1]), 0.9 * abs(tau[last])
    assert last > 1
    ctl = rig.controller(use_sim_time=True, friction=False, state_timeout=5.0,
                         collision_observer_gain=[50.0], collision_thresholds=thresholds.tolist(),
                         collision_reaction="stop")
    events = []
    rig.probe.create_subscription(DiagnosticStatus, f"{rig.ns}/{NODE}/collision", events.append, 10)
    push = rig.probe.create_publisher(WrenchStamped, f"{rig.ns}/arm_simulator/external_wrench", 10)
    wait_for_subscriber(rig, push)
    rig.spin_until(lambda: ctl.loop is not None and ctl.loop.active, timeout=60.0, what="active")
    rig.spin_for(0.3)
    msg = WrenchStamped()
    msg.wrench.force.z = float(PUSH[2])
    push.publish(msg)
    rig.spin_until(lambda: len(events) >= 2, timeout=30.0, what="the detection and the move")
    first, moved = ({v.key: v.value for v in e.values} for e in events[:2])
    assert first["isolated link"] == "link_2" and moved["isolated link"] == f"link_{last + 1}"
    # located (the controller read the URDF's shapes) at or after the isolated link
    assert int(moved["located link"].removeprefix("link_")) >= last + 1
    assert first["time (s)"] == moved["time (s)"]
    assert float(moved["isolated at (s)"]) - float(first["time (s)"]) > 0.02
    assert "isolated further out" in events[1].message


def test_on_an_arm_that_measures_currents_diagnostics_carry_the_residual_in_newton_metres_and_amperes(rig, model):
    """A driver that reports motor currents in ``effort`` (ur_robot_driver), the controller told
    the drive gains: held at rest, the arm's currents carry its gravity torque plus δ on joint 2
    that the model does not explain. The observer takes the currents times the gains, and its
    residual settles at g(q) − τ = −δ (at rest ṗ = 0: ṙ = K_O (g − τ − r)); /diagnostics shows it
    per joint in N m, and in A: −δ / k."""
    gains = np.array([12.5, 13.4, 11.8, 9.6, 8.9, 9.3])   # N m/A
    delta = np.array([0.0, 4.0, 0.0, 0.0, 0.0, 0.0])       # N m
    currents = ((model.gravity_torques(Q0) + delta) / gains).tolist()
    rig.controller(control_law="gravity_compensation", friction=False, state_timeout=5.0,
                   collision_observer_gain=[50.0], collision_torque="measured",
                   drive_gains=gains.tolist(), diagnostic_period=0.2)
    reports = []
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)

    def values():
        for report in reversed(reports):
            for status in report.status:
                if status.name.startswith(NODE) and any(v.key.startswith("residual") for v in status.values):
                    return {v.key: v.value for v in status.values}
        return None

    def settled():
        msg = JointState(name=JOINTS, position=Q0.tolist(), velocity=[0.0] * 6, effort=currents)
        msg.header.stamp = rig.probe.get_clock().now().to_msg()
        rig.joint_states.publish(msg)
        found = values()
        return found is not None and abs(float(found["residual joint_2 (N m)"]) + delta[1]) < 0.01
    rig.spin_until(settled, timeout=60.0, what="the residual in N m settled at -δ on /diagnostics")
    found = values()
    r = np.array([float(found[f"residual {j} (N m)"]) for j in JOINTS])
    amperes = np.array([float(found[f"residual {j} (A)"]) for j in JOINTS])
    np.testing.assert_allclose(r, -delta, atol=0.01)
    np.testing.assert_allclose(amperes, -delta / gains, atol=0.01 / gains.min())
    assert found["observer torque"].startswith("measured effort")


def test_drive_parameters_that_do_not_fit_the_joints_refuse_the_configure_in_one_line(rig, tmp_path, capfd):
    from robodyn_ros.dynamics.drives import JointDrives
    from robodyn_ros.nodes.common import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"drive_gains: 2 values for the 6 joints") as caught:
        rig.controller(drive_gains=[12.0, 13.0])
    assert "\n" not in str(caught.value)
    five = JointDrives.currents(JOINTS[:5], [10.0] * 5).save(tmp_path / "five.drives.yaml")
    with pytest.raises(ConfigurationError, match=r"five\.drives\.yaml: no drives for joint 'joint_6'"):
        rig.controller(drives_file=str(five))
    assert "Traceback" not in capfd.readouterr().err   # a refusal, not a failure nobody expected
