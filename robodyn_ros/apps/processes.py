"""Nodes in processes of their own, started without the launch system (``python -m`` of each node
module, so each has its own interpreter and GIL and every message crosses DDS on loopback), each
with its output in a log file; used by ``robodyn-ros demo`` (the arm and the Stewart platform) and
``robodyn-ros dev fuzz``; and what the demos share: their runs, their outputs, their error plot."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .commands import RunFailed


#: lines of each node's log a failed run prints
TAIL = 15


class NodeProcesses:
    """The node processes of one run, stopped with SIGINT (their clean shutdown) on exit. When
    the run ends with an error (a timeout, a node that died), each node's exit code and the last
    TAIL lines of its log are printed (``report``): a compile, a crash and a wrong parameter look
    alike from outside."""

    def __init__(self, logs: Path, out=None):
        self._logs = logs
        self._procs = []
        self._out = out   # where ``report`` writes (None: sys.stderr at the time)
        self.exit_codes: dict[str, int] = {}  # filled on exit

    def start(self, name, module, params, remaps=None, params_file=None):
        """``python -m module`` as the node ``name`` with ``params`` (and ``remaps``, topic ->
        topic; ``params_file``, a ROS parameter file read first), in the SROS2 enclave of that
        name (doc/security.md; ignored unless ROS_SECURITY_ENABLE is true): the override too,
        since rcl prefers it to ``--enclave`` and this process may carry its own."""
        from ..nodes.security import enclave
        ros_args = ["--params-file", str(params_file)] if params_file else []
        ros_args += [a for key, value in params.items() for a in ("-p", f"{key}:={value}")]
        ros_args += [a for topic, to in (remaps or {}).items() for a in ("-r", f"{topic}:={to}")]
        log = open(self._logs / f"{name}.log", "w")
        cmd = [sys.executable, "-m", module, "--ros-args", "-r", f"__node:={name}",
               "--enclave", enclave(name), *ros_args]
        env = {**os.environ, "ROS_SECURITY_ENCLAVE_OVERRIDE": enclave(name)}
        self._procs.append((name, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                   env=env), log))

    def log(self, name) -> Path:
        """The file a node's stdout and stderr go to."""
        return self._logs / f"{name}.log"

    @property
    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc, _ in self._procs}

    def dead(self) -> dict[str, int]:
        """Name -> exit status of each process that has ended."""
        return {name: proc.returncode for name, proc, _ in self._procs if proc.poll() is not None}

    def check(self):
        for name, status in self.dead().items():
            raise RunFailed(f"{name} exited with status {status} (its log: {self.log(name)})")

    def report(self, why: str, died: dict) -> None:
        """Each node's exit code and the tail of its log, after a run that failed (``why``);
        ``died``: the nodes that had ended before the run was stopped."""
        out = self._out or sys.stderr
        print(f"\nthe run failed: {why}; the nodes:", file=out)
        for name, _, _ in self._procs:
            code = self.exit_codes.get(name)
            state = (f"exited with code {died[name]} before the failure" if name in died
                     else f"was running; stopped, exit code {code}")
            lines = self.log(name).read_text(errors="replace").splitlines()
            print(f"--- {name} {state}; the last {min(TAIL, len(lines))} of {len(lines)} lines "
                  f"of {self.log(name)}:", file=out)
            for line in lines[-TAIL:]:
                print(f"    {line}", file=out)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, _):
        died = self.dead()
        for _, proc, _ in self._procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for name, proc, log in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self.exit_codes[name] = proc.returncode
            log.close()
        if kind is not None and issubclass(kind, Exception):   # not on Ctrl-C: the user knows
            self.report(str(error) if isinstance(error, RunFailed) else f"{kind.__name__}: {error}",
                        died)


#: The wall-clock watchdogs of the demos' step-locked nodes (the simulator's command_timeout, the
#: controller's state_timeout), s: in lockstep a stall of a loaded machine delays the run and is no
#: fault, while 0.5 s was short enough for one to stop the arm (zero effort, brakes) or put the
#: controller on hold mid-run; a node that died still ends the run within seconds.
WATCHDOG = 5.0


def status_kb(pid, field: str) -> int:
    """A kB field of a process's /proc status (VmRSS, VmHWM, Threads: a count); -1 once it ended."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def cpu_seconds(pid) -> float:
    """User + system CPU time of a process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loopback_dds() -> str:
    """DDS on loopback and on a domain of this run's own (unless one is set): called before
    anything imports rclpy, and inherited by every node process started. Returns the domain."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    return os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))


def spin_until(executor, procs, done, timeout, what):
    """Spin until ``done()``; RunFailed when a node died or after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not done():
        procs.check()
        if time.monotonic() > deadline:
            raise RunFailed(f"{what}: nothing after {timeout:g} s (the nodes' logs above say "
                            "what they were doing)")
        executor.spin_once(timeout_sec=0.05)


def record(executor, procs, now, start, until, label, lead_in):
    """Spin while a demo run records, its progress shown (``progress``: the caller ends the line
    with ``progress.done``), until the simulated time ``now()`` reaches ``start + until``;
    returns the run's real-time factor."""
    from .progress import progress
    first_t, first_wall = now(), time.monotonic()

    def recorded():
        progress.show(f"  {label:>16s}: t = {max(now() - start, -lead_in):5.2f} / {until:.2f} s")
        return now() >= start + until

    spin_until(executor, procs, recorded, 10 * (until + lead_in) + 30, f"{label}: the run")
    return (now() - first_t) / (time.monotonic() - first_wall)


def param_list(values):
    """A list of numbers as a -p value on the command line."""
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


def plot_errors(path, results, panels, title, xlabel, symlog=None):
    """A demo's tracking errors, one panel per axis (2 x 3): each run of ``results`` (dicts with
    ``label``, ``t`` and ``error``, samples x 6) over time, its bound dashed. ``panels``: one
    (title, y label, bound) per axis; ``symlog``: per axis, the linear range of a symmetric log
    scale (for runs whose errors span decades), or None."""
    from . import plots

    fig, axes = plots.figure(2, 3, size=(14, 7), sharex=True, title=title)
    for j, ((name, ylabel, bound), ax) in enumerate(zip(panels, axes.flat)):
        for r in results:
            ax.plot(r["t"], r["error"][:, j], label=r["label"], lw=1.0)
        for sign in (1, -1):
            ax.axhline(sign * bound, **plots.LIMIT)
        if symlog is not None:
            ax.set_yscale("symlog", linthresh=symlog[j])
        ax.set_title(name)
        ax.set_ylabel(ylabel)
    for ax in axes[-1]:
        ax.set_xlabel(xlabel)
    axes.flat[0].legend()
    plots.save(fig, path)


def run_all(prefix: str, runs, run_one) -> list:
    """``run_one(logs, *run)`` for each of ``runs`` in turn, rclpy initialised for them all and
    the nodes' logs in one temporary folder, removed after runs that all returned and kept (its
    path printed) after one that raised; the list of what each returned."""
    import rclpy
    logs = Path(tempfile.mkdtemp(prefix=prefix))
    rclpy.init()
    try:
        results = [run_one(logs, *run) for run in runs]
    except BaseException:
        print(f"the nodes' logs are kept in {logs}", file=sys.stderr)
        raise
    finally:
        rclpy.try_shutdown()
    shutil.rmtree(logs, ignore_errors=True)
    return results


def write_outputs(plot_path, json_path, results, plot, summary) -> None:
    """A demo's optional outputs: ``plot(results, plot_path)`` and ``summary`` as JSON."""
    if plot_path:
        Path(plot_path).parent.mkdir(parents=True, exist_ok=True)
        plot(results, plot_path)
        print(f"plot: {plot_path}")
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(summary, indent=2))
        print(f"results: {json_path}")
