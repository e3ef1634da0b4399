"""The README's Python API example runs as written, and its parameter tables name exactly the
parameters each node declares (so that neither can drift from the code)."""
import importlib
import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_python_api_example_runs(monkeypatch):
    section = README.read_text().split("## The Python API", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(README.parent)   # the example names files relative to the repository
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the PUMA data's link 3 inertia warns, rightly
        exec(compile(example, str(README), "exec"), namespace)
    assert namespace["T"].shape == (10_000, 6)
    assert namespace["q_path"].shape == (1001, 2)


@pytest.mark.parametrize("heading, module", [
    ("## Node `computed_torque_controller`", "controller"),
    ("## Node `arm_simulator`", "simulator"),
    ("### Node `stewart_platform`", "stewart_platform"),
])
def test_parameter_table_names_every_declared_parameter(heading, module):
    declared = {p.name for p in importlib.import_module(f"robodyn_ros.nodes.{module}").schema()}
    section = README.read_text().split(heading + "\n", 1)[1]
    table = re.search(r"^\|.*?(?=^[^|])", section, re.S | re.M).group(0)
    documented = {name for row in table.splitlines()[2:]
                  for name in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert documented - {"use_sim_time"} == declared  # use_sim_time: rclpy declares it
