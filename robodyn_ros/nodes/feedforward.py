"""effort_feedforward: Newton–Euler efforts into the trajectories of a stock joint_trajectory_controller.

For users who keep ros2_control's real-time loop. A trajectory on ``~/joint_trajectory`` leaves on
``<controller_name>/joint_trajectory`` with every point's ``effort`` set to NE(q, q̇, q̈) of that
point (:class:`robodyn_ros.control.feedforward.EffortFeedforward`), its other fields unchanged.
The action ``~/follow_joint_trajectory`` does the same for a goal's
trajectory and forwards the goal to ``<controller_name>/follow_joint_trajectory``, relaying
feedback, cancel and result. JTC with the ``effort`` command interface adds the efforts to its
PID; its configuration: doc/effort_feedforward.md.

A refused trajectory is not forwarded (JTC keeps its current one): its reason is logged
(throttled) and reported on /diagnostics; a refused goal is rejected. With ``effort_rate_limit``
the efforts change no faster than it from those of the trajectory JTC follows when the new one
starts (the last one forwarded; ``EffortFeedforward``).
"""
from __future__ import annotations

import array

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg


from ..control.drive import Drive
from ..control.feedforward import EffortFeedforward
from ..control.joints import JointOrder
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
            drive = self._drive(p["effort_rate_limit"])
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        self.core = EffortFeedforward(self.model, p["friction"], p["position_limit_margin"],
                                      p["max_trajectory_points"], drive)
        self.params.on_set(lambda changes: self._drive(changes["effort_rate_limit"])
                           if "effort_rate_limit" in changes else None, self._new_drive)
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
        self._goals = {}   # the trajectory of each goal accepted here, filled: (msg, efforts, start)
        self.get_logger().info(
            f"Newton-Euler efforts ({'with' if self.core.friction else 'without'} friction; the "
            f"drive adds {p['drive_compensates'] or 'nothing'}; rate limit "
            f"{p['effort_rate_limit'] or 'none'}) for "
            f"joints {self.model.joint_names} into {self._publisher.topic_name} and the action {target}")

    # ------------------------------------------------------------------ the drive
    def _drive(self, rate) -> Drive:
        p = self.params
        return Drive.of(JointOrder(self.model.joint_names), p["drive_compensates"],
                        p["drive_period"], rate)

    def _new_drive(self, drive):
        if drive is not None:
            self.core.drive = drive

    # ------------------------------------------------------------------ filling
    def _fill(self, msg: JointTrajectoryMsg):
        """Set the efforts of ``msg``'s points in place: what JTC will follow, (trajectory,
        efforts, start on this node's clock), or None (the reason counted and logged) when the
        trajectory is refused."""
        try:
            self.core.admit(len(msg.points))  # before converting a flood of points
            trajectory, start = trajectory_from_message(msg)
            start = start or self.get_clock().now().nanoseconds * 1e-9   # 0: JTC's now
            efforts = self.core.efforts(trajectory, start)
        except ValueError as exc:  # TrajectoryError, or a stamp no clock gives
            self.rejected(f"trajectory: {exc}")
            return None
        for point, effort in zip(msg.points, efforts):
            point.effort = array.array("d", effort.tobytes())
        return trajectory, efforts, start

    def _on_trajectory(self, msg: JointTrajectoryMsg):
        filled = self._fill(msg)
        if filled is not None:
            self._publisher.publish(msg)
            self.core.following(*filled)
            self.forwarded += 1

    # ------------------------------------------------------------------ action relay
    def _on_goal(self, goal) -> GoalResponse:
        if not self._controller.server_is_ready():
            self.rejected(f"goal: no action server {self._target} (is the "
                          "joint_trajectory_controller active?)")
            return GoalResponse.REJECT
        # the goal handle the execute callback gets carries this same request, filled here
        filled = self._fill(goal.trajectory)
        if filled is None:
            return GoalResponse.REJECT
        self._goals[id(goal.trajectory)] = filled
        return GoalResponse.ACCEPT

    async def _execute(self, handle):
        key = bytes(handle.goal_id.uuid)
        filled = self._goals.pop(id(handle.request.trajectory), None)
        downstream = await self._controller.send_goal_async(
            handle.request, feedback_callback=lambda msg: handle.publish_feedback(msg.feedback))
        if not downstream.accepted:
            self.rejected("goal: the joint_trajectory_controller rejected it (see its log)")
            handle.abort()
            return FollowJointTrajectory.Result(
                error_code=FollowJointTrajectory.Result.INVALID_GOAL,
                error_string="the joint_trajectory_controller rejected the goal")
        self.forwarded += 1
        if filled is not None:
            self.core.following(*filled)
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
