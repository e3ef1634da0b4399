"""The README's Python API example runs as written, and each node page's parameter table describes
exactly the parameters the node declares — names, types, defaults, ranges, read-only — so that
neither can drift from the code."""
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.apps.dev import param_tables
from robodyn_ros.nodes.parameters import NODE_SCHEMAS, markdown_table, table_markers

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

def test_python_api_example_runs_from_any_directory(monkeypatch, tmp_path):
    section = README.read_text().split("## The Python API", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)   # a user's directory: the shipped descriptions found all the same
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the PUMA data's link 3 inertia warns, rightly
        exec(compile(example, str(README), "exec"), namespace)
    assert namespace["T"].shape == (10_000, 6)
    assert namespace["q_path"].shape == (1001, 2)
    # the round trip the example shows: forward dynamics of the torque it computed gives q̈ back
    puma, q, qd, qdd = (namespace[k] for k in ("puma", "q", "qd", "qdd"))
    np.testing.assert_allclose(puma.forward_dynamics(q, qd, namespace["tau"]), qdd, atol=1e-9)
    assert not np.allclose(namespace["tau_push"], namespace["tau"])   # the wrench is felt


@pytest.mark.parametrize("node", NODE_SCHEMAS)
def test_parameter_table_is_generated_from_the_schema(node):
    # names, types, defaults, ranges, read-only and descriptions: a stale page fails here
    begin, end = table_markers(node)
    page = (ROOT / "doc" / f"{node}.md").read_text()
    assert page.count(begin) == 1 and page.count(end) == 1, f"doc/{node}.md lacks its markers"
    table = page.split(begin)[1].split(end)[0].strip()
    assert table == markdown_table(NODE_SCHEMAS[node]()), \
        f"doc/{node}.md's parameter table is stale: run `robodyn-ros dev param-tables` and commit it"


def test_the_table_tool_finds_a_drifted_table_and_repairs_it(tmp_path):
    for node in NODE_SCHEMAS:
        (tmp_path / f"{node}.md").write_text((ROOT / "doc" / f"{node}.md").read_text())
    page = tmp_path / "arm_simulator.md"
    page.write_text(page.read_text().replace("| `seed` | int | `0` |", "| `seed` | int | `1` |"))
    assert param_tables.main(["--doc", str(tmp_path), "--check"]) == 1
    assert param_tables.main(["--doc", str(tmp_path)]) == 0
    assert param_tables.main(["--doc", str(tmp_path), "--check"]) == 0
    assert page.read_text() == (ROOT / "doc" / "arm_simulator.md").read_text()
