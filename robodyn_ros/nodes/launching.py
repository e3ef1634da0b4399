"""For the launch files: a node of this package in its enclave, and a managed (lifecycle) node
brought up by launch as a ros2_control controller is by its spawner — configure once the
process runs, then activate (unless told not to, as the spawner's ``--inactive``), each by the
node's change_state service; later transitions (``ros2 lifecycle set``) are the user's. The
managed node's own ``autostart`` is switched off so that launch alone drives it; a failed
configure leaves it unconfigured, saying why, for ``ros2 lifecycle set`` to retry, and launch
activates it then.

Every node gets ``--enclave /robodyn_ros/<name>`` (config/robodyn_ros.policy.xml,
doc/security.md): used when ROS_SECURITY_ENABLE=true, ignored otherwise, so the same launch runs
with security on or off. Under security, ``ros2 launch`` itself runs with
ROS_SECURITY_ENCLAVE_OVERRIDE=/robodyn_ros/launcher, which may bring the managed nodes up and
nothing more.

Imported by launch files only (``launch`` and ``launch_ros`` come with a ROS install)."""
import contextlib
import threading
import time

from .security import enclave


def package_node(**node_arguments):
    """launch_ros's Node (``node_arguments`` as for it) in the enclave of its ``name``."""
    from launch_ros.actions import Node
    return Node(**_in_enclave(node_arguments))


def _in_enclave(node_arguments):
    """``--enclave``, and the same as ROS_SECURITY_ENCLAVE_OVERRIDE, which rcl prefers to it: the
    launch process itself runs in the launcher's enclave through that variable (its node drives
    the lifecycle), and its children would inherit it."""
    name = enclave(node_arguments["name"])
    node_arguments["ros_arguments"] = [*node_arguments.get("ros_arguments", []),
                                       "--enclave", name]
    node_arguments["additional_env"] = {**node_arguments.get("additional_env", {}),
                                        "ROS_SECURITY_ENCLAVE_OVERRIDE": name}
    return node_arguments


def managed_node(activate=True, **node_arguments):
    """[the LifecycleNode, what brings it up] for a LaunchDescription; ``node_arguments`` as for
    launch_ros.actions.LifecycleNode (``namespace`` defaults to ''), the node in the enclave of its
    ``name``. ``activate``: whether launch activates it once configured (a bool, or a launch
    substitution such as a LaunchConfiguration of 'true' or 'false')."""
    from launch.actions import OpaqueFunction, RegisterEventHandler
    from launch.conditions import evaluate_condition_expression
    from launch.event_handlers import OnProcessStart
    from launch_ros.actions import LifecycleNode

    node_arguments.setdefault("namespace", "")
    node_arguments["parameters"] = [*node_arguments.get("parameters", []), {"autostart": False}]
    node = LifecycleNode(**_in_enclave(node_arguments))

    def bring_up(context):
        active = activate if isinstance(activate, bool) else \
            evaluate_condition_expression(context, [activate])
        context.add_completion_future(
            context.asyncio_loop.run_in_executor(None, BringUp.launched(context, node, active)))
    return [node, RegisterEventHandler(OnProcessStart(target_action=node,
                                                      on_start=[OpaqueFunction(function=bring_up)]))]


class BringUp:
    """Configure ``node`` (a launched LifecycleNode), then, unless ``activate`` is false, activate
    it, through its change_state service, in a thread of launch's.

    Not through launch_ros's lifecycle events: they follow the node's ~/transition_event, a
    volatile topic, and launch's subscription may not have matched the node's publisher yet when
    the first configure ends; that event is then lost and the node stays inactive (ros2/rcl#1166).
    A new client's first answer can be lost the same way, so whether the node is configured is
    also asked of its get_state, again each second, until it answers. A configure that fails
    leaves the node unconfigured, saying so here: it is activated once a configure by hand
    succeeds. Gives up when the node's process ends or launch shuts down."""

    def __init__(self, ros, name, ended, shut_down, log, activate: bool = True):
        """``ros``: the rclpy node to ask through; ``name``: the lifecycle node's; ``ended``: a
        future done once its process has ended; ``shut_down()``: whether launch shuts down."""
        from lifecycle_msgs.srv import ChangeState, GetState

        self.ros, self.name, self.ended, self.shut_down, self.log = ros, name, ended, shut_down, log
        self.activate = activate
        self.change = ros.create_client(ChangeState, f"{name}/change_state")
        self.get = ros.create_client(GetState, f"{name}/get_state")

    @classmethod
    def launched(cls, context, node, activate: bool = True):
        """The bring-up of ``node`` (a LifecycleNode action) through launch's ROS node."""
        from launch.logging import get_logger
        from launch_ros.ros_adapters import get_ros_node
        return cls(get_ros_node(context), node.node_name, node.get_asyncio_future(),
                   lambda: context.is_shutdown, get_logger(__name__), activate)

    def __call__(self):
        from rclpy.exceptions import InvalidHandle
        try:
            self._bring_up()
        except InvalidHandle:
            if self.running():
                raise
            # Ctrl-C meanwhile: launch destroyed its ROS node, these clients with it (the error
            # made ros2 launch exit 1)
        finally:
            with contextlib.suppress(InvalidHandle):
                self.ros.destroy_client(self.change)
                self.ros.destroy_client(self.get)

    def _bring_up(self):
        from lifecycle_msgs.msg import State, Transition
        configure = self.request(Transition.TRANSITION_CONFIGURE)
        # not when activated by hand meanwhile
        if configure is not None and self.configured(configure) == State.PRIMARY_STATE_INACTIVE:
            if not self.activate:
                self.log.info(f"{self.name} configured and left inactive (activate:=false): "
                              f"`ros2 lifecycle set {self.name} activate` starts it")
                return
            activate = self.request(Transition.TRANSITION_ACTIVATE)
            while activate is not None and self.running():
                if answered(activate, 1.0):
                    if not activate.result().success:
                        self.log.error(f"activate of {self.name} failed (its log says why)")
                    return

    def running(self) -> bool:
        return not (self.shut_down() or self.ended.done())

    def request(self, transition_id):
        """The future answer to the transition, once the service is there; None if never."""
        while self.running():
            if self.change.wait_for_service(timeout_sec=1.0):
                request = self.change.srv_type.Request()
                request.transition.id = transition_id
                return self.change.call_async(request)
        return None

    def configured(self, configure):
        """The node's state once it is configured (inactive, or active by hand), from
        configure's answer or else, when that failed or is lost, from get_state each second;
        None if the node's process ends or launch shuts down first."""
        from lifecycle_msgs.msg import State
        told = False
        while self.running():
            if answered(configure, 1.0):
                if configure.result().success:
                    return State.PRIMARY_STATE_INACTIVE
                if not told:
                    told = True
                    self.log.error(f"configure of {self.name} failed (its log says why): "
                                   f"`ros2 lifecycle set {self.name} configure` retries it, "
                                   "and launch activates it then")
                time.sleep(1.0)
            state = self.current_state()
            if state in (State.PRIMARY_STATE_INACTIVE, State.PRIMARY_STATE_ACTIVE):
                return state
        return None

    def current_state(self):
        """The node's state id, or None without an answer within a second."""
        if not self.get.service_is_ready():
            return None
        future = self.get.call_async(self.get.srv_type.Request())
        if answered(future, 1.0):
            return future.result().current_state.id
        self.get.remove_pending_request(future)
        return None


def answered(future, timeout: float) -> bool:
    """Whether the rclpy ``future`` is done, waiting up to ``timeout`` s for it."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    return done.wait(timeout)
