"""The core layers never import rclpy (doc/architecture.md: arrows point down only), so that they
are usable and testable without ROS. Checked in a fresh interpreter, where nothing else has
imported it."""
import subprocess
import sys

CORE = ["robodyn_ros.dynamics", "robodyn_ros.dynamics.description",
        "robodyn_ros.dynamics.lagrange_euler", "robodyn_ros.dynamics.integrate",
        "robodyn_ros.dynamics.counting", "robodyn_ros.dynamics.urdf_export", "robodyn_ros.control",
        "robodyn_ros.control.trajectory", "robodyn_ros.control.feedforward",
        "robodyn_ros.control.loop", "robodyn_ros.control.goal", "robodyn_ros.control.cycle_timing",
        "robodyn_ros.parameters", "robodyn_ros.ament_prefix",
        "robodyn_ros.stewart", "robodyn_ros.stewart.path_study", "robodyn_ros.stewart.force_loop",
        "robodyn_ros.stewart.tracking", "robodyn_ros.stewart.plant", "robodyn_ros.stewart_demo",
        "robodyn_ros.processes",
        "robodyn_ros.reasons", "robodyn_ros.complexity", "robodyn_ros.cli",
        "robodyn_ros.sim.robodyn_engine", "robodyn_ros.sim.mujoco_engine",
        "robodyn_ros.sim.check_urdf", "robodyn_ros.identification", "robodyn_ros.identification.bag",
        "robodyn_ros.dynamics.base_parameters", "robodyn_ros.identification.urdf_write",
        "robodyn_ros.dynamics.regressor", "robodyn_ros.control.adaptive",
        "robodyn_ros.control.task_space"]


def test_core_modules_do_not_import_rclpy():
    code = ("import importlib, sys\n"
            f"for name in {CORE!r}:\n"
            "    importlib.import_module(name)\n"
            "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rosidl_runtime_py',"
            " 'sensor_msgs', 'std_msgs', 'trajectory_msgs'))\n"
            "print(','.join(leaked))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core modules pulled in ROS modules: {out.stdout.strip()}"
