"""What a demo says when its run fails (``apps/processes.py``): each node's exit code and the last
lines of its log, the nodes' folder kept and named; real node processes on this run's loopback
domain (conftest.py). rclpy is initialised by ``run_all`` itself, as a demo does."""
import shutil
import time
from pathlib import Path

import pytest

def test_a_failed_run_prints_each_nodes_exit_code_and_its_last_lines(tmp_path):
    """A node that exits (here a wrong parameter) ends the run: its exit code and the last lines
    of its log, and those of a node still running (stopped: its own code), are printed, and the
    folder of the logs is kept and named."""
    import io

    from robodyn_ros.apps.processes import TAIL, NodeProcesses, run_all

    out = io.StringIO()

    def run(logs):
        with NodeProcesses(logs, out) as procs:
            procs.start("broken", "robodyn_ros.nodes.simulator", {"urdf_file": "/nowhere.urdf"})
            procs.start("fine", "robodyn_ros.nodes.stewart_platform", {})
            deadline = time.monotonic() + 60.0
            while "broken" not in procs.dead() or "[fine]" not in \
                    procs.log("fine").read_text():
                assert time.monotonic() < deadline, procs.log("fine").read_text()
                time.sleep(0.1)
            procs.check()

    with pytest.raises(RuntimeError, match="broken exited with status 1") as failed:
        run_all("robodyn_test_", [()], lambda logs: run(logs))
    said = out.getvalue()
    assert f"the run failed: {failed.value}" in said
    assert "--- broken exited with code 1 before the failure" in said
    assert "urdf_file '/nowhere.urdf' does not exist" in said
    assert "--- fine was running; stopped, exit code 0" in said
    logs = Path(str(failed.value).split("its log: ")[1].rstrip(")")).parent
    assert logs.is_dir() and len(said.splitlines()) <= 3 + 2 * (TAIL + 1)
    shutil.rmtree(logs)


def test_a_run_that_ends_well_leaves_no_logs():
    from robodyn_ros.apps.processes import run_all
    kept = []
    assert run_all("robodyn_test_", [(1,), (2,)], lambda logs, x: kept.append(logs) or x) == [1, 2]
    assert not kept[0].exists()
