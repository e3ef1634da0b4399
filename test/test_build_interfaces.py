"""The package's own interface build (robodyn_ros.apps.dev.build_interfaces), as ``make`` runs it
where no ROS install has control_msgs. That it builds is what every fresh ``make`` shows, and
test_control_msgs.py pins the type hashes of what it built; here, what it says when it cannot, and
that it never builds over a control_msgs from elsewhere."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILDER = [sys.executable, "-m", "robodyn_ros.apps.dev.build_interfaces"]
SOURCE = str(ROOT / "interfaces" / "control_msgs")


def test_missing_tools_are_named_with_the_packages_that_bring_them(tmp_path):
    """No cmake and no compilers on PATH: one line naming them and the apt line, exit 1, and
    nothing built (no traceback)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    run = subprocess.run([*BUILDER, SOURCE, "--log", str(tmp_path / "log")], capture_output=True,
                         text=True, env={**os.environ, "PATH": str(empty)}, cwd=ROOT)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    line, = run.stderr.strip().splitlines()
    assert "cmake" in line and "c++" in line and "sudo apt-get install -y cmake g++ python3-dev" in line
    assert not (tmp_path / "build-control_msgs").exists()


def test_a_control_msgs_from_elsewhere_is_used_and_nothing_is_built(tmp_path):
    """To a prefix that is not where control_msgs imports from (as a ROS install's is not the
    venv), the builder says whose it uses and writes nothing."""
    run = subprocess.run([*BUILDER, SOURCE, "--prefix", str(tmp_path)], capture_output=True,
                         text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "nothing built" in run.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_directory_without_package_xml_is_refused_in_one_line(tmp_path):
    run = subprocess.run([*BUILDER, str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1
    assert run.stderr.strip() == f"build-interfaces: {tmp_path} has no package.xml: give the " \
                                 "interface package's directory"
