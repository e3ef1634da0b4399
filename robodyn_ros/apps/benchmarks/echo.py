"""The latency benchmark's peer: a node that answers every JointState with a fixed command and a
controller state carrying the state's stamp, and does nothing else. Spun as the controller is
(``nodes.process.spin``) and driven by the same driver (``benchmarks.latency``), it measures what
rclpy, the executor and DDS alone cost on this machine: the floor under the controller's latency.

    python -m robodyn_ros.apps.benchmarks.echo
"""
import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ...nodes.controller import NAME
from ...nodes.controller_state import TOPIC, SerializedState
from ...nodes.messages import JointTrajectoryControllerState
from ...nodes.process import spin
from ...nodes.serialized import SerializedFloat64MultiArray, read_stamp
from .latency import COMMAND_TOPIC, JOINTS


class Echo(Node):
    def __init__(self):
        super().__init__(NAME)  # so that its state is where the driver listens for the controller's
        n = len(JOINTS)
        self._command = SerializedFloat64MultiArray(n)
        self._command.values[:] = np.arange(n)
        self._state = SerializedState(JOINTS)
        self._zero, self._index = np.zeros(n), np.arange(n)
        self._command_pub = self.create_publisher(Float64MultiArray, COMMAND_TOPIC, 10)
        self._state_pub = self.create_publisher(JointTrajectoryControllerState, TOPIC, 10)
        self.create_subscription(JointState, "joint_states", self._answer, 10, raw=True)

    def _answer(self, raw: bytes):
        stamp = read_stamp(raw)
        self._command_pub.publish(bytes(self._command))
        zero = self._zero
        self._state_pub.publish(self._state.write(stamp, (zero, zero, zero), zero, zero,
                                                  self._command.values, self._index))


if __name__ == "__main__":
    raise SystemExit(spin(Echo))
