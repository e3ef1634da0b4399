"""The README's Python API example runs as written, and each node page's parameter table describes
exactly the parameters the node declares — names, types, defaults, ranges, read-only — so that
neither can drift from the code."""
import importlib
import re
import warnings
from pathlib import Path

import pytest
import yaml
from rclpy.parameter import Parameter

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

# (node name as in the table markers, module under robodyn_ros.nodes, doc page)
NODES = [
    ("computed_torque_controller", "controller", "doc/computed_torque_controller.md"),
    ("arm_simulator", "simulator", "doc/arm_simulator.md"),
    ("stewart_platform", "stewart_platform", "doc/stewart_platform.md"),
]
COLUMNS = ["name", "type", "default", "range / constraints", "read-only", "description"]


def test_python_api_example_runs(monkeypatch):
    section = README.read_text().split("## The Python API", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(ROOT)   # the example names files relative to the repository
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the PUMA data's link 3 inertia warns, rightly
        exec(compile(example, str(README), "exec"), namespace)
    assert namespace["T"].shape == (10_000, 6)
    assert namespace["q_path"].shape == (1001, 2)


def parameter_table(page, node):
    """{name: {column: cell}} from the table between the page's parameters:NODE markers."""
    text = (ROOT / page).read_text()
    match = re.search(rf"<!-- parameters:{node} -->\n(.*?)<!-- /parameters:{node} -->", text, re.S)
    assert match, f"{page} has no <!-- parameters:{node} --> ... <!-- /parameters:{node} --> table"
    lines = match.group(1).strip().splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == COLUMNS, f"{page}: columns {header}"
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        assert len(cells) == len(COLUMNS), f"{page}: row {line!r} has {len(cells)} cells"
        name = re.fullmatch(r"`(\w+)`", cells[0])
        assert name, f"{page}: first cell {cells[0]!r} is not one `parameter_name`"
        assert name.group(1) not in rows, f"{page}: {name.group(1)} twice"
        rows[name.group(1)] = dict(zip(COLUMNS, cells))
    return rows


def documented_type(p):
    """The table's type name for a parameter: ROS's, with [] for arrays."""
    if p.type is not None:
        return {Parameter.Type.STRING_ARRAY: "string[]", Parameter.Type.DOUBLE_ARRAY: "double[]",
                Parameter.Type.INTEGER_ARRAY: "int[]", Parameter.Type.BOOL_ARRAY: "bool[]"}[p.type]
    d = p.default
    return ("bool" if isinstance(d, bool) else "int" if isinstance(d, int)
            else "double" if isinstance(d, float) else "string" if isinstance(d, str)
            else "string[]" if d and isinstance(d[0], str) else "double[]")


def mismatches(params, rows):
    """What the table rows say differently from the declared parameters (empty: they agree)."""
    found = []
    if rows.keys() - {"use_sim_time"} != params.keys():  # use_sim_time: rclpy declares it
        found.append(f"names: table has {sorted(rows.keys() - params.keys() - {'use_sim_time'})} "
                     f"more, lacks {sorted(params.keys() - rows.keys())}")
    for name in params.keys() & rows.keys():
        p, row = params[name], rows[name]
        kind = row["type"].split(" or ")
        if kind[0] != documented_type(p) or (len(kind) > 1) != p.dynamic:
            found.append(f"{name}: type {row['type']!r}, declared {documented_type(p)}"
                         f"{' (dynamic)' if p.dynamic else ''}")
        if yaml.safe_load(row["default"]) != p.default:
            found.append(f"{name}: default {row['default']}, declared {p.default!r}")
        if row["read-only"] != ("yes" if p.read_only else "no"):
            found.append(f"{name}: read-only {row['read-only']!r}, declared {p.read_only}")
        bounds = re.match(r"\[([^,\]]+), ([^\]]+)\]", row["range / constraints"])
        documented = bounds and [float(b) for b in bounds.groups()]
        if documented != (p.range and [float(v) for v in p.range]):
            found.append(f"{name}: range {row['range / constraints']!r}, declared {p.range}")
        for constraint in filter(None, (c.strip() for c in p.constraints.split("|"))):
            if constraint not in row["range / constraints"]:
                found.append(f"{name}: constraint {constraint!r} missing")
        if not row["description"]:
            found.append(f"{name}: no description")
    return found


def declared(module):
    return {p.name: p for p in importlib.import_module(f"robodyn_ros.nodes.{module}").PARAMS}


@pytest.mark.parametrize("node, module, page", NODES)
def test_parameter_table_describes_every_declared_parameter(node, module, page):
    assert mismatches(declared(module), parameter_table(page, node)) == []


def test_a_table_that_drifts_from_the_code_is_caught():
    params = declared("simulator")
    rows = parameter_table("doc/arm_simulator.md", "arm_simulator")
    rows["rate"] = {**rows["rate"], "default": "100.0", "range / constraints": "[1.0, 1000.0]"}
    rows["seed"] = {**rows["seed"], "read-only": "no", "type": "double"}
    del rows["lockstep"]
    found = mismatches(params, rows)
    assert len(found) == 5, found
    assert any(m.startswith("names:") and "'lockstep'" in m for m in found)
