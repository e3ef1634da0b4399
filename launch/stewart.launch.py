"""Start the stewart_platform node with config/stewart_platform.yaml (needs launch_ros: a ROS 2
install, or the venv after `make venv`). Override the platform with: ros2 launch robodyn_ros
stewart.launch.py platform_file:=/path/to/platform.yaml"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration

from robodyn_ros.nodes.launching import managed_node


def generate_launch_description():
    share = get_package_share_directory("robodyn_ros")
    platform_file = LaunchConfiguration("platform_file")
    return LaunchDescription([
        DeclareLaunchArgument(
            "platform_file", default_value=os.path.join(share, "config", "stewart_dasgupta.yaml"),
            description="Stewart platform description (YAML)"),
        # managed: configured, then activated, by launch
        *managed_node(
            package="robodyn_ros",
            executable="stewart_platform",
            name="stewart_platform",
            output="screen",
            parameters=[os.path.join(share, "config", "stewart_platform.yaml"),
                        {"platform_file": platform_file}],
        ),
    ])
