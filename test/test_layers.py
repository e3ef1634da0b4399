"""The core layers never import rclpy (DESIGN.md: arrows point down only), so that they are usable
and testable without ROS. Checked in a fresh interpreter, where nothing else has imported it."""
import subprocess
import sys

CORE = ["robodyn_ros.dynamics", "robodyn_ros.dynamics.lagrange_euler", "robodyn_ros.dynamics.integrate",
        "robodyn_ros.dynamics.counting", "robodyn_ros.dynamics.urdf_export", "robodyn_ros.control",
        "robodyn_ros.control.trajectory", "robodyn_ros.control.feedforward", "robodyn_ros.stewart",
        "robodyn_ros.stewart.path_study", "robodyn_ros.complexity", "robodyn_ros.cli"]


def test_core_modules_do_not_import_rclpy():
    code = ("import importlib, sys\n"
            f"for name in {CORE!r}:\n"
            "    importlib.import_module(name)\n"
            "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rosidl_runtime_py',"
            " 'sensor_msgs', 'std_msgs', 'trajectory_msgs'))\n"
            "print(','.join(leaked))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core modules pulled in ROS modules: {out.stdout.strip()}"
