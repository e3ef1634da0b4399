"""For the launch files: a managed (lifecycle) node of this package, brought up by launch_ros as
a ros2_control controller is by its manager — configure once the process runs, activate once it
is inactive, once: later transitions (``ros2 lifecycle set``) are the user's. The node's own
``autostart`` is switched off so that launch alone drives it; a failed configure leaves it
unconfigured, saying why, for ``ros2 lifecycle set`` to retry.

Imported by launch files only (``launch`` and ``launch_ros`` come with a ROS install)."""


def managed_node(**node_arguments):
    """[the LifecycleNode, its configure, its activate-when-inactive] for a LaunchDescription;
    ``node_arguments`` as for launch_ros.actions.LifecycleNode (``namespace`` defaults to '')."""
    from launch.actions import EmitEvent, RegisterEventHandler
    from launch.events import matches_action
    from launch_ros.actions import LifecycleNode
    from launch_ros.event_handlers import OnStateTransition
    from launch_ros.events.lifecycle import ChangeState
    from lifecycle_msgs.msg import Transition

    node_arguments.setdefault("namespace", "")
    node_arguments["parameters"] = [*node_arguments.get("parameters", []), {"autostart": False}]
    node = LifecycleNode(**node_arguments)

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
