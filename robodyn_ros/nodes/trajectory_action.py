"""What joint_trajectory_controller offers MoveIt and other clients, with its names and semantics:
the ``~/follow_joint_trajectory`` action (control_msgs/FollowJointTrajectory) and the
``~/query_state`` service (control_msgs/QueryTrajectoryState), for a controller node whose
reference is a :class:`~robodyn_ros.control.loop.ControlLoop`'s.

A goal is refused unless the controller is active and its trajectory could be followed (the
controller's joints, times, sizes, position limits, an end not in the past). An accepted goal
preempts the one running (aborted, INVALID_GOAL), as does a trajectory on the topic; cancel holds
the measured position; the outcome is judged every control cycle by
:class:`~robodyn_ros.control.goal.GoalMonitor`. Feedback goes out at ``action_monitor_rate``.

Threads: the cycle's thread judges the running goal (holding the node's ``lock``, as every cycle
does); the executor's thread takes goals, cancels and queries. What changes the goal running and
the reference together (a new goal, a cancel's hold, a topic trajectory's preemption) does it
under the lock, so a cycle never judges one goal against another's reference. A goal's end, its
feedback and their log lines are built and sent on the executor's thread (``cycle.post``).
"""
from __future__ import annotations

import dataclasses

from rclpy.action import CancelResponse, GoalResponse
from rclpy.task import Future

from ..control.goal import INVALID_GOAL, GoalMonitor, Outcome, Tolerances, for_goal
from ..control.loop import Rejection
from .common import stamp_seconds
from .cycle import post
from .goal_server import MAX_PENDING_GOALS, GoalServer, release
from .references import follow
from .messages import FollowJointTrajectory, QueryTrajectoryState, trajectory_from_message

PREEMPTED = "Current goal preempted by new incoming action."
DEACTIVATED = "Current goal cancelled during deactivate transition."
#: s a finished goal's result is kept for a client to fetch; rclpy's 900 s let a flood of goals
#: hold their results (and memory) for a quarter of an hour
RESULT_TIMEOUT = 60


@dataclasses.dataclass
class _Goal:
    handle: object
    done: Future
    monitor: GoalMonitor | None = None
    next_feedback: float = 0.0


class TrajectoryAction:
    """The action and the query service of one node, for its life: each configuration attaches
    its loop, cleanup detaches it (goals are refused meanwhile). Destroyed at cleanup and created
    again at configure while goals arrived, it was among what crashed the process under rclpy
    7.1's EventsExecutor (:meth:`~robodyn_ros.nodes.lifecycle.ManagedNode._keep` says how)."""

    def __init__(self, node, lock):
        """``lock``: the node's, which the cycle holds (a reentrant lock)."""
        self._node, self._lock = node, lock
        self._loop = self._defaults = None
        self._feedback_period, self._names = 1.0, []
        self._goal: _Goal | None = None
        self._accepted: dict = {}   # goal id -> its _Goal, until its execute callback takes it
        self._validated = None  # (goal, its trajectory, start) of the goal last accepted
        self._server = GoalServer(
            node, FollowJointTrajectory, "~/follow_joint_trajectory", self._execute,
            goal_callback=self._on_goal, handle_accepted_callback=self._on_accepted,
            cancel_callback=self._on_cancel, result_timeout=RESULT_TIMEOUT,
            on_refused=self._on_refused)
        self._query = node.create_service(QueryTrajectoryState, "~/query_state", self._on_query)

    def attach(self, loop, defaults: Tolerances, feedback_period: float) -> None:
        """Follow goals on ``loop`` (configure)."""
        self._loop, self._defaults = loop, defaults
        self._names = list(loop.order.names)
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
        try:
            return self._judge(goal)
        finally:
            release(goal.trajectory)

    def _judge(self, goal) -> GoalResponse:
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
        # _on_goal just accepted handle.request (the same object: rclpy handles one request at
        # a time), converted it and released its points
        goal, trajectory, start = self._validated
        self._validated = None
        tolerances, why = for_goal(
            self._defaults, self._loop.order.names,
            [(t.name, t.position, t.velocity) for t in goal.path_tolerance],
            [(t.name, t.position, t.velocity) for t in goal.goal_tolerance],
            goal.goal_time_tolerance.sec + 1e-9 * goal.goal_time_tolerance.nanosec)
        if why:
            self._log().error(f"goal tolerances: {why}")
        running = _Goal(handle, Future())

        def start_goal(accepted):   # with its reference, under the lock
            end = self._loop.trajectory_span[1] if self._loop.trajectory_span else 0.0
            running.monitor = GoalMonitor(tolerances, end, self._loop.order.names)
            if not isinstance(accepted, Rejection):
                self._goal = running
        accepted = follow(self._loop, self._lock, trajectory, start, start_goal)
        self._accepted[bytes(handle.goal_id.uuid)] = running
        if isinstance(accepted, Rejection):  # refused between validation and now (time moved on)
            self._end(running, Outcome(INVALID_GOAL, accepted.reason))
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
        with self._lock:
            goal = self._goal
            if goal is None or goal.handle is not handle:
                return CancelResponse.ACCEPT
            self._loop.hold()
            self._goal = None
        self._log().info("goal canceled: holding the measured position")
        self._end(goal, Outcome(0, ""), canceled=True)
        return CancelResponse.ACCEPT

    def _end(self, goal: _Goal, outcome: Outcome, canceled: bool = False, line: str = "",
             log=None) -> None:
        """(The executor's thread) ``goal`` ends with ``outcome``, ``line`` logged first."""
        if line:
            (log or self._log().info)(line)
        if not goal.done.done():
            goal.done.set_result((outcome, canceled))

    @property
    def running(self):
        """The goal running now (a token for :meth:`preempt`), or None."""
        return self._goal

    def preempt(self, why: str, goal=None, code: int = INVALID_GOAL) -> None:
        """Abort the running goal (``code``): a new goal, a topic trajectory, deactivation, joint
        states gone stale, a collision. ``goal``: only if that one (:attr:`running`) still runs.
        From any thread: the goal stops running here, its end is sent from the executor's."""
        with self._lock:
            running = self._goal
            if running is None or (goal is not None and goal is not running):
                return
            self._goal = None
        post(self._node, self._end, running, Outcome(code, why), False, f"goal aborted: {why}")

    def after_cycle(self) -> None:
        """(The cycle's thread, under the lock) judge the running goal on the cycle just computed:
        a violation holds at once; the feedback (at its rate) and the goal's end are sent from the
        executor's thread, from copies of the cycle's arrays."""
        goal = self._goal
        if goal is None:
            return
        loop = self._loop
        o, t = loop.order.index, loop.time
        q_des, qd_des, qdd_des = loop.reference
        error, rate_error = (q_des - loop.q)[o], (qd_des - loop.qd)[o]
        outcome = goal.monitor.check(t, error, rate_error)
        if t >= goal.next_feedback or outcome is not None:
            goal.next_feedback = t + self._feedback_period   # each [o] below is a copy
            post(self._node, self._feedback, goal, q_des[o], qd_des[o], qdd_des[o], loop.q[o],
                 loop.qd[o], error, rate_error)
        if outcome is not None:
            if not outcome.succeeded:
                loop.hold()  # JTC holds the position it is at
            self._goal = None
            post(self._node, self._end, goal, outcome, False,
                 "" if outcome.succeeded else outcome.text, self._log().warning)

    def _feedback(self, goal, q_des, qd_des, qdd_des, q, qd, error, rate_error) -> None:
        """(The executor's thread) one cycle's feedback of ``goal``."""
        feedback = FollowJointTrajectory.Feedback(joint_names=self._names)
        feedback.header.stamp = self._node.get_clock().now().to_msg()
        desired, actual = feedback.desired, feedback.actual
        desired.positions, desired.velocities = q_des.tolist(), qd_des.tolist()
        desired.accelerations = qdd_des.tolist()
        actual.positions, actual.velocities = q.tolist(), qd.tolist()
        feedback.error.positions, feedback.error.velocities = error.tolist(), rate_error.tolist()
        goal.handle.publish_feedback(feedback)

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
