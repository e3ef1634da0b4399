"""A controller whose configure fails, for whatever reason, says why: in its log (with the traceback
of an exception nobody expected), on /diagnostics and, started with autostart, on its way out; and
/diagnostics never claims a wait that is not one. rclpy's lifecycle swallows any exception of a
transition but a refusal (no log, no reason: ``ros2 run`` printed an empty ``error: ``)."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState

from conftest import URDF, register_laws
from robodyn_ros.nodes.common import ConfigurationError

#: a control law package whose warm-up needs a module its installation lacks, as the adaptive
#: law's needed SciPy
LAWS = '''
from robodyn_ros.control.laws import ComputedTorque

class NeedsAbsentModule(ComputedTorque):
    @classmethod
    def warm_up(cls, notify=print):
        import robodyn_test_absent_module  # noqa: F401
'''
WAITING_FOR_MANAGER = "unconfigured: waiting for a lifecycle manager (autostart is false)"
WHY = "ModuleNotFoundError: No module named 'robodyn_test_absent_module'"


@pytest.fixture
def law_needing_an_absent_module(tmp_path, monkeypatch):
    (tmp_path / "robodyn_test_absent_law.py").write_text(LAWS)
    register_laws(tmp_path, monkeypatch, "robodyn_test_absent_law", absent_test="NeedsAbsentModule")


def controller_status(reports, rig):
    """The controller's latest /diagnostics message."""
    name = f"{rig.ns}/computed_torque_controller"
    return [s.message for r in reports for s in r.status if name in s.name][-1:]


def test_an_unconfigured_controller_with_a_urdf_file_waits_for_a_manager(rig):
    reports = []
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)
    rig.controller(autostart=False, diagnostic_period=0.1)
    rig.spin_until(lambda: controller_status(reports, rig), what="the controller's diagnostics")
    assert controller_status(reports, rig) == [WAITING_FOR_MANAGER]


def test_any_exception_in_configure_reaches_the_log_and_diagnostics_with_its_reason(
        rig, law_needing_an_absent_module, capfd):
    reports = []
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)
    node = rig.controller(autostart=False, diagnostic_period=0.1)
    answer = rig.call(ChangeState, "computed_torque_controller/change_state",
                      ChangeState.Request(transition=Transition(id=Transition.TRANSITION_CONFIGURE)))
    assert answer.success is False
    assert node.configure_error.startswith(WHY) and "lacks a module" in node.configure_error
    count = len(reports)
    rig.spin_until(lambda: len(reports) > count + 1, what="diagnostics after the configure")
    assert controller_status(reports, rig)[0].startswith(WHY)
    log = capfd.readouterr().err
    assert f"configure failed: {WHY}" in log and "Traceback (most recent call last)" in log
    assert "robodyn_test_absent_law.py" in log   # the traceback says where


def test_autostart_raises_the_reason_not_an_empty_error(rig, law_needing_an_absent_module):
    with pytest.raises(ConfigurationError, match=WHY):
        rig.controller()


@pytest.mark.skipif(importlib.util.find_spec("ros_wheels_bootstrapper") is None,
                    reason="the ROS wheels' library path: a ROS install's rclpy has none")
def test_another_environments_libraries_make_the_start_fail_with_the_reason(tmp_path):
    """Started from a process of another environment (its library path passed on, the ROS
    wheels' start-up then leaves it as it is) whose ROS libraries lack control_msgs': configure
    fails loading control_msgs' type support, and says so, naming the folder."""
    other = tmp_path / "other_env_lib"
    other.mkdir()
    for library in Path(sys.prefix, "lib").glob("lib*.so*"):
        if not library.name.startswith("libcontrol_msgs"):
            (other / library.name).symlink_to(library)
    wheels = Path(sys.prefix, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}",
                  "site-packages").glob("ros_*.libs")
    env = {**os.environ, "_ROS_WHEELS_BOOTSTRAP_COMPLETE": "1",
           "LD_LIBRARY_PATH": os.pathsep.join([str(other), *map(str, wheels)])}
    done = subprocess.run([sys.executable, "-m", "robodyn_ros.nodes.controller", "--ros-args",
                           "-r", "__ns:=/other_env", "-p", f"urdf_file:={URDF}"],
                          capture_output=True, text=True, timeout=300, env=env)
    said = done.stdout + done.stderr
    error = [line for line in said.splitlines() if line.startswith("error: ")]
    assert done.returncode == 1 and len(error) == 1, said
    assert "control_msgs" in error[0] and f"another environment ({other})" in error[0], said
    assert "Traceback (most recent call last)" in said   # in the log, before
