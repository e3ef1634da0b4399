"""A controller with one control law, in a process of its own as at the first start on a machine:
the compiled calls of the package's kernels that its first 200 control cycles compiled, which its
configure should have compiled instead (a compile in a cycle stalls the loop for up to seconds).
Prints them as one JSON line, then the number of commands (test_processes.py)."""
import json
import sys
import time

from numba.core.registry import CPUDispatcher
import rclpy
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.plumbing import kernels
from robodyn_ros.nodes.controller import ComputedTorqueController

CYCLES = 200


def compiled() -> set[str]:
    """Every compiled call of the package's kernels: a ``Direct`` once called, and each signature a
    numba dispatcher has compiled or loaded."""
    out = set()
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("robodyn_ros"):
            continue
        for name, value in list(vars(module).items()):
            if isinstance(value, kernels.Direct) and value.call != value._first_call:
                out.add(f"{module.__name__}.{name}")
            elif isinstance(value, CPUDispatcher):
                out.update(f"{module.__name__}.{name}{sig}" for sig in value.signatures)
    return out


def main(urdf: str, law: str) -> None:
    rclpy.init()
    executor = EventsExecutor()
    controller = ComputedTorqueController(namespace="/first_cycles", parameter_overrides=[
        Parameter("urdf_file", value=urdf),
        Parameter("command_topic", value="/first_cycles/commands"),
        Parameter("control_law", value=law)])
    before = compiled()   # configured and active
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
    print(json.dumps(sorted(compiled() - before)))
    print(len(commands), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
