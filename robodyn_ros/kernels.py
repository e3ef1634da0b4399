"""The kernel toolkit: how the compiled kernels of ``dynamics`` and ``stewart`` are compiled, how their
interpreted twins are obtained, and how they are compiled ahead of a real-time loop.

A kernel is plain Python over scalars and preallocated arrays. ``kernel`` compiles it with numba; the
same source, run by the interpreter (``interpreted``), is the reference the tests compare the
machine code with and what the operation counts run on counting scalars. ``inline`` marks a scalar
helper that numba compiles into its callers and that stays an ordinary Python function otherwise.

One compile policy for every kernel: numba caches the machine code next to the module (so only the
very first run on a machine compiles), IEEE arithmetic (x/0 = inf: singular cases are flagged by the
kernels, not raised by the compiler), no fast-math reassociation (results are reproducible and the
interpreted twin agrees to rounding), and the GIL is released inside (one model may serve threads).
"""
import functools
import sys
import threading
import time
import types

import numba
from numba.core.registry import CPUDispatcher
from numba.extending import register_jitable

_OPTIONS = dict(cache=True, error_model="numpy", fastmath=False, nogil=True)

inline = register_jitable


def kernel(func):
    """``func`` compiled on its first call (or loaded from numba's cache); ``.py_func`` is the source."""
    return numba.njit(**_OPTIONS)(func)


@functools.lru_cache(maxsize=None)
def interpreted(module):
    """The namespace of ``module`` in which every kernel is its plain Python source, calling the
    interpreted twins of the kernels it calls (in this module or another), not the compiled code:
    ``interpreted(m)["f"]`` runs ``m.f`` in the interpreter, on floats or on counting scalars."""
    ns = dict(vars(module))
    for name, obj in vars(module).items():
        if isinstance(obj, CPUDispatcher):
            f = obj.py_func
            if f.__module__ == module.__name__:
                ns[name] = types.FunctionType(f.__code__, ns, f.__name__, f.__defaults__, f.__closure__)
            else:
                ns[name] = interpreted(sys.modules[f.__module__])[f.__name__]
    return ns


NOTICE_AFTER = 0.5  # s: a cache load is faster than this, a compile much slower


def warm_up(what, exercise, notify=print):
    """Run ``exercise()``, which calls every kernel a loop will need once, before the loop needs
    them; if it is still running after NOTICE_AFTER seconds (a compile, not a cache load),
    ``notify`` a message about compiling ``what``. Returns the seconds it took."""
    start = time.monotonic()
    timer = threading.Timer(NOTICE_AFTER, notify, (f"Compiling the {what} (numba; first run on this "
                                                   "machine only, about 10 s, cached afterwards)...",))
    timer.start()
    try:
        exercise()
    finally:
        timer.cancel()
    return time.monotonic() - start
