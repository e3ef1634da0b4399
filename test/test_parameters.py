"""The parameter schemas (robodyn_ros/params/*.yaml): each loads, every default passes its own
checks, wrong types are refused, and a control law's parameters come from the law itself."""
import pytest

from robodyn_ros.control.laws import ComputedTorque, GravityCompensation
from robodyn_ros.nodes import controller, simulator, stewart_platform
from robodyn_ros.nodes.parameters import ParamSpec, law_specs, markdown_table, node_schema

NODES = {"computed_torque_controller": controller, "arm_simulator": simulator,
         "stewart_platform": stewart_platform}


@pytest.mark.parametrize("node", NODES)
def test_every_schema_loads_with_unique_described_parameters(node):
    specs = NODES[node].schema()
    names = [s.name for s in specs]
    assert len(names) == len(set(names)) and "" not in names
    assert all(s.description for s in specs)
    assert {s.name for s in node_schema(node)} <= set(names)


@pytest.mark.parametrize("value, reason", [
    ("100", "must be a number or a list of numbers"),
    (True, "must be a number or a list of numbers"),
    ([1.0, "2"], "must be a number or a list of numbers"),
    ([], "must be a number or a list of numbers"),
])
def test_numbers_refuse_text_and_booleans(value, reason):
    with pytest.raises(ValueError, match=reason):
        ParamSpec("kp", "numbers", 1.0, "gain").check(value)
    ParamSpec("kp", "numbers", 1.0, "gain").check([1, 2.5])


def test_bounds_types_and_choices_are_checked():
    rate = ParamSpec("rate", "double", 1.0, "Hz", bounds=(0.0, 10.0))
    rate.check(10.0)
    for bad, reason in ((10.5, r"within \[0, 10\]"), (True, "a number"), ("1", "a number")):
        with pytest.raises(ValueError, match=reason):
            rate.check(bad)
    mode = ParamSpec("on_timeout", "string", "zero", "", one_of=("zero", "hold_gravity"))
    with pytest.raises(ValueError, match="one of"):
        mode.check("brake")
    with pytest.raises(ValueError, match="a list of strings"):
        ParamSpec("joints", "string_array", [], "").check(["a", 1])


def test_law_parameters_are_described_and_defaulted_by_the_law():
    specs = {s.name: s for s in controller.schema()}
    for name, text in ComputedTorque.parameters.items():
        assert specs[name].description.startswith(text)
    assert specs["integral_limit"].default == ComputedTorque.defaults["integral_limit"]
    assert specs["coulomb_velocity"].default == GravityCompensation.defaults["coulomb_velocity"]
    # the gains a law requires take the node's defaults (004's), read from the node's file
    assert (specs["kp"].default, specs["kd"].default) == (100.0, 20.0)
    assert specs["kp"].type == "numbers" and specs["friction"].type == "bool"


def test_a_law_parameter_the_node_declares_itself_is_not_taken_twice():
    specs = law_specs({"computed_torque": ComputedTorque}, {}, declared={"kp"})
    assert "kp" not in {s.name for s in specs}
    assert {s.name for s in specs} == set(ComputedTorque.parameters) - {"kp"}


def test_markdown_table_has_one_row_per_parameter_with_type_default_and_range():
    table = markdown_table(node_schema("stewart_platform")).splitlines()
    assert len(table) == 2 + len(node_schema("stewart_platform"))
    rate = next(row for row in table if row.startswith("| `rate`"))
    assert "| double | `100.0` | [0.1, 2000] |" in rate
