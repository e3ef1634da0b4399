"""PUMA 560 in Gazebo (Harmonic, via gz_ros2_control) driven by computed_torque_controller.

    ros2 launch robodyn_ros puma560_gazebo.launch.py [gz_args:='-r -s -v 1 empty.sdf']

Gazebo loads urdf/puma560_gazebo.urdf, whose gz_ros2_control plugin reads config/ros2_controllers.yaml;
joint_state_broadcaster and effort_controller are spawned in turn, then our controller starts and
publishes on /effort_controller/commands.  Needs ros-jazzy-ros-gz, ros-jazzy-gz-ros2-control,
ros-jazzy-ros2-controllers and ros-jazzy-xacro.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robodyn_ros.nodes.launching import managed_node


def generate_launch_description():
    share = FindPackageShare("robodyn_ros")
    urdf_file = PathJoinSubstitution([share, "urdf", "puma560_gazebo.urdf"])
    controllers_file = PathJoinSubstitution([share, "config", "ros2_controllers.yaml"])
    controller_params = PathJoinSubstitution([share, "config", "computed_torque_controller.yaml"])
    # xacro resolves the $(find robodyn_ros) in the plugin's <parameters>; value_type=str keeps the
    # XML from being parsed as YAML.
    robot_description = ParameterValue(
        Command([FindExecutable(name="xacro"), " ", urdf_file]), value_type=str)

    gazebo = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare("ros_gz_sim"), "launch", "gz_sim.launch.py"])),
        launch_arguments=[("gz_args", LaunchConfiguration("gz_args"))],
    )
    robot_state_publisher = Node(
        package="robot_state_publisher",
        executable="robot_state_publisher",
        output="screen",
        parameters=[{"robot_description": robot_description, "use_sim_time": True}],
    )
    spawn_robot = Node(
        package="ros_gz_sim",
        executable="create",
        output="screen",
        arguments=["-topic", "robot_description", "-name", "puma560", "-allow_renaming", "true"],
    )
    clock_bridge = Node(
        package="ros_gz_bridge",
        executable="parameter_bridge",
        arguments=["/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock"],
        output="screen",
    )
    joint_state_broadcaster = Node(
        package="controller_manager",
        executable="spawner",
        arguments=["joint_state_broadcaster"],
    )
    effort_controller = Node(
        package="controller_manager",
        executable="spawner",
        arguments=["effort_controller", "--param-file", controllers_file],
    )
    # managed as ros2_control manages its controllers: configured, then activated, by launch
    computed_torque_controller = managed_node(
        package="robodyn_ros",
        executable="computed_torque_controller",
        name="computed_torque_controller",
        output="screen",
        parameters=[controller_params,
                    {"use_sim_time": True, "robot_description": robot_description}],
    )

    # Controllers can only be spawned once the model (and its controller manager) exists, and our
    # controller starts once its command topic has a subscriber.
    def after(action, then):
        return RegisterEventHandler(OnProcessExit(target_action=action,
                                                  on_exit=then if isinstance(then, list) else [then]))

    return LaunchDescription([
        DeclareLaunchArgument("gz_args", default_value="-r -v 1 empty.sdf",
                              description="arguments for gz sim (world file last)"),
        gazebo,
        clock_bridge,
        robot_state_publisher,
        spawn_robot,
        after(spawn_robot, joint_state_broadcaster),
        after(joint_state_broadcaster, effort_controller),
        after(effort_controller, computed_torque_controller),
    ])
