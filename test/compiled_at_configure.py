"""A controller in a process of its own, as at the first start on a machine: the compiled calls
(``robodyn_ros.kernels.Direct``) that its first 200 control cycles compiled, which its configure
should have compiled instead (a compile in a cycle stalls the loop for up to seconds). Prints them
as one JSON line, then the number of commands (test_processes.py)."""
import json
import sys
import time

import rclpy
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros import kernels
from robodyn_ros.nodes.controller import ComputedTorqueController

CYCLES = 200


def uncompiled() -> set[str]:
    return {f"{module.__name__}.{name}" for module in list(sys.modules.values())
            if getattr(module, "__name__", "").startswith("robodyn_ros")
            for name, value in list(vars(module).items())
            if isinstance(value, kernels.Direct) and value.call == value._first_call}


def main(urdf: str) -> None:
    rclpy.init()
    executor = EventsExecutor()
    controller = ComputedTorqueController(namespace="/first_cycles", parameter_overrides=[
        Parameter("urdf_file", value=urdf),
        Parameter("command_topic", value="/first_cycles/commands")])
    before = uncompiled()   # configured and active
    probe = Node("probe", namespace="/first_cycles")
    commands = []
    probe.create_subscription(Float64MultiArray, "commands", commands.append, 1000)
    states = probe.create_publisher(JointState, "joint_states", 10)
    for node in (controller, probe):
        executor.add_node(node)
    names = controller.loop.model.joint_names
    deadline = time.monotonic() + 60.0
    while len(commands) < CYCLES and time.monotonic() < deadline:
        msg = JointState(name=list(names), position=[0.1] * len(names), velocity=[0.0] * len(names))
        msg.header.stamp = probe.get_clock().now().to_msg()
        states.publish(msg)
        executor.spin_once(timeout_sec=0.002)
    print(json.dumps(sorted(before - uncompiled())))
    print(len(commands), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
