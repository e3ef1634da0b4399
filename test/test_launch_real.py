"""Every launch file of launch/ under the real ``ros2 launch``, as a user starts it: each reaches
its documented state (managed nodes configured and activated by launch,
commands flowing in the closed loops), its launch arguments reach the nodes as the node pages say,
every parameter the launch file and its YAML give is one the node holds with that value, and
Ctrl-C (SIGINT to the whole process group, as a terminal sends it, twice) ends every process
with exit 0, leaving none behind and, where a controller was active, its ``on_deactivate``
command on the wire (ros2 launch's own exit: ros_cli.LAUNCH_ITSELF).

The Gazebo launch is parsed by ``ros2 launch --show-args`` and its non-Gazebo part — our controller
with the Gazebo launch's own parameters and bring-up — runs under ros2 launch; the whole
of it runs only where Gazebo and ros2_control are installed. ``effort_feedforward.launch.py``
runs without its spawner, which needs a controller manager (skipped, saying why, without one).
"""
import math
import os
import re
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from ros_cli import (NON_GAZEBO_PART, ROOT, WAIT, Launch, Probe, environment, require_tools,
                     ros2_executable)

require_tools()

from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import Quaternion, Transform, Vector3  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import (JointTrajectory, JointTrajectoryPoint,  # noqa: E402
                                 MultiDOFJointTrajectoryPoint)

JOINTS = [f"joint_{i}" for i in range(1, 7)]
Q0 = [math.pi / 2, 0.0, math.pi / 2, 0.0, 0.0, 0.0]
COMMANDS = "/effort_controller/commands"
CONTROLLER = "/computed_torque_controller"
WAITING = "unconfigured: waiting for a lifecycle manager (autostart is false)"
ACTIVE = "active: commanding from the measured position"


@pytest.fixture(scope="module")
def probe():
    p = Probe("launch_probe")
    yield p
    p.close()


@pytest.fixture
def launched(tmp_path, probe):
    """Start launches (``start(file, *arguments)``); any still running at the end is killed."""
    running = []

    def start(launch_file, *arguments, argv=None):
        log = tmp_path / f"{Path(launch_file).stem}.log"
        launch = Launch(argv, log) if argv else Launch.of(launch_file, *arguments, log=log)
        running.append(launch)
        return launch
    yield start
    for launch in running:
        if launch.process.poll() is None:
            launch.kill()


def share_file(relative: str) -> Path:
    """The file as ros2 launch finds it: in the first ament prefix that holds the package."""
    for prefix in environment()["AMENT_PREFIX_PATH"].split(os.pathsep):
        path = Path(prefix, "share", "robodyn_ros", relative)
        if path.is_file():
            return path
    raise AssertionError(f"{relative} in no ament prefix")


def config(name: str, node: str) -> dict:
    return yaml.safe_load((ROOT / "config" / name).read_text())[node]["ros__parameters"]


def _same(got, value) -> bool:
    numbers = (int, float)
    if isinstance(value, float) or (isinstance(value, list) and value and
                                    all(isinstance(v, numbers) and not isinstance(v, bool)
                                        for v in value)):
        return got == pytest.approx(value, rel=1e-12, abs=0.0)
    return got == value and type(got) is type(value)


def assert_holds(probe, node, expected: dict):
    """``node`` declares every parameter of ``expected`` and holds that value (floats to 1e-12)."""
    held = probe.parameters(node, list(expected))
    for name, value in expected.items():
        assert held[name] is not None, f"{node} does not declare {name}, which its launch sets"
        assert _same(held[name], value), f"{node}: {name} is {held[name]!r}, its launch gives {value!r}"


def assert_managed_by_launch(probe, launch, node: str):
    """The node started unconfigured, waiting for a lifecycle manager (autostart false: nothing
    else moves it), and is active now: launch brought it up."""
    launch.wait_for_output(rf"\[{node}-\d+\] .*{re.escape(WAITING)}", spin=probe.spin_once)
    probe.spin_until(lambda: probe.lifecycle_state(f"/{node}") == "active",
                     what=f"{node} active, brought up by launch")


def assert_last_command_zero(commands, before):
    """The last command on the wire, sent at Ctrl-C, is on_deactivate: zero (and the one before
    Ctrl-C was not)."""
    assert commands.total > before.total, "no command arrived after Ctrl-C"
    last = np.array(commands[-1].msg.data)
    assert last.shape == (6,) and np.all(last == 0.0), f"last command {last}, not zero"
    assert np.any(np.array(before.msg.data) != 0.0), \
        "the controller commanded zero before Ctrl-C already: the check proves nothing"


# ------------------------------------------------------------------------------ the closed loops
def test_puma560_sim_closes_the_loop_and_ctrl_c_leaves_on_deactivate(launched, probe, tmp_path):
    urdf = tmp_path / "arm.urdf"  # urdf_file: another file than the packaged one, same arm
    urdf.write_text((ROOT / "urdf" / "puma560.urdf").read_text())
    commands = probe.subscribe(Float64MultiArray, COMMANDS)
    states = probe.subscribe(JointState, "/joint_states")
    launch = launched("puma560_sim.launch.py", f"urdf_file:={urdf}")
    launch.wait_for_output(ACTIVE, spin=probe.spin_once)
    assert_managed_by_launch(probe, launch, "computed_torque_controller")
    probe.spin_until(lambda: commands.total >= 200 and states.total >= 200, what="the closed loop")
    assert_holds(probe, CONTROLLER, {**config("computed_torque_controller.yaml",
                                              "computed_torque_controller"),
                                     "urdf_file": str(urdf), "use_sim_time": True,
                                     "autostart": False})
    assert_holds(probe, "/arm_simulator", {**config("arm_simulator.yaml", "arm_simulator"),
                                           "urdf_file": str(urdf)})
    assert all(r.successful for r in probe.set_parameters(CONTROLLER, on_deactivate="zero"))
    before = SimpleNamespace(total=commands.total, msg=commands[-1].msg)
    returncode = launch.interrupt(spin=probe.spin_once)
    probe.spin_for(0.2)
    launch.assert_clean_exit(returncode)
    assert_last_command_zero(commands, before)


def test_controller_launch_takes_its_arguments(launched, probe, tmp_path):
    """urdf_file, params_file and use_sim_time as doc/computed_torque_controller.md gives them, on
    a plant played by the probe (joint states and /clock)."""
    urdf = tmp_path / "arm.urdf"
    urdf.write_text((ROOT / "urdf" / "puma560.urdf").read_text())
    params = yaml.safe_load((ROOT / "config" / "computed_torque_controller.yaml").read_text())
    mine = params["computed_torque_controller"]["ros__parameters"]
    mine.update(kp=49.0, kd=14.0, on_deactivate="zero")
    params_file = tmp_path / "controller.yaml"
    params_file.write_text(yaml.safe_dump(params))
    commands = probe.subscribe(Float64MultiArray, COMMANDS)
    clock = probe.node.create_publisher(Clock, "/clock", 10)
    joint_states = probe.node.create_publisher(JointState, "/joint_states", 10)
    start = time.monotonic()

    def plant():  # simulated time from 100 s on, the arm at rest at q0
        t = 100.0 + time.monotonic() - start
        stamp = Time(sec=int(t), nanosec=int((t % 1.0) * 1e9))
        clock.publish(Clock(clock=stamp))
        msg = JointState(name=JOINTS, position=Q0, velocity=[0.0] * 6)
        msg.header.stamp = stamp
        joint_states.publish(msg)
    probe.each_spin.append(plant)
    try:
        launch = launched("controller.launch.py", f"urdf_file:={urdf}",
                          f"params_file:={params_file}", "use_sim_time:=true")
        launch.wait_for_output(ACTIVE, spin=probe.spin_once)
        assert_managed_by_launch(probe, launch, "computed_torque_controller")
        probe.spin_until(lambda: commands.total >= 20, what="commands")
        assert_holds(probe, CONTROLLER, {**mine, "urdf_file": str(urdf), "use_sim_time": True,
                                         "autostart": False})
        before = SimpleNamespace(total=commands.total, msg=commands[-1].msg)
        returncode = launch.interrupt(spin=probe.spin_once)
        probe.spin_for(0.2)
    finally:
        probe.each_spin.remove(plant)
        probe.node.destroy_publisher(clock)
        probe.node.destroy_publisher(joint_states)
    launch.assert_clean_exit(returncode)
    assert_last_command_zero(commands, before)


def test_a_failed_configure_is_retried_by_hand_and_launch_activates_then(launched, probe, tmp_path):
    """The URDF is not there yet: launch's configure fails, the node stays unconfigured and launch
    says how to retry; once the file is there, ``ros2 lifecycle set ... configure`` (the real
    command) configures it and launch activates it."""
    urdf = tmp_path / "arm.urdf"
    launch = launched("controller.launch.py", f"urdf_file:={urdf}")
    launch.wait_for_output(rf"configure of {CONTROLLER} failed .*ros2 lifecycle set {CONTROLLER} "
                           "configure", spin=probe.spin_once)
    assert str(urdf) in launch.output(), "the node's log does not name the missing file"
    assert probe.lifecycle_state(CONTROLLER) == "unconfigured"
    urdf.write_text((ROOT / "urdf" / "puma560.urdf").read_text())
    retry = [ros2_executable(), "lifecycle", "set", CONTROLLER, "configure"]
    # without a daemon each command discovers the graph anew, and may not find the node in time
    probe.spin_until(lambda: "Transitioning successful" in probe.run(retry, check=False).stdout,
                     what="ros2 lifecycle set configure")
    launch.wait_for_output(ACTIVE, spin=probe.spin_once)
    probe.spin_until(lambda: probe.lifecycle_state(CONTROLLER) == "active", what="active")
    launch.assert_clean_exit(launch.interrupt(spin=probe.spin_once))


def _platform_setpoint():
    """The start of the paper's Path I: (0.1, 0, 0.4) m, yaw -0.2 rad, at rest."""
    return MultiDOFJointTrajectoryPoint(transforms=[Transform(
        translation=Vector3(x=0.1, y=0.0, z=0.4),
        rotation=Quaternion(z=math.sin(-0.1), w=math.cos(-0.1)))])


@pytest.mark.parametrize("launch_file", ["stewart.launch.py", "stewart_sim.launch.py"])
def test_stewart_launches_publish_forces_for_a_setpoint(launched, probe, launch_file):
    """stewart.launch.py with platform_file given (a managed node, brought up by launch);
    stewart_sim.launch.py with its default (the realisable platform), closed on the simulator."""
    realisable = share_file("config/stewart_dasgupta_realisable.yaml")
    managed = launch_file == "stewart.launch.py"
    forces = probe.subscribe(Float64MultiArray, "/stewart_platform/actuator_forces")
    setpoint = probe.node.create_publisher(MultiDOFJointTrajectoryPoint, "/stewart_platform/setpoint",
                                           10)
    launch = launched(launch_file, *([f"platform_file:={realisable}"] if managed else []))
    try:
        probe.wait_for_node("/stewart_platform")
        if managed:
            assert_managed_by_launch(probe, launch, "stewart_platform")
        else:
            assert probe.lifecycle_state("/stewart_platform") == "active"  # autostart
        probe.spin_until(lambda: setpoint.get_subscription_count() > 0, what="discovery")
        probe.publish_until(setpoint, _platform_setpoint(), lambda: forces.total >= 10,
                            what="actuator forces")
    finally:
        probe.node.destroy_publisher(setpoint)
    assert np.all(np.isfinite(forces[-1].msg.data)) and len(forces[-1].msg.data) == 6
    expected = {**config("stewart_platform.yaml", "stewart_platform"),
                "platform_file": str(realisable)}
    if managed:
        expected["autostart"] = False
    else:
        expected.update(control="computed_torque", use_sim_time=True)
        assert_holds(probe, "/stewart_simulator", {
            **config("stewart_simulator.yaml", "stewart_simulator"), "platform_file": str(realisable)})
    assert_holds(probe, "/stewart_platform", expected)
    launch.assert_clean_exit(launch.interrupt(spin=probe.spin_once))


def test_effort_feedforward_launch_fills_efforts_without_its_spawner(launched, probe):
    """spawn_controller:=false starts the node alone (no controller manager needed); a trajectory
    sent to it reaches the JTC's topic with every point's efforts filled."""
    forwarded = probe.subscribe(JointTrajectory, "/joint_trajectory_controller/joint_trajectory")
    trajectories = probe.node.create_publisher(JointTrajectory, "/effort_feedforward/joint_trajectory",
                                               10)
    launch = launched("effort_feedforward.launch.py", "spawn_controller:=false")
    try:
        launch.wait_for_output("Newton-Euler efforts", spin=probe.spin_once)
        assert list(launch.started()) == ["effort_feedforward-1"], "the spawner started"
        probe.spin_until(lambda: trajectories.get_subscription_count() > 0, what="discovery")
        probe.publish_until(trajectories, JointTrajectory(joint_names=JOINTS, points=[
            JointTrajectoryPoint(positions=Q0, velocities=[0.0] * 6, accelerations=[0.0] * 6)]),
            lambda: forwarded, what="the forwarded trajectory")
    finally:
        probe.node.destroy_publisher(trajectories)
    efforts = forwarded[-1].msg.points[0].effort
    assert len(efforts) == 6 and np.any(np.array(efforts) != 0.0)  # gravity at q0
    assert_holds(probe, "/effort_feedforward", {
        **config("effort_feedforward.yaml", "effort_feedforward"),
        "urdf_file": str(share_file("urdf/puma560.urdf")), "use_sim_time": False})
    launch.assert_clean_exit(launch.interrupt(spin=probe.spin_once))


# ------------------------------------------------------------------------------ Gazebo
GAZEBO = "puma560_gazebo.launch.py"
#: what puma560_gazebo.launch.py starts beyond our controller (package.xml declares them)
GAZEBO_PACKAGES = ("ros_gz_sim", "ros_gz_bridge", "robot_state_publisher", "controller_manager",
                   "gz_ros2_control", "joint_state_broadcaster", "forward_command_controller")


def _missing_packages(names) -> list[str]:
    prefixes = environment()["AMENT_PREFIX_PATH"].split(os.pathsep)
    return [n for n in names if not any(
        Path(p, "share", "ament_index", "resource_index", "packages", n).is_file() for p in prefixes)]


def test_gazebo_launch_parses(probe):
    shown = probe.run([ros2_executable(), "launch", "robodyn_ros", GAZEBO, "--show-args"])
    assert "'gz_args':" in shown.stdout and "empty.sdf" in shown.stdout, shown.stdout


def test_gazebo_launch_brings_up_its_controller(launched, probe, tmp_path):
    part = tmp_path / "non_gazebo_part.launch.py"
    part.write_text(NON_GAZEBO_PART.format(path=str(share_file(f"launch/{GAZEBO}"))))
    launch = launched(part.name, argv=[ros2_executable(), "launch", str(part)])
    launch.wait_for_output(ACTIVE, spin=probe.spin_once)
    assert_managed_by_launch(probe, launch, "computed_torque_controller")
    assert_holds(probe, CONTROLLER, {**config("computed_torque_controller.yaml",
                                              "computed_torque_controller"),
                                     "use_sim_time": True, "autostart": False})
    # xacro expanded the Gazebo URDF: its gz_ros2_control plugin, our config found in the share
    description = probe.parameters(CONTROLLER, ["robot_description"])["robot_description"]
    assert "gz_ros2_control" in description and "$(find" not in description
    launch.assert_clean_exit(launch.interrupt(spin=probe.spin_once))


def test_gazebo_launch_whole(launched, probe):
    missing = _missing_packages(GAZEBO_PACKAGES)
    if missing:
        pytest.skip(f"Gazebo and ros2_control are not installed here ({', '.join(missing)} "
                    "missing): the launch's non-Gazebo part is tested above")
    commands = probe.subscribe(Float64MultiArray, COMMANDS)
    launch = launched(GAZEBO, "gz_args:=-r -s -v 1 empty.sdf")
    launch.wait_for_output(ACTIVE, timeout=2 * WAIT, spin=probe.spin_once)
    probe.spin_until(lambda: commands.total >= 100, what="commands on the Gazebo arm")
    launch.interrupt(spin=probe.spin_once)
    ours = {n: c for n, c in launch.exits().items() if n.startswith("computed_torque_controller")}
    assert ours and set(ours.values()) == {0}, launch.tail()
