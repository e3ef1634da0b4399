"""The shipped SROS2 policy (config/robodyn_ros.policy.xml) against sros2 and against the nodes.

(a) sros2 makes a keystore with every enclave from it, and the permissions it signs are what
    ``nodes.security.permissions`` reads (so the graph check below judges the nodes by what DDS
    will enforce, not by a reading of our own);
(b) every node the package starts is started for real (rclpy over DDS, in the root namespace with
    its default names, as the launch files start it) and each topic, service and action it
    publishes, subscribes, serves or calls, as the ROS graph reports it, must be allowed to its
    enclave: a node that gains a topic fails here until the policy names it. Needs no security
    overlay: the graph is the same with security off.
And the claims of doc/security.md, read from the policy: only the controller may publish efforts,
only the operator may call the nodes' services or send them goals.
"""
import os
import time
import warnings
from pathlib import Path
from xml.etree import ElementTree

import pytest
from rclpy.node import Node
from rclpy.parameter import Parameter

from robodyn_ros.apps import security as security_command
from robodyn_ros.nodes.security import ENCLAVES, POLICY, enclave, permissions
from robodyn_ros.plumbing.resources import find_share_file

from conftest import URDF, Rig

PACKAGE_NODES = ("computed_torque_controller", "arm_simulator", "effort_feedforward",
                 "stewart_platform", "stewart_simulator")
COMMAND = "rt/effort_controller/commands"


@pytest.fixture(scope="module")
def grants():
    return permissions()


# ---------------------------------------------------------------------------- (a) sros2
def test_sros2_signs_every_enclave_with_the_permissions_read_here(tmp_path, grants):
    """By the package's own command (``robodyn-ros security KEYSTORE``, sros2's Python API)."""
    keystore = sros2_keystore()
    store = tmp_path / "keystore"
    with warnings.catch_warnings():  # cryptography's deprecation of sros2 0.13's curve class
        warnings.simplefilter("ignore")
        assert security_command.main([str(store)]) == 0
    assert set(keystore.get_enclaves(store)) == set(grants)
    for name, grant in grants.items():
        folder = store / "enclaves" / name.lstrip("/")
        for signed in ("cert.pem", "key.pem", "permissions.p7s", "governance.p7s",
                       "identity_ca.cert.pem", "permissions_ca.cert.pem"):
            assert (folder / signed).is_file(), (name, signed)
        assert (folder / "key.pem").stat().st_mode & 0o777 == 0o600, name
        root = ElementTree.parse(folder / "permissions.xml").getroot()
        (rule,) = [g for g in root.iter("grant")]
        assert rule.findtext("subject_name") == f"CN={name}"
        assert rule.findtext("default") == "DENY"
        assert {d.text for d in root.iter("id")} == {os.environ["ROS_DOMAIN_ID"]}
        for kind in ("publish", "subscribe"):
            listed = {t.text for e in root.iter(kind) for t in e.iter("topic")}
            assert listed - {"ros_discovery_info"} == getattr(grant, kind), (name, kind)


def test_every_profile_has_what_every_rclpy_node_needs(grants):
    """Written out in each profile (no XInclude, the policy says why): none may lack a part."""
    needs = ["describe_parameters", "get_parameter_types", "get_parameters", "list_parameters",
             "set_parameters", "set_parameters_atomically", "get_type_description"]
    root = ElementTree.parse(find_share_file(POLICY)).getroot()
    for element in root.iter("enclave"):
        grant = grants[element.get("path")]
        for profile in element.iter("profile"):
            node = f"/{profile.get('node')}"
            assert grant.may("publish", "rt/rosout") and grant.may("publish", "rt/parameter_events")
            assert grant.may("subscribe", "rt/clock")
            for service in needs:
                assert grant.may("publish", f"rr{node}/{service}Reply"), (node, service)
                assert grant.may("subscribe", f"rq{node}/{service}Request"), (node, service)


def test_the_policy_is_valid_in_the_sros2_policy_format():
    """Read with lxml against the format's schema (test/sros2_policy.xsd), sros2 or not: a
    misspelt element, a rule that is neither ALLOW nor DENY or a profile without its node fails
    here, where sros2 would refuse the policy when making the keystore."""
    from lxml import etree
    schema = etree.XMLSchema(etree.parse(str(Path(__file__).with_name("sros2_policy.xsd"))))
    policy = etree.parse(str(find_share_file(POLICY)))
    assert schema.validate(policy), schema.error_log
    bad = etree.fromstring(etree.tostring(policy))
    bad.find(".//topics").set("publish", "YES")
    assert not schema.validate(bad)


def sros2_keystore():
    try:
        from sros2 import keystore
    except ImportError as exc:
        pytest.skip(f"sros2 is not importable ({exc}): it comes with a ROS 2 install "
                    "(ros-jazzy-sros2), on no package registry")
    return keystore


def test_the_keystore_command_names_what_it_refuses(tmp_path, capsys):
    assert security_command.main([str(tmp_path / "ks"), "--also", str(tmp_path / "mine.xml")]) == 2
    assert f"policy {tmp_path / 'mine.xml'} does not exist" in capsys.readouterr().err
    sros2_keystore()
    (tmp_path / "notes.txt").write_text("not a keystore")
    assert security_command.main([str(tmp_path)]) == 2
    assert f"{tmp_path} is not empty and no keystore" in capsys.readouterr().err


def test_the_private_keys_are_left_readable_by_their_owner_only(tmp_path):
    """On the files whatever made them: sros2's layout, written with a 0644 umask."""
    files = ["private/ca.key.pem", "private/ca.cert.pem", "enclaves/robodyn_ros/operator/key.pem",
             "enclaves/robodyn_ros/operator/cert.pem", "enclaves/robodyn_ros/operator/permissions.p7s",
             "enclaves/robodyn_ros/computed_torque_controller/key.pem", "public/ca.cert.pem"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
        (tmp_path / name).chmod(0o644)
    protected = security_command.protect_private_keys(tmp_path)
    mode = {name: (tmp_path / name).stat().st_mode & 0o777 for name in files}
    assert {p.relative_to(tmp_path).as_posix() for p in protected} == \
        {n for n in files if n.startswith("private/") or n.endswith("key.pem")}
    assert all(mode[n] == 0o600 for n in files if n.startswith("private/") or n.endswith("key.pem"))
    assert all(mode[n] == 0o644 for n in files if n.endswith(("cert.pem", ".p7s")) and
               not n.startswith("private/"))   # certificates and permissions stay readable
    assert (tmp_path / "private").stat().st_mode & 0o777 == 0o700


# ---------------------------------------------------------------------------- the claims
def test_only_the_controller_may_publish_efforts(grants):
    assert [e for e, g in grants.items() if g.may("publish", COMMAND)] == \
        [enclave("computed_torque_controller")]


def test_only_the_operator_may_call_the_nodes_services_and_send_goals(grants):
    """A request (a parameter change, a lifecycle transition, ~/enable, a goal: all requests on
    DDS) to one of the package's nodes is granted to the operator only (and the managed nodes'
    transitions to the launcher)."""
    requests = {f"rq/{node}/{service}Request" for node in PACKAGE_NODES for service in (
        "set_parameters", "set_parameters_atomically")} | {f"rq/{service}Request" for service in (
            "computed_torque_controller/change_state", "stewart_platform/change_state",
            "computed_torque_controller/enable", "computed_torque_controller/hold",
            "computed_torque_controller/reset_estimates", "stewart_platform/enable",
            "arm_simulator/reset", "computed_torque_controller/follow_joint_trajectory/_action/send_goal",
            "effort_feedforward/follow_joint_trajectory/_action/send_goal")}
    for name, grant in grants.items():
        asked = {r for r in requests if grant.may("publish", r)}
        if name == enclave("operator"):
            assert asked == requests
        elif name == enclave("launcher"):   # the bring-up's transitions (the test below)
            assert asked == {r for r in requests if r.endswith("/change_stateRequest")}
        else:
            assert not asked, name
            assert not {p for p in grant.publish if p.startswith("rq/") and
                        p.split("/")[1] in PACKAGE_NODES}, name


# ---------------------------------------------------------------------------- (b) the nodes
def _controller(**params):
    from robodyn_ros.nodes.controller import ComputedTorqueController
    return ComputedTorqueController(parameter_overrides=_overrides(params))


def _feedforward(**params):
    from robodyn_ros.nodes.feedforward import EffortFeedforwardNode
    return EffortFeedforwardNode(parameter_overrides=_overrides(params))


def _simulator(**params):
    from robodyn_ros.nodes.simulator import ArmSimulator
    return ArmSimulator(parameter_overrides=_overrides(params))


def _stewart_platform(**params):
    from robodyn_ros.nodes.stewart_platform import StewartPlatformNode
    return StewartPlatformNode(parameter_overrides=_overrides(params))


def _stewart_simulator(**params):
    from robodyn_ros.nodes.stewart_simulator import StewartSimulator
    return StewartSimulator(parameter_overrides=_overrides(params))


def _demo():
    """The node of robodyn-ros demo's own process (arm_loop.Loop, without a bag)."""
    from robodyn_ros.apps.demos.arm_loop import Loop
    return Loop(None).node


def _overrides(params):
    return [Parameter(k, value=v) for k, v in params.items()]


#: every node the package starts, in the configurations that differ in what they use
STARTS = {
    "controller on simulated time": lambda: _controller(urdf_file=URDF, use_sim_time=True),
    "controller waiting for /robot_description": lambda: _controller(),
    "controller, adaptive law": lambda: _controller(urdf_file=URDF,
                                                    control_law="adaptive_computed_torque"),
    "effort_feedforward on simulated time": lambda: _feedforward(urdf_file=URDF,
                                                                 use_sim_time=True),
    "effort_feedforward waiting for /robot_description": lambda: _feedforward(),
    "arm_simulator": lambda: _simulator(urdf_file=URDF),
    "stewart_platform on simulated time": lambda: _stewart_platform(use_sim_time=True),
    "stewart_simulator": lambda: _stewart_simulator(),
    "puma560_demo (robodyn-ros demo puma)": _demo,
}


def used(probe: Node, name: str) -> set:
    """(kind, DDS topic) of everything node ``name`` (root namespace) has in the graph: a
    service's server subscribes its requests and publishes its replies, a client the reverse."""
    found = set()
    for topic, _ in probe.get_publisher_names_and_types_by_node(name, "/"):
        found.add(("publish", f"rt{topic}"))
    for topic, _ in probe.get_subscriber_names_and_types_by_node(name, "/"):
        found.add(("subscribe", f"rt{topic}"))
    for service, _ in probe.get_service_names_and_types_by_node(name, "/"):
        found |= {("subscribe", f"rq{service}Request"), ("publish", f"rr{service}Reply")}
    for service, _ in probe.get_client_names_and_types_by_node(name, "/"):
        found |= {("publish", f"rq{service}Request"), ("subscribe", f"rr{service}Reply")}
    return found


@pytest.mark.usefixtures("ros")
@pytest.mark.parametrize("start", list(STARTS), ids=list(STARTS))
def test_every_node_keeps_to_its_enclave(start, grants):
    rig = Rig()   # the probe node asks the graph; the node under test is in the root namespace
    try:
        with warnings.catch_warnings():  # the PUMA data's link-3 inertia is not physical
            warnings.simplefilter("ignore")
            node = rig.add(STARTS[start]())
        name = node.get_name()
        grant = grants.get(enclave(name))
        assert grant is not None, f"no enclave {enclave(name)} in the policy for node {name}"
        # the graph of a node of this process is known at once; spin a little for its timers
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            rig.executor.spin_once(timeout_sec=0.05)
        found = used(rig.probe, name)
        assert ("publish", "rt/rosout") in found or name == "puma560_demo"  # the graph answered
        refused = sorted(f"{kind} {topic}" for kind, topic in found if not grant.may(kind, topic))
        assert not refused, (f"{name} uses what enclave {enclave(name)} of "
                             f"config/robodyn_ros.policy.xml does not allow:\n  " + "\n  ".join(refused))
        # and the operator may call every service it serves (its own type description aside)
        operator = grants[enclave("operator")]
        served = {t for kind, t in found if t.startswith("rq/")
                  and not t.endswith("/get_type_descriptionRequest") and kind == "subscribe"}
        assert name == "puma560_demo" or all(operator.may("publish", t) for t in served), \
            sorted(t for t in served if not operator.may("publish", t))
    finally:
        rig.close()


def test_every_enclave_is_one_of_the_package(grants):
    assert all(name.startswith(ENCLAVES) for name in grants)
    nodes = {e.removeprefix(ENCLAVES) for e in grants}
    assert nodes == {*PACKAGE_NODES, "puma560_demo", "stewart_demo", "operator", "launcher"}


MANAGED = ("computed_torque_controller", "stewart_platform")


def test_the_launcher_may_bring_the_managed_nodes_up_and_nothing_more(grants):
    """ros2 launch on the robot runs in /robodyn_ros/launcher: what BringUp asks (change_state,
    get_state) and launch_ros's LifecycleNode follows (transition_event), and not one request
    more: no parameter, no goal, no ~/enable, no set point, no effort."""
    launcher = grants[enclave("launcher")]
    for node in MANAGED:
        for service in ("change_state", "get_state"):
            assert launcher.may("publish", f"rq/{node}/{service}Request")
            assert launcher.may("subscribe", f"rr/{node}/{service}Reply")
        assert launcher.may("subscribe", f"rt/{node}/transition_event")
    requests = {p for p in launcher.publish if p.startswith("rq/")}
    assert requests == {f"rq/{node}/{service}Request" for node in MANAGED
                        for service in ("change_state", "get_state")}
    assert not {p for p in launcher.publish if p.startswith("rt/")} - {
        "rt/rosout", "rt/parameter_events"}
