"""The Stewart platform's closed loop on a simulated platform (needs launch_ros: a ROS 2 install,
or the venv after `make venv`): stewart_simulator (config/stewart_simulator.yaml) and
stewart_platform in control computed_torque (config/stewart_platform.yaml), both on the
simulator's clock and the realisable test manipulator (doc/stewart_closed_loop.md). Send the platform a trajectory on
/stewart_platform/trajectory. Another platform: platform_file:=/path/to/platform.yaml"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration

from robodyn_ros.nodes.launching import package_node


def generate_launch_description():
    share = get_package_share_directory("robodyn_ros")
    platform_file = LaunchConfiguration("platform_file")
    return LaunchDescription([
        DeclareLaunchArgument(
            "platform_file",
            default_value=os.path.join(share, "config", "stewart_dasgupta_realisable.yaml"),
            description="Stewart platform description (YAML) of the plant and the controller"),
        package_node(
            package="robodyn_ros",
            executable="stewart_simulator",
            name="stewart_simulator",
            output="screen",
            parameters=[os.path.join(share, "config", "stewart_simulator.yaml"),
                        {"platform_file": platform_file}],
        ),
        package_node(
            package="robodyn_ros",
            executable="stewart_platform",
            name="stewart_platform",
            output="screen",
            parameters=[os.path.join(share, "config", "stewart_platform.yaml"),
                        {"platform_file": platform_file, "control": "computed_torque",
                         "use_sim_time": True}],
        ),
    ])
