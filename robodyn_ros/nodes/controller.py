"""computed_torque_controller: joint efforts from a control-law plugin (004 eq. 4.1 by default).

Inputs: ``/joint_states`` (matched by name), ``~/joint_trajectory`` (sampled in time, JTC rules),
``~/reference`` (one point in ``joints`` order, used as is until replaced). Output: the command on
``command_topic`` (Float64MultiArray in ``joints`` order, saturated), ``~/state`` and
``/diagnostics``. Parameters, topics and the ``~/state`` layout: doc/computed_torque_controller.md.

This node is an adapter: what it does with a state, a reference or a failing law is
:class:`robodyn_ros.control.loop.ControlLoop`'s; here messages become arrays and results messages.
"""
from __future__ import annotations

import array

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from ..control.joints import JointOrder
from ..control.loop import Command, ControlLoop, LawFailure, Rejection
from ..dynamics import warm_up
from ..parameters import controller_schema, node_schema
from .messages import trajectory_from_message
from .common import ConfigurationError, Diagnostics, Parameters, load_model, spin, \
    stamp_seconds, steady_clock

NAME = "computed_torque_controller"
#: The loop's own settings; every other configuration value is a control law's parameter.
LOOP_KEYS = ("control_law", "effort_limits", "on_timeout")


def schema(logger=None):
    """The node's parameters: its file's, then each registered law's."""
    return controller_schema(logger.warning if logger is not None else lambda text: None)


class ComputedTorqueController(Node):
    def __init__(self, name: str = NAME, **kwargs):
        super().__init__(name, **kwargs)
        specs = schema(self.get_logger())
        self.params = p = Parameters(self, specs)
        own = {s.name for s in node_schema(NAME)}
        self._config_keys = [s.name for s in specs if s.name in LOOP_KEYS or s.name not in own]
        self.model = load_model(p)
        # compile before the first cycle needs it (a cache load after the first run on a machine)
        warm_up(notify=self.get_logger().info, forward=False)
        try:
            order = JointOrder(self.model.joint_names, p["joints"])
            self.loop = ControlLoop(self.model, order, {k: p[k] for k in self._config_keys},
                                    p["state_timeout"], clock=self._now,
                                    log=self.get_logger().warning,
                                    max_trajectory_points=p["max_trajectory_points"],
                                    position_limit_margin=p["position_limit_margin"])
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from exc
        self.joints = list(order.names)
        n = self.model.dof
        self._rate = p["rate"]  # read-only; a get_parameter call costs ~1 us per joint state
        self._state_time = None  # the last valid state's header stamp, echoed exactly by ~/state

        # preallocated output: numpy views write straight into the message buffers
        self._command = Float64MultiArray()
        self._command_buffer = array.array("d", bytes(8 * n))
        self._command_view = np.frombuffer(self._command_buffer)
        self._state_listened = True  # refreshed with every diagnostics report
        self._state_msg = JointTrajectoryMsg(joint_names=self.joints, points=[
            JointTrajectoryPoint() for _ in range(4)])  # reference, feedback, error, output

        self._command_pub = self.create_publisher(Float64MultiArray, p["command_topic"], 10)
        self._state_pub = self.create_publisher(JointTrajectoryMsg, "~/state", 10)
        self.create_subscription(JointState, "joint_states", self._on_joint_state, 10)
        self.create_subscription(JointTrajectoryMsg, "~/joint_trajectory", self._on_trajectory, 10)
        self.create_subscription(JointTrajectoryPoint, "~/reference", self._on_reference, 10)
        self.create_service(SetBool, "~/enable", self._on_enable)
        self.create_service(Trigger, "~/hold", self._on_hold)
        if self._rate > 0.0:
            self.create_timer(1.0 / self._rate, self._on_timer)
        # staleness is judged in wall time so that it is noticed even when /clock stops; the
        # watchdog's period bounds how late the safe command may start
        self.create_timer(max(p["state_timeout"] / 10.0, 1e-3), self._watchdog,
                          clock=steady_clock())
        Diagnostics(self, self._report, p["diagnostic_period"])
        p.on_set(self._validate, self._apply)
        cadence = "one per joint state" if self._rate == 0.0 else f"{self._rate} Hz"
        self.get_logger().info(f"{type(self.loop.law).__name__} on joints {self.joints}, "
                               f"commands on {p['command_topic']} ({cadence})")

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # ------------------------------------------------------------------ parameters
    def _validate(self, changes):
        return self.loop.prepare({k: v for k, v in changes.items() if k in self._config_keys})

    def _apply(self, change):
        law = self.loop.law
        self.loop.apply(change)
        if self.loop.law is not law:
            self.get_logger().info(f"control law now {type(self.loop.law).__name__} "
                                   f"{self.loop.law.params}")

    # ------------------------------------------------------------------ inputs
    def _on_joint_state(self, msg: JointState):
        try:
            stamp = stamp_seconds(msg.header.stamp, "header.stamp")
        except ValueError as exc:
            return self.loop.reject(f"joint state stamp: {exc}")
        result = self.loop.set_state(msg.name, msg.position, msg.velocity, stamp)
        if isinstance(result, Rejection):
            return
        self._state_time = msg.header.stamp
        if result.note:
            self.get_logger().info(result.note)
        if self._rate == 0.0:
            self._publish(self.loop.cycle())

    def _on_trajectory(self, msg: JointTrajectoryMsg):
        if self.loop.admit_trajectory(len(msg.points)) is not None:
            return  # refused before converting a flood of points
        try:
            trajectory, start = trajectory_from_message(msg)
        except ValueError as exc:  # TrajectoryError, or a stamp no clock gives
            return self.loop.reject(f"trajectory: {exc}")
        self._log(self.loop.set_trajectory(trajectory, start))

    def _on_reference(self, msg: JointTrajectoryPoint):
        self._log(self.loop.set_reference(msg.positions, msg.velocities, msg.accelerations))

    def _log(self, result):
        if not isinstance(result, Rejection) and result.note:
            self.get_logger().info(result.note)

    # ------------------------------------------------------------------ services
    def _on_enable(self, request, response):
        response.success = True
        response.message = self.loop.enable(request.data)
        self.get_logger().info(response.message)
        return response

    def _on_hold(self, request, response):
        result = self.loop.hold()
        response.success = not isinstance(result, Rejection)
        response.message = result.reason if isinstance(result, Rejection) else result.note
        return response

    # ------------------------------------------------------------------ output
    def _on_timer(self):
        if self.loop.active:
            self._publish(self.loop.cycle())

    def _watchdog(self):
        stale = self.loop.watchdog()
        if stale is None:
            return
        if stale.first:
            self.get_logger().warning(f"no valid joint state for {self.loop.state_timeout} s: "
                                      f"publishing {self.loop.config['on_timeout']}")
        self._publish_effort(stale.effort)

    def _publish(self, command: Command):
        self._publish_effort(command.effort)
        if not isinstance(command, LawFailure):
            self._publish_state()

    def _publish_effort(self, effort: np.ndarray):
        self._command_view[:] = effort
        self._command.data = self._command_buffer
        self._command_pub.publish(self._command)

    def _publish_state(self):
        if not self._state_listened:  # building it costs as much as the law: only for a listener
            return
        loop, o = self.loop, self.loop.order.index
        q_des, qd_des, qdd_des = loop.reference
        msg = self._state_msg
        # the state's own stamp, not its float seconds (off by up to 0.2 us), so that a listener
        # can match ~/state to the JointState it answers
        if loop.stamp:
            msg.header.stamp = self._state_time
        else:
            msg.header.stamp = self.get_clock().now().to_msg()
        reference, feedback, error, output = msg.points
        reference.positions, reference.velocities, reference.accelerations = (
            _buffer(q_des[o]), _buffer(qd_des[o]), _buffer(qdd_des[o]))
        feedback.positions, feedback.velocities = _buffer(loop.q[o]), _buffer(loop.qd[o])
        error.positions, error.velocities = (_buffer(q_des[o] - loop.q[o]),
                                             _buffer(qd_des[o] - loop.qd[o]))
        output.effort = self._command_buffer
        self._state_pub.publish(msg)

    def _report(self):
        self._state_listened = self._state_pub.get_subscription_count() > 0
        return self.loop.report()


def _buffer(values: np.ndarray) -> array.array:
    return array.array("d", values.tobytes())


def main(args=None):
    raise SystemExit(spin(ComputedTorqueController, args))


if __name__ == "__main__":
    main()
