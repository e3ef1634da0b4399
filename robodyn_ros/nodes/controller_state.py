"""The controller's state as ros2_controllers publishes it: ``~/controller_state``
(control_msgs/JointTrajectoryControllerState: reference, feedback, error, output, in ``joints``
order). Without control_msgs the same four JointTrajectoryPoints go out as the points of a
trajectory_msgs/JointTrajectory on ``~/state`` (doc/computed_torque_controller.md).

Building the message costs as much as the control law, so it is built only while somebody listens
(checked with every diagnostics report)."""
from __future__ import annotations

import array

import numpy as np
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .messages import JointTrajectoryControllerState

TOPIC = "~/state" if JointTrajectoryControllerState is None else "~/controller_state"


def _buffer(values: np.ndarray) -> array.array:
    return array.array("d", values.tobytes())


class ControllerStatePublisher:
    @staticmethod
    def message_type():
        """The state's message type (for a listener)."""
        return JointTrajectory if JointTrajectoryControllerState is None \
            else JointTrajectoryControllerState

    @staticmethod
    def output(msg) -> JointTrajectoryPoint:
        """The output point (the command sent) of a state message."""
        return msg.points[3] if JointTrajectoryControllerState is None else msg.output

    def __init__(self, node, joints):
        self._node = node
        points = [JointTrajectoryPoint() for _ in range(4)]
        if JointTrajectoryControllerState is None:
            self._msg = JointTrajectory(joint_names=list(joints), points=points)
            self._points = points
        else:
            self._msg = JointTrajectoryControllerState(joint_names=list(joints))
            m = self._msg
            self._points = [m.reference, m.feedback, m.error, m.output]
        self._publisher = node.create_publisher(type(self._msg), TOPIC, 10)
        self.listened = True

    def refresh(self) -> None:
        """Whether anybody listens (called once per diagnostics period)."""
        self.listened = self._publisher.get_subscription_count() > 0

    def publish(self, loop, stamp, effort: np.ndarray) -> None:
        """The loop's last cycle: its reference, the measured state, the error and ``effort``
        (the command sent); ``stamp`` (sec, nanosec) is the joint state's own header stamp, so that a
        listener can match the two exactly."""
        if not self.listened:
            return
        o = loop.order.index
        q_des, qd_des, qdd_des = loop.reference
        self._msg.header.stamp.sec, self._msg.header.stamp.nanosec = stamp
        reference, feedback, error, output = self._points
        reference.positions, reference.velocities, reference.accelerations = (
            _buffer(q_des[o]), _buffer(qd_des[o]), _buffer(qdd_des[o]))
        feedback.positions, feedback.velocities = _buffer(loop.q[o]), _buffer(loop.qd[o])
        error.positions, error.velocities = (_buffer(q_des[o] - loop.q[o]),
                                             _buffer(qd_des[o] - loop.qd[o]))
        output.effort = _buffer(effort)
        self._publisher.publish(self._msg)

    def destroy(self) -> None:
        self._node.destroy_publisher(self._publisher)
