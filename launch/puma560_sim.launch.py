"""The PUMA 560 closed loop without hardware: arm_simulator and computed_torque_controller.

    ros2 launch robodyn_ros puma560_sim.launch.py
    ros2 topic pub --once /computed_torque_controller/joint_trajectory trajectory_msgs/msg/JointTrajectory \
      "{joint_names: [joint_1, joint_2, joint_3, joint_4, joint_5, joint_6],
        points: [{positions: [0.785, 0.524, 0.0, 0.785, 1.047, 1.571], time_from_start: {sec: 3}}]}"

The simulator publishes /clock, so every node runs on simulated time. `robodyn-ros demo puma` starts
the same nodes without the launch system and records the 004 §5 experiment.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from robodyn_ros.nodes.launching import managed_node, package_node


def generate_launch_description():
    share = FindPackageShare("robodyn_ros")
    urdf_file = LaunchConfiguration("urdf_file")
    return LaunchDescription([
        DeclareLaunchArgument("urdf_file",
                              default_value=PathJoinSubstitution([share, "urdf", "puma560.urdf"]),
                              description="URDF of the arm (simulated and controlled)"),
        package_node(
            package="robodyn_ros",
            executable="arm_simulator",
            name="arm_simulator",
            output="screen",
            parameters=[PathJoinSubstitution([share, "config", "arm_simulator.yaml"]),
                        {"urdf_file": urdf_file}],
        ),
        # managed as ros2_control manages its controllers: configured, then activated, by launch
        *managed_node(
            package="robodyn_ros",
            executable="computed_torque_controller",
            name="computed_torque_controller",
            output="screen",
            parameters=[PathJoinSubstitution([share, "config", "computed_torque_controller.yaml"]),
                        {"urdf_file": urdf_file, "use_sim_time": True}],
        ),
    ])
