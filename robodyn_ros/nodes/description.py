"""The robot a node serves: from its parameters (``robot_description`` XML, else ``urdf_file``,
with ``xacro_args``), or else as published on ``robot_description``, as robot_state_publisher
publishes it and the Jazzy controller manager reads it."""
from __future__ import annotations

import pathlib
from collections.abc import Callable

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from ..dynamics.urdf import chain_layout
from .common import WARN, ConfigurationError, Diagnostics, Parameters


#: robot_state_publisher's robot_description: latched (transient local), reliable.
DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)


def when_described(node: Node, params: Parameters, setup: Callable[[str | None], None]) -> None:
    """``setup(None)`` now when the parameters name a description; otherwise subscribe
    ``robot_description`` (relative: /robot_description in the root namespace) and run
    ``setup(urdf)`` once one arrives, warning meanwhile. A description that fails is logged and
    the next one tried."""
    if describes_robot(params):
        setup(None)
        return

    waiting = ["waiting for /robot_description"]

    def arrived(msg):
        try:
            setup(msg.data)
        except ConfigurationError as exc:
            waiting[0] = f"the published robot_description does not configure: {exc}"
            node.get_logger().error(waiting[0])
            return
        node.destroy_subscription(subscription)
        status.destroy()

    subscription = node.create_subscription(String, "robot_description", arrived, DESCRIPTION_QOS)
    status = Diagnostics(node, lambda: (WARN, waiting[0], {}), params["diagnostic_period"])
    node.get_logger().warning("no robot_description or urdf_file: waiting for /robot_description")


def describes_robot(params: Parameters) -> bool:
    """Whether the parameters name a description (else a node waits for /robot_description)."""
    return bool(params["robot_description"].strip() or params["urdf_file"])


def robot_description_source(params: Parameters) -> tuple[str, list[str]]:
    """What describes the robot, and its xacro arguments: the URDF XML of ``robot_description``,
    or else the path ``urdf_file`` (any declared encoding; a .xacro file is expanded with
    ``xacro_args``). Parameters that name no description are a ConfigurationError; the loader
    (robodyn_ros.dynamics.description) judges the rest."""
    xml, path, xacro_args = params["robot_description"], params["urdf_file"], params["xacro_args"]
    if xml.strip():
        if not xml.lstrip("\ufeff \t\r\n").startswith("<"):
            raise ConfigurationError("robot_description is not URDF XML (it does not start with "
                                     "'<'); give a file's path as urdf_file")
        return xml, xacro_args   # xacro_args here are refused by the loader
    if not path:
        raise ConfigurationError(
            "no robot model: set robot_description (URDF XML, as robot_state_publisher takes it) "
            "or urdf_file (a path to a .urdf or .xacro file)")
    file = pathlib.Path(path).expanduser()
    if not file.is_file():
        raise ConfigurationError(f"urdf_file '{path}' does not exist or is not a file")
    return str(file), xacro_args


def _description(params, published):
    """(description, xacro arguments) the parameters name, or the URDF ``published`` on
    /robot_description when neither parameter is set."""
    if published is not None and not (params["robot_description"].strip() or params["urdf_file"]):
        return published, []
    return robot_description_source(params)


def load_model(params: Parameters, published: str | None = None):
    """The RobotModel of the chain the robot-description parameters name, or of the URDF
    ``published`` on /robot_description when neither parameter is set; with the joint friction
    of ``friction_file`` where the node has that parameter and it is set."""
    from robodyn_ros.dynamics import RobotModel
    from robodyn_ros.dynamics.friction import FrictionModel
    description, xacro_args = _description(params, published)
    try:
        model = RobotModel.from_urdf(description, root_link=params["root_link"] or None,
                                     tip_link=params["tip_link"] or None, xacro_args=xacro_args)
    except (ValueError, KeyError, OSError) as exc:
        raise ConfigurationError(f"cannot build the robot model from the URDF: {exc}") from exc
    path = params["friction_file"] if "friction_file" in params.table else ""
    if not path:
        return model
    try:
        return model.with_friction(FrictionModel.load(path, model.joint_names))
    except ValueError as exc:   # ModelError: the file and the joint named
        raise ConfigurationError(f"friction_file: {exc}") from None


def chain_of(params, published):
    """The ``ChainLayout`` of the URDF the node's model came from: its root and tip links and
    its movable joints (``movable[i].child``: the link joint i moves)."""
    source, xacro_args = _description(params, published)
    return chain_layout(source, params["root_link"] or None, params["tip_link"] or None, xacro_args)


def collision_shapes(params, published, model):
    """The collision shapes of the URDF the node's model came from, on the model's joints
    (``control.contact_location``: where a collision is located)."""
    from robodyn_ros.control.contact_location import link_shapes
    from robodyn_ros.dynamics.description import read_description
    from robodyn_ros.dynamics.link import ModelError
    source, xacro_args = _description(params, published)
    try:
        return link_shapes(model, read_description(source, xacro_args)[1])
    except (ModelError, ValueError, OSError) as exc:
        raise ConfigurationError(f"cannot read the URDF's collision shapes: {exc}") from exc
