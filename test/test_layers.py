"""The core layers never import rclpy (doc/architecture.md: arrows point down only), so that they
are usable and testable without ROS. Checked in a fresh interpreter, where nothing else has
imported it."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# every module of the library and the plumbing, and the applications' modules that need no ROS
CORE = sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for wing in ("plumbing", "spatial", "dynamics", "control", "stewart", "sim", "identification")
    for path in (ROOT / "robodyn_ros" / wing).rglob("*.py")) + [
    "robodyn_ros.nodes.parameters", "robodyn_ros.apps.cli", "robodyn_ros.apps.demos",
    "robodyn_ros.apps.processes", "robodyn_ros.apps.complexity", "robodyn_ros.apps.stewart_path",
    "robodyn_ros.apps.demos.stewart", "robodyn_ros.apps.dev.ament_prefix"]


def test_core_modules_do_not_import_rclpy():
    code = ("import importlib, sys\n"
            f"for name in {CORE!r}:\n"
            "    importlib.import_module(name)\n"
            "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rosidl_runtime_py',"
            " 'sensor_msgs', 'std_msgs', 'trajectory_msgs'))\n"
            "print(','.join(leaked))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core modules pulled in ROS modules: {out.stdout.strip()}"
