"""The stewart_platform node's wiring under real rclpy and DDS (loopback, this run's domain:
conftest.py): its topics, service and parameters reach the core and its outputs leave on the
documented topics; rejections reach /diagnostics while the node keeps running. What the core decides
(accepted, rejected, refused, withheld, resumed) is tested without ROS in test_stewart_core.py."""
import ast
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import Quaternion, Transform, Twist, Vector3, WrenchStamped  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402
from stewart_cases import GOOD, good_forces, platform, singular_pose_on_path_iii  # noqa: E402
from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint  # noqa: E402

from robodyn_ros.apps.stewart_path import PAPER_PATHS  # noqa: E402
from robodyn_ros.nodes.common import ConfigurationError, point_arrays  # noqa: E402
from robodyn_ros.nodes.stewart_platform import StewartPlatformNode, schema  # noqa: E402
from robodyn_ros.spatial import rotations  # noqa: E402
from robodyn_ros.spatial.trajectory import PoseTrajectory, SetpointError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WAIT = 10.0  # s: how long to wait for a message before failing (not a timing requirement)


@pytest.fixture(scope="module")
def sp():
    return platform()


class Harness:
    def __init__(self, namespace="/", overrides=()):
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx)
        self.node = StewartPlatformNode(context=self.ctx, namespace=namespace, parameter_overrides=[
            Parameter("rate", value=50.0), Parameter("diagnostic_period", value=0.2), *overrides])
        self.peer = rclpy.create_node("stewart_test_peer", namespace=namespace, context=self.ctx)
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.node)
        self.executor.add_node(self.peer)
        self.forces, self.legs, self.diagnostics = [], [], []
        ns = self.node.get_fully_qualified_name() + "/"
        self.ns = ns
        # /diagnostics is shared: keep only this node's status
        name = f"{self.node.get_name()}: {self.node.get_fully_qualified_name()}"
        self.peer.create_subscription(Float64MultiArray, ns + "actuator_forces",
                                      lambda m: self.forces.append(np.array(m.data)), 50)
        self.peer.create_subscription(JointState, ns + "legs", self.legs.append, 50)
        self.peer.create_subscription(
            DiagnosticArray, "/diagnostics",
            lambda m: self.diagnostics.extend(s for s in m.status if s.name == name), 50)
        self.pub_setpoint = self.peer.create_publisher(MultiDOFJointTrajectoryPoint,
                                                       ns + "setpoint", 10)
        self.pub_trajectory = self.peer.create_publisher(MultiDOFJointTrajectory,
                                                         ns + "trajectory", 10)
        self.pub_wrench = self.peer.create_publisher(WrenchStamped, ns + "external_wrench", 10)
        self.pub_legs = self.peer.create_publisher(JointState, ns + "leg_setpoint", 10)
        self.enable = self.peer.create_client(SetBool, ns + "enable")

    def spin_until(self, predicate, what):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.02)
            if predicate():
                return
        raise AssertionError(f"waited {WAIT} s for {what}")

    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)

    def wait_for_subscribers(self):
        for pub in (self.pub_setpoint, self.pub_trajectory, self.pub_wrench, self.pub_legs):
            self.spin_until(lambda p=pub: p.get_subscription_count() > 0, "discovery")
        self.spin_until(lambda: self.peer.count_publishers(self.ns + "actuator_forces")
                        > 0 and self.forces is not None, "publisher discovery")

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.peer.destroy_node()
        rclpy.shutdown(context=self.ctx)


@pytest.fixture(scope="module")
def harness():
    h = Harness()
    h.wait_for_subscribers()
    yield h
    h.close()


def point(t, R, v=(0, 0, 0), w=(0, 0, 0), a=(0, 0, 0), al=(0, 0, 0), quaternion=None):
    q = rotations.matrix_quaternion(R) if quaternion is None else quaternion
    return MultiDOFJointTrajectoryPoint(
        transforms=[Transform(translation=Vector3(x=float(t[0]), y=float(t[1]), z=float(t[2])),
                              rotation=Quaternion(x=float(q[0]), y=float(q[1]), z=float(q[2]),
                                                  w=float(q[3])))],
        velocities=[Twist(linear=Vector3(x=v[0], y=v[1], z=v[2]),
                          angular=Vector3(x=w[0], y=w[1], z=w[2]))],
        accelerations=[Twist(linear=Vector3(x=a[0], y=a[1], z=a[2]),
                             angular=Vector3(x=al[0], y=al[1], z=al[2]))])


def send_setpoint_and_expect(h, msg, expected):
    h.forces.clear()
    h.pub_setpoint.publish(msg)
    h.spin_until(lambda: any(np.allclose(f, expected, rtol=1e-9, atol=1e-9) for f in h.forces),
                 "the setpoint's forces")


def test_setpoint_and_external_wrench_give_the_core_forces(harness, sp):
    h = harness
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    wrench = WrenchStamped()
    wrench.wrench.force = Vector3(x=10.0, y=-5.0, z=20.0)
    wrench.wrench.torque = Vector3(x=1.0, y=2.0, z=-1.0)
    h.pub_wrench.publish(wrench)
    expected = good_forces(sp, (np.array([10.0, -5.0, 20.0]), np.array([1.0, 2.0, -1.0])))
    h.forces.clear()
    h.spin_until(lambda: any(np.allclose(f, expected, rtol=1e-9) for f in h.forces),
                 "forces with the wrench")
    h.pub_wrench.publish(WrenchStamped())
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    legs = h.legs[-1]
    assert list(legs.name) == [f"leg{i}" for i in range(1, 7)]
    assert np.allclose(legs.position, sp.inverse_kinematics(GOOD["t"], GOOD["R"]).lengths)


def rejected(h, reason):
    return any(reason in kv.value for s in h.diagnostics for kv in s.values
               if kv.key == "last_rejection")


def expect_rejection(h, publisher, msg, reason):
    h.diagnostics.clear()
    publisher.publish(msg)
    h.spin_until(lambda: rejected(h, reason), f"rejection '{reason}' on /diagnostics")


def expect_unchanged_forces(h, sp):
    h.forces.clear()
    h.spin_until(lambda: len(h.forces) >= 3, "forces after a rejection")
    assert all(np.allclose(f, good_forces(sp), rtol=1e-9) for f in h.forces)


def trajectory(*points, times=None, sec=0):
    msg = MultiDOFJointTrajectory(points=list(points))
    msg.header.stamp.sec = sec
    for pt, tau in zip(msg.points, times or range(len(points))):
        pt.time_from_start.sec = int(tau)
    return msg


def negative_time_from_start(pt):
    msg = trajectory(pt)
    msg.points[0].time_from_start.sec = -1  # the controller's rule too: a time no clock gives
    return msg


def test_rejections_reach_diagnostics_and_the_node_keeps_running(harness, sp):
    """Each input's rejection (malformed: WARN, last_rejection) or refusal (beyond the limits: ERROR
    at once) reaches /diagnostics; no callback raises out (that would end the node), and the last
    valid setpoint is still served."""
    h = harness
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    wrench = WrenchStamped()
    wrench.wrench.torque.y = math.nan
    cases = [
        (h.pub_setpoint, point(t=[0.2, math.nan, 0.5], R=np.eye(3)), "not finite"),
        (h.pub_setpoint, MultiDOFJointTrajectoryPoint(), "exactly one transform"),
        (h.pub_trajectory, trajectory(MultiDOFJointTrajectoryPoint()), "exactly one transform"),
        (h.pub_trajectory, trajectory(point(**GOOD), sec=-5), "header.stamp"),
        (h.pub_trajectory, negative_time_from_start(point(**GOOD)), "point 0 time_from_start"),
        (h.pub_legs, JointState(name=["leg1"] * 6, position=[0.5] * 6), "names must be"),
        (h.pub_wrench, wrench, "external wrench rejected: not finite"),
    ]
    for publisher, msg, reason in cases:
        expect_rejection(h, publisher, msg, reason)
    singular = point(*singular_pose_on_path_iii(sp))
    for publisher, msg, message in [
            (h.pub_setpoint, singular, "setpoint rejected: condition number"),
            (h.pub_trajectory, trajectory(point(**GOOD), singular),
             "trajectory rejected: point 1: condition number")]:
        h.diagnostics.clear()
        publisher.publish(msg)
        h.spin_until(lambda m=message: any(s.level == DiagnosticStatus.ERROR and m in s.message
                                           for s in h.diagnostics), f"ERROR '{message}'")
        # back to WARN (the previous target, the refusal as last_rejection) before the next one:
        # a change of level is what is published at once
        h.spin_until(lambda: h.diagnostics[-1].level == DiagnosticStatus.WARN, "WARN again")
    expect_unchanged_forces(h, sp)


def test_reported_rejection_reasons_are_bounded(harness, sp):
    """A leg setpoint naming 100,000 unknown legs: last_rejection on /diagnostics gives their count
    and the first few names (it was a ~1 MB string repeated in every diagnostic)."""
    h = harness
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    names = [f"joint{i}" for i in range(100_000)]
    expect_rejection(h, h.pub_legs, JointState(name=names, position=[0.5] * 6), "100000 in all")
    texts = [kv.value for s in h.diagnostics for kv in s.values if kv.key == "last_rejection"]
    assert texts and all(len(t) <= 1100 for t in texts)
    assert all(len(s.message) <= 1100 for s in h.diagnostics)
    expect_unchanged_forces(h, sp)


def test_a_huge_external_wrench_is_rejected_and_setpoints_still_served(harness, sp):
    """A wrench of 1e308 used to be taken; valid setpoints were then refused as singular."""
    h = harness
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    huge = WrenchStamped()
    huge.wrench.force.z = 1e308
    expect_rejection(h, h.pub_wrench, huge, "external wrench rejected: force of 1e+308 N beyond")
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))


def test_point_messages_decode_to_the_core_arrays():
    """No DDS: MultiDOFJointTrajectoryPoints to arrays; absent rates are zero, a malformed point is
    named."""
    t, R = GOOD["t"], GOOD["R"]
    pos, quats, rates = point_arrays([point(t, R, v=(1.0, 2.0, 3.0))])
    assert np.allclose(pos, [t]) and np.allclose(quats, [rotations.matrix_quaternion(R)])
    assert np.allclose(rates[0], [[1.0, 2.0, 3.0]]) and np.allclose(rates[1:], 0.0)
    bare = point(t, R)
    del bare.velocities[:], bare.accelerations[:]
    assert np.allclose(point_arrays([bare])[2], 0.0)
    two_velocities = point(t, R)
    two_velocities.velocities.append(Twist())
    for points, reason in [([bare, two_velocities], "point 1: at most one velocity"),
                           ([MultiDOFJointTrajectoryPoint()],
                            "point 0: needs exactly one transform")]:
        with pytest.raises(SetpointError, match=reason):
            point_arrays(points)
    pos, quats, rates = point_arrays([])   # an empty trajectory: no points, the right shapes
    assert pos.shape == (0, 3) and quats.shape == (0, 4) and all(r.shape == (0, 3) for r in rates)


def test_parameters_reach_the_core(harness, sp):
    """Limits changed as parameters withhold forces (ERROR) and restore them."""
    h = harness
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    cond = sp.inverse_dynamics(GOOD["t"], GOOD["R"], *np.zeros((4, 3))).condition_number
    h.diagnostics.clear()
    h.node.set_parameters([Parameter("condition_warning", value=cond / 4),
                           Parameter("condition_limit", value=cond / 2)])
    h.spin_until(lambda: any(s.level == DiagnosticStatus.ERROR and "withheld" in s.message
                             for s in h.diagnostics), "ERROR: forces withheld")
    h.spin_for(0.2)   # let anything published before the switch arrive
    h.forces.clear()
    h.spin_for(0.3)   # several timer periods at 50 Hz
    assert h.forces == []
    h.node.set_parameters([Parameter("condition_limit", value=1e4),
                           Parameter("condition_warning", value=1e3)])
    h.spin_until(lambda: len(h.forces) > 0, "forces resumed")
    h.diagnostics.clear()
    peak = float(np.abs(good_forces(sp)).max())
    h.node.set_parameters([Parameter("force_limit", value=peak / 2)])
    h.spin_until(lambda: any("force_limit" in s.message for s in h.diagnostics), "force limit")
    h.node.set_parameters([Parameter("force_limit", value=0.0)])
    h.forces.clear()
    h.spin_until(lambda: len(h.forces) > 0, "forces resumed")


def test_inconsistent_condition_parameters_are_refused(harness):
    result = harness.node.set_parameters([Parameter("condition_warning", value=1e6)])[0]
    assert not result.successful and "condition_limit" in result.reason
    result = harness.node.set_parameters([Parameter("rate", value=-1.0)])[0]
    assert not result.successful


def test_a_new_rate_takes_effect_at_once(harness, sp):
    """rate 50 -> 0.2 -> 50 Hz: the timer restarts with the new period (it used to wait out the old
    one: the first forces came 4.5 s late)."""
    h = harness
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    assert h.node.set_parameters([Parameter("rate", value=0.2)])[0].successful
    h.spin_for(0.5)
    assert h.node.set_parameters([Parameter("rate", value=50.0)])[0].successful
    assert h.node.timer.time_until_next_call() <= 1e9 / 50.0   # ns; not the ~4.5 s left of 5 s
    h.forces.clear()
    h.spin_for(1.0)
    assert len(h.forces) >= 5   # ~50 at 50 Hz; none for 4.5 s before the fix


def test_trajectory_and_leg_setpoint_topics(harness, sp):
    h = harness
    path, dtau = PAPER_PATHS["I"]
    sample = path.sample(path.times(dtau))
    msg = MultiDOFJointTrajectory()
    for i, tau in enumerate(sample.time):
        pt = point(sample.position[i], sample.rotation[i], sample.linear_velocity[i],
                   sample.angular_velocity[i], sample.linear_acceleration[i],
                   sample.angular_acceleration[i])
        pt.time_from_start.sec = int(tau)
        pt.time_from_start.nanosec = int(round((tau - int(tau)) * 1e9))
        msg.points.append(pt)
    h.pub_trajectory.publish(msg)
    h.spin_until(lambda: isinstance(h.node.loop.target, PoseTrajectory), "trajectory accepted")
    h.spin_for(0.1)   # let the previous setpoint's messages in flight arrive
    h.legs.clear()
    h.spin_until(lambda: len(h.legs) >= 20, "legs along the trajectory")
    moved = np.ptp([legs.position for legs in h.legs], axis=0)
    assert np.all(moved > 0)   # sampled in time on the node's clock: the legs move along the path
    h.pub_trajectory.publish(MultiDOFJointTrajectory())   # empty: stop and hold at rest
    h.spin_until(lambda: not isinstance(h.node.loop.target, PoseTrajectory), "trajectory stopped")


def test_leg_setpoint_closes_through_forward_kinematics(harness, sp):
    h = harness
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    t, R = np.array([0.22, 0.03, 0.52]), rotations.rpy_matrix([0.0, 0.05, -0.1])
    lengths = sp.inverse_kinematics(t, R).lengths
    expected = sp.inverse_dynamics(t, R, *np.zeros((4, 3))).forces
    h.forces.clear()
    h.pub_legs.publish(JointState(name=[f"leg{i}" for i in range(6, 0, -1)],
                                  position=lengths[::-1].tolist()))
    h.spin_until(lambda: any(np.allclose(f, expected, rtol=1e-7) for f in h.forces),
                 "forces at the forward-kinematics pose")
    h.diagnostics.clear()
    h.pub_legs.publish(JointState(position=[0.01] * 6))
    h.spin_until(lambda: any("forward kinematics" in kv.value for s in h.diagnostics
                             for kv in s.values), "FK failure reported")


def _answers(sp, namespace, sequence, use_sim_time=False):
    """The number of force commands after each (sec, copies) of `sequence`: copies of one leg
    measurement at stamp (sec, 0), a node in computed_torque, holding a fixed setpoint."""
    h = Harness(namespace, overrides=[Parameter("control", value="computed_torque"),
                                      Parameter("measurement_timeout", value=60.0),
                                      Parameter("use_sim_time", value=use_sim_time)])
    try:
        legs = h.peer.create_publisher(JointState, h.ns + "legs_measured", 10)
        h.wait_for_subscribers()
        h.spin_until(lambda: legs.get_subscription_count() > 0, "discovery")
        g = GOOD
        h.pub_setpoint.publish(point(g["t"], g["R"]))
        h.spin_until(lambda: h.node.loop.target is not None, "the setpoint")
        ik = sp.inverse_kinematics(g["t"], g["R"], g["v"], g["w"])
        measured = JointState(position=ik.lengths.tolist(), velocity=ik.rates.tolist())
        h.forces.clear()
        counts = []
        for sec, copies in sequence:
            measured.header.stamp.sec = sec
            for _ in range(copies):
                legs.publish(measured)
            h.spin_for(0.3)
            counts.append(len(h.forces))
        return counts
    finally:
        h.close()


def test_computed_torque_answers_each_stamped_measurement_once(sp):
    """A copy of a measurement already answered (a step-locked simulator publishes its state
    again while it waits) gets no second answer: that answer, stale, would be taken for the next
    measurement's. A new stamp is answered; unstamped measurements always are."""
    assert _answers(sp, "/once", [(5, 3), (6, 2), (0, 2)]) == [1, 2, 4]   # (0: unstamped)


def test_on_simulated_time_the_first_instant_is_answered_once(sp):
    """On simulated time a zero stamp is the simulation's first instant, not "unstamped": a
    step-locked simulator standing at t = 0 publishes it until its first command, and a second
    answer to it put the loop a period behind for the rest of the run (demo stewart then
    failed its bound about one run in five, y and rx 2.4 times over)."""
    assert _answers(sp, "/sim_once", [(0, 3), (1, 2)], use_sim_time=True) == [1, 2]


def test_python_dash_m_runs_the_node(harness):
    """`python -m robodyn_ros.nodes.stewart_platform` starts the node (it did nothing before) and
    ends cleanly on Ctrl-C. Same loopback and domain as this run (conftest.py)."""
    h = harness
    proc = subprocess.Popen([sys.executable, "-m", "robodyn_ros.nodes.stewart_platform",
                             "--ros-args", "-r", "__ns:=/dash_m"],
                            cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        def up():
            assert proc.poll() is None, f"exited with {proc.returncode}: {proc.stdout.read()}"
            return h.peer.count_publishers("/dash_m/stewart_platform/actuator_forces") > 0
        h.spin_until(up, "the node started with python -m")
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=WAIT)
        out = proc.stdout.read()
        # Ctrl-C is a clean exit, also when Python's KeyboardInterrupt arrives during the clean-up
        assert proc.returncode == 0, out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_enable_service_stops_and_resumes_forces(harness, sp):
    h = harness
    send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
    h.spin_until(lambda: h.enable.service_is_ready(), "enable service")
    future = h.enable.call_async(SetBool.Request(data=False))
    h.spin_until(future.done, "enable(false) response")
    assert future.result().success
    h.spin_for(0.2)
    h.forces.clear()
    h.spin_for(0.3)
    assert h.forces == []
    future = h.enable.call_async(SetBool.Request(data=True))
    h.spin_until(future.done, "enable(true) response")
    h.spin_until(lambda: len(h.forces) > 0, "forces after enable(true)")


def test_bad_platform_file_or_parameters_stop_the_node_with_a_reason(harness, tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("base_points: [[0, 0, 0]]\n")
    cases = [([Parameter("platform_file", value=str(bad))], "broken.yaml: base_points"),
             ([Parameter("condition_warning", value=1e5)], "condition_limit")]
    for overrides, reason in cases:
        with pytest.raises(ConfigurationError, match=reason):
            StewartPlatformNode(context=harness.ctx, parameter_overrides=overrides)


def test_launch_and_parameter_files_name_what_exists():
    config = yaml.safe_load((ROOT / "config" / "stewart_platform.yaml").read_text())
    params = config["stewart_platform"]["ros__parameters"]
    table = {p.name: p for p in schema()}
    assert set(params) == set(table)
    for name, value in params.items():
        assert type(value) is type(table[name].default), name
    launch = (ROOT / "launch" / "stewart.launch.py").read_text()
    ast.parse(launch)
    assert 'executable="stewart_platform"' in launch
    assert "stewart_platform = robodyn_ros.nodes.stewart_platform:main" in \
        (ROOT / "setup.py").read_text()
    for rel in ("stewart_platform.yaml", "stewart_dasgupta.yaml"):
        assert f'"{rel}"' in launch and (ROOT / "config" / rel).is_file()


def test_lifecycle_over_the_standard_services(sp):
    """autostart false: unconfigured until a manager configures and activates it; deactivated,
    it publishes nothing; cleanup forgets the platform."""
    from lifecycle_msgs.msg import State, Transition
    from lifecycle_msgs.srv import ChangeState, GetState
    h = Harness(namespace="/managed", overrides=[Parameter("autostart", value=False)])
    try:
        change = h.peer.create_client(ChangeState, h.ns + "change_state")
        get = h.peer.create_client(GetState, h.ns + "get_state")

        def call(client, request):
            h.spin_until(client.service_is_ready, "the lifecycle service")
            future = client.call_async(request)
            h.spin_until(future.done, "its response")
            return future.result()

        def transition(t):
            return call(change, ChangeState.Request(transition=Transition(id=t))).success

        assert call(get, GetState.Request()).current_state.id == State.PRIMARY_STATE_UNCONFIGURED
        assert h.node.loop is None
        assert transition(Transition.TRANSITION_CONFIGURE)
        assert transition(Transition.TRANSITION_ACTIVATE)
        h.wait_for_subscribers()
        send_setpoint_and_expect(h, point(**GOOD), good_forces(sp))
        assert transition(Transition.TRANSITION_DEACTIVATE)
        h.spin_for(0.1)
        h.forces.clear()
        h.spin_for(0.3)
        assert h.forces == []  # inactive: no forces
        assert transition(Transition.TRANSITION_CLEANUP)
        assert call(get, GetState.Request()).current_state.id == State.PRIMARY_STATE_UNCONFIGURED
        assert h.node.loop is None
    finally:
        h.close()
