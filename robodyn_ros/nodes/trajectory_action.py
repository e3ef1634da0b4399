"""What joint_trajectory_controller offers MoveIt and other clients, with its names and semantics:
the ``~/follow_joint_trajectory`` action (control_msgs/FollowJointTrajectory) and the
``~/query_state`` service (control_msgs/QueryTrajectoryState), for a controller node whose
reference is a :class:`~robodyn_ros.control.loop.ControlLoop`'s.

A goal is refused unless the controller is active and its trajectory could be followed (the
controller's joints, times, sizes, position limits, an end not in the past). An accepted goal
preempts the one running (aborted, INVALID_GOAL), as does a trajectory on the topic; cancel holds
the measured position; the outcome is judged every control cycle by
:class:`~robodyn_ros.control.goal.GoalMonitor`. Feedback goes out at ``action_monitor_rate``.
"""
from __future__ import annotations

import dataclasses

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future

from ..control.goal import INVALID_GOAL, GoalMonitor, Outcome, Tolerances, for_goal
from ..control.loop import Rejection
from .common import stamp_seconds
from .lifecycle import RCLError
from .messages import FollowJointTrajectory, QueryTrajectoryState, trajectory_from_message

PREEMPTED = "Current goal preempted by new incoming action."
DEACTIVATED = "Current goal cancelled during deactivate transition."
#: s a finished goal's result is kept for a client to fetch; rclpy's 900 s let a flood of goals
#: hold their results (and memory) for a quarter of an hour
RESULT_TIMEOUT = 60


#: goals taken from the middleware but not yet handled; one more is refused at once
MAX_PENDING_GOALS = 4


class _GoalServer(ActionServer):
    """rclpy's ActionServer, refusing at once a goal that arrives while MAX_PENDING_GOALS others
    wait to be handled. The executor converts every goal it takes into Python objects (50 ms for
    10,000 points) and queues its handling behind the next takes: under a flood of goals the
    converted goals piled up without bound (4 GB in the fuzzer's 90 s of goal floods).

    Its requests are handled in executor tasks, and rclpy 7.1's EventsExecutor ends the process
    (SIGSEGV, rclpy#1641) when a task raises: what rclpy lets out of handling a request is logged
    and the request dropped."""

    def __init__(self, *args, on_refused, **kwargs):
        super().__init__(*args, **kwargs)
        self._pending, self._on_refused = 0, on_refused

    def take_data(self):
        data = super().take_data()
        if "goal" in data:
            if self._pending >= MAX_PENDING_GOALS:
                header, _ = data.pop("goal")
                self._on_refused()
                try:  # accepted false, as rclpy answers a goal its callback rejected
                    self._handle.send_goal_response(
                        header, self._action_type.Impl.SendGoalService.Response())
                except RCLError:  # the client went away
                    pass
            else:
                self._pending += 1
        return data

    async def execute(self, taken_data):
        if "goal" in taken_data:
            self._pending -= 1
        try:
            await super().execute(taken_data)
        except Exception as exc:  # noqa: BLE001 - raised out of a task, it ends the process
            self._node.get_logger().error(f"action server: {exc!r} (request dropped)",
                                          throttle_duration_sec=2.0)


@dataclasses.dataclass
class _Goal:
    handle: object
    monitor: GoalMonitor
    done: Future
    next_feedback: float = 0.0


class TrajectoryAction:
    """The action and the query service of one node, for its life: each configuration attaches
    its loop, cleanup detaches it (goals are refused meanwhile). Destroyed at cleanup and created
    again at configure while goals arrived, it was among what crashed the process under rclpy
    7.1's EventsExecutor (:meth:`~robodyn_ros.nodes.lifecycle.ManagedNode._keep` says how)."""

    def __init__(self, node):
        self._node = node
        self._loop = self._defaults = None
        self._feedback_period = 1.0
        self._goal: _Goal | None = None
        self._accepted: dict = {}   # goal id -> its _Goal, until its execute callback takes it
        self._validated = None  # (goal, its trajectory, start) of the goal last accepted
        self._server = _GoalServer(
            node, FollowJointTrajectory, "~/follow_joint_trajectory", self._execute,
            goal_callback=self._on_goal, handle_accepted_callback=self._on_accepted,
            cancel_callback=self._on_cancel, result_timeout=RESULT_TIMEOUT,
            on_refused=self._on_refused)
        self._query = node.create_service(QueryTrajectoryState, "~/query_state", self._on_query)

    def attach(self, loop, defaults: Tolerances, feedback_period: float) -> None:
        """Follow goals on ``loop`` (configure)."""
        self._loop, self._defaults = loop, defaults
        self._feedback_period = feedback_period

    def detach(self) -> None:
        """The loop goes (cleanup): the running goal is aborted, new ones are refused."""
        self.preempt(DEACTIVATED)
        self._loop = self._defaults = self._validated = None

    def _log(self):
        return self._node.get_logger()

    def _on_refused(self) -> None:
        if self._loop is not None:  # counted and logged as the loop's rejected inputs
            self._loop.reject(f"goal: {MAX_PENDING_GOALS} goals already wait to be handled")

    def _on_goal(self, goal) -> GoalResponse:
        if not self._node.active or self._loop is None:
            self._log().error("goal refused: the controller is not active")
            return GoalResponse.REJECT
        if goal.goal_time_tolerance.nanosec >= 1_000_000_000:  # the stamp rule of every input
            self._loop.reject(f"goal: goal_time_tolerance nanosec={goal.goal_time_tolerance.nanosec}"
                              " is no valid duration (nanosec < 1e9)")
            return GoalResponse.REJECT
        try:
            trajectory, start = trajectory_from_message(goal.trajectory)
            reason = self._loop.check_trajectory(trajectory, start)
        except ValueError as exc:
            reason = f"trajectory: {exc}"
        if reason:
            self._loop.reject(f"goal: {reason}")
            return GoalResponse.REJECT
        self._validated = (goal, trajectory, start)  # converted once (10,000 points: ~10 ms)
        return GoalResponse.ACCEPT

    def _on_accepted(self, handle) -> None:
        self.preempt(PREEMPTED)
        validated, self._validated = self._validated, None
        goal = handle.request  # the request _on_goal just accepted, the same object
        trajectory, start = validated[1:] if validated and validated[0] is goal \
            else trajectory_from_message(goal.trajectory)
        accepted = self._loop.set_trajectory(trajectory, start)
        tolerances, why = for_goal(
            self._defaults, self._loop.order.names,
            [(t.name, t.position, t.velocity) for t in goal.path_tolerance],
            [(t.name, t.position, t.velocity) for t in goal.goal_tolerance],
            goal.goal_time_tolerance.sec + 1e-9 * goal.goal_time_tolerance.nanosec)
        if why:
            self._log().error(f"goal tolerances: {why}")
        end = self._loop.trajectory_span[1] if self._loop.trajectory_span else 0.0
        self._goal = _Goal(handle, GoalMonitor(tolerances, end, self._loop.order.names), Future())
        self._accepted[bytes(handle.goal_id.uuid)] = self._goal
        if isinstance(accepted, Rejection):  # refused between validation and now (time moved on)
            self._finish(Outcome(INVALID_GOAL, accepted.reason))
        handle.execute()

    async def _execute(self, handle):
        # its own goal, even if it ended before this ran (a tolerance violated in the first cycle)
        goal = self._accepted.pop(bytes(handle.goal_id.uuid), None)
        outcome, canceled = (await goal.done) if goal else (Outcome(INVALID_GOAL, PREEMPTED), False)
        if canceled:
            handle.canceled()
        elif outcome.succeeded:
            handle.succeed()
        else:
            handle.abort()
        return FollowJointTrajectory.Result(error_code=outcome.code, error_string=outcome.text)

    def _on_cancel(self, handle) -> CancelResponse:
        goal = self._goal
        if goal is not None and goal.handle is handle:
            self._log().info("goal canceled: holding the measured position")
            self._loop.hold()
            self._finish(Outcome(0, ""), canceled=True)
        return CancelResponse.ACCEPT

    def _finish(self, outcome: Outcome, canceled: bool = False) -> None:
        goal, self._goal = self._goal, None
        if goal is not None and not goal.done.done():
            goal.done.set_result((outcome, canceled))

    @property
    def running(self):
        """The goal running now (a token for :meth:`preempt`), or None."""
        return self._goal

    def preempt(self, why: str, goal=None, code: int = INVALID_GOAL) -> None:
        """Abort the running goal (``code``): a new goal, a topic trajectory, deactivation, joint
        states gone stale, a collision. ``goal``: only if that one (:attr:`running`) still runs."""
        if self._goal is not None and (goal is None or goal is self._goal):
            self._log().info(f"goal aborted: {why}")
            self._finish(Outcome(code, why))

    def after_cycle(self) -> None:
        """Judge the running goal on the cycle just computed; send feedback at its rate."""
        goal = self._goal
        if goal is None:
            return
        loop = self._loop
        o, t = loop.order.index, loop.time
        q_des, qd_des, qdd_des = loop.reference
        outcome = goal.monitor.check(t, (q_des - loop.q)[o], (qd_des - loop.qd)[o])
        if t >= goal.next_feedback or outcome is not None:
            goal.next_feedback = t + self._feedback_period
            feedback = FollowJointTrajectory.Feedback(joint_names=list(loop.order.names))
            feedback.header.stamp = self._node.get_clock().now().to_msg()
            desired, actual, error = feedback.desired, feedback.actual, feedback.error
            desired.positions, desired.velocities = q_des[o].tolist(), qd_des[o].tolist()
            desired.accelerations = qdd_des[o].tolist()
            actual.positions, actual.velocities = loop.q[o].tolist(), loop.qd[o].tolist()
            error.positions = (q_des - loop.q)[o].tolist()
            error.velocities = (qd_des - loop.qd)[o].tolist()
            goal.handle.publish_feedback(feedback)
        if outcome is not None:
            if not outcome.succeeded:
                self._log().warning(outcome.text)
                loop.hold()  # JTC holds the position it is at
            self._finish(outcome)

    def _on_query(self, request, response):
        active = self._node.active and self._loop is not None
        if self._loop is not None:
            response.name = list(self._loop.order.names)
        sample = self._loop.sample(stamp_seconds(request.time)) if active else None
        if sample is None:
            response.success = False
            response.message = ("the controller is not active" if not active else
                                "no trajectory is being followed at that time")
            return response
        response.position, response.velocity, response.acceleration = (v.tolist() for v in sample)
        response.success = True
        return response

    def destroy(self) -> None:
        """With the node (no executor spins it any more)."""
        self.detach()
        self._server.destroy()
        self._node.destroy_service(self._query)
