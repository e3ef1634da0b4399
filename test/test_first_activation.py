"""doc/real_robot.md's first activation (step 4), run as written over DDS: each ``ros2`` command of
its marked blocks becomes what the ros2 CLI does with it (``ros2 run``: the package's console
script, in a process of its own; ``ros2 lifecycle set`` / ``get``: the node's
get_available_transitions, change_state and get_state services; ``ros2 param set``: its
set_parameters service, the value read as YAML, as ros2param reads it), beside a stand-in driver
that publishes the Panda's joint states and listens to the commands. Between the steps, what the
page promises: nothing commanded before the activation, gravity compensation first (behind the
Franka file's drive, which adds gravity itself: nothing), the law switched, ``on_deactivate``
last. The ros2 CLI itself runs the page's neighbours where a ROS install provides it
(test_cli_real.py); here it is not installed."""
import shlex
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions, GetState
from rcl_interfaces.srv import SetParameters
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.dynamics import RobotModel
from ros_cli import ROOT, doc_commands

pytestmark = pytest.mark.usefixtures("ros")
PAGE = ROOT / "doc" / "real_robot.md"
STEPS = ("first-start", "first-configure", "first-state", "first-activate", "first-law",
         "first-deactivate")
WAIT = 120.0   # s: the node's start and configure load numba's cache on a loaded machine
WAITING = "unconfigured: waiting for a lifecycle manager (autostart is false)"


class Driver:
    """The stand-in driver (the Panda at rest, 200 Hz) and the ros2 CLI's calls, on one node."""

    def __init__(self, model):
        self.node = Node("first_activation_driver")
        self.executor = EventsExecutor()
        self.executor.add_node(self.node)
        self.commands = []
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                      lambda m: self.commands.append(np.array(m.data)), 1000)
        self._states = self.node.create_publisher(JointState, "/joint_states", 10)
        self._state = JointState(name=list(model.joint_names),
                                 position=(0.5 * (model.lower + model.upper)).tolist(),
                                 velocity=[0.0] * model.dof)
        self._next = 0.0

    def spin(self, seconds=0.0, until=lambda: False, what="", proc=None):
        """Publish states and spin for ``seconds``, or until ``until()`` (AssertionError after WAIT)."""
        end = time.monotonic() + (seconds or WAIT)
        while not until():
            if time.monotonic() > end:
                assert seconds, f"timed out waiting for {what}"
                return
            if proc is not None:
                assert proc.poll() is None, f"the node exited {proc.returncode}"
            if time.monotonic() >= self._next:
                self._next = time.monotonic() + 0.005
                self._state.header.stamp = self.node.get_clock().now().to_msg()
                self._states.publish(self._state)
            self.executor.spin_once(timeout_sec=0.002)

    def call(self, srv_type, service, request):
        client = self.node.create_client(srv_type, service)
        try:
            self.spin(until=client.service_is_ready, what=service)
            future = client.call_async(request)
            self.spin(until=future.done, what=f"the answer of {service}")
            return future.result()
        finally:
            self.node.destroy_client(client)

    # the ros2 commands, as the CLI makes them
    def lifecycle_set(self, node, label) -> bool:
        """``ros2 lifecycle set NODE LABEL``: the transition of that label among those the node
        offers now, then change_state with its id."""
        offered = self.call(GetAvailableTransitions, f"{node}/get_available_transitions",
                            GetAvailableTransitions.Request()).available_transitions
        [transition] = [t.transition for t in offered if t.transition.label == label]
        request = ChangeState.Request()
        request.transition.id = transition.id
        return self.call(ChangeState, f"{node}/change_state", request).success

    def lifecycle_get(self, node) -> str:
        return self.call(GetState, f"{node}/get_state", GetState.Request()).current_state.label

    def param_set(self, node, name, text):
        """``ros2 param set NODE NAME VALUE``: the value as YAML reads it."""
        request = SetParameters.Request(parameters=[
            Parameter(name, value=yaml.safe_load(text)).to_parameter_msg()])
        return self.call(SetParameters, f"{node}/set_parameters", request).results[0]

    def close(self):
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()


def _argv(command):
    return shlex.split(command.replace("\\\n", " "))


def test_the_pages_first_activation_runs_as_written(tmp_path):
    commands = doc_commands(PAGE)
    assert set(STEPS) <= set(commands), f"{PAGE.name} lacks {set(STEPS) - set(commands)}"
    text = PAGE.read_text()
    assert WAITING in text and "answers `inactive`" in text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RobotModel.from_urdf(str(ROOT / "urdf" / "panda.urdf"))
    # the user's copies of the files the page names
    shutil.copy(ROOT / "config" / "franka_controller.yaml", tmp_path / "franka_controller.yaml")
    shutil.copy(ROOT / "urdf" / "panda.urdf", tmp_path / "robot.urdf")
    driver = Driver(model)
    argv = _argv(commands["first-start"])
    assert argv[:3] == ["ros2", "run", "robodyn_ros"]   # the package's console script
    log = tmp_path / "node.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([str(Path(sys.executable).parent / argv[3]), *argv[4:]],
                                cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)
    try:
        driver.spin(until=lambda: WAITING in log.read_text(), what="the node waiting", proc=proc)
        driver.spin(1.0, proc=proc)
        assert driver.commands == [], "a command before the configure"

        for step in STEPS[1:]:
            ros2, verb, *words = _argv(commands[step])
            assert ros2 == "ros2"
            if verb == "lifecycle" and words[0] == "set":
                assert driver.lifecycle_set(*words[1:]), f"{step} refused: {log.read_text()[-2000:]}"
            elif verb == "lifecycle" and words[0] == "get":
                assert driver.lifecycle_get(*words[1:]) == "inactive"
            elif verb == "param" and words[0] == "set":
                result = driver.param_set(*words[1:])
                assert result.successful, result.reason
            else:
                pytest.fail(f"{step}: no translation of {commands[step]!r}")
            if step == "first-configure":
                driver.spin(1.0, proc=proc)
                assert driver.commands == [], "a command before the activation"
            elif step in ("first-activate", "first-law"):
                count = len(driver.commands)
                driver.spin(until=lambda: len(driver.commands) > count + 50, what="commands",
                            proc=proc)
                # at rest behind a drive that adds gravity: gravity compensation (and computed
                # torque at zero error) leaves it nothing to add
                np.testing.assert_allclose(driver.commands[count:], 0.0, atol=1e-6)
            elif step == "first-deactivate":
                count = len(driver.commands)
                driver.spin(0.5, proc=proc)
                assert len(driver.commands) <= count + 1   # on_deactivate, then nothing
                np.testing.assert_allclose(driver.commands[-1], 0.0, atol=1e-6)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        driver.close()
