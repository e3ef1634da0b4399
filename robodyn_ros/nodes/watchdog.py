"""The controller's watchdog, on a thread of its own.

The safe command must reach the drive even while the executor's thread is busy: rclpy converts a
10,000-point FollowJointTrajectory goal into Python objects in 50-150 ms before any of our code
sees it, and the cycle's thread may be stuck in a law. The thread sleeps until the last valid
state goes stale (``ControlLoop.stale_in``), then publishes the loop's safe command every
``period`` until states resume. The conversion runs Python code, which hands the GIL over every
switch interval (``cycle.SWITCH_INTERVAL``), so the thread runs within about that of its deadline.

It also sends the rest of a ramp the drive's rate limit left unfinished (``ControlLoop.ramp``:
a stale hold, a lowered effort limit, a law's step) one step a drive period, whether or not states
arrive: the loop wakes it when a command leaves a ramp to go on (``ControlLoop.on_ramp``). While
the node is active it is the one thread that does; the deactivation, once the node is no longer
active (so the thread no longer ramps), sends the rest of its own ramp (:func:`ramp_out`).

The thread shares the loop and its command with the cycle's thread and the executor's under
``lock``: a cycle holds it from the state's take to its command's publication and the deactivation
while it sends each of its commands, and the thread holds it from its verdict (or a ramp's step)
to its command's publication. So a stale verdict never races a fresh state, a ramp's step and a
cycle's command are never sent at once (the drive's stage bounds both within its cycle), the safe
command and a cycle's never write the command buffer at once, and nothing follows the deactivate
command.
"""
from __future__ import annotations

import sys
import threading
from time import monotonic, sleep

from .cycle import SWITCH_INTERVAL

LATE = 1e-4             # s after the deadline: the state is stale strictly after state_timeout
RAMP_LONGEST = 2.0      # s (wall) a deactivation's ramp may take before the node stops commanding


class WatchdogThread:
    def __init__(self, node, loop, lock: threading.Lock, publish, period: float):
        """``publish(command)`` sends a :class:`~robodyn_ros.control.loop.Stale` command or a
        ramp's step (from this thread); ``node.active`` says whether to command at all."""
        self._node, self._loop, self._lock, self._publish = node, loop, lock, publish
        self._period = period
        self._stop, self._wake = False, threading.Event()
        loop.on_ramp = self._wake.set
        sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread = threading.Thread(target=self._run, name="robodyn-watchdog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wait = self._period
        while True:
            self._wake.wait(wait)
            self._wake.clear()
            if self._stop:
                return
            with self._lock:
                active = self._node.active
                command = self._loop.watchdog() if active else None
                stale = command is not None
                if not stale and active:
                    command = self._loop.ramp()
                if command is not None:
                    self._publish(command)
                left, due = self._loop.stale_in(), self._loop.ramp_due() if active else None
            wait = self._period if stale or left is None else max(left, 0.0) + LATE
            if due is not None:   # the ramp's next step, a drive period after the last command
                wait = min(wait, max(due, 0.0))

    def destroy(self) -> None:
        """Stop and join the thread (teardown)."""
        self._stop = True
        self._wake.set()
        self._thread.join()


def ramp_out(loop, lock: threading.Lock, publish) -> bool:
    """The rest of a ramp (``ControlLoop.ramp``) from the caller's thread, one step a drive period
    paced on the wall clock (a simulated clock stands still while the executor's thread, which
    would take /clock in, waits here), each step ``publish``-ed; at most RAMP_LONGEST s. Whether
    it was reached. The deactivation's: the node commands nothing after it."""
    deadline = monotonic() + RAMP_LONGEST
    while (wait := loop.ramp_due()) is not None and monotonic() < deadline:
        sleep(max(wait, 0.0))
        with lock:
            step = loop.ramp(paced=True)
            if step is not None:
                publish(step)
    return loop.ramp_due() is None
