"""The laws' C entry points called from C (``control/native.py``, doc/native.md): the harness
``robodyn_ros/native/harness.c``, compiled here with the system's gcc, calls a law's step from a
pthread of its own while Python holds the GIL, and times it beside ``compute`` and a Newton–Euler
pass in plain C (the floor a native law's cost has). The test (test/test_native.py) and
``robodyn-ros bench control`` both use it."""
import ctypes
import functools
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from ...control.native import OBSERVER, header_path
from ...dynamics import layout

HARNESS = header_path().with_name("harness.c")
# the packed parameters' columns the C floor reads, from the one place they are defined
_COLUMNS = {"NC": layout.N_COLUMNS, **{name: getattr(layout, name) for name in (
    "MASS", "FIRST_MOMENT", "INERTIA_AT_ORIGIN", "ARMATURE", "VISCOUS", "COULOMB_POS",
    "COULOMB_NEG", "COULOMB_TANH", "COULOMB_BAND", "FRICTION_OFFSET", "PRISMATIC", "GRAVITY_VECTOR")}}
_P = ctypes.c_void_p


class Unavailable(RuntimeError):
    """The harness cannot be built here (the reason is the message)."""


@functools.lru_cache(maxsize=None)
def harness():
    """The compiled harness (ctypes), built once per process into a temporary directory."""
    gcc = shutil.which("gcc")
    if gcc is None:
        raise Unavailable("gcc is not installed: the C harness of the native entry points cannot "
                          "be compiled")
    build = Path(tempfile.mkdtemp(prefix="robodyn-harness-"))
    library = build / "libharness.so"
    command = [gcc, "-O2", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-pthread",
               f"-I{header_path().parent}", *(f"-D{k}={v}" for k, v in _COLUMNS.items()),
               str(HARNESS), "-o", str(library), "-lm"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise Unavailable(f"gcc could not compile {HARNESS.name}: {done.stderr.strip()}")
    lib = ctypes.CDLL(str(library))
    # harness_start through PyDLL, which keeps the GIL over the call: through CDLL the GIL is let
    # go while the thread is created, and a step that takes it could run before the caller's busy
    # loop holds it again
    lib.harness_start = ctypes.PyDLL(str(library)).harness_start
    lib.harness_start.restype = _P
    lib.harness_start.argtypes = [_P, _P, ctypes.c_int64, _P, _P, _P, _P, ctypes.c_int32, _P]
    lib.harness_join.argtypes = [_P]
    lib.harness_cost.restype = ctypes.c_double
    lib.harness_cost.argtypes = [_P, _P, ctypes.c_int64, ctypes.c_int64, _P]
    lib.harness_continue.restype = lib.harness_reset.restype = ctypes.c_int32
    lib.harness_continue.argtypes = [_P, _P]
    lib.harness_reset.argtypes = [_P, _P, _P]
    lib.harness_call.restype = ctypes.c_int32
    lib.harness_call.argtypes = [_P, _P, _P, _P]
    lib.rnea_floor.argtypes = [_P, ctypes.c_int64, _P, _P, _P, _P, _P]
    lib.rnea_floor_cost.restype = ctypes.c_double
    lib.rnea_floor_cost.argtypes = [_P, ctypes.c_int64, _P, ctypes.c_int64, ctypes.c_int64, _P, _P]
    return lib


def inputs(dof, calls, observer=False, dt=1e-3, seed=0):
    """``calls`` rows of the harness's inputs: q, q̇, q_d, q̇_d, q̈_d (observer: q, q̇, τ) and dt,
    a smooth motion (a law's filters and estimates see what a loop gives them) with noise."""
    rng = np.random.default_rng(seed)
    t = dt * np.arange(calls)[:, None]
    phase = rng.uniform(0.0, 2.0 * np.pi, dof)
    q = 0.6 * np.sin(2.0 * t + phase)
    qd = 1.2 * np.cos(2.0 * t + phase)
    noise = 1e-3 * rng.standard_normal((calls, dof))
    if observer:
        parts = [q + noise, qd, 20.0 * np.sin(3.0 * t + phase)]
    else:
        parts = [q + noise, qd + noise, q, qd, -2.4 * np.sin(2.0 * t + phase)]
    return np.ascontiguousarray(np.hstack(parts + [np.full((calls, 1), dt)]))


def threaded(handle, rows, hold_for=60.0, priority=0):
    """Every row of ``rows`` through ``handle``'s step, called by the harness from a pthread
    (under SCHED_FIFO at ``priority`` if > 0 and allowed) while this thread holds the GIL in a
    busy loop, never letting go of it (a switch interval longer than the loop): the outputs,
    statuses and nanoseconds per call, whether the pthread finished while the GIL was held
    (False: it waited for the GIL until ``hold_for`` s had passed) and whether it ran under
    SCHED_FIFO."""
    lib = harness()
    calls = rows.shape[0]
    outputs = np.zeros((calls, handle.dof))
    status = np.zeros(calls, dtype=np.int32)
    nanoseconds = np.zeros(calls, dtype=np.int64)
    done, realtime = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int32)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(10 * hold_for)
    try:
        run = lib.harness_start(handle.address, rows.ctypes.data, calls, outputs.ctypes.data,
                                status.ctypes.data, nanoseconds.ctypes.data, done.ctypes.data,
                                priority, realtime.ctypes.data)
        if not run:
            raise RuntimeError("the harness could not start its thread")
        deadline = time.monotonic() + hold_for
        while not done[0] and time.monotonic() < deadline:   # the GIL held: pure bytecode
            pass
        finished = bool(done[0])
    finally:
        sys.setswitchinterval(interval)
    lib.harness_join(run)   # ctypes lets go of the GIL here
    return outputs, status, nanoseconds, finished, bool(realtime[0])


def python_times(law, rows, contended):
    """Nanoseconds of each ``law.compute`` over ``rows`` (as ``inputs`` makes them), called from
    a Python thread of its own; ``contended``: while this thread runs a busy loop, as a Python
    executor's thread would be busy with callbacks (the GIL then changes hands every switch
    interval)."""
    n = law.dof
    calls = [tuple(np.ascontiguousarray(r[k * n:(k + 1) * n]) for k in range(5)) + (r[5 * n],)
             for r in rows]
    times = np.zeros(len(calls), dtype=np.int64)

    def loop():
        for k, args in enumerate(calls):
            start = time.perf_counter_ns()
            law.compute(*args)
            times[k] = time.perf_counter_ns() - start
    thread = threading.Thread(target=loop)
    thread.start()
    while contended and thread.is_alive():
        pass
    thread.join()
    return times


def floor(model, q, qd, qdd):
    """The C Newton–Euler pass (gravity and friction) at one state."""
    P = np.ascontiguousarray(model.params)
    q, qd, qdd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd, qdd))
    tau, work = np.zeros(model.dof), np.zeros(24 * model.dof)
    harness().rnea_floor(P.ctypes.data, model.dof, q.ctypes.data, qd.ctypes.data, qdd.ctypes.data,
                         work.ctypes.data, tau.ctypes.data)
    return tau


def costs(handle, law, model, calls=20000, rounds=3):
    """Seconds per call, ``rounds`` rounds interleaved: the native step from C, ``compute``
    from Python and the C floor, on the same 1000 rows cycled through."""
    lib = harness()
    n = model.dof
    rows = inputs(n, 1000, handle.kind == OBSERVER)
    states = np.ascontiguousarray(np.hstack([rows[:, :2 * n], rows[:, 4 * n:5 * n]]))
    out, tau, work = np.zeros(n), np.zeros(n), np.zeros(24 * n)
    P = np.ascontiguousarray(model.params)
    split = [tuple(np.ascontiguousarray(r[k * n:(k + 1) * n]) for k in range(5)) + (r[5 * n],)
             for r in rows]
    native, python, c_floor = [], [], []
    for _ in range(rounds):
        native.append(lib.harness_cost(handle.address, rows.ctypes.data, 1000, calls,
                                       out.ctypes.data))
        start = time.perf_counter()
        for k in range(calls // 10):
            law.compute(*split[k % 1000])
        python.append((time.perf_counter() - start) / (calls // 10))
        c_floor.append(lib.rnea_floor_cost(P.ctypes.data, n, states.ctypes.data, 1000, calls,
                                           work.ctypes.data, tau.ctypes.data))
    return native, python, c_floor


def spread(values):
    """(median, min, max) of ``values``."""
    return statistics.median(values), min(values), max(values)
