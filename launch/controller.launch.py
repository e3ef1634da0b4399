"""computed_torque_controller alone, for a real arm or a simulator that publishes /joint_states
and takes efforts on /effort_controller/commands (ros2_control's forward-command controller).

    ros2 launch robodyn_ros controller.launch.py urdf_file:=/path/to/robot.urdf \
        params_file:=/path/to/my_controller.yaml use_sim_time:=false activate:=false

Launch configures the controller, then activates it unless ``activate:=false`` (the
ros2_control spawner's ``--inactive``): configured and inactive, it commands nothing until
``ros2 lifecycle set /computed_torque_controller activate`` (doc/real_robot.md, the first
activation).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robodyn_ros.nodes.launching import managed_node


def generate_launch_description():
    share = FindPackageShare("robodyn_ros")
    return LaunchDescription([
        DeclareLaunchArgument("urdf_file",
                              default_value=PathJoinSubstitution([share, "urdf", "puma560.urdf"]),
                              description="URDF of the controlled arm"),
        DeclareLaunchArgument("params_file",
                              default_value=PathJoinSubstitution(
                                  [share, "config", "computed_torque_controller.yaml"]),
                              description="parameter YAML of the controller"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="true with Gazebo or arm_simulator (/clock)"),
        DeclareLaunchArgument("activate", default_value="true",
                              description="false: configured and left inactive, no command until "
                                          "`ros2 lifecycle set` activates it (the spawner's "
                                          "--inactive)"),
        # managed as ros2_control manages its controllers: configured, then activated, by launch
        *managed_node(
            activate=LaunchConfiguration("activate"),
            package="robodyn_ros",
            executable="computed_torque_controller",
            name="computed_torque_controller",
            output="screen",
            parameters=[LaunchConfiguration("params_file"),
                        {"urdf_file": LaunchConfiguration("urdf_file"),
                         "use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"),
                                                        value_type=bool)}],
        ),
    ])
