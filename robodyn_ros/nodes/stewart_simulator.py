"""stewart_simulator: the Stewart platform's forward dynamics integrated by RK4 from the actuator
forces (robodyn_ros.stewart.plant; doc/stewart_simulator.md).

Subscribes
  command_topic  std_msgs/Float64MultiArray: actuator forces, N, legs 1..6 (stewart_platform's
                 ~/actuator_forces by default); beyond the force limit they are clamped and counted.
Publishes
  state_topic    sensor_msgs/JointState leg1..leg6: position = length (m), velocity = rate (m/s),
                 with the measurement noise (stewart_platform's ~/legs_measured by default)
  ~/pose         geometry_msgs/PoseStamped: the true platform pose (reference point, base frame)
  /clock, /diagnostics

Every tick of a wall-clock timer at ``publish_rate`` integrates ``rate / publish_rate`` RK4 steps
with the latest forces held, then publishes /clock and the stamped states, as arm_simulator does:
run the other nodes with ``use_sim_time:=true``. Until the first command, and again after
``command_timeout`` without one, the brakes hold the platform at rest where it is. With
``lockstep`` a tick integrates only once a command answered the last state, and simulated time
stands still until the first command (the state is published again each tick): stewart_platform
answers nothing until it has a target, so a trajectory stamped ahead of the current time keeps its
lead-in however long DDS takes to deliver it. A step that fails (a singular pose, a non-finite
state) is never published: the state is held and the failure reported.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .parameters import node_schema
from ..plumbing.reasons import bounded
from ..plumbing.resources import find_share_file
from ..stewart import PlatformFileError, StewartPlatform, warm_up
from ..spatial import rotations
from ..stewart.force_loop import LEG_NAMES
from ..stewart.plant import SimulatedPlatform, StepError, with_payload
from .common import (ERROR, OK, WARN, ConfigurationError, CountedWarning, Diagnostics,
                     STATE_HISTORY, Parameters, steady_clock)
from .process import spin


def schema():
    """The node's parameters (robodyn_ros/params/stewart_simulator.yaml)."""
    return node_schema("stewart_simulator")


class StewartSimulator(Node):
    def __init__(self, **kwargs):
        super().__init__("stewart_simulator", **kwargs)
        self.params = p = Parameters(self, schema())
        path = p["platform_file"] or find_share_file("config/stewart_dasgupta_realisable.yaml")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                sp = StewartPlatform.from_yaml(path, leg_model=p["leg_model"] or None)
                sp = with_payload(sp, p["payload_mass"], _vector(p["payload_com"], "payload_com"))
            except (PlatformFileError, ValueError) as exc:
                raise ConfigurationError(str(exc)) from exc
        for w in caught:
            self.get_logger().warning(str(w.message))
        warm_up(sp, notify=self.get_logger().info)
        publish_rate = p["publish_rate"] or p["rate"]
        self._steps = round(p["rate"] / publish_rate)
        if abs(self._steps * publish_rate - p["rate"]) > 1e-9 * p["rate"]:
            raise ConfigurationError(f"publish_rate {publish_rate} Hz must divide rate "
                                     f"{p['rate']} Hz")
        self.plant = SimulatedPlatform(
            sp, _vector(p["initial_position"], "initial_position"),
            rotations.rpy_matrix(_vector(p["initial_rpy"], "initial_rpy")),
            dt=self._steps / p["rate"], substeps=self._steps, force_limit=p["force_limit"] or None,
            seed=p["seed"], noise=(p["length_noise"], p["rate_noise"]))
        self._period_ns = round(1e9 * self._steps / p["rate"])
        self._timeout, self._lockstep = p["command_timeout"], p["lockstep"]
        self._forces = np.zeros(6)
        self._command_time = -np.inf   # time.monotonic() of the last valid command
        self._braked = True
        self._answered = False  # a command arrived since the last published state
        self._deferred = False  # lockstep: a tick is waiting for the answer
        self.time_ns = 0        # simulated time, an integer so that it never drifts
        self.rejected = CountedWarning(self, "command rejected")
        self.failures = 0       # ticks whose step raised (state held)
        self._at_report = (time.monotonic(), 0, 0, 0, 0)  # wall, sim time, failures, clamps, rejections

        self._legs = JointState(name=list(LEG_NAMES))
        self._pose = PoseStamped()
        self._pose.header.frame_id = "base"
        self._clock_msg = Clock()
        self._measure()   # the state at time 0
        # kept for a reader that lags (a recorder on a loaded machine), as arm_simulator does
        self._legs_pub = self.create_publisher(JointState, p["state_topic"], STATE_HISTORY)
        self._pose_pub = self.create_publisher(PoseStamped, "~/pose", STATE_HISTORY)
        self._clock_pub = self.create_publisher(Clock, "/clock", STATE_HISTORY)
        self.create_subscription(Float64MultiArray, p["command_topic"], self._on_command, 10)
        self.create_timer(1.0 / publish_rate, self._tick, clock=steady_clock())
        Diagnostics(self, self._report, p["diagnostic_period"], hardware_id=sp.name)
        self.get_logger().info(
            f"simulating {sp.name} ({sp.leg_model} legs, platform {sp.M:g} kg) at {p['rate']:g} "
            f"Hz, publishing at {publish_rate:g} Hz; braked until the first command on "
            f"{p['command_topic']}" + ("; lockstep: simulated time starts with it"
                                       if self._lockstep else ""))

    def _on_command(self, msg: Float64MultiArray):
        forces = np.asarray(msg.data, dtype=float)
        if forces.shape != (6,) or not np.all(np.isfinite(forces)):
            return self.rejected(f"command must be 6 finite forces (legs 1..6), got "
                                 f"{bounded(forces.ravel())}")
        self._forces = forces
        self._command_time = time.monotonic()
        self._answered = True
        if self._braked:
            self.get_logger().info("commands arriving: the brakes are released")
            self._braked = False
        if self._deferred:   # lockstep: a tick waited for this answer; at most one step per tick
            self._integrate()
            self._advance_time()

    def _tick(self):
        if not self._braked and time.monotonic() - self._command_time > self._timeout:
            self._braked = True
            self.plant.linear_velocity, self.plant.angular_velocity = np.zeros(3), np.zeros(3)
            self.get_logger().warning(f"no command for {self._timeout} s: braked")
        if not self._braked:
            if self._lockstep and not self._answered:
                self._deferred = True   # the answer will make this tick's step
                return
            self._integrate()
        elif self._standing:
            return self._publish()   # the same messages
        self._advance_time()

    @property
    def _standing(self) -> bool:
        """Lockstep before the first command: simulated time starts with the first answer."""
        return self._lockstep and self._command_time == -np.inf

    def _integrate(self):
        try:
            self.plant.step(self._forces)
        except StepError as exc:   # hold the state, keep the node alive
            self.failures += 1
            self.get_logger().error(f"integration step failed, state held: {exc} "
                                    f"({self.failures} failed ticks)", throttle_duration_sec=2.0)

    def _advance_time(self):
        self.time_ns += self._period_ns
        self._answered = self._deferred = False
        self._measure()
        self._publish()

    def _measure(self):
        """The messages of the current state and time (the legs with their noise drawn)."""
        sec, nanosec = divmod(self.time_ns, 1_000_000_000)
        for stamp in (self._clock_msg.clock, self._legs.header.stamp, self._pose.header.stamp):
            stamp.sec, stamp.nanosec = sec, nanosec
        plant = self.plant
        lengths, rates = plant.measured_legs()
        self._legs.position, self._legs.velocity = lengths.tolist(), rates.tolist()
        position, orientation = self._pose.pose.position, self._pose.pose.orientation
        position.x, position.y, position.z = plant.position.tolist()
        orientation.x, orientation.y, orientation.z, orientation.w = plant.quaternion.tolist()

    def _publish(self):
        self._clock_pub.publish(self._clock_msg)
        self._legs_pub.publish(self._legs)
        self._pose_pub.publish(self._pose)

    def _report(self):
        now = time.monotonic()
        wall, sim_ns, failed, clamped, rejected = self._at_report
        self._at_report = (now, self.time_ns, self.failures, self.plant.clamped,
                           self.rejected.count)
        failed, clamped = self.failures - failed, self.plant.clamped - clamped
        rejected = self.rejected.count - rejected
        values = {
            "simulated time (s)": self.time_ns * 1e-9,
            "real-time factor": (self.time_ns - sim_ns) * 1e-9 / max(now - wall, 1e-9),
            "braked": self._braked,
            "rejected commands (total)": self.rejected.count,
            "last rejection": self.rejected.last_reason,
            "integration failures (window)": failed,
            "integration failures (total)": self.failures,
            "clamped forces (window, ticks)": clamped,
            "clamped forces (total, ticks)": self.plant.clamped,
        }
        if failed:
            return ERROR, f"integration failed {failed} time(s): state held", values
        if clamped:
            return WARN, f"forces clamped at the limit in {clamped} tick(s)", values
        if rejected:
            return WARN, f"commands rejected: {self.rejected.last_reason}", values
        if self._standing:
            return OK, "braked, time stands still until the first command (lockstep)", values
        return OK, "braked" if self._braked else "simulating", values


def _vector(values, name):
    if len(values) != 3:
        raise ConfigurationError(f"{name} must be three numbers, got {bounded(values)}")
    return np.array(values, dtype=float)


def main(args=None):
    raise SystemExit(spin(StewartSimulator, args))


if __name__ == "__main__":
    main()
