"""effort_feedforward in front of ros2_control's joint_trajectory_controller on the effort interface.

Needs a running controller manager whose hardware offers the joints' effort command and position
and velocity state interfaces (a real arm, or puma560_gazebo.launch.py after deactivating its
effort_controller, which claims the same interfaces). Spawns joint_trajectory_controller from
config/jtc_feedforward.yaml and starts the node that fills the trajectories' efforts:

    ros2 launch robodyn_ros effort_feedforward.launch.py urdf_file:=/path/to/robot.urdf \
        controllers_file:=/path/to/my_jtc.yaml use_sim_time:=false

Send trajectories to /effort_feedforward/joint_trajectory or goals to
/effort_feedforward/follow_joint_trajectory (MoveIt: the action_ns of the controller entry).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robodyn_ros.nodes.launching import package_node


def generate_launch_description():
    share = FindPackageShare("robodyn_ros")
    return LaunchDescription([
        DeclareLaunchArgument("urdf_file",
                              default_value=PathJoinSubstitution([share, "urdf", "puma560.urdf"]),
                              description="URDF of the arm (its inertias and friction give the efforts)"),
        DeclareLaunchArgument("params_file",
                              default_value=PathJoinSubstitution(
                                  [share, "config", "effort_feedforward.yaml"]),
                              description="parameter YAML of effort_feedforward"),
        DeclareLaunchArgument("controllers_file",
                              default_value=PathJoinSubstitution(
                                  [share, "config", "jtc_feedforward.yaml"]),
                              description="parameters of joint_trajectory_controller (effort interface)"),
        DeclareLaunchArgument("spawn_controller", default_value="true",
                              description="load and activate joint_trajectory_controller"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="true with Gazebo (/clock)"),
        Node(
            package="controller_manager",
            executable="spawner",
            arguments=["joint_trajectory_controller",
                       "--param-file", LaunchConfiguration("controllers_file")],
            condition=IfCondition(LaunchConfiguration("spawn_controller")),
        ),
        package_node(
            package="robodyn_ros",
            executable="effort_feedforward",
            name="effort_feedforward",
            output="screen",
            parameters=[LaunchConfiguration("params_file"),
                        {"urdf_file": LaunchConfiguration("urdf_file"),
                         "use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"),
                                                        value_type=bool)}],
        ),
    ])
