"""The parameters every launch file gives the package's nodes, against the nodes' schemas, read
from the files without launch installed (the pip route has no launch; test_launch_real.py reads
them back from nodes started by the real ``ros2 launch`` where a ROS install provides it).

Each ``package_node`` / ``managed_node`` call of a launch file is read from its syntax tree: its
``executable``, and each entry of its ``parameters``: a dict written in the file (its keys; its
values where they are constants) or a YAML file of the package's config/ (the ``ros__parameters``
under the node's name or ``/**``). Every name must be one the node declares, every constant value
must pass the node's own check (type, bounds, choices). A value the launch computes (a launch
argument, a substitution) is checked by name only: that is what this reading cannot honestly do."""
import ast
from pathlib import Path

import pytest
import yaml

from robodyn_ros.nodes import controller, feedforward, simulator, stewart_platform, stewart_simulator

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = {"computed_torque_controller": controller.schema, "arm_simulator": simulator.schema,
           "effort_feedforward": feedforward.schema, "stewart_platform": stewart_platform.schema,
           "stewart_simulator": stewart_simulator.schema}
ROS_OWN = {"use_sim_time"}   # every rclpy node's own parameter, in no schema of ours
UNKNOWN = object()           # a value the launch computes


def _constant(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return UNKNOWN


def _named(tree):
    """What a launch file names: its variables (``x = ...``) and the defaults of its launch
    arguments (``DeclareLaunchArgument("x", default_value=...)``), each to its expression."""
    named = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            named[("variable", node.targets[0].id)] = node.value
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "DeclareLaunchArgument":
            default = {k.arg: k.value for k in node.keywords}.get("default_value")
            if default is not None:
                named[("argument", _constant(node.args[0]))] = default
    return named


def _resolved(node, named):
    """``node`` with a variable or a LaunchConfiguration replaced by what it stands for."""
    if isinstance(node, ast.Name) and ("variable", node.id) in named:
        return _resolved(named[("variable", node.id)], named)
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LaunchConfiguration" \
            and ("argument", _constant(node.args[0])) in named:
        return _resolved(named[("argument", _constant(node.args[0]))], named)
    return node


def _config_file(node):
    """config/<file>.yaml of ``PathJoinSubstitution([share, "config", "<file>.yaml"])`` or
    ``os.path.join(share, "config", "<file>.yaml")``, or None."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) \
            in ("PathJoinSubstitution", "join"):
        parts = node.args[0].elts if getattr(node.func, "id", None) == "PathJoinSubstitution" \
            else node.args
        parts = [_constant(p) for p in parts[1:]]
        if all(isinstance(p, str) for p in parts) and parts[0] == "config":
            return ROOT.joinpath(*parts)
    return None


def given_parameters(path):
    """[(executable, name, {parameter: value or UNKNOWN}, where)] for every package node of the
    launch file ``path``."""
    found, tree = [], ast.parse(path.read_text())
    named = _named(tree)
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) in
                ("package_node", "managed_node")):
            continue
        keywords = {k.arg: k.value for k in call.keywords}
        executable, name = _constant(keywords["executable"]), _constant(keywords["name"])
        entries = keywords["parameters"].elts if "parameters" in keywords else []
        for entry in (_resolved(e, named) for e in entries):
            if isinstance(entry, ast.Dict):
                given = {_constant(k): _constant(v) for k, v in zip(entry.keys, entry.values)}
                found.append((executable, name, given, f"{path.name}: the dict"))
            elif (config := _config_file(entry)) is not None:
                document = yaml.safe_load(config.read_text())
                section = document.get(name, document.get("/**"))
                assert section is not None, f"{config.name} has no section for {name} nor /**"
                found.append((executable, name, section["ros__parameters"],
                              f"{path.name}: {config.name}"))
            else:
                pytest.fail(f"{path.name}: a parameters entry this test cannot read: "
                            f"{ast.unparse(entry)}")
    return found


CASES = [(path, case) for path in sorted((ROOT / "launch").glob("*.launch.py"))
         for case in given_parameters(path)]


def test_every_launch_file_starts_a_node_of_the_package():
    assert {path.name for path, _ in CASES} == \
        {p.name for p in (ROOT / "launch").glob("*.launch.py")}


@pytest.mark.parametrize("path, case", CASES,
                         ids=[f"{p.name}:{c[1]}:{c[3].split(': ')[1]}" for p, c in CASES])
def test_the_parameters_a_launch_gives_are_the_nodes_own(path, case):
    executable, name, given, where = case
    specs = {spec.name: spec for spec in SCHEMAS[executable]()}
    unknown = sorted(set(given) - set(specs) - ROS_OWN)
    assert not unknown, f"{where}: {executable} declares no {unknown}"
    for parameter, value in given.items():
        if value is not UNKNOWN and parameter in specs:
            specs[parameter].check(value)   # raises with the reason


def test_a_misspelt_parameter_is_found(tmp_path):
    """The reading above can fail: a launch file with a parameter the node does not declare."""
    launch = tmp_path / "bad.launch.py"
    launch.write_text('package_node(package="robodyn_ros", executable="arm_simulator", '
                      'name="arm_simulator", parameters=[{"urdf_flie": "x.urdf"}])\n')
    [(executable, _, given, _)] = given_parameters(launch)
    assert set(given) - {s.name for s in SCHEMAS[executable]()} == {"urdf_flie"}


def _activations(path):
    """[(name, the activate it is given: True, False, or a launch argument's default)] for every
    managed_node call of the launch file ``path``; UNKNOWN for an expression this reading cannot
    follow."""
    tree = ast.parse(path.read_text())
    named, found = _named(tree), []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "managed_node":
            keywords = {k.arg: k.value for k in call.keywords}
            given = _constant(_resolved(keywords["activate"], named)) if "activate" in keywords \
                else True
            found.append((_constant(keywords["name"]), given))
    return found


def test_the_controller_launch_can_leave_the_node_inactive():
    """controller.launch.py's ``activate`` argument (the ros2_control spawner's ``--inactive``):
    given to the bring-up, true by default as the spawner activates; every other launch file
    activates its managed nodes. Each value is what launch's conditions read as a boolean."""
    activations = {path.name: _activations(path)
                   for path in sorted((ROOT / "launch").glob("*.launch.py"))}
    assert activations["controller.launch.py"] == [("computed_torque_controller", "true")]
    tree = ast.parse((ROOT / "launch" / "controller.launch.py").read_text())
    call = next(c for c in ast.walk(tree) if isinstance(c, ast.Call)
                and getattr(c.func, "id", None) == "managed_node")
    activate = {k.arg: k.value for k in call.keywords}["activate"]
    assert ast.unparse(activate) == "LaunchConfiguration('activate')"
    for name, found in activations.items():
        for node, given in found:
            assert given in (True, False) or str(given).lower() in ("true", "false", "1", "0"), \
                f"{name}: {node} activate={given!r}"
