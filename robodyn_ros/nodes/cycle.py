"""The controller's cycle on a thread of its own, and the work it hands to the executor's thread.

The state -> law -> command path must not wait for the rest of the node: rclpy converts a
10,000-point FollowJointTrajectory goal into Python objects in 50-150 ms before any of our code
sees it, a ``kp`` change is validated whole (a new law: 3-40 ms), a log line costs 0.2 ms (rclpy
looks up its caller's frame and source line), the contact locator 0.4 ms and the diagnostics ask
the graph who listens. :class:`CycleThread` waits for the joint states (and, with ``rate`` > 0, the
rate timer) on a thread that runs nothing else; the executor's thread keeps everything else, and
:func:`post` hands it what a cycle must not wait for.

Why not a callback group: rclpy 7.1's EventsExecutor takes a node's entities whole and runs them
all on the one thread that spins it (it ignores callback groups); its MultiThreadedExecutor honours
them, but rebuilds in Python a wait set of every entity of the node (some 40 here) for each
message and hands the callback to a pool thread (doc/performance.md, issue 44: the figures). The
thread here waits on one rcl wait set of the subscription, the timer and a guard condition, as
rclpy's own ``wait_for_message`` does, with the GIL released while it waits. The subscription is
the node's in the ROS graph (its name, remappings, enclave) but no executor's.

The GIL: a thread that wakes for a state waits for the GIL while another holds it, at most the
switch interval (then the holder is made to release it at its next bytecode; a C call that holds
it runs to its end). ``SWITCH_INTERVAL`` makes that 50 us instead of Python's 5 ms: under a goal
flood and a parameter storm (``robodyn-ros bench disturbance``) the states no command answered
were 49 % with 1 ms, 30 % with 0.2 ms, 16 % with 50 us. Nothing changes while one thread alone
runs Python (the nominal 1 kHz case: the executor's thread idles).

Only the newest state: the subscription keeps one state (KEEP_LAST, depth 1, as ros2_control's
realtime buffer keeps one command) and the thread takes it once it holds ``lock``: after any stall
(the lock held, the GIL busy, a long cycle) the state answered is the newest there is, and no queue
replays older ones; a burst is answered by its newest state, not once per state.
"""
from __future__ import annotations

import sys
import threading
from time import perf_counter

from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.qos import HistoryPolicy, QoSProfile
from rclpy.timer import Timer
from rclpy.type_support import check_is_valid_msg_type

#: s: the longest a thread waits for the GIL while another runs Python
SWITCH_INTERVAL = 5e-5
#: the joint states' subscription: the newest state only
NEWEST = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1)


class CycleThread:
    """``on_message(raw, start)`` for each state on ``topic`` (``msg_type``, serialized) and, with a
    ``period`` (s, on the node's clock), ``on_tick(start)`` every period, both on this thread and
    under ``lock``; ``start`` is ``perf_counter()`` when the thread woke. What a callback raises is
    logged (throttled) and the thread goes on."""

    def __init__(self, node, msg_type, topic: str, on_message, lock, period: float | None = None,
                 on_tick=None):
        check_is_valid_msg_type(msg_type)
        node.resolve_topic_name(topic)   # a bad name raises here, as create_subscription's does
        self._node, self._lock, self._msg_type = node, lock, msg_type
        self._on_message, self._on_tick = on_message, on_tick
        with node.handle:
            self._subscription = _rclpy.Subscription(node.handle, msg_type, topic,
                                                     NEWEST.get_c_qos_profile())
        self._timer = None if period is None else Timer(
            None, None, round(period * 1e9), node.get_clock(), context=node.context)
        self._wake = GuardCondition(None, None, context=node.context)
        self._wait_set = _rclpy.WaitSet(1, 1, 0 if period is None else 1, 0, 0, 0,
                                        node.context.handle)
        self._stopping = False
        sys.setswitchinterval(SWITCH_INTERVAL)
        self._thread = threading.Thread(target=self._run, name="robodyn-cycle", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wait_set, subscription, timer = self._wait_set, self._subscription, self._timer
        take, msg_type, lock = subscription.take_message, self._msg_type, self._lock
        while True:
            try:
                wait_set.clear_entities()
                wait_set.add_subscription(subscription)
                wait_set.add_guard_condition(self._wake.handle)
                if timer is not None:
                    wait_set.add_timer(timer.handle)
                wait_set.wait(-1)
            except Exception as exc:  # noqa: BLE001 - the process ends: its context went away
                if not self._stopping and self._node.context.ok():
                    self._node.get_logger().error(f"control cycle stopped: {exc!r} (the watchdog "
                                                  "commands on_timeout once the state is stale)")
                return
            start = perf_counter()
            if self._stopping:
                return
            try:
                if timer is not None and wait_set.is_ready("timer", 0):
                    timer.handle.call_timer()
                    with lock:
                        self._on_tick(start)
                if wait_set.is_ready("subscription", 0):
                    with lock:   # the newest state once the lock is ours
                        taken = take(msg_type, True)
                        if taken is not None:
                            self._on_message(taken[0], start)
            except Exception as exc:  # noqa: BLE001 - the cycle goes on; the watchdog covers it
                self._node.get_logger().error(f"control cycle: {exc!r}",
                                              throttle_duration_sec=2.0)

    def destroy(self) -> None:
        """Stop and join the thread, then destroy what it waited on (teardown)."""
        self._stopping = True
        self._wake.trigger()
        self._thread.join()
        self._subscription.destroy_when_not_in_use()
        if self._timer is not None:
            self._timer.destroy()
        self._wake.destroy()
        self._wait_set.destroy_when_not_in_use()


def post(node, work, *args) -> None:
    """``work(*args)`` on the thread of the executor that spins ``node`` (here when none does):
    from the cycle, what must not delay a command (a log line, a goal's end, a message built from
    a snapshot). What it raises is logged: a task that raises ends the process under rclpy 7.1's
    EventsExecutor (rclpy#1641)."""
    executor = node.executor
    if executor is None:
        return _guarded(node, work, args)
    executor.create_task(_guarded, node, work, args)


def _guarded(node, work, args) -> None:
    try:
        work(*args)
    except Exception as exc:  # noqa: BLE001 - see post
        node.get_logger().error(f"{getattr(work, '__name__', work)}: {exc!r}",
                                throttle_duration_sec=2.0)
