"""ROS 2 node ``stewart_platform``: platform trajectory in, six actuator forces out (Dasgupta &
Mruthyunjaya 1998 inverse dynamics with leg inertia and joint friction), a managed node.

Topics (``~/trajectory``, ``~/setpoint``, ``~/leg_setpoint``, ``~/external_wrench``, ``~/legs_measured`` in;
``~/actuator_forces``, ``~/static_forces``, ``~/legs``, /diagnostics out), the ``~/enable``
service, the lifecycle and the safe action (refuse, never clip, report; withheld forces resume by
themselves; bounded reasons): doc/stewart_platform.md. The logic lives in
robodyn_ros.stewart.force_loop (no ROS); this module is its ROS adapter.
"""
from __future__ import annotations

import functools
import warnings

from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint

from ..plumbing.reasons import bounded
from ..plumbing.resources import find_share_file
from .parameters import node_schema
from ..stewart import PlatformFileError, StewartPlatform, warm_up
from ..stewart.force_loop import (LEG_NAMES, Disabled, ForceLoop, Forces, Level, Limits,
                                  Rejection, Withheld)
from ..spatial.trajectory import SetpointError
from ..stewart.tracking import Gains
from ..plumbing.stamps import unanswered
from .lifecycle import ManagedNode
from .process import spin
from .common import (ERROR, OK, WARN, ConfigurationError, CountedWarning, Diagnostics, point_arrays,
                     stamp_seconds, vector)

DIAGNOSTIC_LEVEL = {Level.OK: OK, Level.WARN: WARN, Level.ERROR: ERROR}



def schema():
    """The node's parameters (robodyn_ros/params/stewart_platform.yaml)."""
    return node_schema("stewart_platform")


def _input(what):
    """Subscription callback that rejects instead of raising: an exception out of a callback would
    end the node (spin() does not catch it). A callback returns the core's Rejection or None."""
    def wrap(callback):
        @functools.wraps(callback)
        def guarded(self, msg):
            try:
                outcome = callback(self, msg)
            except (SetpointError, ValueError) as exc:   # malformed while decoding the message
                outcome = self.loop.reject(what, exc)
            except Exception as exc:   # noqa: BLE001 - the node must keep running
                outcome = self.loop.reject(what, f"unexpected {type(exc).__name__}: {exc}")
            if outcome is not None:
                self.rejected_input(outcome)
        return guarded
    return wrap


class StewartPlatformNode(ManagedNode):
    """A managed node: configure loads the platform file, compiles and validates the limits;
    activate starts publishing forces; deactivate stops (the actuators keep their last command or
    apply their own timeout, as when forces are withheld)."""

    def __init__(self, **kwargs):
        super().__init__("stewart_platform", schema(), **kwargs)
        self.loop = None
        self.rejected = CountedWarning(self, "input rejected")
        self.withheld = CountedWarning(self, "forces withheld")
        self.status = (WARN, "unconfigured", {})
        self._published_level = WARN
        self.diagnostics = Diagnostics(self, self.diagnostic_report,
                                       period=self.params["diagnostic_period"])
        self.params.on_set(self.validate_parameters, self.apply_parameters)
        self.start()

    def configure(self):
        limits = Limits(**{name: self.params[name] for name in Limits.names()})
        gains = Gains(self.params["kp"], self.params["kv"])
        path = self.params["platform_file"] or find_share_file("config/stewart_dasgupta.yaml")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                platform = StewartPlatform.from_yaml(path)
            except PlatformFileError as exc:
                raise ConfigurationError(str(exc)) from exc
        for w in caught:
            self.get_logger().warning(str(w.message))
        warm_up(platform, notify=self.get_logger().info)   # compile before the first setpoint
        self.loop = ForceLoop(platform, limits, clock=self.now, control=self.params["control"],
                              gains=gains, measurement_timeout=self.params["measurement_timeout"])
        self.status = (OK, "no target yet", {})
        self._answered = None   # the stamp of the last measurement answered (computed_torque)
        self.pub_forces = self.own(self.create_publisher(Float64MultiArray, "~/actuator_forces", 10))
        self.pub_static = self.own(self.create_publisher(Float64MultiArray, "~/static_forces", 10))
        self.pub_legs = self.own(self.create_publisher(JointState, "~/legs", 10))
        for kind, topic, callback in (
                (MultiDOFJointTrajectory, "~/trajectory", self.on_trajectory),
                (MultiDOFJointTrajectoryPoint, "~/setpoint", self.on_setpoint),
                (JointState, "~/leg_setpoint", self.on_leg_setpoint),
                (WrenchStamped, "~/external_wrench", self.on_wrench),
                (JointState, "~/legs_measured", self.on_legs_measured)):
            self.subscribe(kind, topic, callback)  # kept for the node's life (ManagedNode._keep)
        self.serve(SetBool, "~/enable", self.on_enable)
        self.timer = self.every(1.0 / self.params["rate"], self.tick, "rate")

    def deactivate(self):
        self.report(WARN, "inactive: no forces published", {})

    def teardown(self):
        super().teardown()
        self.loop = None
        self.status = (WARN, self.configure_error or "unconfigured", {})

    def now(self):
        """Node-clock time in seconds (the clock trajectory stamps are read on)."""
        return self.get_clock().now().nanoseconds * 1e-9

    def validate_parameters(self, changes):
        """The new limits, all validated together (ValueError refuses the request), and a rate."""
        if self.loop is None:  # unconfigured: configure validates everything
            return None
        return (self.loop.limits.replace({k: v for k, v in changes.items() if k in Limits.names()}),
                changes.get("rate"))

    def apply_parameters(self, change):
        if change is None or self.loop is None:
            return
        self.loop.limits, rate = change
        if rate is not None:
            # a new period alone would wait out the old one (100 -> 0.2 -> 100 Hz: 4.5 s without
            # forces): restart the timer so that the new rate takes effect at once
            self.timer.timer_period_ns = int(1e9 / rate)
            self.timer.reset()

    # --- inputs -------------------------------------------------------------------------------
    def rejected_input(self, rejection: Rejection):
        """Counted, logged (throttled), last_rejection on /diagnostics; a refused target (beyond
        the limits) is reported as ERROR at once."""
        self.rejected(str(rejection))
        if rejection.level is Level.ERROR:
            self.report(ERROR, str(rejection), {})

    @_input("trajectory")
    def on_trajectory(self, msg):
        times = [stamp_seconds(pt.time_from_start, f"point {i} time_from_start")
                 for i, pt in enumerate(msg.points)]
        pos, quats, rates = point_arrays(msg.points)
        return self.loop.trajectory(times, pos, quats, *rates,
                                    start=stamp_seconds(msg.header.stamp, "header.stamp"))

    @_input("setpoint")
    def on_setpoint(self, msg):
        try:
            pos, quats, rates = point_arrays([msg])
        except SetpointError as exc:
            return self.loop.reject("setpoint", str(exc).removeprefix("point 0: "))
        return self.loop.setpoint(pos[0], quats[0], *(r[0] for r in rates))

    @_input("leg setpoint")
    def on_leg_setpoint(self, msg):
        return self.loop.leg_setpoint(msg.position, msg.name)

    @_input("external wrench")
    def on_wrench(self, msg):
        return self.loop.external_wrench(vector(msg.wrench.force), vector(msg.wrench.torque))

    @_input("leg measurement")
    def on_legs_measured(self, msg):
        stamp = stamp_seconds(msg.header.stamp, "header.stamp")
        rejection = self.loop.measure(msg.position, msg.velocity, msg.name, stamp)
        if rejection is None and self.loop.control == "computed_torque":
            # one answer per measurement (a step-locked simulator publishes one again)
            stamp = msg.header.stamp
            if unanswered((stamp.sec, stamp.nanosec), self._answered,
                          lambda: self.get_clock().ros_time_is_active) and self.step():
                self._answered = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        return rejection

    def on_enable(self, request, response):
        response.message = self.loop.enable(request.data)
        response.success = True
        return response

    # --- evaluation ---------------------------------------------------------------------------
    def tick(self):
        """At ``rate``: feed-forward forces; computed_torque answers measurements instead, and
        here only withholds (and says why) once they stop."""
        if self.loop.control == "feedforward" or self.loop.measurement_stale():
            self.step()

    def step(self) -> bool:
        """Evaluate, report and publish the forces when they may be; whether they were."""
        if not self.active:
            return False
        evaluation = self.loop.evaluate()
        if isinstance(evaluation, Withheld):
            self.withheld(evaluation.reason)
        if isinstance(evaluation, (Withheld, Forces, Disabled)):   # Idle: nothing to report yet
            self.report(DIAGNOSTIC_LEVEL[evaluation.level], evaluation.message, evaluation.values)
        if not isinstance(evaluation, Forces):
            return False
        r = evaluation.result
        self.pub_forces.publish(Float64MultiArray(data=r.forces.tolist()))
        if self.params["publish_static_forces"]:
            self.pub_static.publish(Float64MultiArray(data=r.static_forces.tolist()))
        legs = JointState(name=list(LEG_NAMES), position=r.leg_lengths.tolist(),
                          velocity=r.leg_rates.tolist(), effort=r.forces.tolist())
        legs.header.stamp = self.get_clock().now().to_msg()
        self.pub_legs.publish(legs)
        return True

    # --- diagnostics --------------------------------------------------------------------------
    def report(self, level, message, values):
        """Record the state for /diagnostics; a change of level is published at once."""
        self.status = (level, bounded(message), values)
        if level != self._published_level:
            self.diagnostics.publish()

    def diagnostic_report(self):
        level, message, values = self.status
        self._published_level = level
        if self.loop is None:
            return level, message, values
        rejection = self.loop.last_rejection
        return level, message, {**values, "enabled": self.loop.enabled,
                                "last_rejection": str(rejection) if rejection else "",
                                "rejected_inputs": self.rejected.count,
                                "withheld_samples": self.withheld.count}


def main(args=None):
    return spin(StewartPlatformNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
