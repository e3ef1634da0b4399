"""One participant of test_security_enforce.py, in a process of its own (its security settings are
its environment's: ROS_SECURITY_*, the overlay's libraries). Prints one JSON line at the end.

    python secure_probe.py stranger NAME SECONDS   every way in, from a node named NAME: efforts
                                              on the command topic, a trajectory and a reference
                                              to the controller, a parameter change, a
                                              FollowJointTrajectory goal
    python secure_probe.py observe SECONDS    the loop as the operator sees it: the arm's motion,
                                              the controller's other writers, its kp at the end
    python secure_probe.py operate            the operator's own way in (the positive control):
                                              a parameter change read back, a goal accepted

Each attempt records what it achieved: refused at creation (the enclave's own permissions), never
matched (the node's side refused it: no authentication, or not allowed to the remote enclave), or
answered. Nothing here asserts: the test judges the JSON.
"""
import json
import sys
import time

import rclpy
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.action import ActionClient
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

CONTROLLER = "/computed_torque_controller"
COMMANDS = "/effort_controller/commands"
JOINTS = [f"joint_{i}" for i in range(1, 7)]
FAR = [0.0, 1.0, -1.0, 1.0, 1.0, 1.0]   # rad: far from the start, where a stranger would send it
STRANGE_KP = 10000.0


def spin_for(node, seconds, each=None, period=0.005):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if each is not None:
            each()
        rclpy.spin_once(node, timeout_sec=period)


def kp_request(value):
    return SetParameters.Request(parameters=[ParameterMsg(name="kp", value=ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE, double_value=value))])


def trajectory(seconds=2):
    point = JointTrajectoryPoint(positions=FAR, velocities=[0.0] * 6, accelerations=[0.0] * 6)
    point.time_from_start.sec = seconds
    return JointTrajectory(joint_names=JOINTS, points=[point])


def created(result, what, make):
    """``make()``, or None with the reason in ``result['refused'][what]``."""
    try:
        return make()
    except Exception as exc:  # noqa: BLE001 - rclpy's RCLError and kin: what the rmw refused
        result["refused"][what] = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        return None


def stranger(name, seconds):
    """NAME: in an enclave of the package's keystore, the node must be named as its profile says
    (its own parameter services are allowed to that name only), as an impostor would name it."""
    from control_msgs.action import FollowJointTrajectory
    node = Node(name)
    result = {"refused": {}, "sent": {}, "matched": {}}
    pubs = {
        "efforts": created(result, "efforts", lambda: node.create_publisher(
            Float64MultiArray, COMMANDS, 10)),
        "trajectory": created(result, "trajectory", lambda: node.create_publisher(
            JointTrajectory, f"{CONTROLLER}/joint_trajectory", 10)),
        "reference": created(result, "reference", lambda: node.create_publisher(
            JointTrajectoryPoint, f"{CONTROLLER}/reference", 10)),
    }
    params = created(result, "parameters", lambda: node.create_client(
        SetParameters, f"{CONTROLLER}/set_parameters"))
    action = created(result, "goal", lambda: ActionClient(
        node, FollowJointTrajectory, f"{CONTROLLER}/follow_joint_trajectory"))
    messages = {"efforts": Float64MultiArray(data=[200.0] * 6), "trajectory": trajectory(),
                "reference": JointTrajectoryPoint(positions=FAR)}
    answers = {"parameters": None, "goal": None}

    def attack():
        for what, pub in pubs.items():
            if pub is not None:
                pub.publish(messages[what])
                result["sent"][what] = result["sent"].get(what, 0) + 1
                result["matched"][what] = max(result["matched"].get(what, 0),
                                              pub.get_subscription_count())
        if params is not None and params.service_is_ready() and answers["parameters"] is None:
            answers["parameters"] = params.call_async(kp_request(STRANGE_KP))
        if action is not None and action.server_is_ready() and answers["goal"] is None:
            answers["goal"] = action.send_goal_async(FollowJointTrajectory.Goal(
                trajectory=trajectory()))
    spin_for(node, seconds, attack)
    result["parameters_answered"] = answers["parameters"] is not None and answers["parameters"].done()
    result["goal_answered"] = answers["goal"] is not None and answers["goal"].done()
    result["service_ready"] = bool(params is not None and params.service_is_ready())
    result["action_server_ready"] = bool(action is not None and action.server_is_ready())
    return result


def observe(seconds):
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    node = Node("operator")
    seen = {"q": [], "commands": 0, "other_writers": set()}

    def diagnostics(msg):
        for status in msg.status:
            for kv in status.values:
                if kv.key == "other writers of the command topic":
                    seen["other_writers"].add(kv.value)
    node.create_subscription(JointState, "/joint_states",
                             lambda m: seen["q"].append(list(m.position)), 100)
    node.create_subscription(Float64MultiArray, COMMANDS, lambda m: seen.__setitem__(
        "commands", seen["commands"] + 1), 100)
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics, 10)
    spin_for(node, seconds)
    q = seen["q"]
    moved = max((max(abs(a - b) for a, b in zip(s, q[0])) for s in q), default=None)
    return {"states": len(q), "commands": seen["commands"], "max_motion_rad": moved,
            "other_writers": sorted(seen["other_writers"]), "kp": get_kp(node)}


def get_kp(node):
    client = node.create_client(GetParameters, f"{CONTROLLER}/get_parameters")
    if not client.wait_for_service(timeout_sec=10.0):
        return None
    future = client.call_async(GetParameters.Request(names=["kp"]))
    rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
    return future.result().values[0].double_value if future.done() else None


def operate():
    from control_msgs.action import FollowJointTrajectory
    node = Node("operator")
    result = {}
    client = node.create_client(SetParameters, f"{CONTROLLER}/set_parameters")
    if client.wait_for_service(timeout_sec=20.0):
        future = client.call_async(kp_request(25.0))
        rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
        result["set_kp_successful"] = bool(future.done() and future.result().results[0].successful)
    result["kp"] = get_kp(node)
    action = ActionClient(node, FollowJointTrajectory, f"{CONTROLLER}/follow_joint_trajectory")
    if action.wait_for_server(timeout_sec=20.0):
        goal = FollowJointTrajectory.Goal(trajectory=trajectory(seconds=3))
        future = action.send_goal_async(goal)
        rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
        result["goal_accepted"] = bool(future.done() and future.result().accepted)
    return result


def main(argv):
    rclpy.init()
    try:
        mode = argv[0]
        result = {"stranger": lambda: stranger(argv[1], float(argv[2])),
                  "observe": lambda: observe(float(argv[1])), "operate": operate}[mode]()
    finally:
        rclpy.try_shutdown()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
