"""The hostile inputs of ``robodyn-ros dev fuzz`` (robodyn_ros.apps.fuzz.run): one rclpy node that
sends one input per call, of a kind chosen at random, over the nodes' topics, services,
parameters and the FollowJointTrajectory action (when control_msgs imports)."""
from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np

from .observer import CONTROLLER, SIMULATOR, STEWART, TAG

JOINTS = [f"joint_{i}" for i in range(1, 7)]
Q0 = (1.5707963267948966, 0.0, 1.5707963267948966, 0.0, 0.0, 0.0)  # rad: 004 §5's start
BIG = 100_000        # names, values or points of a flood
FLOOD_PERIOD = 0.5   # s between two floods (the default; a flood is up to 13.6 MB)
STEWART_HOME = (0.2, 0.0, 0.5)  # m: a pose of the packaged platform well inside its workspace
NAUGHTY = (math.nan, math.inf, -math.inf, 1e308, -1e308, 1e200, 1e6)


class Fuzzer:
    """One rclpy node that sends one hostile input per :meth:`send_one`, chosen at random among
    every kind (each kind once before any twice), and counts them; a service or action answer
    that accepts a hostile request is counted in ``accepted``."""

    def __init__(self, rng, kinds="", context=None, flood_period=FLOOD_PERIOD):
        from geometry_msgs.msg import WrenchStamped
        from lifecycle_msgs.srv import ChangeState
        from rcl_interfaces.srv import (DescribeParameters, GetParameters, SetParameters,
                                        SetParametersAtomically)
        from rclpy.node import Node
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from std_srvs.srv import SetBool, Trigger
        from trajectory_msgs.msg import (JointTrajectory, JointTrajectoryPoint,
                                         MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint)

        from robodyn_ros.nodes.messages import FollowJointTrajectory

        self.rng = rng
        self.node = node = Node("fuzzer", context=context)
        self.sent, self.accepted = Counter(), Counter()
        self.timeline = []  # (monotonic s, kind) of each input sent
        c, s = f"/{CONTROLLER}", f"/{STEWART}"
        pub = node.create_publisher
        self.joint_states = pub(JointState, "/joint_states", 10)
        self.trajectory = pub(JointTrajectory, f"{c}/joint_trajectory", 10)
        self.reference = pub(JointTrajectoryPoint, f"{c}/reference", 10)
        self.sim_command = pub(Float64MultiArray, "/effort_controller/commands", 10)
        self.stewart_trajectory = pub(MultiDOFJointTrajectory, f"{s}/trajectory", 10)
        self.stewart_setpoint = pub(MultiDOFJointTrajectoryPoint, f"{s}/setpoint", 10)
        self.leg_setpoint = pub(JointState, f"{s}/leg_setpoint", 10)
        self.wrench = pub(WrenchStamped, f"{s}/external_wrench", 10)
        cli = node.create_client
        self.set_params = {n: cli(SetParameters, f"/{n}/set_parameters")
                           for n in (CONTROLLER, SIMULATOR, STEWART)}
        self.set_atomic = {n: cli(SetParametersAtomically, f"/{n}/set_parameters_atomically")
                           for n in (CONTROLLER, STEWART)}
        self.get_params = cli(GetParameters, f"{c}/get_parameters")
        self.describe = cli(DescribeParameters, f"{c}/describe_parameters")
        self.change_state = cli(ChangeState, f"{c}/change_state")
        self.enable = {n: cli(SetBool, f"/{n}/enable") for n in (CONTROLLER, STEWART)}
        self.hold = cli(Trigger, f"{c}/hold")
        self.reset = cli(Trigger, f"/{SIMULATOR}/reset")
        self.action = None
        if FollowJointTrajectory is not None:
            from rclpy.action import ActionClient
            self.action = ActionClient(node, FollowJointTrajectory,
                                       f"{c}/follow_joint_trajectory")
            self._goal_type = FollowJointTrajectory.Goal
        self._types = dict(JointState=JointState, JointTrajectory=JointTrajectory,
                           JointTrajectoryPoint=JointTrajectoryPoint,
                           Float64MultiArray=Float64MultiArray,
                           MultiDOFJointTrajectory=MultiDOFJointTrajectory,
                           MultiDOFJointTrajectoryPoint=MultiDOFJointTrajectoryPoint,
                           WrenchStamped=WrenchStamped, SetBool=SetBool, Trigger=Trigger,
                           ChangeState=ChangeState)
        self._floods = {}  # big messages, built once
        self.kinds = {k: getattr(self, "k_" + k) for k in self.kind_names() if kinds in k}
        self._queues = {False: [], True: []}
        self._next_flood, self._flood_period = 0.0, flood_period

    @classmethod
    def kind_names(cls) -> list[str]:
        """Every kind of input, as the counts name them (goals need control_msgs)."""
        from robodyn_ros.nodes.messages import FollowJointTrajectory
        return [name.removeprefix("k_") for name in dir(cls) if name.startswith("k_")
                and (FollowJointTrajectory is not None or "goal_" not in name)]

    def ready(self) -> bool:
        """Every node is discovered: the publishers have subscribers, the services answer."""
        pubs = (self.joint_states, self.trajectory, self.reference, self.sim_command,
                self.stewart_trajectory, self.stewart_setpoint, self.leg_setpoint, self.wrench)
        clients = (*self.set_params.values(), *self.set_atomic.values(), self.change_state,
                   self.hold, self.reset)
        return (all(p.get_subscription_count() > 0 for p in pubs)
                and all(c.service_is_ready() for c in clients)
                and (self.action is None or self.action.server_is_ready()))

    def send_one(self) -> str:
        """One input: a flood when flood_period has passed since the last, else a light one;
        every kind of each once, in a random order, before any twice."""
        now = time.monotonic()
        has = {k.startswith("flood_") for k in self.kinds}  # which groups --kinds left
        floods = True in has and (now >= self._next_flood or False not in has)
        if floods:
            self._next_flood = now + self._flood_period
        queue = self._queues[floods]
        if not queue:
            queue[:] = self.rng.permutation(sorted(k for k in self.kinds
                                                   if k.startswith("flood_") == floods))
        kind = str(queue.pop())
        self.timeline.append((time.monotonic(), kind))
        self.kinds[kind]()
        self.sent[kind] += 1
        return kind

    # ---------------------------------------------------------------- helpers
    def _pick(self, values):
        return values[self.rng.integers(len(values))]

    def _bad_values(self, n=6):
        """n finite values with one or more NaN, inf or huge ones among them."""
        v = np.array(Q0 if n == 6 else np.zeros(n), dtype=float)
        for i in self.rng.choice(n, size=self.rng.integers(1, n + 1), replace=False):
            v[i] = self._pick(NAUGHTY)
        return v.tolist()

    def _bad_stamp(self, stamp):
        if self.rng.random() < 0.5:
            stamp.sec, stamp.nanosec = -int(self.rng.integers(1, 2**31)), 0
        else:
            stamp.sec, stamp.nanosec = 1, int(self.rng.integers(1_000_000_000, 2**32))

    def _joint_state(self, names=JOINTS, position=Q0, velocity=(0.0,) * 6):
        msg = self._types["JointState"](name=list(names), position=list(position),
                                        velocity=list(velocity))
        msg.header.frame_id = TAG
        return msg

    def _flood(self, key, build):
        if key not in self._floods:
            self._floods[key] = build()
        return self._floods[key]

    def _trajectory(self, positions, times=None, names=JOINTS, start=(0, 0)):
        T, P = self._types["JointTrajectory"], self._types["JointTrajectoryPoint"]
        times = np.arange(1, len(positions) + 1) * 0.01 if times is None else times
        msg = T(joint_names=list(names))
        for t, q in zip(times, positions):
            point = P(positions=list(q))
            point.time_from_start.sec, point.time_from_start.nanosec = \
                int(t), int(round((t % 1.0) * 1e9))
            msg.points.append(point)
        msg.header.stamp.sec, msg.header.stamp.nanosec = start
        return msg

    def _near_q0(self, n):
        """n positions in a small circle around Q0 (well inside the limits)."""
        s = np.linspace(0.0, 2 * np.pi, n)[:, None]
        return np.asarray(Q0) + 0.01 * np.sin(s + np.arange(6))

    def _call(self, client, request, kind, accepted=None):
        """Send a request; ``accepted(response)`` says whether a node took a hostile one."""
        future = client.call_async(request)
        if accepted is not None:
            future.add_done_callback(
                lambda f: f.result() is not None and accepted(f.result())
                and self.accepted.update([kind]))

    def _set(self, node, parameters, kind, atomic=False):
        from rcl_interfaces.srv import SetParameters, SetParametersAtomically
        # what was taken, by name and rcl_interfaces ParameterType
        kind += " (" + ", ".join(f"{p.name[:20]}:{p.value.type}" for p in parameters) + ")"
        if atomic:
            request = SetParametersAtomically.Request(parameters=parameters)
            self._call(self.set_atomic[node], request, kind, lambda r: r.result.successful)
        else:
            request = SetParameters.Request(parameters=parameters)
            self._call(self.set_params[node], request, kind,
                       lambda r: any(x.successful for x in r.results))

    def _param(self, name, kind_value):
        """rcl_interfaces Parameter ``name`` with a value of the given type: ('double', 1.0),
        ('string', 'x'), ('bool', True), ('integer', 3), ('double_array', [...]),
        ('string_array', [...]), ('byte_array', [...]), ('not_set', None)."""
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
        kind, value = kind_value
        v = ParameterValue(type=getattr(ParameterType, f"PARAMETER_{kind.upper()}"))
        if kind != "not_set":
            setattr(v, f"{kind}_value", value)
        return Parameter(name=name, value=v)

    def _wrong_gain(self):
        return self._pick([("string", "100"), ("bool", True), ("string", "1e400"),
                           ("double", math.nan), ("double", math.inf), ("double", -1.0),
                           ("double_array", [1.0] * 5), ("double_array", [math.nan] * 6),
                           ("string_array", ["1"] * 6),
                           ("byte_array", [b"\x01"] * 6), ("not_set", None),
                           ("double", -math.inf), ("integer", -5)])

    # ---------------------------------------------------------------- controller: joint states
    def k_state_nonfinite(self):
        position, velocity = (self._bad_values(), Q0) if self.rng.random() < 0.5 \
            else (Q0, self._bad_values())
        self.joint_states.publish(self._joint_state(position=position, velocity=velocity))

    def k_state_wrong_sizes(self):
        n, m = (int(x) for x in self.rng.integers(0, 13, size=2))
        if n == 6 and m == 6:
            m = 0
        self.joint_states.publish(self._joint_state(position=[0.1] * n, velocity=[0.0] * m))

    def k_flood_state_100k_names(self):
        self.joint_states.publish(self._flood("state names", lambda: self._joint_state(
            names=[f"unknown_joint_{i}" for i in range(BIG)], position=[0.0] * BIG,
            velocity=[0.0] * BIG)))

    def k_state_duplicate_names(self):
        names = list(JOINTS)
        names[int(self.rng.integers(1, 6))] = names[0]
        self.joint_states.publish(self._joint_state(names=names))

    def k_state_unknown_names(self):
        self.joint_states.publish(self._joint_state(names=["a", "b", "c", "d", "e", "f"]))

    def k_state_bad_stamp(self):
        msg = self._joint_state()
        self._bad_stamp(msg.header.stamp)
        self.joint_states.publish(msg)

    # ---------------------------------------------------------------- controller: trajectories
    def k_trajectory_nonfinite(self):
        positions = self._near_q0(3)
        positions[1] = self._bad_values()
        self.trajectory.publish(self._trajectory(positions))

    def k_trajectory_beyond_limits(self):
        positions = self._near_q0(2)
        positions[1, int(self.rng.integers(6))] += self._pick([100.0, -100.0, 3.5, -3.5])
        self.trajectory.publish(self._trajectory(positions))

    def k_trajectory_wrong_sizes(self):
        msg = self._trajectory(self._near_q0(3))
        point = msg.points[int(self.rng.integers(3))]
        if self.rng.random() < 0.5:
            point.positions = [0.1] * int(self._pick([0, 5, 7, 100]))
        else:
            point.velocities = [0.0] * int(self._pick([1, 5, 7]))
        self.trajectory.publish(msg)

    def k_trajectory_names(self):
        names = self._pick([JOINTS[:5], JOINTS + ["joint_7"], [JOINTS[0]] + JOINTS[:5], [],
                            ["", "", "", "", "", ""]])
        self.trajectory.publish(self._trajectory(self._near_q0(2), names=names))

    def k_flood_trajectory_100k_names(self):
        self.trajectory.publish(self._flood("trajectory names", lambda: self._trajectory(
            self._near_q0(1), names=[f"j{i}" for i in range(BIG)])))

    def k_trajectory_bad_stamps(self):
        msg = self._trajectory(self._near_q0(3))
        self._bad_stamp(msg.points[int(self.rng.integers(3))].time_from_start
                        if self.rng.random() < 0.5 else msg.header.stamp)
        self.trajectory.publish(msg)

    def k_trajectory_bad_times(self):
        times = self._pick([[0.5, 0.5, 1.0], [1.0, 0.5, 2.0], [0.0, 0.0, 0.0]])
        self.trajectory.publish(self._trajectory(self._near_q0(3), times=times))

    def k_trajectory_empty_or_past(self):
        self.trajectory.publish(self._pick([
            self._trajectory([]), self._trajectory(self._near_q0(2), start=(1, 0))]))

    def k_flood_trajectory_too_many_points(self):
        self.trajectory.publish(self._flood("10001 points", lambda: self._trajectory(
            self._near_q0(10_001))))

    def k_flood_trajectory_100k_points(self):
        self.trajectory.publish(self._flood("100k points", lambda: self._trajectory(
            self._near_q0(BIG))))

    def k_flood_trajectory_big_future(self):
        """10,000 valid points (the default max_trajectory_points) stamped 1e6 s ahead: taken."""
        msg = self._flood("big future", lambda: self._trajectory(
            self._near_q0(10_000), start=(1_000_000, 0)))
        msg.header.stamp.sec = 1_000_000 + int(self.rng.integers(1000))
        self.trajectory.publish(msg)

    def k_flood_trajectory_big_now(self):
        """10,000 valid points starting on arrival: taken and followed (a 100 s small circle)."""
        self.trajectory.publish(self._flood("big now", lambda: self._trajectory(
            self._near_q0(10_000))))

    # ---------------------------------------------------------------- controller: reference
    def k_reference_malformed(self):
        P = self._types["JointTrajectoryPoint"]
        choice = int(self.rng.integers(5))
        if choice == 0:
            msg = P(positions=self._bad_values())
        elif choice == 1:
            msg = P(positions=list(Q0), velocities=self._bad_values(),
                    accelerations=self._bad_values())
        elif choice == 2:
            msg = P(positions=[0.1] * int(self._pick([0, 5, 7, BIG])))
        elif choice == 3:
            msg = P(positions=list(Q0), velocities=[0.0] * 3)
        else:
            q = np.array(Q0)
            q[int(self.rng.integers(6))] += self._pick([100.0, -100.0, 3.5])
            msg = P(positions=q.tolist())
        self.reference.publish(msg)

    # ---------------------------------------------------------------- controller: services
    def k_controller_parameters(self):
        name = self._pick(["kp", "kd", "ki", "integral_limit", "coulomb_velocity",
                           "effort_limits", "friction"])
        self._set(CONTROLLER, [self._param(name, self._wrong_gain())], "controller_parameters")

    def k_controller_parameters_other(self):
        p = self._param
        self._set(CONTROLLER, [self._pick([
            p("", ("double", 1.0)), p("x" * BIG, ("double", 1.0)), p("no_such", ("double", 1.0)),
            p("control_law", ("string", "no_such_law")), p("control_law", ("integer", 3)),
            p("on_timeout", ("string", "explode")), p("on_deactivate", ("string", "")),
            p("rate", ("double", 5.0)), p("state_timeout", ("double", 1e308)),
            p("urdf_file", ("string", "/dev/zero")), p("joints", ("string_array", ["a"])),
            p("use_sim_time", ("string", "yes"))])], "controller_parameters_other")

    def k_controller_parameters_atomic(self):
        """A valid change with a refused one: nothing may be applied."""
        good = self._param("kp", ("double", 100.0))
        bad = self._param(self._pick(["kd", "ki", ""]), self._wrong_gain())
        self._set(CONTROLLER, [good, bad], "controller_parameters_atomic", atomic=True)

    def k_controller_parameters_mixed(self):
        """Non-atomic: the valid kp (its default) is applied, the wrong kd refused; only the kd
        result counts as accepted."""
        from rcl_interfaces.srv import SetParameters
        request = SetParameters.Request(parameters=[self._param("kp", ("double", 100.0)),
                                                    self._param("kd", self._wrong_gain())])
        self._call(self.set_params[CONTROLLER], request, "controller_parameters_mixed",
                   lambda r: len(r.results) > 1 and r.results[1].successful)

    def k_controller_parameter_queries(self):
        from rcl_interfaces.srv import DescribeParameters
        self._call(self.describe, DescribeParameters.Request(names=["", "kp", "x" * 1000]), "")

    def k_flood_controller_parameter_queries(self):
        from rcl_interfaces.srv import GetParameters
        names = self._flood("query names", lambda: [f"p{i}" for i in range(BIG)])
        self._call(self.get_params, GetParameters.Request(names=names), "")

    def k_flood_controller_parameters(self):
        self._set(CONTROLLER, [self._param(self._pick(["kp", "effort_limits", "integral_limit"]),
                                           ("double_array", [1.0] * BIG))],
                  "flood_controller_parameters")

    def k_controller_lifecycle(self):
        """Transitions that do not exist from active (or at all); deactivate and shutdown are
        valid requests, not hostile ones, and are not sent."""
        request = self._types["ChangeState"].Request()
        request.transition.id = int(self._pick([0, 1, 2, 3, 5, 6, 99, 255]))
        request.transition.label = self._pick(["", "", "no_such_transition", "x" * 10_000])
        self._call(self.change_state, request, "controller_lifecycle",
                   lambda r: r.success)

    def k_controller_services(self):
        """~/hold and ~/enable(true) flooded (valid requests; the arm holds where it is)."""
        if self.rng.random() < 0.5:
            self._call(self.hold, self._types["Trigger"].Request(), "")
        else:
            self._call(self.enable[CONTROLLER], self._types["SetBool"].Request(data=True), "")

    # ---------------------------------------------------------------- controller: action goals
    def _goal(self, trajectory):
        goal = self._goal_type(trajectory=trajectory)
        return goal

    def _send_goal(self, goal, kind, variant=""):
        future = self.action.send_goal_async(goal)

        def answered(f):
            handle = f.result()
            if handle is not None and handle.accepted:
                self.accepted[f"{kind} {variant}".strip()] += 1
                handle.cancel_goal_async()
        future.add_done_callback(answered)

    def k_goal_malformed_trajectory(self):
        positions = self._near_q0(3)
        choice = int(self.rng.integers(5))
        names = JOINTS
        if choice == 0:
            positions[1] = self._bad_values()
        elif choice == 1:
            positions[2, 0] += 100.0
        elif choice == 2:
            names = JOINTS[:3] + JOINTS[:3]
        msg = self._trajectory(positions, names=names)
        if choice == 3:
            self._bad_stamp(msg.header.stamp)
        elif choice == 4:
            msg.points = []
        self._send_goal(self._goal(msg), "goal_malformed_trajectory", str(choice))

    def k_goal_bad_tolerances(self):
        from control_msgs.msg import JointTolerance
        goal = self._goal(self._trajectory(self._near_q0(2)))
        choice = int(self.rng.integers(4))
        if choice == 0:
            goal.goal_tolerance = [JointTolerance(name=JOINTS[0], position=math.nan)]
        elif choice == 1:
            goal.path_tolerance = [JointTolerance(name="no_such_joint", position=0.1)]
        elif choice == 2:
            goal.goal_tolerance = [JointTolerance(name=JOINTS[1], position=-1e308)]
        else:
            self._bad_stamp(goal.goal_time_tolerance)
        self._send_goal(goal, "goal_bad_tolerances", str(choice))

    def k_flood_goal_too_many_points(self):
        self._send_goal(self._goal(self._flood("10001 points", lambda: self._trajectory(
            self._near_q0(10_001)))), "flood_goal_too_many_points")

    def k_flood_goal_repeated_names(self):
        """100,000 joint names, each twice (rclpy converts a goal before any size check)."""
        self._send_goal(self._goal(self._flood("repeated names", lambda: self._trajectory(
            self._near_q0(1), names=[f"j{i % (BIG // 2)}" for i in range(BIG)]))),
            "flood_goal_repeated_names")

    # ---------------------------------------------------------------- simulator
    def k_simulator_command(self):
        F = self._types["Float64MultiArray"]
        choice = int(self.rng.integers(3))
        if choice == 0:
            data = self._bad_values()
        elif choice == 1:
            data = [self._pick([1e6, -1e6, 1e308])] * 6  # finite, far beyond the limits
        else:
            data = [0.0] * int(self._pick([0, 1, 5, 7, 36]))
        self._simulator_command(F(data=data))

    def k_flood_simulator_command(self):
        self._simulator_command(self._flood("command", lambda: self._types["Float64MultiArray"](
            data=[1e308] * BIG)))

    def _simulator_command(self, msg):
        msg.layout.dim = [self._flood("tag", lambda: _tag_dimension())]
        self.sim_command.publish(msg)

    def k_simulator_services(self):
        """~/reset (valid: the arm returns to its start, braked until the next command) and its
        read-only parameters."""
        if self.rng.random() < 0.2:
            self._call(self.reset, self._types["Trigger"].Request(), "")
        else:
            self._set(SIMULATOR, [self._param(self._pick(["rate", "engine", "payload_mass", ""]),
                                              self._pick([("double", 1e308), ("string", "x"),
                                                          ("double", math.nan)]))],
                      "simulator_services")

    # ---------------------------------------------------------------- stewart platform
    def _stewart_point(self, t=STEWART_HOME, q=(0.0, 0.0, 0.0, 1.0)):
        from geometry_msgs.msg import Quaternion, Transform, Vector3
        point = self._types["MultiDOFJointTrajectoryPoint"]()
        point.transforms = [Transform(translation=Vector3(x=t[0], y=t[1], z=t[2]),
                                      rotation=Quaternion(x=q[0], y=q[1], z=q[2], w=q[3]))]
        return point

    def keep_stewart_busy(self):
        """A valid setpoint, so that the platform publishes forces throughout."""
        self.stewart_setpoint.publish(self._stewart_point())

    def k_stewart_setpoint(self):
        choice = int(self.rng.integers(6))
        if choice == 0:
            point = self._stewart_point(t=self._bad_values(3))
        elif choice == 1:
            point = self._stewart_point(q=self._pick([(0.0, 0.0, 0.0, 0.0), (1.0, 1.0, 1.0, 1.0),
                                                      (math.nan, 0.0, 0.0, 1.0)]))
        elif choice == 2:
            point = self._stewart_point()
            point.transforms = point.transforms * int(self._pick([0, 2]))
        elif choice == 3:
            point = self._stewart_point(t=(0.0, 0.0, self._pick([0.0, 5.0, -0.5, 1e6])))
        elif choice == 4:
            from geometry_msgs.msg import Twist, Vector3
            point = self._stewart_point()
            point.velocities = [Twist(linear=Vector3(x=math.inf))] * int(self._pick([1, 2]))
        else:
            point = self._stewart_point()
            point.accelerations = [self._twist(self._bad_values(3))]
        self.stewart_setpoint.publish(point)

    def _twist(self, v):
        from geometry_msgs.msg import Twist, Vector3
        return Twist(linear=Vector3(x=v[0], y=v[1], z=v[2]))

    def k_stewart_trajectory(self):
        T = self._types["MultiDOFJointTrajectory"]
        choice = int(self.rng.integers(4))
        points = [self._stewart_point() for _ in range(3)]
        for i, p in enumerate(points):
            p.time_from_start.sec = i + 1
        msg = T(points=points)
        if choice == 0:
            self._bad_stamp(msg.header.stamp)
        elif choice == 1:
            self._bad_stamp(points[1].time_from_start)
        elif choice == 2:
            points[2].time_from_start.sec = 0
        else:
            points[1].transforms[0].translation.z = self._pick([math.nan, 1e308, 3.0])
        self.stewart_trajectory.publish(msg)

    def k_flood_stewart_trajectory(self):
        """10,000 points with a zero quaternion."""
        self.stewart_trajectory.publish(self._flood("stewart points", lambda: self._types[
            "MultiDOFJointTrajectory"](points=[self._stewart_point(q=(0.0, 0.0, 0.0, 0.0))
                                              for _ in range(10_000)])))

    def k_stewart_leg_setpoint(self):
        J = self._types["JointState"]
        legs = [f"leg{i}" for i in range(1, 7)]
        choice = int(self.rng.integers(4))
        if choice == 0:
            msg = J(name=legs, position=self._bad_values())
        elif choice == 1:
            msg = J(name=legs[:5] + legs[:1], position=[0.6] * 6)
        elif choice == 2:
            msg = J(name=legs, position=[self._pick([0.0, 10.0, -1.0])] * 6)
        else:
            msg = J(position=[0.6] * int(self._pick([0, 5, 7])))
        self.leg_setpoint.publish(msg)

    def k_flood_stewart_leg_setpoint(self):
        self.leg_setpoint.publish(self._flood("legs", lambda: self._types["JointState"](
            name=[f"leg{i}" for i in range(BIG)], position=[0.6] * BIG)))

    def k_stewart_wrench(self):
        msg = self._types["WrenchStamped"]()
        f = self._bad_values(3) if self.rng.random() < 0.7 else [1e10, 0.0, 0.0]
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = f
        msg.wrench.torque.z = self._pick([0.0, math.nan, 1e308])
        self.wrench.publish(msg)

    def k_stewart_parameters(self):
        p = self._param
        parameters = [self._pick([
            p("rate", ("double", 0.0)), p("rate", ("double", -1.0)), p("rate", ("double", math.nan)),
            p("rate", ("double", math.inf)), p("rate", ("string", "100")),
            p("force_limit", ("double", -1.0)), p("quaternion_tolerance", ("double", 2.0)),
            p("condition_limit", ("double", 0.5)), p("publish_static_forces", ("string", "yes")),
            p("", ("double", 1.0)), p("platform_file", ("string", "/dev/null")),
            p("condition_warning", ("not_set", None))])]
        atomic = self.rng.random() < 0.3
        if atomic:  # a valid limit with one that contradicts it
            parameters = [p("condition_limit", ("double", 10.0)),
                          p("condition_warning", ("double", 1e6))]
        self._set(STEWART, parameters, "stewart_parameters", atomic=atomic)


def _tag_dimension():
    from std_msgs.msg import MultiArrayDimension
    return MultiArrayDimension(label=TAG)
