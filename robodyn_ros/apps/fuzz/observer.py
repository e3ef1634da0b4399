"""The observer of a ``robodyn-ros dev fuzz`` run (robodyn_ros.apps.fuzz.run), a process of its
own standing where the arm's drive stands: it timestamps every effort command on arrival and
checks every output of the three nodes until SIGINT, then writes its figures as JSON. Also the
names and the tag the fuzzer shares with it: inputs are tagged so that the observer can tell them
from the nodes' outputs on shared topics (a hostile JointState has ``header.frame_id`` "fuzz", a
hostile simulator command a layout dimension labelled "fuzz").

    python -m robodyn_ros.apps.fuzz.observer --ros-args -p output:=FILE
"""
from __future__ import annotations

import json
import math
import signal
import struct
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

TAG = "fuzz"
CONTROLLER, SIMULATOR, STEWART, OBSERVER = ("computed_torque_controller", "arm_simulator",
                                            "stewart_platform", "fuzz_observer")
STATE_TIMEOUT = 0.1  # s: the controller's default
PERIOD = 1e-3        # s: the simulator's 1 kHz
# a serialized header's frame_id (little-endian CDR, after 4 bytes of encapsulation and the
# stamp's 8): the length with its NUL, then the text
TAGGED_FRAME = struct.pack("<I", len(TAG) + 1) + TAG.encode()


def gap_bound(state_timeout: float = STATE_TIMEOUT, period: float = PERIOD) -> float:
    """The longest a drive may wait between two effort commands: two control periods, plus the
    watchdog's bound, state_timeout + 10 % (its thread starts the safe command about 1 ms after
    state_timeout)."""
    return 2 * period + 1.1 * state_timeout


def start_arm(nodes, urdf, q0, state_timeout: float) -> None:
    """The simulated arm at 1 kHz and its controller answering every state, as the fuzz run and
    the soak put them in service (``nodes``: an ``apps.processes.NodeProcesses``)."""
    from ..processes import param_list
    nodes.start(SIMULATOR, "robodyn_ros.nodes.simulator", {
        "urdf_file": urdf, "rate": 1.0 / PERIOD, "initial_position": param_list(q0),
        "command_timeout": 0.5})
    nodes.start(CONTROLLER, "robodyn_ros.nodes.controller", {
        "urdf_file": urdf, "use_sim_time": "true", "rate": 0.0, "state_timeout": state_timeout})


def observe(args=None) -> int:
    """The observer process: check every output until SIGINT, then write the figures as JSON to
    its ``output`` parameter."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.experimental import EventsExecutor
    from rclpy.node import Node
    from rclpy.serialization import deserialize_message, serialize_message
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from robodyn_ros.nodes.controller_state import TOPIC
    from robodyn_ros.nodes.messages import JointTrajectoryControllerState

    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = Node(OBSERVER)
    output = node.declare_parameter("output", "").value
    bound = node.declare_parameter("gap_bound", gap_bound()).value
    figures = {"commands": 0, "joint_states": 0, "controller_states": 0, "stewart_forces": 0,
               "non_finite": Counter(), "largest_diagnostic_bytes": 0, "largest_diagnostic": "",
               "diagnostics": 0}
    arrivals = []  # monotonic ns of each effort command
    # the largest step of simulated time between consecutive joint states, and between the
    # states consecutive controller states answered (the plant's and the controller's stalls)
    stamps = {"joint_states": [None, 0], "controller_state": [None, 0]}

    def stamp_step(topic, stamp):
        t = stamp.sec * 1_000_000_000 + stamp.nanosec
        last = stamps[topic]
        if t == 0:  # a hostile state the controller took (finite, unstamped): not a step
            return
        if last[0] is not None and t - last[0] > last[1]:
            last[1] = t - last[0]
        last[0] = t

    def finite(topic, *arrays):
        if not all(np.isfinite(np.asarray(a, dtype=float)).all() for a in arrays):
            figures["non_finite"][topic] += 1

    def on_command(msg):
        if msg.layout.dim and msg.layout.dim[0].label == TAG:
            return  # the fuzzer's own, sent to the simulator
        arrivals.append(time.monotonic_ns())
        figures["commands"] += 1
        finite("commands", msg.data)

    def on_joint_state(raw):
        # taken raw: a hostile state (the fuzzer's, frame_id TAG) is dropped unread, so a flood
        # of 100,000 names does not stall this process and shift the command arrivals it times
        if raw[12:16 + len(TAG)] == TAGGED_FRAME:
            return
        msg = deserialize_message(raw, JointState)
        figures["joint_states"] += 1
        stamp_step("joint_states", msg.header.stamp)
        finite("joint_states", msg.position, msg.velocity, msg.effort)

    def on_controller_state(msg):
        figures["controller_states"] += 1
        stamp_step("controller_state", msg.header.stamp)
        points = [msg.reference, msg.feedback, msg.error, msg.output]
        finite("controller_state", *(getattr(p, f) for p in points
                                     for f in ("positions", "velocities", "accelerations",
                                               "effort")))

    def on_forces(topic):
        def check(msg):
            figures["stewart_forces"] += topic == "actuator_forces"
            finite(f"stewart {topic}", *((msg.data,) if hasattr(msg, "data")
                                         else (msg.position, msg.velocity, msg.effort)))
        return check

    def on_diagnostics(msg):
        figures["diagnostics"] += 1
        size = len(serialize_message(msg))
        if size > figures["largest_diagnostic_bytes"]:
            figures["largest_diagnostic_bytes"] = size
            figures["largest_diagnostic"] = ", ".join(s.name for s in msg.status)

    sub = node.create_subscription
    sub(Float64MultiArray, "/effort_controller/commands", on_command, 1000)
    sub(JointState, "/joint_states", on_joint_state, 1000, raw=True)
    sub(JointTrajectoryControllerState, f"/{CONTROLLER}/{TOPIC.removeprefix('~/')}",
        on_controller_state, 1000)
    sub(Float64MultiArray, f"/{STEWART}/actuator_forces", on_forces("actuator_forces"), 100)
    sub(Float64MultiArray, f"/{STEWART}/static_forces", on_forces("static_forces"), 100)
    sub(JointState, f"/{STEWART}/legs", on_forces("legs"), 100)
    sub(DiagnosticArray, "/diagnostics", on_diagnostics, 100)
    executor = EventsExecutor()
    executor.add_node(node)
    while not stop:
        executor.spin_once(timeout_sec=0.05)
    arrivals.append(time.monotonic_ns())  # a controller that fell silent leaves a gap too
    gaps = np.diff(np.array(arrivals, dtype=np.int64)) * 1e-9
    largest = np.argsort(gaps)[::-1][:5]
    figures.update({
        "non_finite": dict(figures["non_finite"]),
        "command_gap_max_s": float(gaps.max()) if gaps.size else math.inf,
        "command_gap_p99_s": float(np.percentile(gaps, 99)) if gaps.size else math.inf,
        "command_gaps_over_bound": int(np.sum(gaps > bound)),
        "joint_state_stamp_step_max_s": stamps["joint_states"][1] * 1e-9,
        "controller_state_stamp_step_max_s": stamps["controller_state"][1] * 1e-9,
        # the largest gaps and when they ended (monotonic s, comparable with the fuzzer's clock)
        "largest_gaps": [(float(gaps[i]), arrivals[i + 1] * 1e-9) for i in largest],
    })
    Path(output).write_text(json.dumps(figures, indent=2))
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(observe(sys.argv))
