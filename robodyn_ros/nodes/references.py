"""What computed_torque_controller takes as its joint reference besides goals
(trajectory_action.py): ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory, JTC's topic),
``~/reference`` (trajectory_msgs/JointTrajectoryPoint, used as is), ``~/enable``
(std_srvs/SetBool: track, or gravity compensation only) and ``~/hold`` (std_srvs/Trigger: hold
the measured position). Each is converted and checked on the executor's thread and given to the
loop under the node's lock, which the cycle holds: a 10,000-point trajectory's segments are
built before the lock is taken (``ControlLoop.prepare_trajectory``), so the cycle waits
microseconds for it, not tens of milliseconds.
"""
from __future__ import annotations

from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from ..control.loop import Rejection
from .messages import trajectory_from_serialized, trajectory_sizes

TOPIC_PREEMPTS = "Current goal preempted by a trajectory on the topic."


def follow(loop, lock, trajectory, start, locked=lambda result: None):
    """``loop`` follows ``trajectory`` from ``start``: its segments built outside ``lock`` (tens of
    ms for 10,000 points), taken under it (microseconds), built again if the reference moved
    meanwhile; ``locked(result)`` runs in the same hold of the lock. The Accepted or Rejection."""
    while True:
        prepared = loop.prepare_trajectory(trajectory, start)
        with lock:
            result = loop.take_trajectory(prepared)
            if result is not None:
                locked(result)
                return result


class ReferenceInterface:
    """The module docstring's topics and services on ``node`` (kept by it: ``subscribe``,
    ``serve``) for ``loop``; ``action`` (a TrajectoryAction) loses its goal to a topic
    trajectory."""

    def __init__(self, node, loop, lock, action):
        self._node, self._loop, self._lock, self._action = node, loop, lock, action
        # raw: the size is judged before a flood of points is read, and points are read as arrays
        node.subscribe(JointTrajectoryMsg, "~/joint_trajectory", self._on_trajectory, raw=True)
        node.subscribe(JointTrajectoryPoint, "~/reference", self._on_reference)
        node.serve(SetBool, "~/enable", self._on_enable)
        node.serve(Trigger, "~/hold", self._on_hold)

    def _on_trajectory(self, raw: bytes):
        loop = self._loop
        try:
            if loop.admit_trajectory(*trajectory_sizes(raw)) is not None:
                return  # refused before converting a flood of names or points
            trajectory, start = trajectory_from_serialized(raw, JointTrajectoryMsg)
        except ValueError as exc:  # TrajectoryError, or a stamp no clock gives
            return loop.reject(f"trajectory: {exc}")
        def preempt(result):   # the goal ends with its reference (TrajectoryAction says why)
            if not isinstance(result, Rejection):
                self._action.preempt(TOPIC_PREEMPTS)
        result = follow(loop, self._lock, trajectory, start, preempt)
        if not isinstance(result, Rejection):
            self._node.get_logger().info(result.note)

    def _on_reference(self, msg: JointTrajectoryPoint):
        with self._lock:
            self._loop.set_reference(msg.positions, msg.velocities, msg.accelerations)

    def _on_enable(self, request, response):
        response.success = True
        with self._lock:
            response.message = self._loop.enable(request.data)
        self._node.get_logger().info(response.message)
        return response

    def _on_hold(self, request, response):
        with self._lock:
            result = self._loop.hold()
        response.success = not isinstance(result, Rejection)
        response.message = result.reason if isinstance(result, Rejection) else result.note
        return response
