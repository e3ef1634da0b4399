"""effort_feedforward: Newton–Euler efforts into the trajectories of a stock joint_trajectory_controller.

For users who keep ros2_control's real-time loop. A trajectory on ``~/joint_trajectory`` leaves on
``<controller_name>/joint_trajectory`` with every point's ``effort`` set to NE(q, q̇, q̈) of that
point (:class:`robodyn_ros.control.feedforward.EffortFeedforward`), its other fields unchanged.
The action ``~/follow_joint_trajectory`` does the same for a goal's
trajectory and forwards the goal to ``<controller_name>/follow_joint_trajectory``, relaying
feedback, cancel and result. JTC with the ``effort`` command interface adds the efforts to its
PID; its configuration: doc/effort_feedforward.md.

A refused trajectory is not forwarded (JTC keeps its current one): its reason is logged
(throttled) and reported on /diagnostics; a refused goal is rejected.
"""
from __future__ import annotations

import array

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg


from ..control.drive import compensation_bits
from ..control.feedforward import EffortFeedforward
from ..dynamics import warm_up
from .parameters import node_schema
from .process import spin
from .common import OK, WARN, ConfigurationError, CountedWarning, Diagnostics, Parameters
from .description import load_model, when_described
from .messages import FollowJointTrajectory, trajectory_from_message

NAME = "effort_feedforward"


def schema():
    return node_schema(NAME)


class EffortFeedforwardNode(Node):
    def __init__(self, name: str = NAME, **kwargs):
        super().__init__(name, **kwargs)
        self.params = Parameters(self, schema())
        when_described(self, self.params, self._setup)

    def _setup(self, published):
        p = self.params
        self.model = load_model(p, published)
        warm_up(notify=self.get_logger().info, forward=False)
        try:
            compensates = compensation_bits(p["drive_compensates"])
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        self.core = EffortFeedforward(self.model, p["friction"], p["position_limit_margin"],
                                      p["max_trajectory_points"], compensates)
        controller = p["controller_name"].rstrip("/")
        if not controller:
            raise ConfigurationError("controller_name must name the joint_trajectory_controller")
        self.rejected = CountedWarning(self, "trajectory rejected")
        self.forwarded = 0  # trajectories and goals
        self._reported = (0, 0)
        self._publisher = self.create_publisher(JointTrajectoryMsg,
                                                f"{controller}/joint_trajectory", 10)
        self.create_subscription(JointTrajectoryMsg, "~/joint_trajectory", self._on_trajectory, 10)
        self._target = target = self.resolve_topic_name(f"{controller}/follow_joint_trajectory")
        self._controller = ActionClient(self, FollowJointTrajectory, target)
        self._downstream = {}  # our goal id -> the controller's goal handle
        self._server = ActionServer(
            self, FollowJointTrajectory, "~/follow_joint_trajectory",
            execute_callback=self._execute, goal_callback=self._on_goal,
            cancel_callback=self._on_cancel)
        Diagnostics(self, self._report, p["diagnostic_period"])
        self.get_logger().info(
            f"Newton-Euler efforts ({'with' if self.core.friction else 'without'} friction; the "
            f"drive adds {p['drive_compensates'] or 'nothing'}) for "
            f"joints {self.model.joint_names} into {self._publisher.topic_name} and the action {target}")

    # ------------------------------------------------------------------ filling
    def _fill(self, msg: JointTrajectoryMsg) -> bool:
        """Set the efforts of ``msg``'s points in place; False (the reason counted and logged)
        when the trajectory is refused."""
        try:
            self.core.admit(len(msg.points))  # before converting a flood of points
            trajectory, _ = trajectory_from_message(msg)
            efforts = self.core.efforts(trajectory)
        except ValueError as exc:  # TrajectoryError, or a stamp no clock gives
            self.rejected(f"trajectory: {exc}")
            return False
        for point, effort in zip(msg.points, efforts):
            point.effort = array.array("d", effort.tobytes())
        return True

    def _on_trajectory(self, msg: JointTrajectoryMsg):
        if self._fill(msg):
            self._publisher.publish(msg)
            self.forwarded += 1

    # ------------------------------------------------------------------ action relay
    def _on_goal(self, goal) -> GoalResponse:
        if not self._controller.server_is_ready():
            self.rejected(f"goal: no action server {self._target} (is the "
                          "joint_trajectory_controller active?)")
            return GoalResponse.REJECT
        # the goal handle the execute callback gets carries this same request, filled here
        return GoalResponse.ACCEPT if self._fill(goal.trajectory) else GoalResponse.REJECT

    async def _execute(self, handle):
        key = bytes(handle.goal_id.uuid)
        downstream = await self._controller.send_goal_async(
            handle.request, feedback_callback=lambda msg: handle.publish_feedback(msg.feedback))
        if not downstream.accepted:
            self.rejected("goal: the joint_trajectory_controller rejected it (see its log)")
            handle.abort()
            return FollowJointTrajectory.Result(
                error_code=FollowJointTrajectory.Result.INVALID_GOAL,
                error_string="the joint_trajectory_controller rejected the goal")
        self.forwarded += 1
        self._downstream[key] = downstream
        try:
            if handle.is_cancel_requested:  # the cancel came while the goal was on its way
                await downstream.cancel_goal_async()
            response = await downstream.get_result_async()
        finally:
            del self._downstream[key]
        if response.status == GoalStatus.STATUS_SUCCEEDED:
            handle.succeed()
        elif response.status == GoalStatus.STATUS_CANCELED and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        return response.result

    def _on_cancel(self, handle) -> CancelResponse:
        downstream = self._downstream.get(bytes(handle.goal_id.uuid))
        if downstream is not None:
            downstream.cancel_goal_async()
        return CancelResponse.ACCEPT

    # ------------------------------------------------------------------ diagnostics
    def _report(self):
        counts = (self.forwarded, self.rejected.count)
        forwarded, rejected = (c - r for c, r in zip(counts, self._reported))
        self._reported = counts
        values = {"forwarded (window)": forwarded, "forwarded (total)": self.forwarded,
                  "rejected (window)": rejected, "rejected (total)": self.rejected.count,
                  "last rejection": self.rejected.last_reason,
                  "controller subscribed": self._publisher.get_subscription_count() > 0}
        if rejected:
            return WARN, f"trajectories rejected: {self.rejected.last_reason}", values
        return OK, f"feeding {self._publisher.topic_name}", values


def main(args=None):
    raise SystemExit(spin(EffortFeedforwardNode, args))


if __name__ == "__main__":
    main()
