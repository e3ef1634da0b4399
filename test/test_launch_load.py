"""``robodyn-ros dev launch-under-load`` (robodyn_ros/apps/dev/launch_load.py) runs: one launch
file, one run with the cache as it stands, no load, as a maintainer starts it; and it refuses to
run where DDS would leave this machine or reach another run's domain."""
import subprocess
import sys

from ros_cli import ROOT, environment, require_tools

require_tools()


def launch_under_load(*args, env):
    return subprocess.run([sys.executable, "-m", "robodyn_ros.apps.cli", "dev", "launch-under-load",
                           *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_one_run_of_a_launch_file_is_started_stopped_and_tabled():
    done = launch_under_load("stewart.launch.py", "--runs", "1", "--empty-runs", "0",
                             "--load", "none", env=environment())
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| stewart.launch.py"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # launch file, cache, runs, configured, ..., clean exits, ros2 launch itself not 0
    assert cells[1:4] == ["full", "1", "1"] and cells[-2:] == ["1/1", "0"], row


def test_it_refuses_to_run_without_a_domain_of_its_own():
    env = environment()
    del env["ROS_DOMAIN_ID"]
    done = launch_under_load("stewart.launch.py", env=env)
    assert done.returncode == 2 and "ROS_DOMAIN_ID" in done.stderr, done.stderr
