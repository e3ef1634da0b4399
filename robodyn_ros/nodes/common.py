"""Helpers shared by the robodyn_ros nodes: parameters declared from a schema with validated
run-time changes, stamps, diagnostics, counted and throttled warnings.

Nodes stay thin adapters (doc/architecture.md): they convert messages to arrays, call the core
and convert back; what every node needs to be a well-behaved ROS node lives here.
"""
from __future__ import annotations

import array
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

import numpy as np

from ..plumbing.reasons import CountedEvent, bounded
from ..plumbing.stamps import stamp_parts, stamp_seconds  # noqa: F401 (the nodes' import)
from ..spatial.trajectory import SetpointError
from .parameters import ParamSpec

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
#: Messages a simulator's state and /clock publishers keep (KEEP_LAST) for a reader that lags
STATE_HISTORY = 1000
#: The status controller_manager reports its controllers' timing in (nodes' cycle timing here)
TIMING_STATUS = "Controllers Activity"


class ConfigurationError(ValueError):
    """A node cannot start with the parameters it was given; the message says which and why."""


_ROS_TYPES = {
    "bool": Parameter.Type.BOOL, "int": Parameter.Type.INTEGER, "double": Parameter.Type.DOUBLE,
    "string": Parameter.Type.STRING, "bool_array": Parameter.Type.BOOL_ARRAY,
    "int_array": Parameter.Type.INTEGER_ARRAY, "double_array": Parameter.Type.DOUBLE_ARRAY,
    "string_array": Parameter.Type.STRING_ARRAY,
}


def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    d = ParameterDescriptor(description=spec.description, read_only=spec.read_only,
                            dynamic_typing=spec.dynamic,
                            type=0 if spec.dynamic else _ROS_TYPES[spec.type].value,
                            additional_constraints=" | ".join(spec.one_of or ()))
    if spec.bounds is not None:
        low, high = spec.bounds
        if spec.type in ("int", "int_array"):
            d.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=0)]
        else:
            d.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
    return d


class Parameters:
    """A node's parameters declared from its schema (:func:`robodyn_ros.nodes.parameters.node_schema`);
    ``params[name]`` is the current value. Every value, given at start or changed later, is
    checked against its spec; a value the schema refuses at start is a ConfigurationError."""

    def __init__(self, node: Node, specs: Sequence[ParamSpec]):
        self._node = node
        self.table = {s.name: s for s in specs}
        for s in specs:
            if isinstance(s.default, list) and not s.default:
                self._declare_empty(s)
            else:  # None (a plugin law's parameter without a default) stays unset
                node.declare_parameter(s.name, s.default, descriptor(s))
        for s in specs:
            value = self[s.name]
            if value is not None:
                try:
                    s.check(value)
                except ValueError as exc:
                    raise ConfigurationError(str(exc)) from exc
        # what no node has (an unknown name, '', unsetting) is refused also by a node that changes
        # nothing at run time: rclpy itself takes a parameter named ''
        self.on_set(lambda changes: None, lambda change: None)

    def _declare_empty(self, s: ParamSpec) -> None:
        """An empty list, typed: rclpy infers BYTE_ARRAY from [] and leaves a parameter declared
        by its type alone unset, and one unset parameter makes get_parameters (ros2 param dump)
        answer nothing for the whole request. So declare it by type and writable, set the typed
        empty list unless a value was given, then apply the real descriptor (read-only or not)."""
        kind, d = _ROS_TYPES[s.type], descriptor(s)
        node = self._node
        node.declare_parameter(s.name, kind, ParameterDescriptor(
            description=d.description, additional_constraints=d.additional_constraints))
        try:
            node.get_parameter(s.name)
        except ParameterUninitializedException:
            node.set_parameters([Parameter(s.name, kind, [])])
        node.set_descriptor(s.name, d)

    def __getitem__(self, name: str):
        try:
            return _plain(self._node.get_parameter(name).value)
        except ParameterUninitializedException:
            return self.table[name].default

    def on_set(self, validate: Callable[[dict[str, Any]], Any],
               apply: Callable[[Any], None]) -> None:
        """Run-time changes, all or nothing: ``validate(changes)`` checks the whole request and
        returns what ``apply`` needs, or raises ValueError with the reason to refuse it; ``apply``
        runs once rclpy has stored the new values (a post-set callback)."""
        pending = []

        def check(parameters: list[Parameter]) -> SetParametersResult:
            # rclpy has already refused read-only parameters and values out of their range
            try:
                changes = self._checked(parameters)
                prepared = validate(changes)
            except ValueError as exc:
                reason = bounded(str(exc))
                self._node.get_logger().warning(f"parameter change refused: {reason}")
                return SetParametersResult(successful=False, reason=reason)
            pending[:] = [prepared]
            return SetParametersResult(successful=True)

        def commit(parameters: list[Parameter]) -> None:
            if pending:
                apply(pending.pop())

        self._node.add_on_set_parameters_callback(check)
        self._node.add_post_set_parameters_callback(commit)

    def _checked(self, parameters: list[Parameter]) -> dict[str, Any]:
        """This node's changes as plain values; ValueError for a name it does not have, a
        request to unset one, or a value its spec refuses."""
        changes = {}
        for p in parameters:
            if p.name not in self.table:
                if p.name and self._node.has_parameter(p.name):
                    continue  # rclpy's own (use_sim_time): not ours to judge
                raise ValueError(f"no parameter named {bounded(repr(p.name), max_chars=80)} on this node")
            if p.type_ == Parameter.Type.NOT_SET:
                # rclpy would undeclare it, and a later read of the value would fail
                raise ValueError(f"parameter '{p.name}' cannot be unset: give a value")
            changes[p.name] = _plain(p.value)
            self.table[p.name].check(changes[p.name])
        return changes


def _plain(value):
    """Array parameters arrive as array.array or tuples; hand them on as lists."""
    return list(value) if isinstance(value, (list, tuple, array.array)) else value


def seconds_clock(node) -> Callable[[], float]:
    """The node's clock in seconds: ROS time, which is time.time() unless /clock drives it
    (``use_sim_time``, followed when it is set). Asking rclpy whether ROS time is active costs
    about 2.5 µs, twice a control cycle: the answer is kept from the parameter instead."""
    clock = node.get_clock()
    simulated = [bool(node.get_parameter("use_sim_time").value)]

    def follow(parameters):
        for parameter in parameters:
            if parameter.name == "use_sim_time":
                simulated[0] = bool(parameter.value)
    node.add_post_set_parameters_callback(follow)
    return lambda: clock.now().nanoseconds * 1e-9 if simulated[0] else time.time()


def steady_clock() -> Clock:
    """For watchdogs and wall-time periods that must run even when /clock stops."""
    return Clock(clock_type=ClockType.STEADY_TIME)


def CountedWarning(node: Node, what: str, period: float = 2.0) -> CountedEvent:
    """An event counted every time and logged as a WARN at most once per ``period`` (wall time)."""
    return CountedEvent(what, node.get_logger().warning, time.monotonic, period)


def diagnostic_status(name: str, hardware_id: str, level: bytes, message: str,
                      values: Mapping[str, Any]) -> DiagnosticStatus:
    return DiagnosticStatus(
        level=bytes([level]) if isinstance(level, int) else level, name=name, message=message, hardware_id=hardware_id,
        values=[KeyValue(key=k, value=_diagnostic_text(v)) for k, v in values.items()])


def _diagnostic_text(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class Diagnostics:
    """Publishes one DiagnosticStatus on /diagnostics every ``period`` seconds (wall time).

    ``report()`` returns (level, message, key/values) and is called once per period, so it may
    also reset the node's per-window statistics. ``timing()``, when given, returns the same for
    the node's cycle timing (or None: nothing to say), published in the same message as a second
    status named as controller_manager names its own, ``<node>: Controllers Activity``.
    """

    def __init__(self, node: Node, report: Callable[[], tuple[bytes, str, Mapping[str, Any]]],
                 period: float = 1.0, hardware_id: str = "",
                 timing: Callable[[], tuple[int, str, Mapping[str, Any]] | None] | None = None):
        self._node = node
        self._report = report
        self._timing = timing
        self._name = f"{node.get_name()}: {node.get_fully_qualified_name()}"
        self._hardware_id = hardware_id or node.get_name()
        self._publisher = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._timer = node.create_timer(period, self.publish, clock=steady_clock())

    def destroy(self) -> None:
        self._node.destroy_timer(self._timer)
        self._node.destroy_publisher(self._publisher)

    def publish(self) -> None:
        level, message, values = self._report()
        msg = DiagnosticArray()
        msg.header.stamp = self._node.get_clock().now().to_msg()
        msg.status = [diagnostic_status(self._name, self._hardware_id, level, message, values)]
        timing = self._timing() if self._timing is not None else None
        if timing is not None:
            msg.status.append(diagnostic_status(f"{self._node.get_name()}: {TIMING_STATUS}",
                                                self._hardware_id, *timing))
        self._publisher.publish(msg)


def vector(v):
    return [v.x, v.y, v.z]


def point_arrays(points):
    """Positions (K,3), quaternions (K,4) and the four rate arrays (K,3) (linear and angular
    velocity, linear and angular acceleration; zero when absent) of MultiDOFJointTrajectoryPoints.
    SetpointError naming the point if one has not exactly one transform, or several velocities or
    accelerations."""
    for i, pt in enumerate(points):
        if len(pt.transforms) != 1:
            raise SetpointError(f"point {i}: needs exactly one transform, has "
                                f"{len(pt.transforms)}")
        if len(pt.velocities) > 1 or len(pt.accelerations) > 1:
            raise SetpointError(f"point {i}: at most one velocity and one acceleration")
    pos = np.array([vector(pt.transforms[0].translation) for pt in points]).reshape(-1, 3)
    quats = np.array([[r.x, r.y, r.z, r.w] for r in (pt.transforms[0].rotation for pt in points)])
    rates = [np.array([vector(getattr(getattr(pt, field)[0], part)) if getattr(pt, field)
                       else [0.0, 0.0, 0.0] for pt in points]).reshape(-1, 3)
             for field in ("velocities", "accelerations") for part in ("linear", "angular")]
    return pos, quats.reshape(-1, 4), rates


def second_writers(node, publisher, values) -> str:
    """Why other nodes publishing on ``publisher``'s command topic are trouble ('' when none do):
    two writers fight over the drive. Their names go into ``values`` (by the graph: call it per
    report, not per message)."""
    me = node.get_fully_qualified_name()
    others = sorted({f"{i.node_namespace.rstrip('/')}/{i.node_name}" for i in
                     node.get_publishers_info_by_topic(publisher.topic_name)} - {me})
    values["other writers of the command topic"] = ", ".join(others) or "none"
    if not others:
        return ""
    return (f"{', '.join(others)} also publish(es) on {publisher.topic_name}: two writers fight "
            "over the drive (ros2_control gives a command interface to one controller); stop the "
            "other or give this controller another command_topic")
