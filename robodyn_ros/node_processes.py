"""The node processes of a demo run over DDS (robodyn-ros demo, for the arm and for the Stewart
platform): each node its own ``python -m`` process with its own interpreter and GIL, stopped with
SIGINT (its clean shutdown); and spinning a recorder node until a condition holds, failing when a
node process died or nothing happened in time."""
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

    def start(self, name, module, params):
        ros_args = [a for key, value in params.items() for a in ("-p", f"{key}:={value}")]
        log = open(self._logs / f"{name}.log", "w")
        cmd = [sys.executable, "-m", module, "--ros-args", "-r", f"__node:={name}", *ros_args]
        self._procs.append((name, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT),
                            log))

    def check(self):
        for name, proc, _ in self._procs:
            if proc.poll() is not None:
                text = (self._logs / f"{name}.log").read_text()
                raise RuntimeError(f"{name} exited with status {proc.returncode}:\n{text}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for _, proc, _ in self._procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for _, proc, log in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()


def spin_until(executor, procs, done, timeout, what):
    """Spin ``executor`` until ``done()``; RuntimeError if a process of ``procs`` exited,
    TimeoutError after ``timeout`` seconds (wall) naming ``what``."""
    deadline = time.monotonic() + timeout
    while not done():
        procs.check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: nothing after {timeout:g} s")
        executor.spin_once(timeout_sec=0.05)


def param_list(values):
    """A list of numbers as a -p value on the command line."""
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"
