"""ROS 2 node ``stewart_platform``: platform trajectory in, six actuator forces out (Dasgupta &
Mruthyunjaya 1998 inverse dynamics with leg inertia and joint friction).

Subscribes
  ~/trajectory       trajectory_msgs/MultiDOFJointTrajectory: one transform per point (platform
                     reference point in the base frame), optional velocities/accelerations (base frame,
                     zero when absent); sampled in time from header.stamp (receipt time when zero);
                     an empty trajectory stops it and holds the current pose.
  ~/setpoint         trajectory_msgs/MultiDOFJointTrajectoryPoint: one state, held until replaced.
  ~/leg_setpoint     sensor_msgs/JointState: six leg lengths (names leg1..leg6 once each in any
                     order, or no names for that order), within the file's limits.leg_length;
                     forward kinematics from the current target pose gives a pose held at rest.
  ~/external_wrench  geometry_msgs/WrenchStamped: force and moment on the platform at its reference
                     point, platform frame; used until replaced.
Publishes
  ~/actuator_forces  std_msgs/Float64MultiArray, N, legs 1..6
  ~/static_forces    std_msgs/Float64MultiArray, F0 (only when publish_static_forces)
  ~/legs             sensor_msgs/JointState: position = length (m), velocity = rate (m/s),
                     effort = force (N)
  /diagnostics       condition number of H, largest force, OK / WARN (ill-conditioned, input rejected)
                     / ERROR (singular, beyond the limits)
Service
  ~/enable           std_srvs/SetBool: stop or resume publishing forces

Safe action: a target (setpoint, leg setpoint or trajectory) with a point that is singular, beyond
condition_limit or beyond force_limit is refused on arrival and reported as ERROR at once. When a
sampled state crosses those limits, the node publishes NO forces for it (it never clips: clipped forces
would not balance the platform and would look valid), reports ERROR on /diagnostics with the reason, and
resumes by itself once the commanded state is back within the limits. Downstream actuators therefore
keep their last safe command or apply their own timeout. Malformed inputs (non-finite numbers, a
quaternion off unit norm, a point without exactly one transform, times not increasing, a negative
stamp, a leg setpoint without six positions or six distinct leg names), legs outside limits.leg_length
(leg setpoints are checked before forward kinematics) and forward kinematics not converging are
rejected. Every rejection or refusal leaves the current target unchanged; the reason is counted, logged
(throttled) and shown as last_rejection on /diagnostics. No input callback raises: an exception would
end the node.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool
from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint

from ..resources import find_share_file
from ..stewart import (ForwardKinematicsError, PlatformFileError, StewartPlatform, rotations,
                       warm_up)
from ..stewart.setpoints import PlatformState, PoseTrajectory, SetpointError, check_states
from ..parameters import node_schema
from .common import (ERROR, OK, WARN, ConfigurationError, CountedWarning, Diagnostics,
                     Parameters, spin, stamp_seconds)


LEG_NAMES = [f"leg{i}" for i in range(1, 7)]


def schema():
    """The node's parameters (robodyn_ros/params/stewart_platform.yaml)."""
    return node_schema("stewart_platform")


def _vec(v):
    return [v.x, v.y, v.z]


def _input(what):
    """Subscription callback that rejects instead of raising: an exception out of a callback would
    end the node (spin() does not catch it). Malformed inputs are checked explicitly; this is the
    last line of defence against anything those checks miss."""
    def wrap(callback):
        @functools.wraps(callback)
        def guarded(self, msg):
            try:
                callback(self, msg)
            except Exception as exc:   # noqa: BLE001 - the node must keep running
                self.reject(what, f"unexpected {type(exc).__name__}: {exc}")
        return guarded
    return wrap


class StewartPlatformNode(Node):
    def __init__(self, **kwargs):
        super().__init__("stewart_platform", **kwargs)
        self.params = Parameters(self, schema())
        try:
            self.on_parameters({})
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from exc
        path = self.params["platform_file"] or find_share_file("config/stewart_dasgupta.yaml")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                self.sp = StewartPlatform.from_yaml(path)
            except PlatformFileError as exc:
                raise ConfigurationError(str(exc)) from exc
        for w in caught:
            self.get_logger().warning(str(w.message))
        warm_up(self.sp, notify=self.get_logger().info)   # compile before the first setpoint
        self.enabled = True
        self.target: PlatformState | PoseTrajectory | None = None
        self.trajectory_start = None
        self.wrench = (np.zeros(3), np.zeros(3))
        self.rejection = ""
        self.rejected = CountedWarning(self, "input rejected")
        self.withheld = CountedWarning(self, "forces withheld")
        self.status = (OK, "no target yet", {})
        self._published_level = OK

        self.pub_forces = self.create_publisher(Float64MultiArray, "~/actuator_forces", 10)
        self.pub_static = self.create_publisher(Float64MultiArray, "~/static_forces", 10)
        self.pub_legs = self.create_publisher(JointState, "~/legs", 10)
        self.create_subscription(MultiDOFJointTrajectory, "~/trajectory", self.on_trajectory, 10)
        self.create_subscription(MultiDOFJointTrajectoryPoint, "~/setpoint", self.on_setpoint, 10)
        self.create_subscription(JointState, "~/leg_setpoint", self.on_leg_setpoint, 10)
        self.create_subscription(WrenchStamped, "~/external_wrench", self.on_wrench, 10)
        self.create_service(SetBool, "~/enable", self.on_enable)
        self.params.on_set(self.on_parameters, lambda _: None)
        self.timer = self.create_timer(1.0 / self.params["rate"], self.step)
        self.diagnostics = Diagnostics(self, self.diagnostic_report,
                                       period=self.params["diagnostic_period"],
                                       hardware_id=self.sp.name)

    # --- parameters ---------------------------------------------------------------------------
    def on_parameters(self, changes):
        warn = changes.get("condition_warning", self.params["condition_warning"])
        limit = changes.get("condition_limit", self.params["condition_limit"])
        if warn > limit:
            raise ValueError(f"condition_warning {warn} > condition_limit {limit}")
        if "rate" in changes:
            self.timer.timer_period_ns = int(1e9 / changes["rate"])

    def force_limit(self):
        return self.params["force_limit"] or self.sp.force_limit

    # --- inputs -------------------------------------------------------------------------------
    def reject(self, what, reason):
        """A malformed input: counted, logged (throttled), last_rejection on /diagnostics (WARN)."""
        self.rejection = f"{what} rejected: {reason}"
        self.rejected(self.rejection)

    def refuse(self, what, reason):
        """A well-formed target beyond the limits (singular, condition, force): rejected as above
        and reported as ERROR at once; the previous target stays active."""
        self.reject(what, reason)
        self.report(ERROR, self.rejection, {})

    def _states(self, points):
        """Arrays of K validated states from MultiDOFJointTrajectoryPoints; SetpointError if bad."""
        for i, pt in enumerate(points):
            if len(pt.transforms) != 1:
                raise SetpointError(f"point {i}: needs exactly one transform, has "
                                    f"{len(pt.transforms)}")
            if len(pt.velocities) > 1 or len(pt.accelerations) > 1:
                raise SetpointError(f"point {i}: at most one velocity and one acceleration")
        pos = np.array([_vec(pt.transforms[0].translation) for pt in points])
        rot = np.array([[r.x, r.y, r.z, r.w] for r in (pt.transforms[0].rotation for pt in points)])
        rates = []
        for field in ("velocities", "accelerations"):
            for part in ("linear", "angular"):
                rates.append(np.array([_vec(getattr(getattr(pt, field)[0], part))
                                       if getattr(pt, field) else [0.0, 0.0, 0.0]
                                       for pt in points]))
        quats = check_states(self.sp, pos, rot, rates, self.params["quaternion_tolerance"])
        return pos, quats, rates

    def _check_limits(self, states):
        """Refuse a target whose own knots already lie beyond the force or condition limits."""
        r = self.sp.inverse_dynamics(*states, *self.wrench_base(len(states[0])))
        for i in range(len(states[0])):
            reason = self.fault(r.condition_number[i], r.forces[i])
            if reason:
                raise SetpointError(f"point {i}: {reason}")

    def wrench_base(self, n):
        return np.tile(self.wrench[0], (n, 1)), np.tile(self.wrench[1], (n, 1))

    @_input("trajectory")
    def on_trajectory(self, msg):
        if not msg.points:
            if isinstance(self.target, PoseTrajectory):
                self.target = self.current_state().at_rest()
            return
        try:
            if msg.header.stamp.sec < 0:
                raise SetpointError(f"header.stamp is negative ({msg.header.stamp.sec} s)")
            pos, quats, rates = self._states(msg.points)
            times = [stamp_seconds(pt.time_from_start) for pt in msg.points]
            traj = PoseTrajectory(times, pos, quats, *rates)
        except SetpointError as exc:
            self.reject("trajectory", exc)
            return
        try:
            self._check_limits((pos, rotations.quaternion_matrix(quats), *rates))
        except SetpointError as exc:
            self.refuse("trajectory", exc)
            return
        start = stamp_seconds(msg.header.stamp)
        self.trajectory_start = start if start else self.now()
        self.target = traj
        self.rejection = ""

    def now(self):
        """Node-clock time in seconds (the clock trajectory stamps are read on)."""
        return self.get_clock().now().nanoseconds * 1e-9

    @_input("setpoint")
    def on_setpoint(self, msg):
        try:
            pos, quats, rates = self._states([msg])
        except SetpointError as exc:
            self.reject("setpoint", str(exc).removeprefix("point 0: "))
            return
        self.set_state("setpoint", PlatformState(pos[0], quats[0], *(r[0] for r in rates)))

    def _leg_lengths(self, msg):
        """The six requested lengths in leg order; SetpointError if malformed or beyond the file's
        limits.leg_length (checked here, before forward kinematics: its pose has these lengths)."""
        if len(msg.position) != len(LEG_NAMES):
            raise SetpointError(f"needs {len(LEG_NAMES)} positions, got {len(msg.position)}")
        lengths = np.array(msg.position, dtype=float)
        if msg.name:
            if sorted(msg.name) != LEG_NAMES:   # six distinct known legs, in any order
                raise SetpointError(f"names must be {LEG_NAMES} in any order, got "
                                    f"{list(msg.name)}")
            lengths = lengths[[list(msg.name).index(n) for n in LEG_NAMES]]
        if not np.all(np.isfinite(lengths)):
            raise SetpointError("leg lengths not finite")
        if np.any(lengths <= 0.0):
            raise SetpointError(f"leg lengths {lengths.tolist()} must be positive")
        if self.sp.leg_length_limits is not None:
            lo, hi = self.sp.leg_length_limits
            if np.any((lengths < lo) | (lengths > hi)):
                raise SetpointError(f"leg lengths {np.round(lengths, 4).tolist()} outside "
                                    f"[{lo}, {hi}] m")
        return lengths

    @_input("leg setpoint")
    def on_leg_setpoint(self, msg):
        try:
            lengths = self._leg_lengths(msg)
        except SetpointError as exc:
            self.reject("leg setpoint", exc)
            return
        if self.target is None:
            self.reject("leg setpoint", "no current pose to start forward kinematics from: "
                                        "send a setpoint or trajectory first")
            return
        guess = self.current_state()
        try:
            t, R = self.sp.forward_kinematics(lengths, guess.position, guess.rotation)
        except (ValueError, ForwardKinematicsError) as exc:
            self.reject("leg setpoint", f"forward kinematics: {exc}")
            return
        zero = np.zeros(3)
        self.set_state("leg setpoint",
                       PlatformState(t, rotations.matrix_quaternion(R), zero, zero, zero, zero))

    def set_state(self, what, state):
        try:
            self._check_limits(tuple(np.asarray(x)[None] for x in state.pose_args()))
        except SetpointError as exc:
            self.refuse(what, str(exc).removeprefix("point 0: "))
            return
        self.target = state
        self.rejection = ""

    @_input("external wrench")
    def on_wrench(self, msg):
        f, m = np.array(_vec(msg.wrench.force)), np.array(_vec(msg.wrench.torque))
        if not (np.all(np.isfinite(f)) and np.all(np.isfinite(m))):
            self.reject("external wrench", "not finite")
            return
        self.wrench = (f, m)

    def on_enable(self, request, response):
        self.enabled = bool(request.data)
        response.success = True
        response.message = "enabled" if self.enabled else "disabled: no forces are published"
        return response

    # --- evaluation ---------------------------------------------------------------------------
    def current_state(self) -> PlatformState:
        if isinstance(self.target, PoseTrajectory):
            elapsed = self.now() - self.trajectory_start
            return self.target.sample(elapsed)
        return self.target

    def fault(self, cond, forces):
        """Why these forces must not be published, or '' when they may."""
        if not cond < self.params["condition_limit"]:
            return (f"condition number {cond:.4g} beyond condition_limit "
                    f"{self.params['condition_limit']:g} (singular or near-singular pose)")
        if not np.all(np.isfinite(forces)):
            return "no finite forces (singular pose)"
        limit = self.force_limit()
        if limit and np.abs(forces).max() > limit:
            return f"force {np.abs(forces).max():.4g} N beyond force_limit {limit:g} N"
        return ""

    def step(self):
        if self.target is None:
            return
        state = self.current_state()
        r = self.sp.inverse_dynamics(*state.pose_args(), *self.wrench)
        values = {"condition_number": float(r.condition_number),
                  "max_abs_force": float(np.abs(r.forces).max())}
        reason = self.fault(r.condition_number, r.forces)
        if reason:
            self.withheld(reason)
            self.report(ERROR, f"forces withheld: {reason}", values)
            return
        if r.condition_number > self.params["condition_warning"]:
            self.report(WARN, "ill-conditioned pose", values)
        elif self.rejection:
            self.report(WARN, self.rejection, values)
        else:
            self.report(OK, "ok" if self.enabled else "disabled", values)
        if not self.enabled:
            return
        self.pub_forces.publish(Float64MultiArray(data=r.forces.tolist()))
        if self.params["publish_static_forces"]:
            self.pub_static.publish(Float64MultiArray(data=r.static_forces.tolist()))
        legs = JointState(name=LEG_NAMES, position=r.leg_lengths.tolist(),
                          velocity=r.leg_rates.tolist(), effort=r.forces.tolist())
        legs.header.stamp = self.get_clock().now().to_msg()
        self.pub_legs.publish(legs)

    # --- diagnostics --------------------------------------------------------------------------
    def report(self, level, message, values):
        """Record the state for /diagnostics; a change of level is published at once."""
        self.status = (level, message, values)
        if level != self._published_level:
            self.diagnostics.publish()

    def diagnostic_report(self):
        level, message, values = self.status
        self._published_level = level
        return level, message, {**values, "enabled": self.enabled,
                                "last_rejection": self.rejection,
                                "rejected_inputs": self.rejected.count,
                                "withheld_samples": self.withheld.count}


def main(args=None):
    return spin(StewartPlatformNode, args)


if __name__ == "__main__":
    raise SystemExit(main())

