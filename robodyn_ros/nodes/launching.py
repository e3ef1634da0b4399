"""For the launch files: a node of this package in its enclave, and a managed (lifecycle) node
brought up by launch_ros as a ros2_control controller is by its manager — configure once the
process runs, activate once it is inactive, once: later transitions (``ros2 lifecycle set``) are
the user's. The managed node's own ``autostart`` is switched off so that launch alone drives it; a
failed configure leaves it unconfigured, saying why, for ``ros2 lifecycle set`` to retry.

Every node gets ``--enclave /robodyn_ros/<name>`` (config/robodyn_ros.policy.xml,
doc/security.md): used when ROS_SECURITY_ENABLE=true, ignored otherwise, so the same launch runs
with security on or off. Under security, ``ros2 launch`` itself runs with
ROS_SECURITY_ENCLAVE_OVERRIDE=/robodyn_ros/operator.

Imported by launch files only (``launch`` and ``launch_ros`` come with a ROS install)."""
from .security import enclave


def package_node(**node_arguments):
    """launch_ros's Node (``node_arguments`` as for it) in the enclave of its ``name``."""
    from launch_ros.actions import Node
    return Node(**_in_enclave(node_arguments))


def _in_enclave(node_arguments):
    """``--enclave``, and the same as ROS_SECURITY_ENCLAVE_OVERRIDE, which rcl prefers to it: the
    launch process itself runs in the operator's enclave through that variable (its node drives
    the lifecycle), and its children would inherit it."""
    name = enclave(node_arguments["name"])
    node_arguments["ros_arguments"] = [*node_arguments.get("ros_arguments", []),
                                       "--enclave", name]
    node_arguments["additional_env"] = {**node_arguments.get("additional_env", {}),
                                        "ROS_SECURITY_ENCLAVE_OVERRIDE": name}
    return node_arguments


def managed_node(**node_arguments):
    """[the LifecycleNode, its configure, its activate-when-inactive] for a LaunchDescription;
    ``node_arguments`` as for launch_ros.actions.LifecycleNode (``namespace`` defaults to ''),
    the node in the enclave of its ``name``."""
    from launch.actions import EmitEvent, RegisterEventHandler
    from launch.events import matches_action
    from launch_ros.actions import LifecycleNode
    from launch_ros.event_handlers import OnStateTransition
    from launch_ros.events.lifecycle import ChangeState
    from lifecycle_msgs.msg import Transition

    node_arguments.setdefault("namespace", "")
    node_arguments["parameters"] = [*node_arguments.get("parameters", []), {"autostart": False}]
    node = LifecycleNode(**_in_enclave(node_arguments))

    def change(transition):
        return EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(node),
                                           transition_id=transition))
    # once: the first configure that succeeds (launch's, or a retry by hand after it failed) is
    # followed by activate; a later one by hand (after a cleanup) leaves the node inactive, as
    # configure does
    activate = RegisterEventHandler(OnStateTransition(
        target_lifecycle_node=node, start_state="configuring", goal_state="inactive",
        entities=[change(Transition.TRANSITION_ACTIVATE)], handle_once=True))
    return [node, activate, change(Transition.TRANSITION_CONFIGURE)]
