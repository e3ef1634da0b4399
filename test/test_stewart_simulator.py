"""stewart_simulator's wiring under real rclpy and DDS (loopback, this run's domain: conftest.py),
and stewart_platform closing the loop on it in control computed_torque: the simulator holds the
platform braked until a command (with lockstep, the simulated time too), falls under zero forces
and stays under the holding ones, clamps and rejects commands as it says on /diagnostics,
refuses a bad configuration; the controller
answers the measured legs and withholds, saying why, once they stop. The physics and the law are
tested without ROS (test_stewart_closed_loop.py), the loop over DDS in test_stewart_demo.py."""
import time
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import PoseStamped, Transform  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import MultiDOFJointTrajectoryPoint  # noqa: E402

from robodyn_ros.nodes.common import ConfigurationError  # noqa: E402
from robodyn_ros.nodes.stewart_platform import StewartPlatformNode  # noqa: E402
from robodyn_ros.nodes.stewart_simulator import StewartSimulator  # noqa: E402
from robodyn_ros.spatial import rotations  # noqa: E402
from robodyn_ros.stewart import StewartPlatform  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REALISABLE = str(ROOT / "config" / "stewart_dasgupta_realisable.yaml")
START = np.array([0.1, 0.0, 0.4]), rotations.rpy_matrix([0.0, 0.0, -0.2])
WAIT = 15.0


class Rig:
    def __init__(self, namespace):
        self.ns = namespace
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx)
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.peer = self.add(rclpy.create_node("peer", namespace=namespace, context=self.ctx))
        self.legs, self.poses, self.forces, self.diagnostics = [], [], [], []
        self.peer.create_subscription(JointState, f"{namespace}/legs_measured", self.legs.append,
                                      50)
        self.peer.create_subscription(PoseStamped, f"{namespace}/stewart_simulator/pose",
                                      self.poses.append, 50)
        self.peer.create_subscription(Float64MultiArray, f"{namespace}/stewart_platform/"
                                      "actuator_forces", self.forces.append, 50)
        self.peer.create_subscription(DiagnosticArray, "/diagnostics",
                                      lambda m: self.diagnostics.extend(m.status), 50)
        self.commands = self.peer.create_publisher(Float64MultiArray, f"{namespace}/forces", 10)

    def add(self, node):
        self.executor.add_node(node)
        return node

    def params(self, **values):
        return [Parameter(k, value=v) for k, v in values.items()]

    def simulator(self, **params):
        return self.add(StewartSimulator(context=self.ctx, namespace=self.ns,
                                         parameter_overrides=self.params(**{
                                             "command_topic": f"{self.ns}/forces",
                                             "state_topic": f"{self.ns}/legs_measured",
                                             "publish_rate": 100.0, "diagnostic_period": 0.2,
                                             **params})))

    def spin_until(self, predicate, what):
        deadline = time.monotonic() + WAIT
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {WAIT} s for {what}")
            self.executor.spin_once(timeout_sec=0.02)

    def status(self, node, predicate, what):
        name = f"{node.get_name()}: {node.get_fully_qualified_name()}"
        self.spin_until(lambda: any(s.name == name and predicate(s) for s in self.diagnostics),
                        what)

    def close(self):
        self.executor.shutdown()
        for node in self.executor.get_nodes():
            node.destroy_node()
        rclpy.shutdown(context=self.ctx)


@pytest.fixture
def rig(request):
    r = Rig(f"/{request.node.name[:40]}")
    yield r
    r.close()


@pytest.fixture(scope="module")
def sp():
    return StewartPlatform.from_yaml(REALISABLE)


def test_braked_until_a_command_then_held_by_the_holding_forces_or_falling_without(rig, sp):
    rig.simulator()
    rig.spin_until(lambda: len(rig.legs) > 5 and rig.poses, "leg states")
    ik = sp.inverse_kinematics(*START)
    np.testing.assert_allclose(rig.legs[-1].position, ik.lengths, atol=1e-12)
    assert list(rig.legs[-1].name) == [f"leg{i}" for i in range(1, 7)]
    hold = sp.inverse_dynamics(*START, None, None, None, None).forces
    rig.spin_until(lambda: rig.commands.get_subscription_count() > 0, "discovery")
    for forces, moves in ((hold, False), (np.zeros(6), True)):
        z0 = rig.poses[-1].pose.position.z
        # held: still after 0.3 s of commands; unheld: falling within the deadline (a loaded
        # machine may deliver few poses in 0.3 s of wall time)
        end = time.monotonic() + (WAIT if moves else 0.3)
        while time.monotonic() < end:   # commands faster than command_timeout
            rig.commands.publish(Float64MultiArray(data=forces.tolist()))
            rig.executor.spin_once(timeout_sec=0.01)
            if moves and rig.poses[-1].pose.position.z - z0 < -1e-3:
                break
        dz = rig.poses[-1].pose.position.z - z0
        assert (dz < -1e-3) if moves else abs(dz) < 1e-5, dz


def test_lockstep_time_stands_still_until_the_first_command_then_steps_once_per_answer(rig, sp):
    simulator = rig.simulator(lockstep=True, command_timeout=5.0, length_noise=1e-3)
    rig.spin_until(lambda: len(rig.legs) > 10 and rig.commands.get_subscription_count() > 0,
                   "leg states")
    # the same message again each tick: no time passing, and one noise draw, not one per tick
    assert {(_ns(m), tuple(m.position)) for m in rig.legs} == {(0, tuple(rig.legs[0].position))}
    rig.status(simulator, lambda s: "time stands still" in s.message, "the wait on /diagnostics")
    hold = sp.inverse_dynamics(*START, None, None, None, None).forces.tolist()
    for k in (1, 2, 3):   # each answer: one period of 0.01 s, and none without one
        rig.commands.publish(Float64MultiArray(data=hold))
        rig.spin_until(lambda: _ns(rig.legs[-1]) == k * 10_000_000, f"state {k}")
        end = time.monotonic() + 0.1   # ten ticks
        while time.monotonic() < end:
            rig.executor.spin_once(timeout_sec=0.01)
        assert max(_ns(m) for m in rig.legs) == k * 10_000_000


def _ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def test_commands_beyond_the_limit_are_clamped_and_malformed_ones_rejected(rig, sp):
    simulator = rig.simulator(force_limit=50.0)
    rig.spin_until(lambda: rig.commands.get_subscription_count() > 0, "discovery")
    rig.commands.publish(Float64MultiArray(data=[float("nan")] * 6))
    rig.status(simulator, lambda s: s.level == DiagnosticStatus.WARN
               and "commands rejected" in s.message, "the rejection on /diagnostics")
    hold = sp.inverse_dynamics(*START, None, None, None, None).forces   # beyond 50 N
    rig.commands.publish(Float64MultiArray(data=hold.tolist()))
    rig.status(simulator, lambda s: s.level == DiagnosticStatus.WARN
               and "clamped" in s.message, "the clamp on /diagnostics")
    assert simulator.plant.clamped >= 1 and simulator.rejected.count == 1


@pytest.mark.parametrize("params, reason", [
    ({"publish_rate": 300.0}, "must divide rate"),
    ({"initial_position": [0.1, 0.0]}, "initial_position must be three numbers"),
    ({"leg_model": "ball"}, "leg_model"),
    ({"platform_file": "/nonexistent.yaml"}, "cannot read"),
])
def test_a_bad_configuration_stops_the_node_with_its_reason(rig, params, reason):
    with pytest.raises(ConfigurationError, match=reason):
        rig.simulator(**params)


def test_computed_torque_holds_the_simulated_platform_and_withholds_once_legs_stop(rig, sp):
    topics = f"{rig.ns}/stewart_platform/"   # the controller's, in the namespace
    simulator = rig.simulator(lockstep=True, command_timeout=1.0,
                              command_topic=topics + "actuator_forces",
                              state_topic=topics + "legs_measured")
    controller = rig.add(StewartPlatformNode(
        context=rig.ctx, namespace=rig.ns, parameter_overrides=rig.params(
            platform_file=REALISABLE, control="computed_torque", rate=20.0,
            diagnostic_period=0.2, measurement_timeout=0.2)))
    pub = rig.peer.create_publisher(MultiDOFJointTrajectoryPoint, topics + "setpoint", 10)
    rig.spin_until(lambda: pub.get_subscription_count() > 0, "discovery")
    msg = MultiDOFJointTrajectoryPoint()
    msg.transforms.append(_transform(*START))
    pub.publish(msg)
    rig.spin_until(lambda: len(rig.forces) > 50, "forces answering the measured legs")
    pose = rig.poses[-1].pose
    position = np.array([pose.position.x, pose.position.y, pose.position.z])
    assert np.abs(position - START[0]).max() < 1e-4   # held where it was commanded
    rig.executor.remove_node(simulator)   # the legs stop
    try:
        rig.status(controller, lambda s: s.level == DiagnosticStatus.ERROR
                   and "leg measurement" in s.message and "old" in s.message,
                   "the stale measurement's reason on /diagnostics")
    finally:
        simulator.destroy_node()


def _transform(position, rotation):
    t = Transform()
    t.translation.x, t.translation.y, t.translation.z = position.tolist()
    q = rotations.matrix_quaternion(rotation)
    t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w = q.tolist()
    return t
