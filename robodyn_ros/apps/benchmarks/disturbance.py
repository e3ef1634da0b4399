"""computed_torque_controller at 1 kHz over DDS while slow work happens beside its cycle: a goal
flood, a parameter storm and collisions (issue 44).

    robodyn-ros bench disturbance [--duration 20] [--json FILE]

Three processes on loopback DDS. The controller (``python -m robodyn_ros.nodes.controller``, the
Panda, rate 0, the momentum observer on with thresholds, reaction ``stop``, the URDF's collision
shapes: a detection runs the contact locator). This process plays the driver, as
``benchmarks.latency`` does: a stamped JointState every millisecond, the commands and the
controller's state recorded raw and paired after the run by content (``latency._pair``). A
disturber process (``python -m robodyn_ros.apps.benchmarks.disturbance``) that, while the driver
says so on ``/disturbance/active``, sends a 10,000-point FollowJointTrajectory goal every
``GOAL_PERIOD`` (each preempts the last; rclpy converts each in 50-150 ms before the node's code
sees it), sets ``kp`` every ``PARAMETER_PERIOD`` (each change validated whole: a new law) and calls
``~/reset_collision`` every ``RESET_PERIOD``. The driver makes a collision every
``COLLISION_PERIOD``: joint 1's velocity jumps by ``JUMP`` rad/s for 5 states, which the
observer's residual crosses at once.

Two phases, each ``duration`` s: quiet (states only), then disturbed. Per phase: the latency
from a state's publication to the arrival of its command (median, p99, max), the states no command
answered and the largest gap between two commands; for the disturbed phase also each collision's
first jumped state's publication to the first command answering it or a later state. The worst
cycle is a phase's largest latency over the quiet phase's median: the quiet phase's own is the
machine's floor (on a loaded machine, the driver's own stalls and the scheduler's; the driver's
largest gap between two states is reported beside each phase's gap between commands).
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..processes import NodeProcesses, loopback_dds, param_list

WARMUP = 3.0                   # s of traffic before the quiet phase (discovery, first calls)
GOAL_PERIOD = 0.1              # s between two goals of the flood
GOAL_POINTS = 10_000
PARAMETER_PERIOD = 0.02        # s between two kp changes
RESET_PERIOD = 0.25            # s between two reset_collision calls
COLLISION_PERIOD = 1.0         # s between two collisions the driver makes
JUMP, JUMP_STATES = 0.5, 5     # rad/s on joint 1, for that many states
ACTIVE = "/disturbance/active"
DISTURBER = "disturber"


def _params(urdf: str) -> dict:
    return {"urdf_file": urdf, "rate": 0.0, "state_timeout": 0.5, "friction": "false",
            "collision_observer_gain": param_list([50.0]),
            "collision_thresholds": param_list([5.0]), "collision_reaction": "stop"}


def _rest(model) -> np.ndarray:
    """Where the driver's arm rests: the middle of every joint's range."""
    return 0.5 * (model.lower + model.upper)


def run(duration: float = 20.0) -> dict:
    loopback_dds()   # before anything imports rclpy
    from robodyn_ros.apps.benchmarks.timing import figure
    from robodyn_ros.nodes.controller import NAME
    from robodyn_ros.plumbing.resources import find_share_file

    urdf = str(find_share_file("urdf/panda.urdf"))
    with tempfile.TemporaryDirectory(prefix="robodyn_disturbance_") as logs:
        with NodeProcesses(Path(logs)) as procs:
            procs.start(NAME, "robodyn_ros.nodes.controller", _params(urdf))
            procs.start(DISTURBER, "robodyn_ros.apps.benchmarks.disturbance", {"urdf_file": urdf})
            phases = _drive(procs, urdf, duration)
    quiet, disturbed = phases["quiet"], phases["disturbed"]
    base = quiet["latency_ms"]["median"]
    rows = []
    for name, phase in phases.items():
        for key in ("median", "p99", "max"):
            rows.append(figure(f"{name}: latency state -> command, {key} (ms)",
                               phase["latency_ms"][key], phase["latency_ms"][key], unit="ms"))
        rows.append(figure(f"{name}: largest gap between two commands (ms)", phase["gap_ms"],
                           phase["gap_ms"], unit="ms",
                           note=f"{phase['unanswered']} of {phase['states']} states unanswered; "
                                f"the driver's own largest gap {phase['driver_gap_ms']:.1f} ms"))
    rows.append(figure("disturbed: a collision's first state to its first command, max (ms)",
                       disturbed["collision_ms"], disturbed["collision_ms"], unit="ms",
                       note=f"{disturbed['collisions']} collisions made, {disturbed['detected']} "
                            "detected in all (quiet phase included), "
                            f"{disturbed['goals']} goals sent, {disturbed['parameter_sets']} kp "
                            "changes"))
    for name, phase in phases.items():
        worst = phase["latency_ms"]["max"] / base
        rows.append(figure(f"{name}: worst cycle, max latency / quiet median (ratio)", worst, worst,
                           unit="x"))
    return {"robot": "Panda", "duration_s": duration, "phases": phases, "rows": rows}


def _drive(procs: NodeProcesses, urdf: str, duration: float) -> dict[str, dict]:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.experimental import EventsExecutor
    from rclpy.node import Node
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool, Float64MultiArray

    from robodyn_ros.dynamics import RobotModel
    from robodyn_ros.nodes.controller import NAME
    from robodyn_ros.nodes.controller_state import TOPIC
    from robodyn_ros.nodes.messages import JointTrajectoryControllerState
    from robodyn_ros.nodes.serialized import SerializedJointState
    from .latency import COMMAND_TOPIC, Pace, _pair

    model = RobotModel.from_urdf(urdf)
    rclpy.init()
    node = Node("bench_disturbance_driver")
    executor = EventsExecutor()
    executor.add_node(node)
    commands, outputs, counts = [], [], {}
    node.create_subscription(Float64MultiArray, COMMAND_TOPIC,
                             lambda raw: commands.append((raw, time.monotonic_ns())), 10_000,
                             raw=True)
    node.create_subscription(JointTrajectoryControllerState, f"/{NAME}/{TOPIC.removeprefix('~/')}",
                             outputs.append, 10_000, raw=True)

    def diagnostics(msg):
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if "collisions (total)" in values:
                counts["detected"] = int(values["collisions (total)"])
            if status.name.startswith(DISTURBER):
                counts.update({kv.key: int(kv.value) for kv in status.values})
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics, 100)
    publisher = node.create_publisher(JointState, "/joint_states", 10)
    active = node.create_publisher(Bool, ACTIVE, QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    state = SerializedJointState(list(model.joint_names), JointState)
    q = _rest(model)
    sent, jumped = {}, []   # stamp (us) -> monotonic ns when published; the collisions' stamps
    try:
        deadline = time.monotonic() + 120.0
        while publisher.get_subscription_count() < 1 or active.get_subscription_count() < 1:
            procs.check()
            if time.monotonic() > deadline:
                raise RuntimeError("the controller and the disturber did not come up in 120 s:\n"
                                   + "\n".join(procs.log(n).read_text() for n in procs.pids))
            executor.spin_once(timeout_sec=0.05)
        start = time.monotonic_ns()
        bounds = {"quiet": start + int(WARMUP * 1e9)}
        bounds["disturbed"] = bounds["quiet"] + int(duration * 1e9)
        end = bounds["disturbed"] + int(duration * 1e9)
        disturbing, jump_left = False, 0
        next_collision = bounds["disturbed"] + int(0.5 * COLLISION_PERIOD * 1e9)
        for now in Pace(executor, start, end):
            if not disturbing and now >= bounds["disturbed"]:
                disturbing = True
                active.publish(Bool(data=True))
            if disturbing and now >= next_collision:
                next_collision += int(COLLISION_PERIOD * 1e9)
                jump_left = JUMP_STATES
            stamp = time.time_ns()
            state.position[:] = q + 1e-3 * np.sin(1e-9 * now)
            state.velocity[:] = 0.0
            if jump_left:
                if jump_left == JUMP_STATES:
                    jumped.append(stamp // 1000)
                state.velocity[0] = JUMP
                jump_left -= 1
            publisher.publish(state.write(*divmod(stamp, 1_000_000_000)))
            sent[stamp // 1000] = time.monotonic_ns()
        active.publish(Bool(data=False))
        grace = time.monotonic() + 2.0   # the last answers, the last diagnostics
        while time.monotonic() < grace:
            executor.spin_once(timeout_sec=0.05)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    commands = [(deserialize_message(raw, Float64MultiArray).data.tobytes(), t)
                for raw, t in commands]
    states = []
    for raw in outputs:
        msg = deserialize_message(raw, JointTrajectoryControllerState)
        states.append((msg.header.stamp.sec * 1_000_000 + msg.header.stamp.nanosec // 1000,
                       msg.output.effort.tobytes()))
    arrival, _, _ = _pair(commands, states)
    arrivals = np.array(sorted(t for _, t in commands))
    phases = {}
    for name, (low, high) in (("quiet", (bounds["quiet"], bounds["disturbed"])),
                              ("disturbed", (bounds["disturbed"], end))):
        stamps = [s for s, t in sent.items() if low <= t < high]
        published = np.array([sent[s] for s in stamps])
        latency = np.array([(arrival[s] - sent[s]) * 1e-6 if s in arrival else np.inf
                            for s in stamps])
        ok = latency[np.isfinite(latency)]
        inside = arrivals[(arrivals >= low) & (arrivals < high)]
        phases[name] = {
            "states": len(stamps), "unanswered": int(np.sum(~np.isfinite(latency))),
            "latency_ms": {"median": float(np.median(ok)), "p99": float(np.percentile(ok, 99)),
                           "max": float(ok.max())},
            "gap_ms": float(np.diff(inside).max() * 1e-6) if inside.size > 1 else float("inf"),
            "driver_gap_ms": float(np.diff(published).max() * 1e-6)}
    # each collision: its first jumped state's publication to the first command answering it
    # or a later state (the node may have skipped the first)
    answered = np.array(sorted(arrival))
    collided = []
    for s in jumped:
        later = answered[answered >= s]
        collided.append(min(arrival[t] for t in later[:50]) - sent[s] if later.size else np.inf)
    phases["disturbed"].update({"collision_ms": float(max(collided, default=np.nan)) * 1e-6,
                                "collisions": len(jumped), **{k: counts.get(k, 0) for k in
                                                              ("goals", "parameter_sets",
                                                               "detected")}})
    return phases


# ------------------------------------------------------------------------------- the disturber
def _disturber():
    """The disturber's node (built inside ``spin``, after rclpy.init)."""
    import rclpy.logging
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    from rclpy.action import ActionClient
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from std_msgs.msg import Bool
    from std_srvs.srv import Trigger
    from rcl_interfaces.srv import SetParameters
    from trajectory_msgs.msg import JointTrajectoryPoint

    from robodyn_ros.dynamics import RobotModel
    from robodyn_ros.nodes.controller import NAME
    from robodyn_ros.nodes.messages import FollowJointTrajectory

    class Disturber(Node):
        def __init__(self):
            super().__init__(DISTURBER)
            urdf = self.declare_parameter("urdf_file", "").value
            model = RobotModel.from_urdf(urdf)
            self._goal = FollowJointTrajectory.Goal()
            trajectory = self._goal.trajectory
            trajectory.joint_names = list(model.joint_names)
            rest = _rest(model)
            for k in range(GOAL_POINTS):   # 10 s about the rest pose
                t = 1e-3 * (k + 1)
                point = JointTrajectoryPoint(positions=(rest + 0.01 * np.sin(t)).tolist())
                point.time_from_start.sec, point.time_from_start.nanosec = divmod(
                    round(t * 1e9), 1_000_000_000)
                trajectory.points.append(point)
            self._action = ActionClient(self, FollowJointTrajectory,
                                        f"/{NAME}/follow_joint_trajectory")
            self._parameters = self.create_client(SetParameters, f"/{NAME}/set_parameters")
            self._reset = self.create_client(Trigger, f"/{NAME}/reset_collision")
            self._kp = [100.0, 101.0]
            self.counts = {"goals": 0, "parameter_sets": 0}
            self._active = False
            self.create_subscription(Bool, ACTIVE, self._on_active, QoSProfile(
                depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
            self.create_timer(GOAL_PERIOD, self._send_goal)
            self.create_timer(PARAMETER_PERIOD, self._set_kp)
            self.create_timer(RESET_PERIOD, self._reset_collision)
            self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
            self.create_timer(0.5, lambda: self._diagnostics.publish(DiagnosticArray(status=[
                DiagnosticStatus(name=DISTURBER, values=[
                    KeyValue(key=k, value=str(v)) for k, v in self.counts.items()])])))

        def _on_active(self, msg):
            self._active = msg.data

        def _send_goal(self):
            if self._active and self._action.server_is_ready():
                self._action.send_goal_async(self._goal)
                self.counts["goals"] += 1

        def _set_kp(self):
            if self._active and self._parameters.service_is_ready():
                self._kp.reverse()
                request = SetParameters.Request(parameters=[
                    Parameter("kp", value=self._kp[0]).to_parameter_msg()])
                self._parameters.call_async(request)
                self.counts["parameter_sets"] += 1

        def _reset_collision(self):
            if self._active and self._reset.service_is_ready():
                self._reset.call_async(Trigger.Request())

    rclpy.logging.get_logger(DISTURBER)
    return Disturber()


if __name__ == "__main__":
    from robodyn_ros.nodes.process import spin
    raise SystemExit(spin(_disturber, sys.argv))
