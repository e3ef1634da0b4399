"""robodyn_ros.apps.dev.ament_prefix makes a venv an ament prefix that holds this checkout (what
`make venv` runs, so that `ros2 launch robodyn_ros ...` finds it): written into a scratch prefix
here, without ROS; ros2 launch itself finds it in test_launch_real.py."""
import subprocess
import sys

import pytest

from robodyn_ros.apps.dev import ament_prefix
from robodyn_ros.apps.dev.ament_prefix import CHECKOUT, PTH_LINE, console_scripts, install, site_packages


@pytest.fixture
def prefix(tmp_path):
    (tmp_path / "bin").mkdir()
    for name in console_scripts():
        (tmp_path / "bin" / name).write_text("#!/bin/sh\n")
    return tmp_path


def test_the_prefix_holds_the_marker_the_share_files_and_the_executables(prefix):
    install(prefix)
    assert (prefix / "share/ament_index/resource_index/packages/robodyn_ros").is_file()
    share = prefix / "share" / "robodyn_ros"
    assert (share / "package.xml").resolve() == CHECKOUT / "package.xml"
    # file by file, so that ros2 launch's os.walk finds them
    launch = share / "launch" / "puma560_sim.launch.py"
    assert launch.is_symlink() and not launch.parent.is_symlink()
    assert launch.resolve() == CHECKOUT / "launch" / "puma560_sim.launch.py"
    assert (share / "urdf" / "puma560.urdf").is_file() and (share / "config").is_dir()
    for name in ("computed_torque_controller", "arm_simulator", "stewart_platform"):
        assert (prefix / "lib" / "robodyn_ros" / name).resolve() == prefix / "bin" / name
    assert (site_packages(prefix) / ament_prefix.PTH).read_text() == PTH_LINE


def test_it_runs_again_and_drops_what_left_the_checkout(prefix):
    install(prefix)
    stale = prefix / "share" / "robodyn_ros" / "config" / "gone.yaml"
    stale.symlink_to(prefix / "nowhere.yaml")
    install(prefix)
    assert not stale.is_symlink()
    assert (prefix / "share" / "robodyn_ros" / "config" / "arm_simulator.yaml").is_file()


def test_a_missing_console_script_is_an_error_that_says_what_to_do(prefix):
    (prefix / "bin" / "arm_simulator").unlink()
    with pytest.raises(FileNotFoundError, match="pip install -e"):
        install(prefix)


@pytest.mark.parametrize("before,after", [("", "{p}"), ("/opt/ros/jazzy", "{p}:/opt/ros/jazzy"),
                                          ("/x:{p}", "/x:{p}")])
def test_the_pth_line_puts_the_prefix_first_on_ament_prefix_path_once(before, after):
    """Run alone (-S: without the venv's own .pth files, which would have run it already)."""
    code = (f"import os, sys; os.environ['AMENT_PREFIX_PATH'] = {before!r}.format(p=sys.prefix)\n"
            + PTH_LINE + "print(sys.prefix); print(os.environ['AMENT_PREFIX_PATH'])")
    prefix, out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                                 check=True).stdout.split()
    assert out == after.format(p=prefix)
