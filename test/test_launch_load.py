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


def _cells(done):
    """The cells of the tool's row for stewart.launch.py ([] when it printed none)."""
    row = next((line for line in done.stdout.splitlines() if line.startswith("| stewart.launch.py")),
               "")
    return [c.strip() for c in row.strip("|").split("|")] if row else []


def launch_until_launch_itself_exits_0(*args, env):
    """The tool's runs, once more if the only failure was ros2 launch's own: it aborts at its exit
    in a few runs in a hundred with every node exited 0 in time (LAUNCH_ITSELF in launch_load.py,
    upstream's race: 2 of 53 runs, and twice on CI). A node's failure is never run again."""
    done = launch_under_load(*args, env=env)
    cells = _cells(done)
    if done.returncode == 1 and cells:
        clean, runs = (int(n) for n in cells[-2].split("/"))
        if 0 < int(cells[-1]) == runs - clean:   # every run that failed, failed only so
            print(f"ros2 launch itself failed in {cells[-1]} run(s), its nodes clean: again\n"
                  f"{done.stdout[-3000:]}")
            done = launch_under_load(*args, env=env)
    return done


def test_one_run_of_a_launch_file_is_started_stopped_and_tabled():
    done = launch_until_launch_itself_exits_0("stewart.launch.py", "--runs", "1", "--empty-runs",
                                              "0", "--load", "none", env=environment())
    assert done.returncode == 0, done.stdout + done.stderr
    cells = _cells(done)
    # launch file, cache, runs, configured, ..., clean exits, ros2 launch itself not 0
    assert cells[1:4] == ["full", "1", "1"] and cells[-2:] == ["1/1", "0"], cells


def test_launches_stopped_while_configure_compiles_end_cleanly_ros2_launch_too(tmp_path):
    """Ctrl-C while launch's configure compiles the kernels (an empty cache): the node ended at
    once, and ros2 launch, still waiting for its answer, aborted at its own exit (exit -6 or -11,
    5 of 6 runs): the node now waits for launch_ros to give the request up (process.LINGER). Two
    runs, to be seen in most runs of the test where the node ends too early."""
    done = launch_until_launch_itself_exits_0(
        "stewart.launch.py", "--runs", "0", "--empty-runs", "2", "--stop-mid-compile", "2",
        "--load", "none", "--logs", str(tmp_path), env=environment())
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    cells = _cells(done)
    assert cells[1:4] == ["empty", "2", "0 (+2 stopped compiling)"] and cells[-2:] == ["2/2", "0"], cells


def test_it_refuses_to_run_without_a_domain_of_its_own():
    env = environment()
    del env["ROS_DOMAIN_ID"]
    done = launch_under_load("stewart.launch.py", env=env)
    assert done.returncode == 2 and "ROS_DOMAIN_ID" in done.stderr, done.stderr
