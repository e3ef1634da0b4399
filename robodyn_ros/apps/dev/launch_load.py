"""Every launch file under ros2 launch beside a compile, with an empty and a full numba cache, N runs
each. A run starts the launch, waits until each of its nodes runs (a managed node active, a plain
node answering a service, which it does once its main loop runs), notes whether and how long a
node compiled (the warm-up's notice in the log), then stops it as Ctrl-C does (SIGINT to the
process group, twice) and times each process's exit against ros2 launch's grace before it
escalates to SIGTERM (its sigterm_timeout, 5 s). A run is clean when every process exited 0 within
the grace, ros2 launch took the Ctrl-C and exited 0, and nothing was left. --stop-mid-compile K:
the first K empty-cache runs are stopped while a node compiles instead. Where Gazebo and
ros2_control are not installed, puma560_gazebo.launch.py runs its non-Gazebo part (our controller
with that launch's parameters and bring-up), and effort_feedforward.launch.py runs without its
spawner.

Empty cache: a fresh NUMBA_CACHE_DIR per run; full: the package's own cache as it stands (fill it
with robodyn-ros compile; the compile column shows a cache that was not full). The load: --load
CMD run in a loop under nice -n 10 (by default robodyn-ros compile into a cache of its own,
emptied before each round), in a process group that ends with the tool.

Needs ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID of the caller's own. Prints a
table; exits 1 when a run failed (not started, not running in time, or not cleanly stopped).
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from .ros2_cli import NON_GAZEBO_PART, PACKAGE, Launch, Probe, alive, environment, ros2_executable

#: launch file -> (its arguments here, its nodes). effort_feedforward's spawner needs ros2_control's
#: controller_manager, which is not installed here: launched with spawn_controller:=false.
LAUNCHES = {
    "controller.launch.py": ((), ("computed_torque_controller",)),
    "effort_feedforward.launch.py": (("spawn_controller:=false",), ("effort_feedforward",)),
    "puma560_sim.launch.py": ((), ("arm_simulator", "computed_torque_controller")),
    "stewart.launch.py": ((), ("stewart_platform",)),
    "stewart_sim.launch.py": ((), ("stewart_simulator", "stewart_platform")),
    "puma560_gazebo.launch.py": ((), ("computed_torque_controller",)),
}
GAZEBO = "puma560_gazebo.launch.py"
#: the packages a launch file needs beyond this one, ROS's core and launch_ros; without them the
#: Gazebo launch runs its non-Gazebo part (our controller with its parameters and bring-up)
NEEDS = {GAZEBO: ("ros_gz_sim", "ros_gz_bridge", "controller_manager", "gz_ros2_control")}
#: nodes with a lifecycle (ManagedNode): running means active
MANAGED = {"computed_torque_controller", "stewart_platform"}
#: s: ros2 launch's default sigterm_timeout, its grace between SIGINT and SIGTERM
GRACE = 5.0
#: s a run lets its nodes run before the Ctrl-C, as a user who saw them start: launch is still
#: handling the activation's events for some tenths of a second, and a Ctrl-C then meets launch's
#: own race (LAUNCH_ITSELF: ros2 launch aborts at its exit, its nodes having exited 0; 2 of 53
#: runs, and twice on CI, once 2 s after the start), which is upstream's and not what a run measures
RUNNING = 2.0
_COMPILING = re.compile(r"\[(\w+)\]: Compiling the ")
_COMPILED = re.compile(r"\[(\w+)\]: Compiled the .* in ([\d.]+) s")


@dataclass
class Run:
    mid_compile: bool = False         # stopped while compiling, not waited for
    started: bool = False
    running: float | None = None      # s from the launch to every node running
    compiled: dict = field(default_factory=dict)   # node -> s its compiles took (None: stopped)
    exits: list = field(default_factory=list)      # s from SIGINT to each process's end
    clean: bool = False
    launch_exit: int | None = 0       # ros2 launch's own, once its nodes exited cleanly (None: hung)
    why: str = ""
    load: float = field(default_factory=lambda: os.getloadavg()[0])   # 1-min load at the start


def missing_packages(launch_file: str) -> list[str]:
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    missing = []
    for package in NEEDS.get(launch_file, ()):
        try:
            get_package_share_directory(package)
        except PackageNotFoundError:
            missing.append(package)
    return missing


def command(launch_file: str, directory: Path) -> tuple[list[str], str]:
    """The ros2 launch command of ``launch_file`` here, and what the table calls it."""
    arguments, _ = LAUNCHES[launch_file]
    missing = missing_packages(launch_file)
    if not missing:
        return [ros2_executable(), "launch", PACKAGE, launch_file, *arguments], launch_file
    from ament_index_python.packages import get_package_share_directory
    part = directory / "non_gazebo_part.launch.py"
    part.write_text(NON_GAZEBO_PART.format(
        path=os.path.join(get_package_share_directory(PACKAGE), "launch", launch_file)))
    return ([ros2_executable(), "launch", str(part)],
            f"{launch_file}, its non-Gazebo part ({', '.join(missing)} not installed)")


def _running(probe: Probe, node: str) -> bool:
    """Whether ``node`` runs: active when managed, else answering a parameter request (a node's
    services are served by its main loop, which starts once the node is made)."""
    try:
        if node in MANAGED:
            return probe.lifecycle_state(f"/{node}", timeout=1.0) == "active"
        probe.parameters(f"/{node}", ["use_sim_time"], timeout=1.0)
        return True
    except AssertionError:   # no answer yet
        return False


def one_run(launch_file: str, argv: list[str], env: dict, log: Path, probe: Probe,
            timeout: float, stop_mid_compile: bool) -> Run:
    nodes = LAUNCHES[launch_file][1]
    run, start = Run(mid_compile=stop_mid_compile), time.monotonic()
    launch = Launch(argv, log, env)
    try:
        return _started_and_stopped(launch, run, nodes, probe, start, timeout)
    except BaseException:   # the tool interrupted: nothing of the run is left running
        launch.kill()
        raise


def _started_and_stopped(launch: Launch, run: Run, nodes, probe: Probe, start: float,
                         timeout: float) -> Run:
    try:
        if run.mid_compile:
            launch.wait_for_output(_COMPILING.pattern, timeout, probe.spin_once)
            probe.spin_for(2.0)   # into numba's compile proper
        else:
            waiting = list(nodes)
            deadline = start + timeout
            while waiting:
                if launch.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"{waiting} not running after "
                                         f"{time.monotonic() - start:.0f} s:\n{launch.tail()}")
                waiting = [n for n in waiting if not _running(probe, n)]
            run.running = time.monotonic() - start
            probe.spin_for(RUNNING)
        run.started = True
    except AssertionError as exc:
        run.why = str(exc)
    text = launch.output()
    run.compiled = {n: None for n in _COMPILING.findall(text)}
    for node, took in _COMPILED.findall(text):   # a node may compile several groups in turn
        run.compiled[node] = (run.compiled[node] or 0.0) + float(took)
    ended, interrupted = {}, time.monotonic()

    def note_exits():
        for name, pid in launch.started().items():
            if name not in ended and not alive(pid):
                ended[name] = time.monotonic() - interrupted
    try:
        # a user presses Ctrl-C again after a few seconds; launch escalates within 2 graces
        code = launch.interrupt(spin=lambda: (note_exits(), probe.spin_once()),
                                timeout=3 * GRACE, linger=GRACE)
        note_exits()
        run.exits = list(ended.values())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # ros2 launch's own exit: counted below
            launch.assert_clean_exit(code)
        if "user interrupted with ctrl-c (SIGINT)" not in launch.output():
            raise AssertionError(f"ros2 launch did not take the Ctrl-C:\n{launch.tail()}")
        late = {n: round(s, 1) for n, s in ended.items() if s > GRACE}
        if late or "sending signal 'SIGTERM'" in launch.output():
            raise AssertionError(f"beyond the {GRACE} s grace: {late}:\n{launch.tail()}")
        run.launch_exit = code
        if code != 0:
            raise AssertionError(f"its nodes exited 0, but ros2 launch itself "
                                 f"{'hung (killed)' if code is None else f'exited {code}'}"
                                 f":\n{launch.tail()}")
        run.clean = run.started
    except AssertionError as exc:
        run.why = run.why or str(exc)
    return run


class Load:
    """``command`` in a loop under nice -n 10, in a process group of its own until stop()."""

    def __init__(self, command: str, env: dict):
        loop = f"while true; do nice -n 10 {command} >/dev/null 2>&1; done"
        self.process = subprocess.Popen(["bash", "-c", loop], env=env, start_new_session=True,
                                        stdin=subprocess.DEVNULL)

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def _stats(values) -> str:
    return f"{statistics.median(values):.1f}/{max(values):.1f}" if values else "-"


def row(launch_file: str, cache: str, runs: list[Run]) -> str:
    compiled = [r for r in runs if r.compiled]
    took = [max(s for s in r.compiled.values() if s is not None) for r in compiled
            if any(s is not None for s in r.compiled.values())]
    configured = sum(r.running is not None for r in runs)
    mid = sum(r.mid_compile for r in runs)
    return (f"| {launch_file} | {cache} | {len(runs)} | {configured}"
            f"{f' (+{mid} stopped compiling)' if mid else ''} | {len(compiled)}"
            f"{f' ({_stats(took)} s)' if took else ''} | "
            f"{_stats([r.running for r in runs if r.running is not None])} | "
            f"{_stats([max(r.exits) for r in runs if r.exits])} | "
            f"{sum(r.clean for r in runs)}/{len(runs)} | {sum(r.launch_exit != 0 for r in runs)} |")


HEADER = ("| launch file | cache | runs | configured | compile notices (took: median/max) | "
          "s to running: median/max | s to exit: median/max | clean exits | ros2 launch itself "
          "not 0 |\n|---|---|---|---|---|---|---|---|---|")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robodyn-ros dev launch-under-load", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("launch_files", nargs="*", default=list(LAUNCHES), metavar="LAUNCH_FILE",
                        help=f"default: all ({', '.join(LAUNCHES)})")
    parser.add_argument("--runs", type=int, default=5, metavar="N",
                        help="runs with the full cache (5)")
    parser.add_argument("--empty-runs", type=int, default=3, metavar="N",
                        help="runs with an empty cache (3)")
    parser.add_argument("--stop-mid-compile", type=int, default=1, metavar="K",
                        help="of the empty-cache runs, the first K are stopped while compiling (1)")
    parser.add_argument("--load", default=f"{shlex.quote(sys.executable)} -m robodyn_ros.apps.precompile "
                        "--jobs 1", metavar="CMD", help="the load, run in a loop under nice -n 10; 'none' for none "
                        "(default: robodyn-ros compile into an empty cache of its own)")
    parser.add_argument("--timeout", type=float, default=900.0, metavar="S",
                        help="s a run may take to get its nodes running (900)")
    parser.add_argument("--logs", type=Path, metavar="DIR",
                        help="keep each run's log in this directory")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.launch_files) - set(LAUNCHES))
    if unknown:
        parser.error(f"unknown launch file(s) {unknown}: one of {list(LAUNCHES)}")
    if os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") != "LOCALHOST" or \
            not os.environ.get("ROS_DOMAIN_ID"):
        parser.error("set ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID of your own: "
                     "the runs start and stop DDS participants that others must not hear")
    with tempfile.TemporaryDirectory(prefix="launch-under-load-") as scratch:
        scratch = Path(scratch)
        logs = args.logs or scratch
        logs.mkdir(parents=True, exist_ok=True)
        load = None
        if args.load != "none":
            load_cache = scratch / "load-cache"
            each = f"rm -rf {shlex.quote(str(load_cache))}; {args.load}"
            load = Load(f"bash -c {shlex.quote(each)}",
                        environment(NUMBA_CACHE_DIR=str(load_cache)))
        probe, failed, rows, every = Probe("launch_under_load"), False, [], []
        try:
            for launch_file in args.launch_files:
                argv, label = command(launch_file, scratch)
                for cache, count in (("empty", args.empty_runs), ("full", args.runs)):
                    runs = []
                    for i in range(count):
                        env = environment()
                        if cache == "empty":
                            env["NUMBA_CACHE_DIR"] = str(scratch / f"cache-{launch_file}-{i}")
                        log = logs / f"{launch_file.removesuffix('.launch.py')}-{cache}-{i}.log"
                        run = one_run(launch_file, argv, env, log, probe, args.timeout,
                                      cache == "empty" and i < args.stop_mid_compile)
                        runs.append(run)
                        every.append(run)
                        print(f"{launch_file} {cache} {i}: running after {run.running} s, "
                              f"compiled {run.compiled}, exits {[round(s, 2) for s in run.exits]}"
                              f"{'' if run.clean else ', FAILED: ' + run.why[-3000:]}", flush=True)
                        failed |= not run.clean
                    if runs:
                        rows.append(row(label, cache, runs))
        finally:
            probe.close()
            if load is not None:
                load.stop()
    print(HEADER, *rows, sep="\n")
    if every:
        print(f"load: {args.load}; 1-min load average at the runs' starts: "
              f"{_stats([r.load for r in every])} (median/max) on {os.cpu_count()} cores")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
