"""Compiling the numba kernels before a real-time loop needs them, and saying so when it is slow.

The first run on a machine compiles the kernels (several seconds); later runs load numba's cached
machine code in a fraction of a second. Nodes and commands call the warm-ups at start-up so that the
first control cycle is not the one that compiles, and the user hears about it only when it takes a
while."""
import threading
import time

NOTICE_AFTER = 0.5  # s: a cache load is faster than this, a compile much slower


def announce_if_slow(what, work, notify=print):
    """Run ``work()``; if it is still running after NOTICE_AFTER seconds, ``notify`` a message about
    compiling ``what``. Returns the seconds it took."""
    start = time.monotonic()
    timer = threading.Timer(NOTICE_AFTER, notify, (f"Compiling the {what} (numba; first run on this "
                                                   "machine only, about 10 s, cached afterwards)...",))
    timer.start()
    try:
        work()
    finally:
        timer.cancel()
    return time.monotonic() - start
