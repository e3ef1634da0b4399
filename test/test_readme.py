"""The README's Python API example runs as written (so that it cannot drift from the code)."""
import re
import warnings
from pathlib import Path

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
