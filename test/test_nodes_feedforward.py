"""effort_feedforward over real DDS: a trajectory in, the same trajectory with Newton–Euler efforts
out on the controller's topic; with control_msgs, a FollowJointTrajectory goal relayed to a small
joint_trajectory_controller stand-in (a real rclpy action server) with feedback, result and cancel
passed back."""
import warnings

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from rclpy.parameter import Parameter
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from conftest import JOINTS, Q0, URDF, wait_for_subscriber
from robodyn_ros.nodes.feedforward import EffortFeedforwardNode

ORDER = [3, 0, 5, 1, 4, 2]  # the message's joint order, not the chain's
TIMES = [0.5, 1.25, 2.0]
RNG = np.random.default_rng(3)
P = Q0 + RNG.uniform(-0.3, 0.3, (3, 6))  # chain order
V = RNG.uniform(-0.5, 0.5, (3, 6))
A = RNG.uniform(-1.0, 1.0, (3, 6))


def trajectory_message(joints=None):
    """A quintic trajectory (every derivative given) in ORDER, so its efforts are NE of its own
    points."""
    msg = JointTrajectory(joint_names=joints or [JOINTS[j] for j in ORDER])
    for t, p, v, a in zip(TIMES, P, V, A):
        msg.points.append(JointTrajectoryPoint(
            positions=p[ORDER].tolist(), velocities=v[ORDER].tolist(),
            accelerations=a[ORDER].tolist(),
            time_from_start=Duration(sec=int(t), nanosec=int(round(t % 1 * 1e9)))))
    return msg


def expected_efforts(model):
    return np.array([model.inverse_dynamics(p, v, a)[ORDER] for p, v, a in zip(P, V, A)])


def feedforward(rig):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the PUMA data's link-3 inertia is not physical
        return rig.add(EffortFeedforwardNode(namespace=rig.ns, parameter_overrides=[
            Parameter("urdf_file", value=URDF)]))


def relayed(rig):
    """(what leaves on the controller's topic, a publisher to the node's topic it has heard)."""
    received = []
    rig.probe.create_subscription(JointTrajectory, f"{rig.ns}/joint_trajectory_controller/"
                                  "joint_trajectory", received.append, 10)
    publisher = rig.probe.create_publisher(JointTrajectory,
                                           f"{rig.ns}/effort_feedforward/joint_trajectory", 10)
    wait_for_subscriber(rig, publisher)
    return received, publisher


def test_topic_trajectory_leaves_with_efforts_on_the_controller_topic(rig, model):
    node = feedforward(rig)
    received, publisher = relayed(rig)
    rig.spin_until(lambda: rig.probe.count_publishers(
        f"{rig.ns}/joint_trajectory_controller/joint_trajectory") > 0, what="its publisher")
    publisher.publish(trajectory_message(joints=JOINTS[:5] + ["gripper"]))  # refused
    good = trajectory_message()
    publisher.publish(good)
    rig.spin_until(lambda: received, what="the filled trajectory")
    rig.spin_for(0.2)
    assert len(received) == 1, "the refused trajectory was forwarded"
    assert node.rejected.count == 1 and "'gripper'" in node.rejected.last_reason
    out = received[0]
    assert list(out.joint_names) == list(good.joint_names)
    for sent, filled in zip(good.points, out.points):
        assert list(filled.positions) == list(sent.positions)  # the path is left as it was
        assert list(filled.velocities) == list(sent.velocities)
        assert list(filled.accelerations) == list(sent.accelerations)
        assert filled.time_from_start == sent.time_from_start
    np.testing.assert_allclose([p.effort for p in out.points], expected_efforts(model),
                               rtol=1e-9, atol=1e-9)


def test_a_friction_file_gives_the_identified_friction(rig, model, tmp_path):
    """``friction_file`` (an identified URDF's): smooth Coulomb and an offset per joint in place of
    the URDF's friction, in closed form."""
    from robodyn_ros.dynamics.friction import FrictionForm, FrictionModel

    form = FrictionForm.parse("coulomb+tanh=0.2+offset")
    path = FrictionModel(tuple(JOINTS), (form,) * 6, tuple(np.array([0.2, 0.5, 0.1 * j]) for j in range(6))).save(
        tmp_path / "puma.friction.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rig.add(EffortFeedforwardNode(namespace=rig.ns, parameter_overrides=[
            Parameter("urdf_file", value=URDF), Parameter("friction_file", value=str(path))]))
    received, publisher = relayed(rig)
    publisher.publish(trajectory_message())
    rig.spin_until(lambda: received, what="the filled trajectory")
    friction = 0.2 * V + 0.5 * np.tanh(V / 0.2) + 0.1 * np.arange(6)
    expected = np.array([(model.inverse_dynamics(p, v, a, friction=False) + f)[ORDER]
                         for p, v, a, f in zip(P, V, A, friction)])
    np.testing.assert_allclose([p.effort for p in received[0].points], expected, rtol=1e-9, atol=1e-9)


@pytest.fixture
def control_msgs():
    import control_msgs.action
    return control_msgs.action


class FakeJTC:
    """The action side of joint_trajectory_controller, as a real rclpy action server: it records
    each goal, sends one feedback, and succeeds — or, for a goal whose trajectory's frame_id is
    'wait', waits for cancel; 'refuse' it rejects."""

    def __init__(self, rig, action):
        from rclpy.action import ActionServer, CancelResponse, GoalResponse
        from rclpy.task import Future
        self.action, self.goals, self.cancel = action, [], Future()
        self.server = ActionServer(
            rig.probe, action, f"{rig.ns}/joint_trajectory_controller/follow_joint_trajectory",
            execute_callback=self.execute,
            goal_callback=lambda goal: GoalResponse.REJECT
            if goal.trajectory.header.frame_id == "refuse" else GoalResponse.ACCEPT,
            cancel_callback=lambda handle: (self.cancel.set_result(True),
                                            CancelResponse.ACCEPT)[1])

    async def execute(self, handle):
        self.goals.append(handle.request)
        result = self.action.Result
        if handle.request.trajectory.header.frame_id == "wait":
            await self.cancel
            handle.canceled()
            return result(error_code=result.SUCCESSFUL, error_string="fake JTC canceled")
        handle.publish_feedback(self.action.Feedback(joint_names=["feedback from the fake JTC"]))
        handle.succeed()
        return result(error_code=result.SUCCESSFUL, error_string="fake JTC reached the goal")


def relay(rig, control_msgs):
    from rclpy.action import ActionClient
    action = control_msgs.FollowJointTrajectory
    jtc = FakeJTC(rig, action)
    node = feedforward(rig)
    client = ActionClient(rig.probe, action, f"{rig.ns}/effort_feedforward/follow_joint_trajectory")
    rig.spin_until(client.server_is_ready, what="the relay's action server")
    # discovery of the fake JTC by the relay's own client (it rejects goals until then)
    rig.spin_until(node._controller.server_is_ready, what="the controller's action server")
    return action, jtc, client


def send(rig, client, goal, feedback=None):
    future = client.send_goal_async(goal, feedback_callback=feedback)
    rig.spin_until(future.done, what="the goal response")
    return future.result()


def result_of(rig, handle):
    future = handle.get_result_async()
    rig.spin_until(future.done, what="the result")
    return future.result()


def test_goal_is_filled_relayed_and_its_feedback_and_result_passed_back(rig, model,
                                                                        control_msgs):
    action, jtc, client = relay(rig, control_msgs)
    feedback = []
    handle = send(rig, client, action.Goal(trajectory=trajectory_message()), feedback.append)
    assert handle.accepted
    response = result_of(rig, handle)
    assert response.status == GoalStatus.STATUS_SUCCEEDED
    assert response.result.error_string == "fake JTC reached the goal"
    rig.spin_until(lambda: feedback, what="the relayed feedback")
    assert list(feedback[0].feedback.joint_names) == ["feedback from the fake JTC"]
    assert len(jtc.goals) == 1
    np.testing.assert_allclose([p.effort for p in jtc.goals[0].trajectory.points],
                               expected_efforts(model), rtol=1e-9, atol=1e-9)


def test_goal_with_an_unknown_joint_is_rejected_and_never_reaches_the_controller(rig,
                                                                                  control_msgs):
    action, jtc, client = relay(rig, control_msgs)
    handle = send(rig, client, action.Goal(
        trajectory=trajectory_message(joints=JOINTS[:5] + ["gripper"])))
    assert not handle.accepted
    rig.spin_for(0.2)
    assert jtc.goals == []


def test_goal_the_controller_rejects_is_aborted_with_invalid_goal(rig, control_msgs):
    action, jtc, client = relay(rig, control_msgs)
    goal = action.Goal(trajectory=trajectory_message())
    goal.trajectory.header.frame_id = "refuse"
    handle = send(rig, client, goal)
    assert handle.accepted  # by the relay, which then hears the controller's answer
    response = result_of(rig, handle)
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == action.Result.INVALID_GOAL
    assert "rejected" in response.result.error_string
    assert jtc.goals == []


def test_cancel_is_relayed_to_the_controller(rig, control_msgs):
    action, jtc, client = relay(rig, control_msgs)
    goal = action.Goal(trajectory=trajectory_message())
    goal.trajectory.header.frame_id = "wait"
    handle = send(rig, client, goal)
    assert handle.accepted
    rig.spin_until(lambda: jtc.goals, what="the goal at the controller")
    cancel = handle.cancel_goal_async()
    rig.spin_until(cancel.done, what="the cancel response")
    response = result_of(rig, handle)
    assert jtc.cancel.done()
    assert response.status == GoalStatus.STATUS_CANCELED
    assert response.result.error_string == "fake JTC canceled"


@pytest.mark.parametrize("spoil,reason", [
    (lambda m: setattr(m.points[1].time_from_start, "nanosec", 1_000_000_000), "no valid time"),
    (lambda m: setattr(m.header.stamp, "nanosec", 2_000_000_000), "no valid time"),
    (lambda m: setattr(m.points[1], "velocities", []), "velocities"),  # given for some points
    (lambda m: setattr(m.points[0], "positions", [0.1] * 5), "positions"),
    (lambda m: setattr(m, "points", []), "no points"),
])
def test_message_conversion_refuses_what_jtc_could_not_follow(spoil, reason):
    from robodyn_ros.nodes.messages import trajectory_from_message
    msg = trajectory_message()
    spoil(msg)
    with pytest.raises(ValueError, match=reason):
        trajectory_from_message(msg)
