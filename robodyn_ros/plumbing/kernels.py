"""The kernel toolkit: how the compiled kernels of ``dynamics`` and ``stewart`` are compiled, how their
interpreted twins are obtained, and how they are compiled ahead of a real-time loop.

A kernel is plain Python over scalars and preallocated arrays. ``kernel`` compiles it with numba; the
same source, run by the interpreter (``interpreted``), is the reference the tests compare the
machine code with and what the operation counts run on counting scalars. ``inline`` marks a helper
(a scalar step, or a kernel that other kernels call once per state or per row) that numba compiles
into every kernel calling it, before typing (its untyped inlining: inlining after typing, as
``register_jitable`` does, types the helper once per call site and made the task-space laws'
compile three times as long). It is inlined by numba itself, before LLVM: a call between
separately compiled functions costs a call and the reference counting of every array view passed
(about 5-15 % of a call or of a batch row; the arithmetic is the same, the results identical).
But numba types each inlined copy again, and copies it at a cost that grows with its blocks times
its variables: a big body inlined into several kernels is most of the compile time. So the big
one-state kernels are compiled once and called (a batch calls them per row, forward dynamics
calls Newton–Euler and CRBA, the adaptive law's steps the regressor's), the caller passing the
very types they were compiled for (``as_declared``, ``as_read_only``): some 6-9 % of a batch row,
a third of the whole compile (doc/install.md).
Inside a loop over joints or legs, index the 2-D array (``P[i, MASS]``) instead of taking a row
view (``P[i]``), and give an inline helper the array and the row index: every view, and every
array an inlined helper binds, costs two atomic reference-count updates that numba's pruning
removes only in branch- and loop-free code, and each stalls the pipeline (a Newton–Euler row:
0.57 us with row views, 0.26 us without).
A single-state kernel takes its workspace from ``scratch``, on the machine stack: a heap array
costs an allocation and its release in every call (0.04-0.06 us of a 0.5 us mass-matrix call).

One compile policy for every kernel: numba caches the machine code next to the module (so only the
very first run on a machine compiles), IEEE arithmetic (x/0 = inf: singular cases are flagged by the
kernels, not raised by the compiler), no fast-math reassociation (results are reproducible and the
interpreted twin agrees to rounding), and the GIL is released inside (one model may serve threads).
A one-state kernel behind a ``Direct`` call may keep it instead (``state_kernel``; so far inverse
dynamics and the mass matrix): releasing and retaking it costs 0.035 us a call, and a fraction of
a microsecond leaves another thread nothing to do in the gap. The release is also how a batch
uses every core: ``by_rows`` runs one serial batch kernel on a share of the rows per core, in
threads (no parallel compile, no threading layer of numba's that could refuse concurrent callers);
below PARALLEL_ROWS rows a batch stays on the calling thread.
"""
import concurrent.futures
import contextlib
import functools
import hashlib
import os
import sys
import threading
import time
import types
from pathlib import Path

import numba
import numba.core.event
import numpy as np
from numba.core import types as nb_types
from numba.core.registry import CPUDispatcher
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload

_OPTIONS = dict(cache=True, error_model="numpy", fastmath=False, nogil=True)
PACKAGE = Path(__file__).resolve().parents[1]
SOURCES_STAMP = PACKAGE / "__pycache__" / "numba_sources.stamp"


def sources_stamp() -> str:
    """The size and modification time of every module of the package, as one digest."""
    files = sorted(PACKAGE.rglob("*.py"))
    return hashlib.sha256(repr([(str(f.relative_to(PACKAGE)), s.st_size, s.st_mtime_ns)
                                for f in files for s in (f.stat(),)]).encode()).hexdigest()


def forget_a_stale_cache() -> bool:
    """numba judges a cached kernel by its own module's time stamp only: a kernel that inlined or
    calls one of another module keeps the old machine code when only that module changed (a
    cfunc even the old layout of the packed parameters). So the whole package's cache goes when
    any of its modules changed since the cache was last judged. Whether it went; nothing to do
    where the package is not writable (numba's per-module check is then all there is)."""
    stamp = sources_stamp()
    with contextlib.suppress(OSError):
        if SOURCES_STAMP.read_text() == stamp:
            return False
    try:
        for entry in PACKAGE.rglob("*.nb[ic]"):
            entry.unlink(missing_ok=True)
        SOURCES_STAMP.parent.mkdir(exist_ok=True)
        SOURCES_STAMP.write_text(stamp)
    except OSError:
        return False
    return True


forget_a_stale_cache()   # before any kernel of this process loads its cache



# argument types of ``Direct`` signatures: float64 vectors and matrices of any layout, arrays the
# caller allocated (C order), the packed read-only parameter arrays (a serial arm's rows, a Stewart
# platform's vector), an index vector (np.intp), a float, an int, a bool and a vector of bools
VECTOR = numba.types.Array(numba.types.float64, 1, "A")
MATRIX = numba.types.Array(numba.types.float64, 2, "A")
C_VECTOR = numba.types.Array(numba.types.float64, 1, "C")
C_MATRIX = numba.types.Array(numba.types.float64, 2, "C")
C_ARRAY3 = numba.types.Array(numba.types.float64, 3, "C")
FLOAT = numba.types.float64
BOOL_VECTOR = numba.types.Array(numba.types.boolean, 1, "C")
PARAMETERS = numba.types.Array(numba.types.float64, 2, "C", readonly=True)
PARAMETER_VECTOR = numba.types.Array(numba.types.float64, 1, "C", readonly=True)
INDEX_VECTOR = numba.types.Array(numba.types.intp, 1, "A")
INT = numba.types.int64
INT_VECTOR = numba.types.Array(numba.types.int64, 1, "C")
INT32_VECTOR = numba.types.Array(numba.types.int32, 1, "C")
# a serialized message as rclpy's raw subscription gives it (bytes), and bytes kept as an array
BYTES = numba.types.Bytes(numba.types.uint8, 1, "C", readonly=True)
BYTE_VECTOR = numba.types.Array(numba.types.uint8, 1, "C", readonly=True)
# what a Direct caller's guard compares with (``x.__class__ is NDARRAY and x.dtype is FLOAT64``):
# identity tests, the cheapest check of a 1 kHz call (numpy keeps one float64 dtype object)
NDARRAY, FLOAT64 = np.ndarray, np.dtype(np.float64)
BOOL = numba.types.boolean


class Direct:
    """A kernel's machine code for one signature, called as ``direct.call(...)`` without numba's
    dispatch: on every call the dispatcher types each argument and looks up the version compiled
    for those types, some 0.15 us of a 1 us single-state call. The machine code does not check
    its arguments: the caller passes exactly ``signature``'s types (NumPy arrays of the declared
    dtype and dimensions, in any layout; Python ints and bools), as an API's checked fast path
    does: another rank would be read as the wrong shape.
    Compiled (or loaded from numba's cache) on the first call, or by ``ready``."""
    __slots__ = ("call", "_kernel", "_signature")

    def __init__(self, kernel, *signature):
        self._kernel, self._signature = kernel, signature
        self.call = self._first_call

    def ready(self) -> None:
        """Compile now (or load from numba's cache): at a loop's setup, not in its first cycle."""
        if self.call == self._first_call:
            self.call = self._kernel.compile(self._signature)

    def _first_call(self, *args):
        self.ready()
        return self.call(*args)


# the largest ``scratch`` taken from the machine stack (float64 values, 32 kB); a larger one is a
# heap array: a thread's stack is some MB, and a kernel may run on any thread
STACK_SCRATCH = 4096


def scratch(rows, cols):
    """A (rows, cols) float64 work array, uninitialised, for the rest of one kernel call. Compiled,
    it lies on the machine stack (up to STACK_SCRATCH values): no allocation and no release, and
    each thread has its own, so a model still serves threads. It lives until the kernel that
    calls ``scratch`` returns: take it in a ``kernel``'s or ``state_kernel``'s own body, once,
    outside loops (inlined into a loop, by ``inline``, each pass would take
    more stack; a batch kernel takes one heap workspace for all its rows), and return no view of
    it. Interpreted, it is ``np.empty``."""
    return np.empty((rows, cols))


@intrinsic
def _stack_array(typingctx, rows, cols):
    signature = nb_types.Array(nb_types.float64, 2, "C")(nb_types.intp, nb_types.intp)

    def codegen(context, builder, sig, args):
        rows, cols = args
        data = builder.alloca(context.get_value_type(nb_types.float64), size=builder.mul(rows, cols))
        data.align = 64   # a cache line: else where rows straddle lines depends on the stack's place
        array = context.make_array(sig.return_type)(context, builder)
        itemsize = context.get_constant(nb_types.intp, 8)
        context.populate_array(array, data=data, shape=[rows, cols],
                               strides=[builder.mul(cols, itemsize), itemsize], itemsize=itemsize,
                               meminfo=None)   # no owner: reference counting skips it
        return array._getvalue()
    return signature, codegen


# inlined into the calling kernel by numba, so that the stack memory is the caller's frame's
@overload(scratch, inline="always")
def _scratch(rows, cols):
    def on_stack(rows, cols):
        if rows * cols <= STACK_SCRATCH:
            return _stack_array(rows, cols)
        return np.empty((rows, cols))
    return on_stack


def as_declared(value):
    """``value`` typed as ``Direct`` declares an argument: an array with layout "A" (VECTOR,
    MATRIX), a constant as its plain type (BOOL, INT; numba types a constant argument as a type of
    that one value). A kernel that passes its rows (C order), its own arrays or a constant to
    another kernel so typed then calls the version of it already compiled, where these types
    would make numba compile the whole callee once more. Interpreted, ``value`` itself."""
    return value


def as_read_only(array):
    """``array`` typed read-only, as ``Direct``'s PARAMETER_VECTOR and PARAMETERS declare it (see
    ``as_declared``). Interpreted, ``array`` itself."""
    return array


@intrinsic
def _as_declared(typingctx, value):
    array = isinstance(value, nb_types.Array)
    declared = value.copy(layout="A") if array else nb_types.unliteral(value)

    def codegen(context, builder, sig, args):
        if array:   # every layout shares one data model: the same array, nothing copied
            return impl_ret_borrowed(context, builder, declared, args[0])
        return context.cast(builder, args[0], value, declared)
    return declared(value), codegen


@intrinsic
def _as_read_only(typingctx, array):
    def codegen(context, builder, sig, args):
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])
    return array.copy(readonly=True)(array), codegen


@overload(as_declared)
def _as_declared_overload(value):
    return lambda value: _as_declared(value)


@overload(as_read_only)
def _as_read_only_overload(array):
    return lambda array: _as_read_only(array)


def kernel(func):
    """``func`` compiled on its first call (or loaded from numba's cache); ``.py_func`` is the source."""
    return numba.njit(**_OPTIONS)(func)


def state_kernel(func):
    """A ``kernel`` of one state, entered through ``Direct``, that keeps the GIL (module docstring)."""
    return numba.njit(**dict(_OPTIONS, nogil=False))(func)


def inline(func):
    """A ``kernel`` that is also compiled into every kernel that calls it (module docstring)."""
    return numba.njit(inline="always", **_OPTIONS)(func)


@functools.lru_cache(maxsize=None)
def interpreted(module):
    """The namespace of ``module`` in which every kernel is its plain Python source, calling the
    interpreted twins of the kernels it calls (in this module or another), not the compiled code:
    ``interpreted(m)["f"]`` runs ``m.f`` in the interpreter, on floats or on counting scalars."""
    ns = dict(vars(module))
    for name, obj in vars(module).items():
        if not isinstance(obj, CPUDispatcher):
            continue
        f = obj.py_func
        if f.__module__ == module.__name__:
            ns[name] = types.FunctionType(f.__code__, ns, f.__name__, f.__defaults__, f.__closure__)
        else:
            ns[name] = interpreted(sys.modules[f.__module__])[f.__name__]
    return ns


class _Compiles(numba.core.event.Listener):
    """Calls ``first()`` when numba starts its first compile (a cache load is no compile)."""

    def __init__(self, first):
        super().__init__()
        self._first, self.count = first, 0

    def on_start(self, event):
        self.count += 1
        if self.count == 1:
            self._first()

    def on_end(self, event):
        pass


def warm_up(what, exercise, notify=print, estimate=None):
    """Run ``exercise()``, which calls every kernel a loop will need once, before the loop needs
    them. If numba compiles (an empty or stale cache, not a cache load), ``notify`` that it compiles
    ``what``, with ``estimate`` (the CPU seconds it took from an empty cache where it was measured),
    as the first compile starts, and how long it took when done. Returns the seconds it took.
    (Not judged by the time taken: on a busy machine a first cache load took 0.7 s.)"""
    start = time.monotonic()
    about = "" if estimate is None else f": about {estimate:.0f} s of one core, more on a busy machine"
    compiles = _Compiles(lambda: notify(f"Compiling the {what} (numba, empty or stale cache{about}; "
                                        "once, cached afterwards)..."))
    with numba.core.event.install_listener("numba:compile", compiles):
        exercise()
    took = time.monotonic() - start
    if compiles.count:
        notify(f"Compiled the {what} in {took:.1f} s")
    return took


# Rows below which a batch runs on the calling thread alone: handing work to another thread costs
# about 30 us, some 50 states' worth; from 2048 rows on it is at most a few per cent of the batch.
PARALLEL_ROWS = 2048
# Each core takes shares of the rows until none is left, so that a core slowed by another process
# takes fewer of them instead of making the whole batch wait for its half.
SHARES_PER_CORE = 4
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@functools.lru_cache(maxsize=None)
def _helpers(pid):
    """This process's helper threads (keyed by pid: a forked child has none of its parent's)."""
    return concurrent.futures.ThreadPoolExecutor(CORES - 1, thread_name_prefix="robodyn-kernels")


def by_rows(work, rows):
    """Call ``work(start, stop)`` on ranges of rows that together cover ``range(rows)``: once on this
    thread below PARALLEL_ROWS (or on one core), else on this thread and CORES - 1 helper threads,
    each taking the next of SHARES_PER_CORE * CORES ranges until none is left. Returns when all are
    done, re-raising the first error (after which no further range is started)."""
    if rows < PARALLEL_ROWS or CORES < 2:
        work(0, rows)
        return
    parts = SHARES_PER_CORE * CORES
    bounds = [rows * c // parts for c in range(parts + 1)]
    todo = list(zip(bounds[-2::-1], bounds[:0:-1]))   # popped from the end: first rows first
    lock = threading.Lock()

    def take():
        while True:
            with lock:
                if not todo:
                    return
                start, stop = todo.pop()
            try:
                work(start, stop)
            except BaseException:
                with lock:
                    todo.clear()
                raise

    helpers = [_helpers(os.getpid()).submit(take) for _ in range(CORES - 1)]
    try:
        take()
    finally:
        for helper in helpers:
            helper.cancel()                  # one that has not started yet has nothing left to do
        concurrent.futures.wait(helpers)     # no thread still writes once this returns or raises
    for helper in helpers:
        if not helper.cancelled():
            helper.result()


def one_blas_thread():
    """A context in which BLAS runs on one thread: for the many small matrices of an optimisation
    (an excitation's W_base, a consistent estimate's p x p steps), on a busy machine OpenBLAS's
    threads spin waiting for cores, five to ten times slower (measured on 2 shared cores).
    threadpoolctl is the ``identify`` extra's; without it this does nothing."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")
