"""The arm the fault matrix's controller meets over DDS (``robodyn-ros demo faults``, its tests),
and the operator beside it.

``Robot``: MuJoCo's Panda carrying a payload that neither the controller nor the drive knows,
behind a drive like a Franka's (it adds gravity and joint damping from MuJoCo's model of the bare
arm), stepped in real time by this process, one drive cycle per ``PERIOD`` of the system clock:
at each cycle's start it takes the commands that arrived, publishes the joint state measured then
(stamped with that time, the measured joint torque as effort, as franka_hardware's), and applies
the latest command over the cycle. Braked until the first command. A cycle this process starts
late (a loaded machine) starts when it can: the arm's time slips (``slipped``), and the
controller sees a gap in the states. The faults a network, a driver
or the world bring: states kept back (a stall drops them; a burst sends them at once), stamped
off the true time (the driver's clock), a push at the hand (a collision).

Each command is kept with its DDS source timestamp, the time the controller sent it, so that this
process's own scheduling does not bunch commands the controller sent apart:
``sim.drive.judge_commands`` judges them on that clock. The subscriptions are read by taking
what waits (``taken``), as a drive samples its inputs once a cycle: rclpy's executors cost some
160 µs a message here, and its EventsExecutor gives no source timestamps.

``Operator``: the controller's lifecycle, parameters, hold and collision reset, and
FollowJointTrajectory goals, each request asynchronous (the arm keeps its cycle meanwhile), their
answers taken by an executor on a thread of its own: turned from the drive's cycle, each turn of
an executor's wait cost 1-2 ms here.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from .fault_rows import CONTROLLER

PERIOD_NS = 1_000_000            # the drive's cycle: a Franka's 1 kHz
PAYLOAD = (1.0, (0.0, 0.0, 0.1))  # kg, and its centre in the tip frame (m): nobody's model has it


def taken(subscription):
    """Every message waiting on ``subscription`` (raw bytes) with its DDS message info."""
    while (got := subscription.handle.take_message(subscription.msg_type, subscription.raw)):
        yield got


def _values(raw: bytes, n: int) -> np.ndarray | None:
    """The ``n`` values of a serialized Float64MultiArray whose layout is empty (little-endian
    CDR, as the controller writes it: nodes/serialized.py), else None."""
    if len(raw) == 20 + 8 * n and raw[1] == 1 and raw[4:8] == bytes(4):
        return np.frombuffer(raw, "<f8", n, 20).copy()
    return None


class Robot:
    """See the module docstring. ``node``: a node no executor spins; ``q0``: where it starts,
    chain order. Times are ns of the system clock; the drive's commands are judged on cycles that
    begin at ``t0`` + k ``PERIOD_NS`` (``sim.drive.judge_commands``)."""

    def __init__(self, node, model, urdf: str, q0, command_topic: str):
        from control_msgs.msg import JointTrajectoryControllerState
        from diagnostic_msgs.msg import DiagnosticStatus
        from sensor_msgs.msg import JointState
        from rclpy.serialization import deserialize_message
        from std_msgs.msg import Float64MultiArray

        from ...control.drive import DRIVE_FRICTION, DRIVE_GRAVITY
        from ...nodes.serialized import SerializedJointState, read_stamp
        from ...sim import make_plant
        self._bare, self._plant = make_plant("mujoco", model, PERIOD_NS * 1e-9, urdf,
                                             payload_mass=PAYLOAD[0], payload_com=PAYLOAD[1])
        self._adds = DRIVE_GRAVITY | DRIVE_FRICTION
        self.model, self.names = model, list(model.joint_names)
        self.q, self.qd = np.array(q0, dtype=float), np.zeros(model.dof)
        self.held = np.zeros(model.dof)     # the command the drive applies
        self._torque = np.zeros(model.dof)  # the joint torque over the last cycle
        self._moving = False                # braked until the first command
        self._state = SerializedJointState(self.names, JointState, effort=True)
        self._publisher = node.create_publisher(JointState, "/joint_states", 100)
        ignore = lambda msg: None  # noqa: E731  (taken, never called back)
        self._commands = node.create_subscription(Float64MultiArray, command_topic, ignore, 1000,
                                                  raw=True)
        self._answers = node.create_subscription(JointTrajectoryControllerState,
                                                 f"/{CONTROLLER}/controller_state", ignore, 1000,
                                                 raw=True)
        self._events = node.create_subscription(DiagnosticStatus, f"/{CONTROLLER}/collision",
                                                ignore, 100)
        self._command_type, self._deserialize, self._read_stamp = (Float64MultiArray,
                                                                   deserialize_message, read_stamp)
        self.commands: list[tuple[int, np.ndarray]] = []   # (sent, values), joints order
        self.answers: list[tuple[int, int, bytes]] = []     # controller states: (sent, stamp, raw)
        self.events: list[tuple[int, object]] = []          # collision reports: (sent, status)
        self.published: dict[int, list[int]] = {}           # a state's stamp -> when it left
        self.slipped = 0                    # ns the arm's time lost to this process's delays
        self.largest_slip = 0               # ns, the longest of them
        self.withheld: list | None = None   # states kept back (None: published)
        self.offset_ns = 0                  # the driver's clock minus the true time
        self.wrench = None                  # a push at the tip [f; n] (base frame), or None
        self.push_cycles = 0                # the arm's cycles the push lasts yet
        self.k, self.t0 = 0, time.time_ns()

    @property
    def now(self) -> int:
        """The start of the next cycle (ns)."""
        return self.t0 + self.slipped + self.k * PERIOD_NS

    def cycle(self) -> None:
        """One drive cycle (module docstring): the state measured at its start published (the
        joint torque of the last cycle as its effort), the commands that arrived taken, the
        latest applied over the cycle. A cycle that could not start on time (this process was
        not run) starts now: the arm's time slips by whole cycles, none is made up."""
        start = self.now
        wait = start - time.time_ns()
        if wait > 0:
            time.sleep(wait * 1e-9)
        elif wait < -PERIOD_NS:
            lost = -wait // PERIOD_NS * PERIOD_NS
            self.slipped += lost
            self.largest_slip = max(self.largest_slip, lost)
            start += lost
        self._publish(start)
        self.take()
        command = self.held + self._bare.drive_adds(self.q, self.qd, self._adds)
        self._torque = self._plant.applied(command)
        if self._moving:
            self.q, self.qd = self._plant.step(self.q, self.qd, command, self.wrench)
        if self.wrench is not None:
            self.push_cycles -= 1
            if self.push_cycles <= 0:
                self.wrench = None
        self.k += 1

    def push(self, wrench, seconds: float) -> None:
        """A push at the tip for ``seconds`` of the arm's own time (its cycles: a slip of this
        process does not shorten it)."""
        self.wrench = np.array(wrench, dtype=float)
        self.push_cycles = round(seconds * 1e9 / PERIOD_NS)

    def take(self) -> None:
        """The commands, controller states and collision reports that arrived."""
        for raw, info in taken(self._commands):
            values = _values(raw, len(self.held))
            if values is None:
                values = np.array(self._deserialize(raw, self._command_type).data)
            if values.shape == self.held.shape and np.all(np.isfinite(values)):
                self.commands.append((info["source_timestamp"], values))
        if self.commands and self.commands[-1][1] is not self.held:
            self.held, self._moving = self.commands[-1][1], True
        for raw, info in taken(self._answers):
            sec, nanosec = self._read_stamp(raw)
            self.answers.append((info["source_timestamp"], sec * 1_000_000_000 + nanosec, raw))
        for status, info in taken(self._events):
            self.events.append((info["source_timestamp"], status))

    def _publish(self, start: int) -> None:
        stamp = start + self.offset_ns
        s = self._state
        s.position[:], s.velocity[:], s.effort[:] = self.q, self.qd, self._torque
        raw = s.write(*divmod(stamp, 1_000_000_000))
        if self.withheld is not None:
            self.withheld.append((stamp, raw))
            return
        self._send(stamp, raw)

    def _send(self, stamp: int, raw: bytes) -> None:
        # the time before: the answer may come within the call (a stamp may repeat: an offset)
        self.published.setdefault(stamp, []).append(time.time_ns())
        self._publisher.publish(raw)

    def release(self, burst: bool) -> None:
        """Publish the states kept back, all at once (``burst``), or drop them (a stall)."""
        withheld, self.withheld = self.withheld or [], None
        for stamp, raw in withheld if burst else ():
            self._send(stamp, raw)

    def forget(self, before: int) -> None:
        """Drop what was recorded before ``before`` (ns): a row needs a little history only."""
        self.commands = [c for c in self.commands if c[0] >= before]
        self.answers = [a for a in self.answers if a[0] >= before]
        self.events = [e for e in self.events if e[0] >= before]
        self.published = {stamp: kept for stamp, times in self.published.items()
                          if (kept := [t for t in times if t >= before])}


class Operator:
    """Requests to the controller (module docstring); the futures they return are completed on
    the executor's thread."""

    def __init__(self, node):
        from control_msgs.action import FollowJointTrajectory
        from lifecycle_msgs.srv import ChangeState, GetState
        from rcl_interfaces.srv import SetParameters
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from std_srvs.srv import Trigger

        self.node, self._closed = node, False
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(node)
        base = f"/{CONTROLLER}"
        self._clients = {
            "change_state": node.create_client(ChangeState, f"{base}/change_state"),
            "get_state": node.create_client(GetState, f"{base}/get_state"),
            "set_parameters": node.create_client(SetParameters, f"{base}/set_parameters"),
            "hold": node.create_client(Trigger, f"{base}/hold"),
            "reset_collision": node.create_client(Trigger, f"{base}/reset_collision")}
        self._action = ActionClient(node, FollowJointTrajectory, f"{base}/follow_joint_trajectory")
        self._goal_type = FollowJointTrajectory.Goal
        self._thread = threading.Thread(target=self._spin, name="operator", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException
        try:
            while self.executor.context.ok() and not self._closed:
                self.executor.spin_once(timeout_sec=0.1)
        except ExternalShutdownException:   # rclpy shut down under it: nothing more to answer
            pass

    def ready(self, configured: bool) -> bool:
        """Whether the controller's lifecycle services answer and, once ``configured``, the
        services and the action its configuration makes."""
        lifecycle = ("change_state", "get_state")
        return all(c.service_is_ready() for name, c in self._clients.items()
                   if configured or name in lifecycle) and \
            (not configured or self._action.server_is_ready())

    def call(self, name: str, **fields):
        """The service ``name`` called with ``fields``: its future."""
        client = self._clients[name]
        return client.call_async(client.srv_type.Request(**fields))

    def transition(self, label: str):
        from lifecycle_msgs.msg import Transition
        ids = {"configure": Transition.TRANSITION_CONFIGURE,
               "activate": Transition.TRANSITION_ACTIVATE,
               "deactivate": Transition.TRANSITION_DEACTIVATE}
        return self.call("change_state", transition=Transition(id=ids[label]))

    def set(self, **values):
        """Set the controller's parameters (one request: validated and applied as a whole)."""
        from rclpy.parameter import Parameter
        return self.call("set_parameters", parameters=[
            Parameter(name, value=value).to_parameter_msg() for name, value in values.items()])

    def goal(self, names, q, duration: float):
        """A FollowJointTrajectory goal: rest to rest to ``q`` in ``duration`` s from now."""
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        from ...plumbing.stamps import stamp_parts
        point = JointTrajectoryPoint(positions=[float(v) for v in q],
                                     velocities=[0.0] * len(q), accelerations=[0.0] * len(q))
        point.time_from_start.sec, point.time_from_start.nanosec = stamp_parts(duration)
        goal = self._goal_type(trajectory=JointTrajectory(joint_names=list(names), points=[point]))
        return self._action.send_goal_async(goal)

    def close(self) -> None:
        self._closed = True
        self._thread.join()
        self._action.destroy()
        self.executor.shutdown()
