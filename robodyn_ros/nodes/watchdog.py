"""The controller's watchdog, on a thread of its own.

The safe command must reach the drive even while the executor's thread is busy: rclpy converts a
10,000-point FollowJointTrajectory goal into Python objects in 50-150 ms before any of our code
sees it, and the cycle's thread may be stuck in a law. The thread sleeps until the last valid
state goes stale (``ControlLoop.stale_in``), then publishes the loop's safe command every
``period`` until states resume. The conversion runs Python code, which hands the GIL over every
switch interval (``cycle.SWITCH_INTERVAL``), so the thread runs within about that of its deadline.

The thread shares the loop and its command with the cycle's thread and the executor's under
``lock``: a cycle holds it from the state's take to its command's publication and the deactivation
while it sends its commands, and the thread holds it from its verdict to its command's
publication. So a stale verdict never races a fresh state, the safe command and a cycle's never
write the command buffer at once, and nothing follows the deactivate command.
"""
from __future__ import annotations

import sys
import threading

from .cycle import SWITCH_INTERVAL

LATE = 1e-4             # s after the deadline: the state is stale strictly after state_timeout


class WatchdogThread:
    def __init__(self, node, loop, lock: threading.Lock, publish, period: float):
        """``publish(stale)`` sends a :class:`~robodyn_ros.control.loop.Stale` command (from
        this thread); ``node.active`` says whether to command at all."""
        self._node, self._loop, self._lock, self._publish = node, loop, lock, publish
        self._period = period
        self._stop = threading.Event()
        sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread = threading.Thread(target=self._run, name="robodyn-watchdog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wait = self._period
        while not self._stop.wait(wait):
            with self._lock:
                stale = self._loop.watchdog() if self._node.active else None
                if stale is not None:
                    self._publish(stale)
                left = self._loop.stale_in()
            wait = self._period if stale is not None or left is None else max(left, 0.0) + LATE

    def destroy(self) -> None:
        """Stop and join the thread (teardown)."""
        self._stop.set()
        self._thread.join()
