"""control_msgs as the nodes use it (issue 37): the five interfaces' RIHS01 type hashes are Jazzy's,
so that MoveIt, ``ros2 action send_goal`` and a stock JTC client on a ROS install and our nodes
agree on the types over DDS. On the pip route they are the package's own definitions
(interfaces/control_msgs, built by ``make``); on a ROS install, the distribution's. A definition
changed in a name, a type or the order of a field changes its hash, and this test fails.

The pinned values are Jazzy's own, as its rosidl wrote them for control_msgs' jazzy branch
(the generated .json type descriptions), not read from our build."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import rclpy
from rclpy.node import Node

import control_msgs
from control_msgs.msg import JointTrajectoryControllerState

JAZZY = {
    "action/FollowJointTrajectory":
        "RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6",
    "msg/JointTolerance":
        "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    "msg/JointComponentTolerance":
        "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
    "msg/JointTrajectoryControllerState":
        "RIHS01_51d8dd89cc624cbe9daaeeb4d80d6de9b86168ffdc3be41fefc0953e3c26e480",
    "srv/QueryTrajectoryState":
        "RIHS01_4a0935dffef18bc5b9e101c9d03d84e681ecd4cebd724b8f11fde008751a325a",
}


def _share() -> Path:
    """The share directory of the control_msgs that imports (site-packages is
    PREFIX/lib/pythonX.Y/site-packages, the type descriptions PREFIX/share/control_msgs)."""
    return Path(control_msgs.__file__).resolve().parents[4] / "share" / "control_msgs"


@pytest.mark.parametrize("name", sorted(JAZZY))
def test_the_type_hash_is_jazzys(name):
    described = json.loads((_share() / f"{name}.json").read_text())
    hashes = {h["type_name"]: h["hash_string"] for h in described["type_hashes"]}
    assert hashes[f"control_msgs/{name}"] == JAZZY[name]


def test_a_publisher_announces_jazzys_hash_on_the_wire():
    """What DDS discovery carries for the controller's state topic, not only the file."""
    rclpy.init()
    try:
        node = Node("hash_probe")
        publisher = node.create_publisher(JointTrajectoryControllerState, "state_hash", 1)
        [info] = node.get_publishers_info_by_topic(publisher.topic_name)
        assert str(info.topic_type_hash) == JAZZY["msg/JointTrajectoryControllerState"]
        node.destroy_node()
    finally:
        rclpy.shutdown()


def test_without_control_msgs_the_nodes_say_how_to_get_it():
    """No stand-in: a machine where control_msgs does not import gets the reason and the way."""
    blocked = ("import sys, importlib.abc\n"
               "class Block(importlib.abc.MetaPathFinder):\n"
               "    def find_spec(self, name, *_):\n"
               "        if name.split('.')[0] == 'control_msgs':\n"
               "            raise ImportError(f'No module named {name!r}')\n"
               "sys.meta_path.insert(0, Block())\n"
               "import robodyn_ros.nodes.controller\n")
    run = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1
    assert "control_msgs is not importable" in run.stderr
    assert "ros-jazzy-control-msgs" in run.stderr and "make venv" in run.stderr
