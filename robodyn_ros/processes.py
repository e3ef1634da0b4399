"""Nodes in processes of their own, started without the launch system (``python -m`` of each node
module, so each has its own interpreter and GIL and every message crosses DDS on loopback), each
with its output in a log file; used by ``robodyn-ros demo`` (the arm and the Stewart platform) and
``robodyn-ros fuzz``."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


class NodeProcesses:
    """The node processes of one run, stopped with SIGINT (their clean shutdown) on exit."""

    def __init__(self, logs: Path):
        self._logs = logs
        self._procs = []
        self.exit_codes: dict[str, int] = {}  # filled on exit

    def start(self, name, module, params):
        ros_args = [a for key, value in params.items() for a in ("-p", f"{key}:={value}")]
        log = open(self._logs / f"{name}.log", "w")
        cmd = [sys.executable, "-m", module, "--ros-args", "-r", f"__node:={name}", *ros_args]
        self._procs.append((name, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT),
                            log))

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
            raise RuntimeError(f"{name} exited with status {status}:\n{self.log(name).read_text()}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
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


def spin_until(executor, procs, done, timeout, what):
    """Spin until ``done()``; RuntimeError when a node died, TimeoutError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not done():
        procs.check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: nothing after {timeout:g} s")
        executor.spin_once(timeout_sec=0.05)


def param_list(values):
    """A list of numbers as a -p value on the command line."""
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"
