"""The PUMA 560 experiment of 004 §5 as the demos run it: its constants, and this process's side of
a running loop (``Loop``: a node on simulated time that records the joint states, counts the
commands, sends the controller joint trajectories and, given a bag, records the loop's topics).
``robodyn-ros demo puma`` runs the experiment once per rate; ``demo identify`` runs it before and
after identifying the arm, on one running loop."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from robodyn_ros.apps.processes import NodeProcesses, record, spin_until

BOUND = 4.26e-4  # rad: one step of a 12-bit A/D converter (004 §5)
Q_START = (90.0, 0.0, 90.0, 0.0, 0.0, 0.0)  # degrees
Q_GOAL = (45.0, 30.0, 0.0, 45.0, 60.0, 90.0)
KP, KV = 100.0, 20.0
LEAD_IN = 0.5   # s of simulated time between sending the trajectory and its start
SETTLE = 1.0    # s recorded after the motion ends
STARTUP_TIMEOUT = 60.0  # s (wall) for the nodes to come up
CONTROLLER = "computed_torque_controller"



def recorder(node, bag: Path):
    """A BagRecorder (the identify extra: rosbags) on ``node`` of the joint states, the effort
    commands, the controller's state and /diagnostics."""
    from robodyn_ros.nodes.controller_state import TOPIC
    from robodyn_ros.nodes.messages import JointTrajectoryControllerState
    from robodyn_ros.nodes.recorder import BagRecorder, type_name
    return BagRecorder(node, bag, [
        ("/joint_states", "sensor_msgs/msg/JointState"),
        ("/effort_controller/commands", "std_msgs/msg/Float64MultiArray"),
        (f"/{CONTROLLER}/{TOPIC.removeprefix('~/')}",
         type_name(JointTrajectoryControllerState)),
        ("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")])


class Loop:
    """This process's side of a running loop: a node (on simulated time) that records the joint
    states, counts the commands, sends the controller joint trajectories and, given a bag path,
    records the loop's topics into it. ``name``: its node's, the demo's SROS2 enclave too
    (doc/security.md): only the PUMA demo's has one; the others play the operator."""

    def __init__(self, procs: NodeProcesses, bag: Path | None = None, name: str = "puma560_demo"):
        from rclpy.experimental import EventsExecutor
        from rclpy.node import Node
        from rclpy.parameter import Parameter
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from robodyn_ros.nodes.common import stamp_seconds

        self.procs = procs
        # no /rosout publisher: it logs nothing there, and a second run's node of the same name
        # would warn that the first one's is still registered
        self.node = Node(name, enable_rosout=False,
                         parameter_overrides=[Parameter("use_sim_time", value=True)])
        self.executor = EventsExecutor()
        self.executor.add_node(self.node)
        self.recorder = None if bag is None else recorder(self.node, bag)
        self.states, self.commands = [], [0]
        def on_state(m):
            t = stamp_seconds(m.header.stamp)
            if not self.states or t != self.states[-1][0]:   # not the same state published again
                self.states.append((t, list(m.name), np.array(m.position)))

        # deep enough for a second of states at 1 kHz: this process may be starved on a busy machine
        self.node.create_subscription(JointState, "/joint_states", on_state, 1000)
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                      lambda m: self.commands.__setitem__(0, self.commands[0] + 1), 100)
        self.trajectory_pub = self.node.create_publisher(JointTrajectory,
                                                         f"/{CONTROLLER}/joint_trajectory", 10)

    def spin_until(self, done, timeout, what):
        spin_until(self.executor, self.procs, done, timeout, what)

    @property
    def now(self) -> float:
        """The simulated time of the last joint state."""
        return self.states[-1][0]

    def wait_until_ready(self, label):
        """Until the controller answers states (it then holds the start) and, when recording,
        every recorded topic has had a message, so that the bag has them all for the whole motion
        (the controller publishes its state once it has seen a listener)."""
        self.spin_until(lambda: self.commands[0] > 10 and self.states
                        and self.trajectory_pub.get_subscription_count() > 0
                        and (self.recorder is None or min(self.recorder.counts.values()) > 0),
                        STARTUP_TIMEOUT, f"{label}: waiting for the simulator and the controller")

    def motion(self, q_from, q_to, duration, label, rate, start=None) -> dict:
        """The quintic rest-to-rest motion from the controller's hold position ``q_from`` to
        ``q_to`` over ``duration`` s (one JointTrajectory point, LEAD_IN s ahead, or from the
        simulated time ``start``), recorded for SETTLE s more; its tracking error against the
        controller's own reference."""
        from robodyn_ros.control import JointTrajectory as Trajectory
        from robodyn_ros.control import TrajectorySampler
        from robodyn_ros.nodes.messages import trajectory_message

        joints = self.states[-1][1]
        n = len(joints)
        start = self.now + LEAD_IN if start is None else start
        end = start + duration + SETTLE
        motion = Trajectory(joints, [duration], [np.asarray(q_to, dtype=float)], [np.zeros(n)],
                            [np.zeros(n)])
        msg = trajectory_message(motion, start)
        self.trajectory_pub.publish(msg)
        first = len(self.states)
        realtime = record(self.executor, self.procs, lambda: self.now, start, duration + SETTLE,
                          label, LEAD_IN)
        # the same reference as the controller's: its sampler, holding q_from, then the motion
        sampler = TrajectorySampler(joints, np.asarray(q_from, dtype=float), time=0.0)
        sampler.set_trajectory(motion, now=self.states[first][0], start_time=start)
        recorded = [(t, q) for t, _, q in self.states[first:] if t <= end]
        t = np.array([s for s, _ in recorded])
        error = np.array([sampler.sample(s)[0] for s in t]) - np.array([q for _, q in recorded])
        max_error = np.abs(error).max(axis=0)
        return {"joints": joints, "max_error_rad": dict(zip(joints, max_error.tolist())),
                "below_bound": bool(np.all(max_error < BOUND)), "samples": len(t),
                "missing_samples": int(np.sum(np.round(np.diff(t) * rate) - 1)),
                "realtime_factor": realtime, "start": start, "t": t - start, "error": error}

    def there_and_back(self, q_a, q_b, duration, label, rate, start=None) -> list[dict]:
        """``motion`` from ``q_a`` to ``q_b`` (from ``start`` if given), then back to ``q_a``."""
        return [self.motion(q_a, q_b, duration, f"{label} there", rate, start),
                self.motion(q_b, q_a, duration, f"{label} back", rate)]

    def close(self):
        if self.recorder is not None:
            self.recorder.close()
        self.node.destroy_node()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
