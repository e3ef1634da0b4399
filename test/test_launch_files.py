"""What the real launches (test_launch_real.py: every launch file under ros2 launch, each node's
parameters read back from it) cannot show, read from the files: the package files that only the
parts a real run here cannot start name (the spawners' controller YAML) exist, package.xml
declares every package a launch file needs (so that rosdep install brings it), the joint names
agree across the URDFs, the ros2_control configuration and the node configuration, and the JTC
configuration is what effort_feedforward feeds."""
import ast
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))
def _calls(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else None
            if called == name:
                yield node


def _keyword(call, name):
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _package_paths(tree):
    """Relative paths built as PathJoinSubstitution([share, "a", "b"]) or
    os.path.join(share, "a", "b") from a package share directory."""
    for call in [*_calls(tree, "PathJoinSubstitution"), *_calls(tree, "join")]:
        parts = call.args[0].elts if call.args and isinstance(call.args[0], ast.List) \
            else call.args
        if len(parts) > 1 and isinstance(parts[0], ast.Name) and parts[0].id == "share" and \
                all(isinstance(p, ast.Constant) for p in parts[1:]):
            yield "/".join(p.value for p in parts[1:])


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_names_only_files_that_exist(path):
    tree = ast.parse(path.read_text())
    for relative in _package_paths(tree):
        assert (ROOT / relative).is_file(), f"{path.name} names {relative}, which does not exist"


def _exec_depends():
    return {e.text.strip() for e in ET.parse(ROOT / "package.xml").getroot().findall("exec_depend")}


def _referenced_packages(tree):
    """Packages a launch file names: FindPackageShare("x"), get_package_share_directory("x"),
    Node(package="x")."""
    for name in ("FindPackageShare", "get_package_share_directory"):
        for call in _calls(tree, name):
            if call.args and isinstance(call.args[0], ast.Constant):
                yield call.args[0].value
    for call in _calls(tree, "Node"):
        package = _keyword(call, "package")
        if isinstance(package, ast.Constant):
            yield package.value


# the package of a ros2_control hardware plugin whose prefix is not its package's name
_PLUGIN_PACKAGES = {"mock_components": "hardware_interface"}


def _needed_packages(path):
    """What a launch file starts or finds (and the executables it finds), the ros2_control
    hardware plugin of every URDF it names, and the controllers of the YAML it names."""
    tree = ast.parse(path.read_text())
    needed = set(_referenced_packages(tree)) - {"robodyn_ros"}
    for call in _calls(tree, "FindExecutable"):     # an executable of the package of its name
        needed.add(_keyword(call, "name").value)
    for relative in _package_paths(tree):
        if relative.endswith(".urdf"):
            for plugin in ET.parse(ROOT / relative).getroot().iterfind("ros2_control/hardware/plugin"):
                prefix = plugin.text.strip().split("/")[0]
                needed.add(_PLUGIN_PACKAGES.get(prefix, prefix))
        if relative == "config/ros2_controllers.yaml":
            manager = yaml.safe_load((ROOT / relative).read_text())["controller_manager"]
            needed |= {c["type"].split("/")[0] for c in manager["ros__parameters"].values()
                       if isinstance(c, dict) and "type" in c}
    return needed


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_package_xml_declares_what_a_launch_file_needs(path):
    """So that rosdep install brings it."""
    missing = _needed_packages(path) - _exec_depends()
    assert not missing, f"{path.name} needs {sorted(missing)}: add them to package.xml as exec_depend"


def test_the_gazebo_launch_needs_are_seen():
    """The check above sees the Gazebo route's packages, controllers and plugin (it can fail)."""
    assert _needed_packages(ROOT / "launch" / "puma560_gazebo.launch.py") == {
        "ros_gz_sim", "ros_gz_bridge", "robot_state_publisher", "controller_manager", "xacro",
        "gz_ros2_control", "joint_state_broadcaster", "forward_command_controller"}
    assert "hardware_interface" in _needed_packages(ROOT / "launch" / "controller.launch.py")


def _urdf_joints(path):
    robot = ET.parse(path).getroot()
    moving = [j.get("name") for j in robot.findall("joint") if j.get("type") != "fixed"]
    ros2_control = [j.get("name") for j in robot.findall("ros2_control/joint")]
    return moving, ros2_control


@pytest.mark.parametrize("urdf", ["puma560.urdf", "puma560_gazebo.urdf"])
def test_joint_names_agree_across_urdf_controllers_and_node_config(urdf):
    moving, ros2_control = _urdf_joints(ROOT / "urdf" / urdf)
    controllers = yaml.safe_load((ROOT / "config" / "ros2_controllers.yaml").read_text())
    effort = controllers["effort_controller"]["ros__parameters"]
    controller = yaml.safe_load((ROOT / "config" / "computed_torque_controller.yaml").read_text())
    controller = controller["computed_torque_controller"]["ros__parameters"]
    simulator = yaml.safe_load((ROOT / "config" / "arm_simulator.yaml").read_text())
    simulator = simulator["arm_simulator"]["ros__parameters"]
    assert ros2_control == moving
    assert effort["joints"] == moving
    assert effort["interface_name"] == "effort"
    assert controller["joints"] == moving == simulator["joints"]
    # the controller commands what ros2_control's forward-command controller listens on
    assert controller["command_topic"] == "/effort_controller/commands" == \
        simulator["command_topic"]


def test_jtc_feedforward_config_is_what_effort_feedforward_feeds():
    """The JTC of config/jtc_feedforward.yaml commands efforts (so it adds the point efforts to
    its PID), on the URDF's joints, with a gain set per joint; effort_feedforward names it."""
    moving, _ = _urdf_joints(ROOT / "urdf" / "puma560.urdf")
    jtc_config = yaml.safe_load((ROOT / "config" / "jtc_feedforward.yaml").read_text())
    node = yaml.safe_load((ROOT / "config" / "effort_feedforward.yaml").read_text())
    name = node["effort_feedforward"]["ros__parameters"]["controller_name"]
    jtc = jtc_config[name]["ros__parameters"]
    assert jtc_config["controller_manager"]["ros__parameters"][name]["type"] == \
        "joint_trajectory_controller/JointTrajectoryController" == jtc["type"]
    assert jtc["command_interfaces"] == ["effort"]
    assert jtc["state_interfaces"] == ["position", "velocity"]
    assert jtc["joints"] == moving
    assert set(jtc["gains"]) == set(moving)
    assert all(g["ff_velocity_scale"] == 0.0 and g["p"] > 0 for g in jtc["gains"].values())
    launch = ast.parse((ROOT / "launch" / "effort_feedforward.launch.py").read_text())
    spawned = [_keyword(c, "arguments").elts[0].value for c in _calls(launch, "Node")
               if _keyword(c, "executable").value == "spawner"]
    assert spawned == [name]
