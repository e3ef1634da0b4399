"""A node's process: its main loop, its signals, its heap and its way out.

``spin`` runs one node until SIGINT or SIGTERM. Signals complete the future the main loop
waits on (or, while the node is made or configured, end the process at once) and raise nothing:
a KeyboardInterrupt raised inside a callback that C++ called aborts the process (pybind11
error_already_set), and ``ros2 launch`` sends SIGINT twice on Ctrl-C. The loop then
takes the node through its shutdown transition (an active controller leaves its safe command) and
the process exits 0.
"""
from __future__ import annotations

import ctypes
import faulthandler
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence

import rclpy
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future

from .common import ConfigurationError
from .lifecycle import ManagedNode, freeze_heap


#: glibc's mallopt parameter, and the threshold it starts from (bytes)
M_MMAP_THRESHOLD, MMAP_THRESHOLD = -3, 128 * 1024


def pin_mmap_threshold() -> bool:
    """Keep every block of 128 kB or more in an mmap of its own, given back when freed. glibc
    raises its threshold to the largest such block freed (up to 32 MB): after one 4 MB message,
    the next ones came from the main heap, which a small live object above them keeps from
    shrinking; a controller's RSS climbed ~150 MB under the fuzzer's floods of large messages.
    Setting the threshold also stops the raising (mallopt(3)). False where there is no glibc."""
    try:
        return ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    except (OSError, AttributeError):
        return False


#: s the main loop waits in the executor at a time. rclpy 7.1's EventsExecutor keeps a few dozen
#: bytes for good at every spin_until_future_complete: at the 0.1 s this loop once waited, every
#: node process (controller, simulator, a node that only subscribes) grew by 20 kB a minute. Without
#: a timeout the call never returns and never fires timers; the timeout bounds nothing else, since
#: a signal completes the future the loop waits on (_end_on_signals).
SPIN_CALL = 60.0
#: s a node stopped while it starts waits before it ends. launch_ros, which may be waiting for the
#: node's answer to its configure request, looks once a second whether to abandon it: a node that
#: ended at once, before that, made ros2 launch itself abort at its exit ("terminate called without
#: an active exception", exit -6 or -11; 5 of 6 runs stopped mid-compile, 0 of 6 with 2 s).
LINGER = 2.0
#: s the way out (the safe command, release, the DDS participant's deletion) takes at most before
#: every thread's stack is written to stderr
TEARDOWN = 4.0


def _end_on_signals(ended: Future, starting: Callable[[], bool]) -> None:
    """SIGINT and SIGTERM complete ``ended`` at once, however many arrive. Python runs a signal
    handler only in the main thread, between bytecodes, and the main thread waits in C++ for the
    next event (an idle node has none): the signal's number, written to a pipe by the C-level
    handler (``signal.set_wakeup_fd``), wakes a thread that completes the future instead. A
    handler that raised would raise inside a callback called from C++ and abort the process (or,
    inside one of llvmlite's ctypes callbacks, be printed and dropped). While ``starting()``
    (the node is being made, or configured: autostart's configure before the loop, a lifecycle
    manager's such as ros2 launch's inside it) the handler ends the process (exit 0) LINGER s
    later, within launch's 5 s before SIGTERM, leaving the compile where it is: configure may
    compile the kernels for a minute from an empty numba cache, and a node that ran on to its end
    outlived ``ros2 launch``'s SIGINT and SIGTERM and was killed. Nothing commands yet to be left
    safe; numba writes each cache file whole (a new file renamed into place) or not at all."""
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write)

    def on_signal(signum, _):   # installed so that the C-level handler writes the pipe
        if starting():
            for s in (signal.SIGINT, signal.SIGTERM):
                signal.signal(s, signal.SIG_IGN)
            os.write(2, f"{signal.Signals(signum).name} while starting: stopped\n".encode())
            time.sleep(LINGER)
            os._exit(0)
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, on_signal)

    def wait():
        os.read(read, 1)
        ended.set_result(None)
    threading.Thread(target=wait, name="signals", daemon=True).start()


def spin(make_node: Callable[[], object], args: Sequence[str] | None = None) -> int:
    """Run one node with the EventsExecutor until SIGINT/SIGTERM or shutdown; a
    ConfigurationError ends the process with its message (exit 1) instead of a traceback.
    SIGUSR1 writes every thread's Python stack to stderr and the node runs on (a node that
    stopped answering, seen without stopping it)."""
    from rclpy.experimental import EventsExecutor
    ended, making = Future(), threading.Event()
    node = executor = None
    _end_on_signals(ended, lambda: making.is_set() or (isinstance(node, ManagedNode)
                                                       and node.configuring.is_set()))
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    pin_mmap_threshold()
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    try:
        making.set()
        try:
            node = make_node()
        finally:
            making.clear()
        freeze_heap()
        executor = EventsExecutor()
        executor.add_node(node)
        # EventsExecutor.spin() (no timeout) never fires timers in this rclpy (7.1.x); spinning
        # until a future completes costs less per event than spin_once (1 kHz timer: 5.9 %
        # against 8.5 % of a core here)
        while not ended.done() and rclpy.ok():
            executor.spin_until_future_complete(ended, timeout_sec=SPIN_CALL)
    except ConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        # a way out that hangs says where, before ros2 launch escalates at 5 s (nothing is written
        # if it hangs after Python's own exit, in the C++ static destructors)
        faulthandler.dump_traceback_later(TEARDOWN)
        # the process ends: later signals are ignored (Python's own exit would restore the
        # default handler, and one more Ctrl-C would then kill the process)
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
        if isinstance(node, ManagedNode) and executor is not None and rclpy.ok():
            node.finish()  # an active controller leaves its safe command
            executor.spin_once(timeout_sec=0.0)  # hand the last messages to the middleware
        if node is not None:
            release(node)
        context = rclpy.get_default_context()
        rclpy.try_shutdown()
        context.destroy()
        # past here only the interpreter's own exit: a dump would show no Python frame, only
        # noise after the error a failed start printed (a node never released exits slowly)
        faulthandler.cancel_dump_traceback_later()
    return 0


def release(node) -> None:
    """Destroy ``node`` and all it holds. rclpy's ``destroy_node`` leaves the waitables (action
    servers and clients), and each of them keeps the rcl node, hence the context and its DDS
    participant, alive to the end of the process: the participant's threads still ran when
    the C++ static destructors began (seen in gdb; a node process once hung there, after
    Python's own exit, on CI). Released in order, the participant goes before Python exits."""
    node.destroy_node()
    for waitable in list(node.waitables):
        waitable.destroy()

