"""computed_torque_controller's Cartesian inputs and outputs (nodes/cartesian.py) over real DDS
(conftest.py: loopback, a domain of this run's own): ~/target_pose, ~/target_wrench and
~/cartesian_trajectory on the simulated PUMA 560, ~/current_pose and ~/current_twist, the law's
figures on /diagnostics, stiffness changed at run time, and every refusal with its reason while
the node keeps commanding finite efforts (a singular configuration included)."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, Transform, TwistStamped, WrenchStamped
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger
from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint

from robodyn_ros.control.inverse_kinematics import IK_POSITION_TOLERANCE
from robodyn_ros.nodes.common import stamp_parts
from robodyn_ros.spatial.rotations import matrix_quaternion

from conftest import JOINTS, wait_for_subscriber

pytestmark = pytest.mark.usefixtures("ros")
NODE = "computed_torque_controller"
BASE = "base_link"   # urdf/puma560.urdf's root link
# the PUMA away from singularities, within its limits, and its wrist singularity (q5 = 0)
START = np.radians([0.0, 30.0, -120.0, 0.0, -60.0, 0.0])
SINGULAR = np.radians([0.0, 30.0, -120.0, 0.0, 0.0, 0.0])
TURN = np.diag([-1.0, -1.0, 1.0])   # half a turn about z


def pose_msg(position, quaternion, frame=BASE):
    msg = PoseStamped()
    msg.header.frame_id = frame
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z = map(float, position)
    o.x, o.y, o.z, o.w = map(float, quaternion)
    return msg


def current(rig, topic, kind):
    """A subscription to the controller's ``topic``; the list its messages go into."""
    received = []
    rig.probe.create_subscription(kind, f"{rig.ns}/{NODE}/{topic}", received.append, 100)
    return received


def xyz(v):
    return np.array([v.x, v.y, v.z])


def closed_loop(rig, law, **params):
    """The simulated PUMA at START (lockstep, 1 kHz, no friction) and the controller with ``law``."""
    sim = rig.simulator(friction_scale=0.0, publish_rate=1000.0, lockstep=True,
                        command_timeout=5.0, initial_position=START.tolist())
    ctl = rig.controller(use_sim_time=True, control_law=law, friction=False, state_timeout=5.0,
                         **params)
    rig.spin_until(lambda: sim.time_ns > 0.05e9, what="the loop running")
    return sim, ctl


def publisher(rig, kind, topic):
    pub = rig.probe.create_publisher(kind, f"{rig.ns}/{NODE}/{topic}", 10)
    wait_for_subscriber(rig, pub)
    return pub


def test_target_pose_is_reached_and_the_tip_published(rig, model):
    sim, ctl = closed_loop(rig, "operational_space")
    poses, twists = current(rig, "current_pose", PoseStamped), current(rig, "current_twist",
                                                                        TwistStamped)
    reports = []
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)
    rig.spin_until(lambda: poses and twists, what="~/current_pose and ~/current_twist")
    start = model.frame_pose(START)
    assert poses[-1].header.frame_id == twists[-1].header.frame_id == BASE
    np.testing.assert_allclose(xyz(poses[-1].pose.position), start[:3, 3], atol=1e-3)

    target = start[:3, 3] + [0.0, 0.03, 0.04]
    quaternion = matrix_quaternion(start[:3, :3])
    publisher(rig, PoseStamped, "target_pose").publish(pose_msg(target, quaternion, frame=""))
    rig.spin_until(lambda: np.linalg.norm(xyz(poses[-1].pose.position) - target) < 1e-4
                   and np.linalg.norm(xyz(twists[-1].twist.linear)) < 1e-3, timeout=60.0,
                   what="the target pose reached")
    # what the node publishes is the simulated arm's pose at the stamp of its state
    pose = model.frame_pose(sim.q)
    np.testing.assert_allclose(pose[:3, 3], target, atol=2e-4)
    assert abs(abs(matrix_quaternion(pose[:3, :3]) @ quaternion) - 1.0) < 1e-6
    rig.spin_until(lambda: any(v.key == "cartesian target" and v.value == "pose"
                               for r in reports for s in r.status if s.name.startswith(NODE)
                               for v in s.values)
                   and any(v.key == "manipulability" for r in reports for s in r.status
                           for v in s.values), what="the law's figures on /diagnostics")

    # ~/hold: back to the joint reference, held where the arm is
    assert rig.call(Trigger, f"{NODE}/hold", Trigger.Request()).success
    rig.spin_for(0.3)
    np.testing.assert_allclose(model.frame_pose(sim.q)[:3, 3], target, atol=1e-3)
    assert ctl.loop.rejected.count == 0


def test_cartesian_trajectory_from_the_held_pose_and_the_impedance_wrench(rig, model):
    """A trajectory whose first point comes 0.2 s after its start is joined from the held pose
    (no jump) and followed to its end; with cartesian_impedance a wrench w displaces the tip by
    K⁻¹ w at rest, and a stiffness set at run time (validated) changes it."""
    k = 800.0
    sim, ctl = closed_loop(rig, "cartesian_impedance", stiffness=[k, 80.0])
    start = model.frame_pose(START)
    quaternion = matrix_quaternion(start[:3, :3])
    msg = MultiDOFJointTrajectory(joint_names=["tool0"])   # the URDF's tip link names the tip
    msg.header.frame_id = BASE
    ends = [start[:3, 3] + [0.0, 0.0, 0.01], start[:3, 3] + [0.0, 0.01, 0.01]]
    for i, p in enumerate(ends):
        t = Transform()
        t.translation.x, t.translation.y, t.translation.z = map(float, p)
        t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w = map(float, quaternion)
        point = MultiDOFJointTrajectoryPoint(transforms=[t])
        point.time_from_start.sec, point.time_from_start.nanosec = stamp_parts(0.2 * (i + 1))
        msg.points.append(point)
    path = []
    rig.spin_for(0.1)
    publisher(rig, MultiDOFJointTrajectory, "cartesian_trajectory").publish(msg)
    rig.spin_until(lambda: path.append(model.frame_pose(sim.q)[:3, 3]) or (
        np.linalg.norm(path[-1] - ends[-1]) < 2e-3 and np.abs(sim.qd).max() < 1e-2),
        timeout=60.0, what="the trajectory's end")
    path = np.array(path)
    # from the held pose, along the two segments (an impedance lags: within a few mm)
    assert np.linalg.norm(path[0] - start[:3, 3]) < 1e-3
    assert np.abs(path[:, 0] - start[0, 3]).max() < 2e-3
    assert ctl.loop.rejected.count == 0

    wrench = publisher(rig, WrenchStamped, "target_wrench")
    w = WrenchStamped()
    w.header.frame_id = BASE
    w.wrench.force.z = 8.0
    wrench.publish(w)

    def displaced(expected):
        rig.spin_until(lambda: abs(model.frame_pose(sim.q)[2, 3] - ends[-1][2] - expected)
                       < 0.1 * expected and np.abs(sim.qd).max() < 1e-3, timeout=60.0,
                       what=f"a displacement of {expected} m")
    displaced(8.0 / k)
    assert not ctl.set_parameters([Parameter("stiffness", value=[-1.0, 80.0])])[0].successful
    assert ctl.set_parameters([Parameter("stiffness", value=[2 * k, 80.0])])[0].successful
    displaced(8.0 / (2 * k))    # the new law got the target and the wrench again


def test_refusals_keep_the_node_commanding_finite_efforts(rig, model):
    """Every refusal with its reason on /diagnostics; at the wrist singularity the efforts stay
    finite."""
    ctl = rig.controller(control_law="computed_torque", state_timeout=5.0)
    pose = publisher(rig, PoseStamped, "target_pose")
    wrench = publisher(rig, WrenchStamped, "target_wrench")
    trajectory = publisher(rig, MultiDOFJointTrajectory, "cartesian_trajectory")
    start = model.frame_pose(START)
    quaternion = matrix_quaternion(start[:3, :3])

    def refused(publish, reason):
        count = ctl.loop.rejected.count
        publish()
        rig.spin_until(lambda: ctl.loop.rejected.count > count, what=f"refusal: {reason}")
        assert reason in ctl.loop.rejected.last_reason, ctl.loop.rejected.last_reason

    rig.publish_state(START, names=JOINTS)
    rig.next_command()
    refused(lambda: pose.publish(pose_msg(start[:3, 3], quaternion)),
            "target_pose: control_law computed_torque takes no Cartesian target")
    assert ctl.set_parameters([Parameter("control_law", value="operational_space")])[0].successful
    for msg, reason in [
            (pose_msg(start[:3, 3], quaternion, frame="world"),
             "frame_id 'world' is not the base frame 'base_link'"),
            (pose_msg(start[:3, 3], 1.01 * quaternion), "quaternion norm 1.01"),
            (pose_msg([np.nan, 0.0, 0.0], quaternion), "position is not finite"),
            (pose_msg([0.0, 0.0, 3.0], quaternion), "outside the workspace"),
            # START turned half a turn about the first joint's axis: beyond joint_1's ±160°
            (pose_msg(TURN @ start[:3, 3], matrix_quaternion(TURN @ start[:3, :3])),
             "not reached within the joint limits")]:
        refused(lambda: pose.publish(msg), reason)
    assert "residual" in ctl.loop.rejected.last_reason and "joint_1" in ctl.loop.rejected.last_reason
    refused(lambda: wrench.publish(WrenchStamped()), "operational_space takes no wrench")
    refused(lambda: trajectory.publish(MultiDOFJointTrajectory(joint_names=["joint_3"])),
            "must be one of [['tip', 'tool0']]")
    refused(lambda: trajectory.publish(MultiDOFJointTrajectory(joint_names=["tip"])), "0 points")
    assert IK_POSITION_TOLERANCE < 0.01

    # at the wrist singularity, a target 1 cm away: accepted, and the efforts stay finite
    rig.publish_state(SINGULAR, names=JOINTS)
    rig.next_command()
    singular = model.frame_pose(SINGULAR)
    count = ctl.loop.rejected.count
    pose.publish(pose_msg(singular[:3, 3] + [0.0, 0.0, 0.01], matrix_quaternion(singular[:3, :3])))
    rig.spin_for(0.2)
    assert ctl.loop.rejected.count == count, ctl.loop.rejected.last_reason
    for _ in range(20):
        rig.publish_state(SINGULAR, names=JOINTS)
        assert np.isfinite(rig.next_command()).all()
    assert ctl.loop.law_failures == 0
    assert ctl.loop.law.damping > 0.0     # the singular direction was damped


def test_a_follow_joint_trajectory_goal_drops_the_cartesian_target(rig, model):
    """A goal MoveIt sends while a Cartesian target is set is followed: the law steps back to the
    joint reference, as it does for a joint trajectory on the topic (before, the goal was accepted
    and the law kept the pose, so the goal failed its tolerances)."""
    import control_msgs.action as messages
    from rclpy.action import ActionClient
    from test_nodes_drop_in import goal_to, result_of, send
    sim, ctl = closed_loop(rig, "operational_space")
    start = model.frame_pose(START)
    target = start[:3, 3] + [0.0, 0.02, 0.02]
    publisher(rig, PoseStamped, "target_pose").publish(
        pose_msg(target, matrix_quaternion(start[:3, :3])))
    rig.spin_until(lambda: np.linalg.norm(model.frame_pose(sim.q)[:3, 3] - target) < 1e-3,
                   timeout=60.0, what="the target pose reached")
    client = ActionClient(rig.probe, messages.FollowJointTrajectory,
                          f"{rig.ns}/{NODE}/follow_joint_trajectory")
    rig.spin_until(client.server_is_ready, what="the action server")
    result = result_of(rig, send(rig, client, goal_to(START, 0.5)))
    assert result.result.error_code == messages.FollowJointTrajectory.Result.SUCCESSFUL, \
        result.result.error_string
    np.testing.assert_allclose(sim.q, START, atol=0.01)
