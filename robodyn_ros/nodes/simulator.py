"""arm_simulator: the arm's forward dynamics integrated by RK4 from the effort commands.

The plant is an engine (robodyn_ros.sim, doc/simulator.md): ``robodyn`` (our forward dynamics) or
``mujoco`` (MuJoCo on the same URDF); both clamp efforts and stop joints at the URDF's limits.

Every tick of a wall-clock timer at ``publish_rate`` integrates ``rate / publish_rate`` RK4 steps
of 1/``rate`` s, holding the latest command (a zero-order hold, as a sampled controller applies
it), then publishes ``/clock`` and the stamped ``/joint_states``. Simulated time advances by exactly
the integrated steps, so a late tick slows the simulation instead of skewing it: run the other
nodes with ``use_sim_time:=true``. Braked until the first command (and after ``~/reset``); zero
effort after ``command_timeout`` without one.

``lockstep`` (one command per state, a late answer delays the simulation), a push from outside on
``~/external_wrench`` (τ_ext = J(q)ᵀ w after the effort clamp; refused with the reason in another
frame, non-finite or beyond ``sim.MAX_WRENCH``), a payload picked up at ``payload_time``,
``~/reset`` and ``/diagnostics``: doc/arm_simulator.md. A failed step (a non-finite state, a
singular mass matrix) is never published: the state is held and the failure reported.
"""
from __future__ import annotations

import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from robodyn_ros.dynamics import warm_up
from robodyn_ros.sim import StepError, make_plant, wrench_refusal
from robodyn_ros.sim.drive import plant_drive

from ..control.joints import JointOrder
from ..dynamics.description import read_description
from .parameters import node_schema
from ..plumbing.reasons import bounded
from .process import spin
from .common import (ERROR, OK, WARN, ConfigurationError, CountedWarning, Diagnostics,
                     STATE_HISTORY, Parameters, steady_clock)
from .description import chain_of, load_model, robot_description_source, when_described
from .serialized import SerializedJointState

# s (wall) before an unanswered state is published again: long beside any answer's delay (a
# controller answering a state and its copy leaves the loop one sample behind)
LOCKSTEP_REPEAT = 0.5


def schema():
    """The node's parameters (robodyn_ros/params/arm_simulator.yaml)."""
    return node_schema("arm_simulator")


class ArmSimulator(Node):
    def __init__(self, name: str = "arm_simulator", **kwargs):
        super().__init__(name, **kwargs)
        self.params = Parameters(self, schema())
        when_described(self, self.params, self._setup)

    def _setup(self, published):
        p = self.params
        model = load_model(p, published)
        warm_up(notify=self.get_logger().info)   # compile before the first integration step
        n = model.dof
        try:
            order = JointOrder(model.joint_names, p["joints"])
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from exc
        self._order = order.index
        self.joints = list(order.names)
        self._dt = 1.0 / p["rate"]
        urdf = published or read_description(*robot_description_source(p))[1]
        try:   # (without payload, with it): the arm picks the payload up at payload_time
            self._engines = make_plant(
                p["engine"], model, self._dt, urdf, mass_scale=p["mass_scale"],
                friction_scale=p["friction_scale"], payload_mass=p["payload_mass"],
                payload_com=p["payload_com"], tip=p["tip_link"] or None, root=p["root_link"] or None)
            self.drive = plant_drive(self._engines, order, p["drive_compensates"],
                                     p["drive_rate_limit"], p["drive_stop_on_rate_violation"],
                                     p["drive_mass_scale"])
        except (ImportError, ValueError) as exc:
            raise ConfigurationError(f"engine '{p['engine']}': {exc}") from exc
        self.engine = self._engines[1]
        self.model = model = self.engine.model
        self._payload_ns = round(1e9 * p["payload_time"])
        self.params.on_set(lambda changes: changes.get("payload_time"), self._schedule_payload)
        if getattr(self.engine, "coulomb_dropped", False):
            self.get_logger().warning(
                "the mujoco engine leaves out the URDF's Coulomb friction (MuJoCo's frictionloss "
                "is not the model's sign(qd) friction); friction_scale 0 turns it off everywhere")
        publish_rate = p["publish_rate"] or p["rate"]
        self._steps = round(p["rate"] / publish_rate)
        if abs(self._steps * publish_rate - p["rate"]) > 1e-9 * p["rate"]:
            raise ConfigurationError(f"publish_rate {publish_rate} Hz must divide rate "
                                     f"{p['rate']} Hz")
        initial = p["initial_position"] or [0.0] * n
        if len(initial) != n:
            raise ConfigurationError(f"initial_position has {len(initial)} values, the chain "
                                     f"{self.joints} has {n} joints")
        self._initial = np.empty(n)
        self._initial[self._order] = initial
        if np.any(self._initial < model.lower) or np.any(self._initial > model.upper):
            raise ConfigurationError(f"initial_position {initial} is outside the position limits "
                                     f"of {self.joints}")
        self._noise = np.array([p["position_noise"], p["velocity_noise"]])
        self._rng = np.random.default_rng(p["seed"])
        self._timeout = p["command_timeout"]
        self._lockstep = p["lockstep"]
        self._answered = False  # a command arrived since the last published state
        self._deferred = False  # lockstep: a tick is waiting for the answer

        self.q, self.qd = self._initial.copy(), np.zeros(n)
        self.time_ns = 0  # simulated time, an integer so that it never drifts
        self._step_ns = round(1e9 * self._dt)
        self._tau = np.zeros(n)
        self._command_time = None  # time.monotonic() of the last valid command
        self._braked = True
        self._timed_out = False
        self.rejected = CountedWarning(self, "command rejected")
        self._base = chain_of(p, published).root_link   # the frame an external wrench is given in
        self.wrench = None   # [f; n] pushing the tip from outside (None: no push)
        self.refused = CountedWarning(self, "external wrench refused")
        self.integration_failures = 0  # ticks whose RK4 steps raised (state held)
        # at the last /diagnostics report: wall time, simulated time, rejections, failures, clamps,
        # refused wrenches
        self._at_report = (time.monotonic(), 0, 0, 0, 0, 0)

        # kept serialized and written in place: 3.0 us a state instead of 6.3 through a message
        self._state = SerializedJointState(self.joints, JointState, effort=True)
        self._clock_msg = Clock()
        # a second of states at 1 kHz kept for a reader that lags (a recorder on a loaded machine):
        # with KEEP_LAST 10 a reliable reader that fell 10 states behind lost the oldest ones
        self._state_pub = self.create_publisher(JointState, "joint_states", STATE_HISTORY)
        self._clock_pub = self.create_publisher(Clock, "/clock", STATE_HISTORY)
        self.create_subscription(Float64MultiArray, p["command_topic"], self._on_command, 10)
        self.create_subscription(WrenchStamped, "~/external_wrench", self._on_wrench, 10)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.create_timer(1.0 / publish_rate, self._tick, clock=steady_clock())
        Diagnostics(self, self._report, p["diagnostic_period"], hardware_id=model.name)
        self.get_logger().info(
            f"simulating {model.name} ({n} joints) with the {self.engine.name} engine at "
            f"{p['rate']:g} Hz, publishing at {publish_rate:g} Hz; braked until the first command "
            f"on {p['command_topic']}")

    def _on_command(self, msg: Float64MultiArray):
        tau = np.asarray(msg.data, dtype=float)
        if tau.shape != (self.model.dof,) or not np.all(np.isfinite(tau)):
            return self.rejected(f"command must be {self.model.dof} finite efforts in joints "
                                 f"order {bounded(self.joints)}, got {bounded(tau.ravel())}")
        self._tau[self._order] = tau
        self._command_time = time.monotonic()
        self._answered = True
        if self._braked or self._timed_out:
            self.get_logger().info("commands arriving: the arm moves")
        self._braked = self._timed_out = False
        if self._deferred:  # lockstep: a tick waited for this answer; at most one step per tick
            self._integrate()
            self._advance_time()

    def _on_wrench(self, msg: WrenchStamped):
        f, n = msg.wrench.force, msg.wrench.torque
        w = np.array([f.x, f.y, f.z, n.x, n.y, n.z])
        if msg.header.frame_id not in ("", self._base):
            return self.refused(f"frame_id '{msg.header.frame_id}' is not the base frame "
                                f"'{self._base}' (or empty)")
        if wrench_refusal(w):
            return self.refused(wrench_refusal(w))
        self.wrench = w if w.any() else None
        self.get_logger().info(f"external wrench {w.tolist()} (N, N·m, base frame) on the tip"
                               if w.any() else "external wrench removed")

    def _report(self):
        now = time.monotonic()
        wall, sim_ns, rejected, failed, clamped, refused = self._at_report
        engine = self.engine
        self._at_report = (now, self.time_ns, self.rejected.count, self.integration_failures,
                           engine.clamped, self.refused.count)
        rejected, refused = self.rejected.count - rejected, self.refused.count - refused
        failed, clamped = self.integration_failures - failed, engine.clamped - clamped
        values = {
            "engine": engine.name,
            "simulated time (s)": self.time_ns * 1e-9,
            "real-time factor": (self.time_ns - sim_ns) * 1e-9 / max(now - wall, 1e-9),
            "braked": self._braked,
            "command timed out": self._timed_out,
            "rejected commands (window)": rejected,
            "rejected commands (total)": self.rejected.count,
            "last rejection": self.rejected.last_reason,
            "external wrench (N, N·m)": "none" if self.wrench is None else self.wrench.tolist(),
            "refused external wrenches (total)": self.refused.count,
            "last external wrench refusal": self.refused.last_reason,
            "integration failures (window)": failed,
            "integration failures (total)": self.integration_failures,
            "clamped efforts (window, steps)": clamped,
            "clamped efforts (total, steps)": engine.clamped,
            "position-limit stops (total, steps)": engine.stopped,
        }
        if self.drive is not None:
            values.update(self.drive.report())
            if self.drive.stopped:
                return ERROR, "drive stopped: a command over drive_rate_limit (~/reset)", values
        if failed:
            return ERROR, f"integration failed {failed} time(s): state held", values
        if clamped:
            return WARN, f"efforts clamped at the URDF limits in {clamped} step(s)", values
        if self._timed_out:
            return WARN, f"no command for {self._timeout} s: zero effort", values
        if rejected:
            return WARN, f"commands rejected: {self.rejected.last_reason}", values
        if refused:
            return WARN, f"external wrench refused: {self.refused.last_reason}", values
        return OK, "braked until the first command" if self._braked else "simulating", values

    def _on_reset(self, request, response):
        self.q, self.qd = self._initial.copy(), np.zeros(self.model.dof)
        self.engine.reset()
        if self.drive is not None:
            self.drive.reset()
        self._braked = True
        response.success = True
        response.message = ("back at initial_position, at rest, braked until the next command; "
                            "simulated time continues")
        return response

    def _tick(self):
        if not self._braked:
            if time.monotonic() - self._command_time > self._timeout:
                if not self._timed_out:
                    self._timed_out = True
                    self._tau[:] = 0.0
                    self.get_logger().warning(f"no command for {self._timeout} s: zero effort")
            elif self._lockstep and not self._answered:
                self._deferred = True  # the answer will make this tick's step
                if time.monotonic() - self._published_at > LOCKSTEP_REPEAT:
                    # the same state again, for a controller that (re)started meanwhile
                    self._published_at = time.monotonic()
                    self._state_pub.publish(self._state_sent)
                return
            self._integrate()
        self._advance_time()

    def _schedule_payload(self, seconds):
        if seconds is not None:
            self._payload_ns = round(1e9 * seconds)
            self.get_logger().info(f"payload carried from t = {seconds:g} s (simulated)")

    def _carry_payload(self):
        """The engine for this tick: the arm without the payload before payload_time, with it
        from then on; the counts of clamped and stopped steps carry over."""
        engine = self._engines[self.time_ns >= self._payload_ns]
        if engine is not self.engine:
            engine.clamped, engine.stopped = self.engine.clamped, self.engine.stopped
            self.engine = engine

    def _integrate(self):
        self._carry_payload()
        q, qd = self.q, self.qd
        try:
            for _ in range(self._steps):
                q, qd = self.engine.step(q, qd, self._tau, self.wrench)
        except StepError as exc:  # hold the state, publish nothing new, keep the node alive
            self.integration_failures += 1
            self.engine.reset()
            self.get_logger().error(
                f"integration step failed, state held at q = {self.q.tolist()}: {exc} "
                f"({self.integration_failures} failed ticks)", throttle_duration_sec=2.0)
            return
        self.q, self.qd = q, qd

    def _advance_time(self):
        self.time_ns += self._steps * self._step_ns
        self._answered = self._deferred = False
        self._publish()

    def _publish(self):
        self._published_at = time.monotonic()
        sec, nanosec = divmod(self.time_ns, 1_000_000_000)
        self._clock_msg.clock.sec, self._clock_msg.clock.nanosec = sec, nanosec
        self._clock_pub.publish(self._clock_msg)
        q, qd = self.q, self.qd
        if self._noise.any():
            q = q + self._rng.normal(0.0, self._noise[0], q.size)
            qd = qd + self._rng.normal(0.0, self._noise[1], qd.size)
        o, s = self._order, self._state
        np.take(q, o, out=s.position)
        np.take(qd, o, out=s.velocity)
        np.take(self.engine.joint_torque(self._tau, self.q, self.qd), o, out=s.effort)
        self._state_sent = s.write(sec, nanosec)
        self._state_pub.publish(self._state_sent)


def main(args=None):
    raise SystemExit(spin(ArmSimulator, args))


if __name__ == "__main__":
    main()
