"""Test-wide setup, and the fixtures and helpers shared by the node tests (they live here once).

DDS must stay on loopback and on a domain of this run's own, so both variables are set first,
before anything can import rclpy.
"""
import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
# A domain per test process: concurrent runs on one machine must not hear each other.
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)

import itertools  # noqa: E402
import time  # noqa: E402
from types import SimpleNamespace  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import rclpy  # noqa: E402
from rclpy.experimental import EventsExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from robodyn_ros.dynamics import RobotModel  # noqa: E402
from robodyn_ros.nodes.controller import ComputedTorqueController  # noqa: E402
from robodyn_ros.nodes.controller_state import TOPIC as STATE_TOPIC  # noqa: E402
from robodyn_ros.nodes.process import release  # noqa: E402
from robodyn_ros.nodes.messages import JointTrajectoryControllerState  # noqa: E402
from robodyn_ros.nodes.simulator import ArmSimulator  # noqa: E402
from robodyn_ros.plumbing.resources import find_share_file

URDF = str(find_share_file("urdf/puma560.urdf"))
JOINTS = [f"joint_{i}" for i in range(1, 7)]
Q0 = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])
WAIT = 15.0  # s: generous deadline for anything to arrive on a loaded 2-core machine
namespaces = (f"/t{i}" for i in itertools.count())


def state_points(msg):
    """[reference, feedback, error, output] of a controller state message."""
    return [msg.reference, msg.feedback, msg.error, msg.output]


@pytest.fixture(scope="module")
def ros():
    """rclpy's default context for the tests of one module."""
    rclpy.init()
    yield
    rclpy.shutdown()


@pytest.fixture(scope="module")
def model():
    with warnings.catch_warnings():  # the PUMA data's link-3 inertia is not physical
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(URDF)


@pytest.fixture(scope="module")
def nominal(model):
    """The PUMA as published: the model an identification starts from."""
    return model


@pytest.fixture(scope="module")
def plant(model):
    """The arm the identification tests' synthetic runs record: the PUMA unlike its nominal model
    (other masses, a tool, other friction: apps.demos.identify)."""
    from robodyn_ros.apps.demos.identify import plant_model
    return plant_model(model)


class Rig:
    """Nodes under test plus a probe node in one namespace, on one EventsExecutor."""

    def __init__(self):
        self.ns = next(namespaces)
        self.executor = EventsExecutor()
        self.nodes = []
        self.probe = self.add(Node("probe", namespace=self.ns))
        self.commands = []
        self.command_times = []  # time.monotonic() at each command's arrival
        self.states = []
        self.probe.create_subscription(Float64MultiArray, f"{self.ns}/commands",
                                       self._on_command, 100)
        # the controller state as header + points [reference, feedback, error, output]
        topic = f"{self.ns}/computed_torque_controller/{STATE_TOPIC.removeprefix('~/')}"
        self.probe.create_subscription(
            JointTrajectoryControllerState, topic,
            lambda m: self.states.append(SimpleNamespace(header=m.header, points=state_points(m))),
            100)
        self.joint_states = self.probe.create_publisher(JointState, "joint_states", 10)

    def _on_command(self, msg):
        self.command_times.append(time.monotonic())
        self.commands.append(np.array(msg.data))

    def add(self, node):
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def controller(self, **params):
        params = {"urdf_file": URDF, "command_topic": f"{self.ns}/commands", **params}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.add(ComputedTorqueController(namespace=self.ns, parameter_overrides=[
                Parameter(k, value=v) for k, v in params.items()]))

    def simulator(self, **params):
        params = {"urdf_file": URDF, "command_topic": f"{self.ns}/commands",
                  "initial_position": Q0.tolist(), **params}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.add(ArmSimulator(namespace=self.ns, parameter_overrides=[
                Parameter(k, value=v) for k, v in params.items()]))

    def spin_until(self, condition, timeout=WAIT, what="condition"):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            self.executor.spin_once(timeout_sec=0.02)

    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)

    def publish_state(self, q, qd=None, names=JOINTS, stamp_now=True):
        msg = JointState(name=list(names), position=list(map(float, q)),
                         velocity=list(map(float, np.zeros(len(q)) if qd is None else qd)))
        if stamp_now:
            msg.header.stamp = self.probe.get_clock().now().to_msg()
        self.joint_states.publish(msg)

    def next_command(self, what="a command"):
        count = len(self.commands)
        self.spin_until(lambda: len(self.commands) > count, what=what)
        return self.commands[-1]

    def call(self, srv_type, name, request):
        client = self.probe.create_client(srv_type, f"{self.ns}/{name}")
        self.spin_until(lambda: client.service_is_ready(), what=f"service {name}")
        future = client.call_async(request)
        self.spin_until(future.done, what=f"response of {name}")
        return future.result()

    def close(self):
        for node in self.nodes:
            self.executor.remove_node(node)
            release(node)  # its action servers and clients too, not left in the graph
        self.executor.shutdown()


@pytest.fixture
def rig(ros):
    r = Rig()
    yield r
    r.close()


def wait_for_subscriber(rig, publisher):
    """Until ``publisher`` has discovered a subscriber."""
    rig.spin_until(lambda: publisher.get_subscription_count() > 0, what="discovery")


def register_laws(tmp_path, monkeypatch, module, **laws):
    """Make ``tmp_path/<module>.py`` an installed distribution whose entry points register its
    classes as control laws (entry-point name -> class name), as a plugin package would."""
    info = tmp_path / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[robodyn_ros.control_laws]\n" + "".join(
        f"{name} = {module}:{cls}\n" for name, cls in laws.items()))
    monkeypatch.syspath_prepend(str(tmp_path))
