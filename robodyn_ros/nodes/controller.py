"""computed_torque_controller: joint efforts from a control-law plugin (004 eq. 4.1 by default).

Inputs: ``/joint_states`` (matched by name), ``~/joint_trajectory`` (sampled in time, JTC rules),
``~/reference`` (one point in ``joints`` order, used as is until replaced). Output: the command on
``command_topic`` (Float64MultiArray in ``joints`` order, saturated), ``~/state`` and
``/diagnostics``. Parameters, topics and the ``~/state`` layout are documented in the README.

Internally every array is in the model's chain order; ``joints`` only orders the messages.
"""
from __future__ import annotations

import array
import time

import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
from trajectory_msgs.msg import JointTrajectoryPoint

from robodyn_ros.control import (JointTrajectory, TrajectoryError, TrajectorySampler,
                                 available_laws, load_law)
from robodyn_ros.control.laws import GravityCompensation
from robodyn_ros.dynamics import warm_up

from .common import (DIAGNOSTIC_PERIOD, ERROR, OK, ROBOT_DESCRIPTION_PARAMS, WARN,
                     ConfigurationError, CountedWarning, Diagnostics, Param, Parameters,
                     joint_order, load_model, spin, stamp_seconds, steady_clock)

ON_TIMEOUT = ("hold_gravity", "zero")

#: Parameters handed to the control law (those its ``parameters`` names); changeable at run time.
LAW_PARAMS = (
    Param("kp", 100.0, "position gain Kp: one value (every joint), one per joint in `joints` "
          "order, or n*n values row-major (a full matrix). computed_torque: 1/s^2 (004 uses 100)",
          dynamic=True),
    Param("kd", 20.0, "velocity gain Kv, as kp (004 uses 2*sqrt(Kp) = 20, critical damping)",
          dynamic=True),
    Param("ki", 0.0, "integral gain Ki on the integral of the error, as kp (0: no integral term)",
          dynamic=True),
    Param("integral_limit", 0.1, "anti-windup clamp of each component of the integral of the "
          "error (rad s); one value or one per joint", dynamic=True),
    Param("friction", True, "compensate the model's joint friction (viscous and Coulomb)"),
    Param("coulomb_velocity", 0.01, "gravity_compensation: velocity band (rad/s) in which the "
          "Coulomb compensation ramps", range=(0.0, 10.0)),
)

#: Of LAW_PARAMS, those given per joint (or as a matrix) in `joints` order; laws take chain order.
PER_JOINT = ("kp", "kd", "ki", "integral_limit")

PARAMS = (
    *ROBOT_DESCRIPTION_PARAMS,
    Param("joints", [], "joint names in command order (empty: the chain's order); must name "
          "every joint of the chain once", read_only=True, type=Parameter.Type.STRING_ARRAY),
    Param("control_law", "computed_torque", "name of the control law: an entry point of the "
          "group robodyn_ros.control_laws (computed_torque, pd_gravity, gravity_compensation, "
          "feedforward or a plugin's)"),
    *LAW_PARAMS,
    Param("command_topic", "/effort_controller/commands", "where the effort command is published "
          "(ros2_control's forward-command controller listens on <name>/commands)",
          read_only=True),
    Param("rate", 0.0, "control rate (Hz) on the node's clock; 0 = one command per valid "
          "joint-state message", range=(0.0, 10000.0), read_only=True),
    Param("state_timeout", 0.1, "seconds (wall time) without a valid joint state after which "
          "the state is stale and on_timeout is published", range=(0.001, 10.0), read_only=True),
    Param("effort_limits", [], "saturation of each joint's effort in `joints` order (N m or N); "
          "empty: the URDF's <limit effort> (none where absent)", type=Parameter.Type.DOUBLE_ARRAY),
    Param("on_timeout", "hold_gravity", "command while the state is stale: hold_gravity = g(q) "
          "at the last valid state, zero = no effort", constraints=" | ".join(ON_TIMEOUT)),
    DIAGNOSTIC_PERIOD,
)


def _law_value(value):
    """A one-element array is one number for every joint."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


class ComputedTorqueController(Node):
    def __init__(self, name: str = "computed_torque_controller", **kwargs):
        super().__init__(name, **kwargs)
        plugin_params = _plugin_law_params(self.get_logger())
        self.params = p = Parameters(self, (*PARAMS, *plugin_params))
        # what a law is built from: its name and every parameter a law may take
        self._law_keys = ("control_law", *(q.name for q in (*LAW_PARAMS, *plugin_params)))
        self.model = load_model(p)
        # compile before the first cycle needs it (a cache load after the first run on a machine)
        warm_up(notify=self.get_logger().info, forward=False)
        n = self.model.dof
        self._order = np.array(joint_order(p["joints"], self.model.joint_names))
        self.joints = [self.model.joint_names[i] for i in self._order]
        try:
            self._law = self._make_law({k: p[k] for k in self._law_keys})
            self._limit = self._effort_limits(p["effort_limits"])
            self._on_timeout = self._check_on_timeout(p["on_timeout"])
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from exc
        self._gravity = GravityCompensation(self.model, {"friction": False})
        self._state_timeout = p["state_timeout"]
        self._rate = p["rate"]  # read-only; a get_parameter call costs ~1 us per joint state

        # latest valid state (chain order); the reference starts when the first one arrives
        self._q, self._qd = np.zeros(n), np.zeros(n)
        self._state_stamp = 0.0  # seconds; 0 for an unstamped state
        self._state_time = None  # its header stamp as received, echoed exactly by ~/state
        self._state_received = None  # time.monotonic() of the last valid state
        self._state_names: list[str] | None = None
        self._state_index: np.ndarray | str = "no joint state yet"
        self._sampler: TrajectorySampler | None = None
        self._setpoint = None  # (q, qd, qdd) from ~/reference, used as is
        self._enabled = True
        self._stale = False
        self._timeout_command = np.zeros(n)
        self._last_t = None
        self._shape = (n,)
        self._law_failures = 0  # cycles in which the law raised or gave a non-finite effort

        # preallocated output: numpy views write straight into the message buffers
        self._command = Float64MultiArray()
        self._command_buffer = array.array("d", bytes(8 * n))
        self._command_view = np.frombuffer(self._command_buffer)
        self._saturated = np.empty(n)
        self._state_listened = True  # refreshed with every diagnostics report
        self._state_msg = JointTrajectoryMsg(joint_names=self.joints, points=[
            JointTrajectoryPoint() for _ in range(4)])  # reference, feedback, error, output

        self.rejected = CountedWarning(self, "input rejected")
        self.saturations = CountedWarning(self, "effort saturated at the limit")
        self._window_start = time.monotonic()
        self._window = _Window()
        self._counts_at_report = (0, 0, 0)  # saturations, rejections, law failures

        self._command_pub = self.create_publisher(Float64MultiArray, p["command_topic"], 10)
        self._state_pub = self.create_publisher(JointTrajectoryMsg, "~/state", 10)
        self.create_subscription(JointState, "joint_states", self._on_joint_state, 10)
        self.create_subscription(JointTrajectoryMsg, "~/joint_trajectory", self._on_trajectory, 10)
        self.create_subscription(JointTrajectoryPoint, "~/reference", self._on_reference, 10)
        self.create_service(SetBool, "~/enable", self._on_enable)
        self.create_service(Trigger, "~/hold", self._on_hold)
        if self._rate > 0.0:
            self.create_timer(1.0 / self._rate, self._on_timer)
        # staleness is judged in wall time so that it is noticed even when /clock stops
        self.create_timer(self._state_timeout / 4.0, self._watchdog, clock=steady_clock())
        Diagnostics(self, self._report, p["diagnostic_period"])
        p.on_set(self._on_parameters)
        cadence = "one per joint state" if self._rate == 0.0 else f"{self._rate} Hz"
        self.get_logger().info(f"{type(self._law).__name__} on joints {self.joints}, commands "
                               f"on {p['command_topic']} ({cadence})")

    # ------------------------------------------------------------------ configuration
    def _make_law(self, values):
        name = values["control_law"]
        cls = load_law(name)  # UnknownLawError (a ValueError) lists the available ones
        try:
            # a plugin parameter nobody set is None: the law's own default then applies
            return cls(self.model, {k: self._chain_order(k, _law_value(values[k]))
                                    for k in cls.parameters if values.get(k) is not None})
        except ValueError:
            raise
        except Exception as exc:  # a plugin's own failure must not take the node down
            raise ValueError(f"control law '{name}' failed to configure: {exc!r}") from exc

    def _chain_order(self, name, value):
        """A per-joint gain (n values) or matrix gain (n*n row-major) given in `joints` order, in
        the chain order the law works in; anything else (one number, a wrong size the law will
        refuse, a plugin's own parameter) as given."""
        if name not in PER_JOINT or not isinstance(value, list):
            return value
        n, o = self.model.dof, self._order
        try:
            v = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return value
        if v.shape == (n,):
            chain = np.empty(n)
            chain[o] = v
        elif v.shape == (n * n,) and n > 1:
            chain = np.empty((n, n))
            chain[np.ix_(o, o)] = v.reshape(n, n)
            chain = chain.ravel()
        else:
            return value
        return chain.tolist()

    def _effort_limits(self, limits):
        if not limits:
            return self.model.effort_limit.copy()
        limits = np.asarray(limits, dtype=float)
        if limits.shape != (self.model.dof,) or np.any(np.isnan(limits)) or np.any(limits <= 0):
            raise ValueError(f"effort_limits must be {self.model.dof} positive values in joints "
                             f"order {self.joints} (or empty for the URDF's), got {limits.tolist()}")
        chain = np.empty_like(limits)
        chain[self._order] = limits
        return chain

    @staticmethod
    def _check_on_timeout(value):
        if value not in ON_TIMEOUT:
            raise ValueError(f"on_timeout must be one of {list(ON_TIMEOUT)}, got '{value}'")
        return value

    def _on_parameters(self, changes):
        law = limit = on_timeout = None
        if changes.keys() & set(self._law_keys):
            law = self._make_law({**{k: self.params[k] for k in self._law_keys}, **changes})
        if "effort_limits" in changes:
            limit = self._effort_limits(changes["effort_limits"])
        if "on_timeout" in changes:
            on_timeout = self._check_on_timeout(changes["on_timeout"])
        # everything validated: apply together
        if law is not None:
            self._law = law
            self.get_logger().info(f"control law now {type(law).__name__} {law.params}")
        if limit is not None:
            self._limit = limit
        if on_timeout is not None:
            self._on_timeout = on_timeout
            self._set_timeout_command()

    # ------------------------------------------------------------------ inputs
    def _on_joint_state(self, msg: JointState):
        if msg.name != self._state_names:
            self._state_names = list(msg.name)
            self._state_index = self._match_names(self._state_names)
        index = self._state_index
        if isinstance(index, str):
            return self.rejected(index)
        n = len(msg.name)
        if len(msg.position) != n or len(msg.velocity) != n:
            return self.rejected(
                f"joint state has {n} names, {len(msg.position)} positions and "
                f"{len(msg.velocity)} velocities (the controller needs a position and a "
                "velocity per name)")
        q = np.frombuffer(msg.position)[index]
        qd = np.frombuffer(msg.velocity)[index]
        if not (np.isfinite(q).all() and np.isfinite(qd).all()):
            return self.rejected(f"joint state has NaN or inf: position {q.tolist()}, "
                                 f"velocity {qd.tolist()}")
        self._q, self._qd = q, qd
        self._state_time = msg.header.stamp
        self._state_stamp = stamp_seconds(msg.header.stamp)
        self._state_received = time.monotonic()
        if self._sampler is None:  # hold the position it started in
            self._sampler = TrajectorySampler(self.model.joint_names, q, self._now())
        if self._stale:
            # the reference moved on while nothing was controlled and the arm may have moved:
            # resume by holding where it is, with a fresh integral and no dt spanning the outage
            self._stale = False
            self._hold_measured()
            self._law.reset()
            self._last_t = None
            self.get_logger().info("joint states valid again: control resumes, holding the "
                                   "measured position")
        if self._rate == 0.0:
            self._cycle()

    def _match_names(self, names):
        """Index of each chain joint in ``names``, or the reason the message cannot be used."""
        missing = [j for j in self.model.joint_names if j not in names]
        if missing:
            return f"joint state lacks joints {missing} (it has {names})"
        return np.array([names.index(j) for j in self.model.joint_names])

    def _on_trajectory(self, msg: JointTrajectoryMsg):
        if self._sampler is None:
            return self.rejected("trajectory received before the first valid joint state")
        try:
            points = msg.points
            if not points:
                raise TrajectoryError("trajectory has no points")
            velocities = [p.velocities for p in points] if any(len(p.velocities) for p in points) \
                else None
            accelerations = [p.accelerations for p in points] \
                if any(len(p.accelerations) for p in points) else None
            trajectory = JointTrajectory(
                msg.joint_names, [stamp_seconds(p.time_from_start) for p in points],
                [p.positions for p in points], velocities, accelerations)
            self._sampler.set_trajectory(trajectory, self._now(),
                                         stamp_seconds(msg.header.stamp) or None)
        except TrajectoryError as exc:
            return self.rejected(f"trajectory: {exc}")
        self._setpoint = None
        self.get_logger().info(f"trajectory of {len(points)} point(s) accepted, reference ends "
                               f"at t = {self._sampler.end_time:.3f} s")

    def _on_reference(self, msg: JointTrajectoryPoint):
        if self._sampler is None:
            return self.rejected("reference received before the first valid joint state")
        n = self.model.dof
        parts = []
        for field in ("positions", "velocities", "accelerations"):
            values = np.asarray(getattr(msg, field), dtype=float)
            if values.size == 0 and field != "positions":
                values = np.zeros(n)
            if values.shape != (n,) or not np.all(np.isfinite(values)):
                return self.rejected(f"reference {field} must be {n} finite values in joints "
                                     f"order {self.joints}, got {values.tolist()}")
            chain = np.empty(n)
            chain[self._order] = values
            parts.append(chain)
        self._setpoint = tuple(parts)
        # a later trajectory splices from here
        self._sampler.hold(parts[0], self._now())

    # ------------------------------------------------------------------ services
    def _on_enable(self, request, response):
        if request.data and not self._enabled:
            if self._state_received is not None:
                self._hold_measured()  # the arm may have moved while only gravity was held
            self._law.reset()
        self._enabled = request.data
        response.success = True
        response.message = ("enabled: tracking the reference" if self._enabled
                            else "disabled: gravity compensation only")
        self.get_logger().info(response.message)
        return response

    def _on_hold(self, request, response):
        if self._state_received is None:
            response.success = False
            response.message = "no valid joint state yet: nothing to hold"
            return response
        self._hold_measured()
        self._law.reset()  # the integral of the error against the old reference is stale too
        response.success = True
        response.message = f"holding {np.round(self._q[self._order], 6).tolist()}"
        return response

    def _hold_measured(self):
        self._setpoint = None
        if self._sampler is None:
            self._sampler = TrajectorySampler(self.model.joint_names, self._q, self._now())
        else:
            self._sampler.hold(self._q, self._now())

    # ------------------------------------------------------------------ control cycle
    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_timer(self):
        if self._state_received is not None and not self._stale:
            self._cycle()

    def _cycle(self):
        start = time.perf_counter()
        # the reference at the instant the state was measured (when stamped), so delivery delay
        # does not shift it against the measurement
        t = self._state_stamp or self._now()
        dt = 0.0 if self._last_t is None else max(t - self._last_t, 0.0)
        self._last_t = t
        if self._setpoint is not None:
            q_des, qd_des, qdd_des = self._setpoint
        else:
            q_des, qd_des, qdd_des = self._sampler.sample(t)
        law = self._law if self._enabled else self._gravity
        try:
            tau = law.compute(self._q, self._qd, q_des, qd_des, qdd_des, dt)
            bad = (not isinstance(tau, np.ndarray) or tau.shape != self._shape
                   or not np.isfinite(tau).all())
        except Exception as exc:  # a plugin's bug must not end the node  # noqa: BLE001
            tau, bad = None, f"raised {exc!r}"
        computed = time.perf_counter()
        if bad:
            self._law_failed(law, tau, bad)
        else:
            self._publish_command(tau)
        self._publish_state(q_des, qd_des, qdd_des, t)
        w = self._window
        w.cycles += 1
        w.add("compute", computed - start)
        w.add("cycle", time.perf_counter() - start)
        if self._state_stamp:
            w.add("latency", self._now() - self._state_stamp)

    def _law_failed(self, law, tau, reason):
        """Publish the on_timeout command instead of an effort the law could not give."""
        if reason is True:
            if not isinstance(tau, np.ndarray):
                reason = f"returned a {type(tau).__name__}, not a numpy array"
            elif tau.shape != self._shape:
                reason = f"returned shape {tau.shape} instead of {self._shape}"
            else:
                reason = f"returned NaN or inf {tau.tolist()}"
        self._law_failures += 1
        self.rejected(f"control law {type(law).__name__} {reason}: published {self._on_timeout}")
        self._set_timeout_command()
        self._publish_timeout_command()

    def _publish_command(self, tau):
        limited = np.clip(tau, -self._limit, self._limit, out=self._saturated)
        if np.any(limited != tau):
            over = [self.joints[i] for i in np.flatnonzero(limited[self._order] != tau[self._order])]
            self.saturations(f"joints {over}")
        np.take(limited, self._order, out=self._command_view)
        self._command.data = self._command_buffer
        self._command_pub.publish(self._command)

    def _publish_state(self, q_des, qd_des, qdd_des, t):
        if not self._state_listened:  # building it costs as much as the law: only for a listener
            return
        o = self._order
        msg = self._state_msg
        # the state's own stamp, not its float seconds (off by up to 0.2 us), so that a listener
        # can match ~/state to the JointState it answers
        if self._state_stamp:
            msg.header.stamp = self._state_time
        else:
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(t * 1e9), 1_000_000_000)
        reference, feedback, error, output = msg.points
        reference.positions, reference.velocities, reference.accelerations = (
            _buffer(q_des[o]), _buffer(qd_des[o]), _buffer(qdd_des[o]))
        feedback.positions, feedback.velocities = _buffer(self._q[o]), _buffer(self._qd[o])
        error.positions, error.velocities = (_buffer(q_des[o] - self._q[o]),
                                             _buffer(qd_des[o] - self._qd[o]))
        output.effort = self._command_buffer
        self._state_pub.publish(msg)

    # ------------------------------------------------------------------ stale state
    def _watchdog(self):
        received = self._state_received
        if received is None or time.monotonic() - received <= self._state_timeout:
            return
        if not self._stale:
            self._stale = True
            self._set_timeout_command()
            self.get_logger().warning(
                f"no valid joint state for {self._state_timeout} s: publishing {self._on_timeout}")
        self._publish_timeout_command()

    def _publish_timeout_command(self):
        np.take(self._timeout_command, self._order, out=self._command_view)
        self._command.data = self._command_buffer
        self._command_pub.publish(self._command)

    def _set_timeout_command(self):
        if self._on_timeout == "hold_gravity":
            tau = self.model.gravity_torques(self._q)
            self._timeout_command = np.clip(tau, -self._limit, self._limit)
        else:
            self._timeout_command = np.zeros(self.model.dof)

    # ------------------------------------------------------------------ diagnostics
    def _report(self):
        self._state_listened = self._state_pub.get_subscription_count() > 0
        now = time.monotonic()
        w, self._window = self._window, _Window()
        elapsed, self._window_start = now - self._window_start, now
        saturated = self.saturations.count - self._counts_at_report[0]
        rejected = self.rejected.count - self._counts_at_report[1]
        failed = self._law_failures - self._counts_at_report[2]
        self._counts_at_report = (self.saturations.count, self.rejected.count, self._law_failures)
        age = None if self._state_received is None else now - self._state_received
        values = {
            "enabled": self._enabled,
            "control law": type(self._law).__name__,
            "achieved rate (Hz)": w.cycles / elapsed if elapsed > 0 else 0.0,
            **w.summary("compute", "compute time (us)", 1e6),
            **w.summary("cycle", "cycle time (us)", 1e6),
            **w.summary("latency", "latency state stamp to command (ms)", 1e3),
            "saturations (window)": saturated,
            "saturations (total)": self.saturations.count,
            "rejected inputs (window)": rejected,
            "rejected inputs (total)": self.rejected.count,
            "last rejection": self.rejected.last_reason,
            "control law failures (window)": failed,
            "control law failures (total)": self._law_failures,
            "stale state": self._stale,
            "state age (s)": -1.0 if age is None else age,
        }
        if age is None:
            return WARN, "waiting for the first valid joint state", values
        if self._stale:
            return ERROR, f"joint state stale: publishing {self._on_timeout}", values
        if failed:
            return ERROR, (f"control law failed {failed} time(s), publishing {self._on_timeout}: "
                           f"{self.rejected.last_reason}"), values
        if rejected:
            return WARN, f"inputs rejected: {self.rejected.last_reason}", values
        if saturated:
            return WARN, "effort saturated", values
        return OK, "tracking" if self._enabled else "disabled: gravity compensation", values


def _buffer(values: np.ndarray) -> array.array:
    return array.array("d", values.tobytes())


def _plugin_law_params(logger):
    """A parameter for each one that a registered law takes beyond LAW_PARAMS, so that a plugin's
    own parameters are set like the built-in gains; unset (the default), the law's default holds."""
    declared = {p.name for p in PARAMS}
    extra = {}
    for law in sorted(available_laws()):
        try:
            cls = load_law(law)
        except Exception as exc:  # noqa: BLE001 (choosing it later gives the error again)
            logger.warning(f"control law '{law}' does not load, its parameters are not "
                           f"declared: {exc!r}")
            continue
        for name, description in cls.parameters.items():
            if name not in declared and name not in extra:
                extra[name] = Param(name, None, f"{description} (control law {law}; unset: the "
                                    "law's default)", dynamic=True)
    return tuple(extra.values())


class _Window:
    """Statistics of one diagnostics period."""

    def __init__(self):
        self.cycles = 0
        self._sums: dict[str, list[float]] = {}

    def add(self, key: str, value: float) -> None:
        s = self._sums.get(key)
        if s is None:
            self._sums[key] = [value, value, 1]
        else:
            s[0] += value
            if value > s[1]:
                s[1] = value
            s[2] += 1

    def summary(self, key, label, scale):
        total, peak, count = self._sums.get(key, (0.0, 0.0, 0))
        return {f"{label} mean": total / count * scale if count else 0.0,
                f"{label} max": peak * scale}


def main(args=None):
    raise SystemExit(spin(ComputedTorqueController, args))


if __name__ == "__main__":
    main()
