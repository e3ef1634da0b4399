"""computed_torque_controller: joint efforts from a control-law plugin (004 eq. 4.1 by default).

A managed node, mapped as ros2_control maps a controller. In: ``/joint_states``, ``~/joint_trajectory``,
``~/reference``, ``~/follow_joint_trajectory``, a task-space law's Cartesian targets (cartesian.py);
out: ``command_topic``, the controller state, the momentum observer's residual and collisions
(collisions.py), ``/diagnostics``. Parameters, topics: doc/computed_torque_controller.md. An
adapter: what it does with a state, a reference or a failing law is ``control.loop.ControlLoop``'s.

Three threads share the loop under one reentrant lock: the cycle's (cycle.py: a state or the rate
timer -> law -> command, and what must follow a cycle at once), the watchdog's (watchdog.py) and
the executor's (everything else: goals, topics, services, parameters, diagnostics, and what the
other two hand it with ``cycle.post``). Slow work (a conversion, a validation, a new trajectory's
segments, the IK) runs before the lock is taken; under it only what changes the loop.
"""
from __future__ import annotations

import threading
from time import perf_counter

import numpy as np
import rclpy.logging
from rclpy.duration import Duration
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..control.cycle_timing import CycleTiming
from ..control.goal import PATH_TOLERANCE_VIOLATED, Tolerances
from ..control.intake import StateIntake
from ..control.joints import JointOrder
from ..control.law import warm_up_laws
from ..control.loop import (LOOP_SETTINGS, WARN, Command, ControlLoop, LawFailure,
                            Rejection, Stale)
from ..dynamics import warm_up
from .parameters import controller_schema, node_schema
from .common import Diagnostics, second_writers, seconds_clock, stamp_parts
from .collisions import CollisionInterface
from .cycle import CycleThread, post
from .description import chain_of, collision_shapes, load_model
from .cartesian import CartesianInterface
from .controller_state import ControllerStatePublisher
from .estimates import EstimatesInterface
from .lifecycle import ManagedNode
from .process import spin
from .messages import JointStateReader
from .references import ReferenceInterface
from .serialized import SerializedFloat64MultiArray
from .trajectory_action import DEACTIVATED, TrajectoryAction
from .watchdog import WatchdogThread, ramp_out

NAME = "computed_torque_controller"


def schema(logger=None):   # the node's parameters: its file's, then each registered law's
    return controller_schema(logger.warning if logger is not None else lambda text: None)


class ComputedTorqueController(ManagedNode):
    def __init__(self, name: str = NAME, **kwargs):
        specs = schema(rclpy.logging.get_logger(name))
        super().__init__(name, specs, **kwargs)
        own = {s.name for s in node_schema(NAME)}
        self._config_keys = [s.name for s in specs if s.name in LOOP_SETTINGS or s.name not in own]
        self.loop = self._action = self.joints = None
        self._lock = threading.RLock()  # the loop's: module docstring
        self._timing = None  # CycleTiming, from configure
        self._now = seconds_clock(self)   # the loop's clock
        self._simulated = lambda: self.get_clock().ros_time_is_active
        Diagnostics(self, self._report, self.params["diagnostic_period"], timing=self._timing_report)
        self.params.on_set(self._validate, self._apply)
        self.start_when_described()   # the URDF from /robot_description: self.published


    # ------------------------------------------------------------------ lifecycle
    def configure(self):
        p = self.params
        self.model = load_model(p, self.published)
        # compile what the first cycle and any law switched to later need (or load it from the cache)
        warm_up(notify=self.get_logger().info, forward=False)
        warm_up_laws(notify=self.get_logger().info)
        order, chain = JointOrder(self.model.joint_names, p["joints"]), chain_of(p, self.published)
        # configured again for the same joints: the rate limit goes on from what the drive holds
        held = self._command.values.copy() if self.joints == list(order.names) else None
        self._command = SerializedFloat64MultiArray(self.model.dof)
        self.loop = ControlLoop(self.model, order, {k: p[k] for k in self._config_keys},
                                p["state_timeout"], clock=self._now, log=self._warn,
                                max_trajectory_points=p["max_trajectory_points"],
                                position_limit_margin=p["position_limit_margin"],
                                links=[joint.child for joint in chain.movable],
                                shapes=collision_shapes(p, self.published, self.model),
                                effort_out=self._command.values,  # a cycle writes the message
                                drive_holds=held,
                                future_stamp_tolerance=p["future_stamp_tolerance"])
        self.joints = list(order.names)
        self._rate = p["rate"]  # read-only; a get_parameter call costs ~1 us per joint state
        self._timing = CycleTiming(NAME, self._rate)  # each cycle's execution time and period
        self._command_pub = self.own(self.create_publisher(Float64MultiArray,
                                                             p["command_topic"], 10))
        self._state = self.own(ControllerStatePublisher(self, self.joints))
        self._intake = StateIntake(self.loop, JointStateReader(JointState), self._lock)
        # staleness is judged in wall time, noticed even when /clock stops or this thread is busy
        self._safe_command = SerializedFloat64MultiArray(self.model.dof)  # the watchdog's own
        self.own(EstimatesInterface(self, self.loop, self._lock))  # an adaptive law's estimates
        self._cartesian = self.own(CartesianInterface(  # a task-space law's targets and frame
            self, self.loop, self._now, chain.root_link, chain.tip_link, self._lock))
        self._collisions = self.own(CollisionInterface(  # the momentum observer's residual
            self, self.loop, chain.root_link, p["external_torque_rate"], self._abort, self._lock))
        self.own(WatchdogThread(self, self.loop, self._lock, self._on_watchdog,
                                max(p["state_timeout"] / 10.0, 1e-3)))
        if self._action is None:  # one for the node's life (TrajectoryAction says why)
            self._action = TrajectoryAction(self, self._lock)
        self._action.attach(self.loop, Tolerances.from_parameters(p, order.dof),
                            1.0 / p["action_monitor_rate"])
        ReferenceInterface(self, self.loop, self._lock, self._action)  # topics, services: kept
        # last: destroyed first. Raw states: read from the bytes, a tenth of rclpy's conversion
        self.own(CycleThread(self, JointState, "joint_states", self._on_joint_state, self._lock,
                             1.0 / self._rate if self._rate > 0.0 else None, self._on_timer))
        cadence = "one per joint state" if self._rate == 0.0 else f"{self._rate} Hz"
        source = p["urdf_file"] or ("robot_description parameter" if p["robot_description"].strip()
                                    else "/robot_description")
        self.get_logger().info(f"{self.loop.describe()}; commands on {p['command_topic']} "
                               f"({cadence}); model from {source}")

    def activate(self):
        with self._lock:
            self.loop.activate()
        self._timing.restart()  # the inactive spell is no period
        self.get_logger().info("active: commanding from the measured position")

    def deactivate(self):
        if self._action is not None:
            self._action.preempt(DEACTIVATED)
        kind = self.params["on_deactivate"]
        with self._lock:  # after the last cycle's or the watchdog's command
            step = self.loop.deactivate(kind)
            if step is not None:
                self._publish_effort(step.effort)
        if step is None:   # no measured state: hold_gravity has no q, and the drive keeps its own
            return self.get_logger().info("inactive: no valid joint state yet, nothing published")
        reached = ramp_out(self.loop, self._lock, lambda s: self._publish_effort(s.effort))
        # the last command must reach the drive even when the process ends right after (Ctrl-C):
        # wait (bounded) until every subscriber acknowledged it
        self._command_pub.wait_for_all_acked(Duration(seconds=0.5))
        self.get_logger().info(f"inactive: published {kind}{'' if reached else ' (not reached)'}")

    def teardown(self):
        if self._action is not None:
            self._action.detach()
        super().teardown()
        self.loop = self._timing = None

    def destroy_node(self):
        if self._action is not None:
            self._action.destroy()
            self._action = None
        super().destroy_node()

    # ------------------------------------------------------------------ parameters
    def _validate(self, changes):
        if self.loop is None:  # unconfigured: configure validates everything
            return None
        return self.loop.prepare({k: v for k, v in changes.items() if k in self._config_keys})

    def _apply(self, change):
        if change is None or self.loop is None:
            return
        law = self.loop.law
        with self._lock:
            self.loop.apply(change)
            self._collisions.follow_guard()   # a new guard, perhaps
        if self.loop.law is not law:
            self.get_logger().info(f"control law now {type(self.loop.law).__name__} "
                                   f"{self.loop.law.params}")

    # ------------------------------------------------------------------ inputs
    def _on_joint_state(self, raw: bytes, start: float):
        """(The cycle's thread, under the lock) a state, woken at ``start`` (perf_counter): a
        cycle is timed from then to its command."""
        intake = self._intake
        if self._rate == 0.0 and self.active and self._cartesian.idle:
            # rate 0, the ordinary case: the state taken and answered, and the controller state
            # written, in one step
            command = intake.answer(raw, self._state.out)
            if command is not None:
                self._publish(command, intake.stamp, written=True)
                self._timing.record(start, perf_counter())
                return
        result = intake.take(raw)
        if isinstance(result, Rejection):
            return
        if result.note:  # after an outage or a jump of time back: holding the measured position
            post(self, self.get_logger().info, result.note)
            if self._action is not None:
                self._action.preempt(result.note)
        # rate 0: one answer per state (a step-locked simulator publishes one again)
        if self._rate == 0.0 and self.active and intake.due(self._simulated):
            self._cycle(start)

    # ------------------------------------------------------------------ output
    def _on_timer(self, start: float):
        """(The cycle's thread, under the lock) the rate's cycle on the latest state."""
        if self.active and self.loop.active:
            self._cycle(start)

    def _cycle(self, start: float):
        """A cycle on the latest state, timed from ``start``."""
        self._cartesian.before_cycle()  # a Cartesian trajectory sampled at the state
        self._publish(self.loop.cycle())
        self._timing.record(start, perf_counter())

    def _on_watchdog(self, command: Command):
        """From the watchdog's thread, under the lock: a Stale command, or a ramp's step."""
        self._publish_effort(command.effort, self._safe_command)
        if command.__class__ is Stale and command.first:
            self._warn(command.reason)
            if self._action is not None:   # it cannot go on: control resumes holding
                self._action.preempt(command.reason)

    def _publish(self, command: Command, stamp: tuple[int, int] | None = None,
                 written: bool = False):
        """A cycle's command; unless the law failed, its state and what follows a cycle.
        ``stamp``: its state's (sec, nanosec), None to look it up; ``written``: the state's
        message was written by the cycle (``ControlLoop.answer``)."""
        if command.__class__ is LawFailure:
            return self._publish_effort(command.effort)
        self._command_pub.publish(bytes(self._command))   # the cycle wrote it in place
        self.loop.command_left()
        if stamp is None:   # an unstamped state's: the time the cycle sampled the reference at
            stamp = self._intake.stamp if self.loop.stamp else stamp_parts(self.loop.time)
        if written:
            self._state.send()
        else:
            self._state.publish(self.loop, stamp, self._command.values)
        self._cartesian.after_cycle(stamp)
        self._collisions.after_cycle(stamp)
        if self._action is not None:
            self._action.after_cycle()

    def _warn(self, line: str):
        """A warning from any thread, logged on the executor's (a line costs 0.2 ms)."""
        post(self, self.get_logger().warning, line)

    def _abort(self, why: str):
        if self._action is not None:   # a collision: the path cannot be followed
            self._action.preempt(why, code=PATH_TOLERANCE_VIOLATED)

    def _publish_effort(self, effort: np.ndarray, command=None):
        """``command``: the serialized message to write (the watchdog's thread has its own)."""
        command = self._command if command is None else command
        if effort is not command.values:   # a cycle's command is written there already
            command.values[:] = effort
        self._command_pub.publish(bytes(command))
        self.loop.command_left()

    def _timing_report(self):
        """The cycles' timing as controller_manager reports its controllers'; None unconfigured."""
        return None if self._timing is None else self._timing.report(
            "active" if self.active else "inactive")

    def _report(self):
        if self.loop is None:
            return WARN, self.unconfigured_status(), {}
        self._state.refresh()
        self._cartesian.refresh()
        self._collisions.refresh()
        level, message, values = self.loop.report()
        values.update(self._cartesian.report())
        crowded = second_writers(self, self._command_pub, values)
        if crowded and level < WARN:
            level, message = WARN, crowded
        return (level, message, values) if self.active else (WARN, f"inactive ({message})", values)


def main(args=None):
    raise SystemExit(spin(ComputedTorqueController, args))


if __name__ == "__main__":
    main()
