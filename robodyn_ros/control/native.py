"""The laws without Python in the loop: a C entry point per law that a real-time thread calls
without the GIL (doc/native.md; the C side is ``robodyn_ros/native/robodyn_law.h``).

Python builds a law once (``native_law(law)``, ``native_observer(observer)``) and hands out a
``robodyn_law`` struct: the address of the law's step, a numba ``cfunc`` (machine code with a C
signature, no Python object), and the addresses of the buffers the law owns. A native thread then
calls ``law->step.law(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort)``: the step reads the struct,
runs the very kernels ``compute`` runs, on the law's own arrays, then the node's command stage
(``drive.stage_command_into``: what the drive adds taken off, saturation, rate limit) into
``effort``: every output equals ``compute``'s so finished, bit for bit. It takes no GIL,
allocates nothing (the kernels' workspaces are on the machine stack) and raises nothing: a
kernel's failure is caught in the compiled code (numba's try/except; an uncaught one would take
the GIL to print it) and becomes a status code, as are a non-finite input and a non-finite
effort.

The struct is an int64 array (every field is 8 bytes: addresses and sizes); a step reads its
own arrays through ``table``, one address or setting per entry, in the order its builder below
writes them, and writes neither (nor the model or the limits: what the header marks ``const``).
A handle copies some of its owner's settings (the observer's model, a task-space law's target
mode): the owner counts each change of them in ``revision``, and a step of a handle built before
the change refuses (``STALE``) rather than run on what the owner no longer is. The steps are
compiled once per machine (numba's cache), on the first ``native_law``.
"""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import numba
import numpy as np
from numba import types as nb
from numba.extending import intrinsic

from ..dynamics.layout import N_COLUMNS
from ..dynamics.newton_euler import GRAVITY, rnea_no_wrench
from ..plumbing.kernels import as_declared, as_read_only, inline
from .adaptive import AdaptiveComputedTorque, base_step, payload_step
from .drive import (DRIVE_FRICTION, PERIOD, WINDOW_ROWS, Drive, compensation_bits,
                    stage_command_into)
from .drive import RATE_LIMITED as DRIVE_RATE_LIMITED
from .laws import ComputedTorque, PDGravity, computed_torque_step, pid_into
from .momentum_observer import MomentumObserver, observer_reset, observer_step
from .task_space import CartesianImpedance, OperationalSpace, cartesian_impedance_step, operational_space_step

__all__ = ["ABI", "NativeLaw", "header_path", "native_law", "native_observer"]

#: the struct's layout version (ROBODYN_LAW_ABI)
ABI = 2
#: what ``step`` is (ROBODYN_KIND_*)
LAW, OBSERVER = 1, 2
#: a step's status: >= 0 effort written, with these bits; < 0 nothing written (robodyn_law.h)
OK, SATURATED, RATE_LIMITED = 0, 1, 2
BAD_INPUT, NONFINITE_EFFORT, FAILED, STALE = -1, -2, -3, -4
# the struct's words (robodyn_law.h)
(ABI_WORD, KIND, DOF, STEP, RESET, MODEL, MODEL_SIZE, WORKSPACE, WORKSPACE_SIZE, ESTIMATE,
 ESTIMATE_SIZE, EFFORT_LIMIT, RATE_LIMIT, LAST_COMMAND, COMPENSATES, TABLE) = range(16)
WORDS = 16

_DOUBLES = nb.CPointer(nb.float64)
#: int32 step(robodyn_law *, q, qd, q_ref, qd_ref, qdd_ref, double dt, double *effort)
LAW_SIGNATURE = nb.int32(nb.CPointer(nb.int64), _DOUBLES, _DOUBLES, _DOUBLES, _DOUBLES, _DOUBLES,
                         nb.float64, _DOUBLES)
#: int32 step(robodyn_law *, q, qd, tau, double dt, double *residual)
OBSERVER_SIGNATURE = nb.int32(nb.CPointer(nb.int64), _DOUBLES, _DOUBLES, _DOUBLES, nb.float64,
                              _DOUBLES)
#: int32 reset(robodyn_law *, q, qd)
RESET_SIGNATURE = nb.int32(nb.CPointer(nb.int64), _DOUBLES, _DOUBLES)
_LAW_CALL = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_void_p] * 6, ctypes.c_double, ctypes.c_void_p)
_OBSERVER_CALL = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_void_p] * 4, ctypes.c_double,
                                  ctypes.c_void_p)
_RESET_CALL = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_void_p] * 3)


def header_path() -> Path:
    """The C header a native caller includes (shipped as package data)."""
    return Path(__file__).resolve().parents[1] / "native" / "robodyn_law.h"


# ------------------------------------------------------------------ reading the struct, compiled

@intrinsic
def _pointer(typingctx, address):
    """The int64 ``address`` as a void pointer (numba.carray takes one)."""
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(nb.voidptr))
    return nb.voidptr(nb.int64), codegen


@inline
def _doubles(table, k, shape):
    return numba.carray(_pointer(table[k]), shape, np.float64)


@inline
def _indices(table, k, n):
    return numba.carray(_pointer(table[k]), (n,), np.intp)


@inline
def _flags(table, k, n):
    return numba.carray(_pointer(table[k]), (n,), np.bool_)


@inline
def _counter(table, k):
    return numba.carray(_pointer(table[k]), (1,), np.int64)


@inline
def _table(words):
    return numba.carray(_pointer(words[TABLE]), (TABLE_WORDS,), np.int64)


# every table's shared entries: 0 the command stage's identity index; the address of the
# owner's revision counter and its value when the handle was built, and the command stage's clock
# (the calls' dt summed; the drive's period), the command it wants and its window of the commands
# the drive may have held (past the longest table)
REVISION, BUILT, CLOCK, TARGET, WINDOW = 20, 21, 22, 23, 24
TABLE_WORDS = 25


@inline
def _stale(table):
    """Whether the owner changed what the handle copied since it was built."""
    return _counter(table, REVISION)[0] != table[BUILT]


@inline
def _finite(x, n):
    for i in range(n):
        if not np.isfinite(x[i]):
            return False
    return True


@inline
def _open(law, q, qd, q_ref, qd_ref, qdd_ref, dt):
    """The struct's words, its table, the number of joints, the model's packed parameters and the
    caller's pointers as arrays (typed as the kernels' Direct calls declare them: their compiled
    versions are called), and the status the step refuses with (0: none): STALE, or BAD_INPUT
    unless all of these and dt (>= 0) are finite."""
    words = numba.carray(law, (WORDS,))
    n = words[DOF]
    table = _table(words)
    arrays = (numba.carray(q, (n,)), numba.carray(qd, (n,)), numba.carray(q_ref, (n,)),
              numba.carray(qd_ref, (n,)), numba.carray(qdd_ref, (n,)))
    good = np.isfinite(dt) and dt >= 0.0
    for x in arrays:
        good = good and _finite(x, n)
    refused = STALE if _stale(table) else OK if good else BAD_INPUT
    P = as_read_only(numba.carray(_pointer(words[MODEL]), (n + 1, N_COLUMNS), np.float64))
    q, qd, q_ref, qd_ref, qdd_ref = arrays
    return (words, table, n, P, as_declared(q), as_declared(qd), as_declared(q_ref),
            as_declared(qd_ref), as_declared(qdd_ref), refused)


@inline
def _command(words, n, P, q, qd, tau, dt, effort):
    """The node's command stage (``drive.stage_command_into``) from the law's torque into the
    caller's ``effort``, on the clock the calls' ``dt`` make: what the drive adds taken off,
    saturated, within rate x period of the last command and of every command sent within one
    drive period before (a host that calls twice in one drive cycle), the last command it then
    becomes."""
    table = _table(words)
    last = as_declared(numba.carray(_pointer(words[LAST_COMMAND]), (n,), np.float64))
    out = numba.carray(effort, (n,))
    clock = _doubles(table, CLOCK, (2,))
    t = clock[0] + dt
    code = stage_command_into(P, as_declared(words[COMPENSATES]), q, tau,
                              as_declared(numba.carray(_pointer(words[EFFORT_LIMIT]), (n,), np.float64)),
                              as_declared(numba.carray(_pointer(words[RATE_LIMIT]), (n,), np.float64)),
                              t, clock[1], as_declared(_indices(table, 0, n)),
                              _doubles(table, WINDOW, (WINDOW_ROWS, 1 + 2 * n)),
                              as_declared(_doubles(table, TARGET, (n,))), last)
    if code < 0:
        return NONFINITE_EFFORT
    clock[0] = t
    for i in range(n):
        out[i] = last[i]
    return ((SATURATED if code % DRIVE_RATE_LIMITED else OK)
            | (RATE_LIMITED if code >= DRIVE_RATE_LIMITED else OK))


# Each step: its table's entries after the shared one (0: the identity index of the command stage).

def computed_torque(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort):
    """1 mode, 2 gains, 3 full, 4 integral, 5 integral limit, 6 integrates, 7 work, 8 v,
    9 tau, 10 the reference (3, n), filled from the three pointers."""
    words, t, n, P, q, qd, q_ref, qd_ref, qdd_ref, refused = _open(law, q, qd, q_ref, qd_ref,
                                                                    qdd_ref, dt)
    if refused:
        return refused
    reference = _doubles(t, 10, (3, n))
    for i in range(n):
        reference[0, i] = q_ref[i]
        reference[1, i] = qd_ref[i]
        reference[2, i] = qdd_ref[i]
    tau = as_declared(_doubles(t, 9, (n,)))
    try:
        computed_torque_step(P, as_declared(t[1]), _doubles(t, 2, (3, n, n)), _flags(t, 3, 3),
                             as_declared(_doubles(t, 4, (n,))), as_declared(_doubles(t, 5, (n,))),
                             t[6] != 0, _doubles(t, 7, (2, n)), as_declared(_doubles(t, 8, (n,))),
                             tau, q, qd, reference, dt)
    except Exception:
        return FAILED
    return _command(words, n, P, q, qd, tau, dt, effort)


def pd_gravity(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort):
    """1 zeros (n), 2 gains, 3 full, 4 integral, 5 integral limit, 6 integrates, 7 work,
    8 the feedback u, 9 tau: g(q) + u, as compute adds them."""
    words, t, n, P, q, qd, q_ref, qd_ref, qdd_ref, refused = _open(law, q, qd, q_ref, qd_ref,
                                                                    qdd_ref, dt)
    if refused:
        return refused
    tau, u = as_declared(_doubles(t, 9, (n,))), as_declared(_doubles(t, 8, (n,)))
    zero = as_declared(_doubles(t, 1, (n,)))
    try:
        rnea_no_wrench(P, q, zero, zero, as_declared(GRAVITY), tau)
        pid_into(q, qd, q_ref, qd_ref,
                 _doubles(t, 2, (3, n, n)), _flags(t, 3, 3), as_declared(_doubles(t, 4, (n,))),
                 as_declared(_doubles(t, 5, (n,))), dt, t[6] != 0, _doubles(t, 7, (2, n)), u)
    except Exception:
        return FAILED
    for i in range(n):
        tau[i] += u[i]
    return _command(words, n, P, q, qd, tau, dt, effort)


def adaptive_computed_torque(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort):
    """1 payload, 2 friction, 3 adapted, 4 Λ, 5 K_D (n, n), 6 dead zone, 7 Γ, 8 leakage (1),
    9 initial, 10 low, 11 high, 12 the estimate, 13 its columns, 14 work (4, n), 15 Y, 16 tau,
    17 the estimate's length, 18 Y's width."""
    words, t, n, P, q, qd, q_ref, qd_ref, qdd_ref, refused = _open(law, q, qd, q_ref, qd_ref,
                                                                    qdd_ref, dt)
    if refused:
        return refused
    m = t[17]
    lam, kd, dead = (as_declared(_doubles(t, 4, (n,))), as_declared(_doubles(t, 5, (n, n))),
                     as_declared(_doubles(t, 6, (n,))))
    gamma, leakage = as_declared(_doubles(t, 7, (m,))), _doubles(t, 8, (1,))[0]
    initial, low, high = (as_declared(_doubles(t, 9, (m,))), as_declared(_doubles(t, 10, (m,))),
                          as_declared(_doubles(t, 11, (m,))))
    estimate, columns = as_declared(_doubles(t, 12, (m,))), as_declared(_indices(t, 13, m))
    work, Y, tau = _doubles(t, 14, (4, n)), _doubles(t, 15, (n, t[18])), as_declared(_doubles(t, 16, (n,)))
    try:
        if t[1]:
            payload_step(P, q, qd, q_ref, qd_ref, qdd_ref, dt, lam, kd, dead, t[2] != 0, gamma,
                         leakage, initial, low, high, estimate, columns, work, Y, tau)
        else:
            base_step(P, q, qd, q_ref, qd_ref, qdd_ref, dt, lam, kd, dead, as_declared(t[3]), gamma,
                      leakage, initial, low, high, estimate, columns, work, Y, tau)
    except Exception:
        return FAILED
    return _command(words, n, P, q, qd, tau, dt, effort)


@inline
def _task_space(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort, impedance):
    """1 carrier, 2 offset, 3 explicit, 4 mode, 5 [ε, T_f], 6 buf, 7 its length, 8 tau (in
    buf), 9 started (impedance; the handle's own counter, 0 or 1), 10 the offset's length."""
    words, t, n, P, q, qd, q_ref, qd_ref, qdd_ref, refused = _open(law, q, qd, q_ref, qd_ref,
                                                                    qdd_ref, dt)
    if refused:
        return refused
    offset = as_read_only(_doubles(t, 2, (t[10],)))
    settings, buf = _doubles(t, 5, (2,)), _doubles(t, 6, (t[7],))
    carrier, explicit, mode = as_declared(t[1]), t[3] != 0, as_declared(t[4])
    try:
        if impedance:
            started = _counter(t, 9)
            cartesian_impedance_step(P, q, qd, q_ref, qd_ref, qdd_ref, dt, carrier, offset, explicit,
                                     mode, settings[0], settings[1], started[0] != 0, buf)
            started[0] = 1
        else:
            operational_space_step(P, q, qd, q_ref, qd_ref, qdd_ref, carrier, offset, explicit, mode,
                                   settings[0], buf)
    except Exception:
        return FAILED
    return _command(words, n, P, q, qd, as_declared(_doubles(t, 8, (n,))), dt, effort)


def operational_space(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort):
    """_task_space's table."""
    return _task_space(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort, False)


def cartesian_impedance(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort):
    """_task_space's table."""
    return _task_space(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort, True)


@inline
def _observer(law, q, qd):
    """The observer's struct words, table, joints, the parameters it works on (its table's, which
    the followed estimate is written into), rows, columns, estimate and the state as arrays."""
    words = numba.carray(law, (WORDS,))
    t, n = _table(words), words[DOF]
    k = t[3]
    return (words, t, n, _doubles(t, 11, (n + 1, N_COLUMNS)), as_declared(_indices(t, 1, k)),
            as_declared(_indices(t, 2, k)), as_declared(_doubles(t, 4, (k,))),
            numba.carray(q, (n,)), numba.carray(qd, (n,)))


def momentum_observer(law, q, qd, tau, dt, residual):
    """1 rows, 2 columns (the model's cells the followed estimate is written to), 3 their count,
    4 the estimate, 5 K_O, 6 friction, 7 ws, 8 state (6, n), 9 r, 10 ws's width, 11 the
    parameters it works on. dt > 0; r copied into ``residual`` when it is kept (finite)."""
    words, t, n, P, rows, cols, estimate, q, qd = _observer(law, q, qd)
    tau = numba.carray(tau, (n,))
    if _stale(t):
        return STALE
    if not (np.isfinite(dt) and dt > 0.0 and _finite(q, n) and _finite(qd, n) and _finite(tau, n)):
        return BAD_INPUT
    r = as_declared(_doubles(t, 9, (n,)))
    try:
        kept = observer_step(P, rows, cols, estimate, as_declared(q), as_declared(qd),
                             as_declared(tau), dt, as_declared(_doubles(t, 5, (n,))), t[6] != 0,
                             _doubles(t, 7, (n, t[10])), _doubles(t, 8, (6, n)), r)
    except Exception:
        return FAILED
    if not kept:
        return NONFINITE_EFFORT
    out = numba.carray(residual, (n,))
    for i in range(n):
        out[i] = r[i]
    return OK


def momentum_observer_reset(law, q, qd):
    """The observer started afresh at (q, q̇): r = 0, p(0) there (momentum_observer's table)."""
    words, t, n, P, rows, cols, estimate, q, qd = _observer(law, q, qd)
    if _stale(t):
        return STALE
    if not (_finite(q, n) and _finite(qd, n)):
        return BAD_INPUT
    try:
        kept = observer_reset(P, rows, cols, estimate, as_declared(q), as_declared(qd), t[6] != 0,
                              _doubles(t, 7, (n, t[10])), _doubles(t, 8, (6, n)),
                              as_declared(_doubles(t, 9, (n,))))
    except Exception:
        return FAILED
    return OK if kept else NONFINITE_EFFORT


_STEPS = {"computed_torque": (computed_torque, LAW_SIGNATURE),
          "pd_gravity": (pd_gravity, LAW_SIGNATURE),
          "adaptive_computed_torque": (adaptive_computed_torque, LAW_SIGNATURE),
          "operational_space": (operational_space, LAW_SIGNATURE),
          "cartesian_impedance": (cartesian_impedance, LAW_SIGNATURE),
          "momentum_observer": (momentum_observer, OBSERVER_SIGNATURE),
          "momentum_observer_reset": (momentum_observer_reset, RESET_SIGNATURE)}


@functools.lru_cache(maxsize=None)
def compiled(name: str):
    """The step ``name`` as a numba cfunc (compiled on first use, or loaded from numba's cache)."""
    func, signature = _STEPS[name]
    return numba.cfunc(signature, cache=True, error_model="numpy")(func)


# ------------------------------------------------------------------ building the struct

class NativeLaw:
    """A law's (or an observer's) ``robodyn_law`` struct and every array it points to, kept alive
    together: the addresses hold for as long as this object lives, so its owner keeps it for as
    long as native code calls it. ``address`` is the struct's, ``step`` the cfunc's.

    The law's arrays are shared, not copied: the native step and the law's own ``compute`` work on
    the same integral, estimate and filters; call one or the other, never both at once. What the
    handle copies of its owner holds while the owner's ``revision`` (if it has one) stays as it
    was at build: after a change, every step returns STALE."""

    def __init__(self, name, owner, kind, model, workspace, estimate, table, effort_limit=None,
                 rate_limit=None, compensates=0, last_command=None, reset=None,
                 drive_period=PERIOD):
        self.name, self.owner, self.kind, self.dof = name, owner, kind, owner.dof
        self._cfunc = compiled(name)
        self._reset = None if reset is None else compiled(reset)
        index = np.arange(self.dof, dtype=np.intp)
        #: the rate limit's previous command (the struct's last_command)
        self.last_command = np.zeros(self.dof) if last_command is None else last_command
        revision = getattr(owner, "revision", None)
        revision = np.zeros(1, dtype=np.int64) if revision is None else revision
        # the command stage's clock (s: the calls' dt summed, from 0; the drive's period), the
        # command it wants and the commands the drive may have held (drive.stage_command_into)
        stage = (np.array([0.0, drive_period]), np.zeros(self.dof),
                 np.full((WINDOW_ROWS, 1 + 2 * self.dof), -np.inf))
        self._keep = [model, workspace, estimate, effort_limit, rate_limit, index, revision,
                      *stage, *table]
        self.table = np.zeros(TABLE_WORDS, dtype=np.int64)
        for k, item in enumerate([index, *table]):
            self.table[k] = item.ctypes.data if isinstance(item, np.ndarray) else int(item)
        self.table[REVISION], self.table[BUILT] = revision.ctypes.data, revision[0]
        self.table[[CLOCK, TARGET, WINDOW]] = [a.ctypes.data for a in stage]
        self.struct = np.zeros(WORDS, dtype=np.int64)
        self.struct[[ABI_WORD, KIND, DOF, STEP, RESET]] = (
            ABI, kind, self.dof, self._cfunc.address, 0 if reset is None else self._reset.address)
        for word, array in ((MODEL, model), (WORKSPACE, workspace), (ESTIMATE, estimate)):
            self.struct[word], self.struct[word + 1] = _address(array), 0 if array is None else array.size
        self.struct[[EFFORT_LIMIT, RATE_LIMIT, LAST_COMMAND, COMPENSATES]] = (
            _address(effort_limit), _address(rate_limit), self.last_command.ctypes.data, compensates)
        self.struct[TABLE] = self.table.ctypes.data
        call = _LAW_CALL if kind == LAW else _OBSERVER_CALL
        self._call = call(self._cfunc.address)
        self._reset_call = None if reset is None else _RESET_CALL(self._reset.address)

    @property
    def address(self) -> int:
        """The address of the struct (a ``robodyn_law *``)."""
        return self.struct.ctypes.data

    @property
    def step(self) -> int:
        """The address of the step (the struct's ``step``)."""
        return self._cfunc.address

    def __call__(self, *arrays_and_dt) -> int:
        """The step called from Python through ctypes, on float64 C-contiguous arrays of ``dof``
        values and a float dt (in the signature's order): for tests and checks, not a loop."""
        *arrays, dt, out = arrays_and_dt
        _check(self.dof, *arrays, out)
        return self._call(self.address, *(x.ctypes.data for x in arrays), float(dt), out.ctypes.data)

    def reset(self, q, qd) -> int:
        """The struct's ``reset`` (the observer's) called from Python through ctypes, as
        ``__call__``."""
        if self._reset_call is None:
            raise ValueError(f"{self.name}: no native reset (the observer has one)")
        _check(self.dof, q, qd)
        return self._reset_call(self.address, q.ctypes.data, qd.ctypes.data)


def _check(n, *arrays):
    for x in arrays:
        if not (isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (n,)
                and x.flags.c_contiguous):
            raise ValueError(f"expected float64 C-contiguous arrays of {n} values")


def _address(array) -> int:
    return 0 if array is None or array.size == 0 else array.ctypes.data


def _c(array, dtype=np.float64):
    """``array`` itself when it is C-contiguous of ``dtype`` (shared with the law), else an error:
    a copy would leave the law's state behind."""
    if not (array.dtype == dtype and array.flags.c_contiguous):
        raise ValueError("a law's array is not C-contiguous: it cannot be shared with native code")
    return array


def native_law(law, effort_limit=None, rate_limit=np.inf, compensates=(),
               drive_period=PERIOD, last_command=None) -> NativeLaw:
    """The C entry point of ``law`` (one of computed_torque, pd_gravity, adaptive_computed_torque,
    operational_space, cartesian_impedance) followed by the node's command stage
    (``drive.stage_command_into``) for its drive (``drive.Drive``): the gravity it adds
    (``compensates``, as the parameter ``drive_compensates``: 'gravity', 'friction') taken off,
    saturated at ``effort_limit`` (chain order, > 0; default the model's), then at most
    ``rate_limit`` · ``drive_period`` from the last command and from every command of the calls
    within one ``drive_period`` before, on the time the calls' ``dt`` add up to (N·m/s per joint
    or one value; inf: none): a host that calls twice in one drive cycle gets one cycle's change
    over both. Behind a drive that compensates friction the law must leave
    it out (``friction: false``). ``last_command``: the command the drive holds (chain order; a
    law swap passes the old handle's ``last_command``), the rate limit's start; None: zeros, a
    drive that had none, as the node starts; NaN for a joint: no limit on its first command. The
    law's state (integral, estimate, filters, a set_target) carries on from where it is."""
    n = law.dof
    limit = np.array(law.model.effort_limit if effort_limit is None else effort_limit, dtype=float)
    if limit.shape != (n,) or not np.all(limit > 0.0):
        raise ValueError(f"effort_limit must be {n} values > 0 (inf: none), got {limit.tolist()}")
    rate = np.array(np.broadcast_to(np.asarray(rate_limit, dtype=float), (n,)))
    if not np.all(rate > 0.0):
        raise ValueError(f"rate_limit must be one or {n} values > 0 (inf: none), got {rate.tolist()}")
    drive = Drive(compensation_bits(compensates), drive_period, rate)
    if drive.compensates & DRIVE_FRICTION and law.params.get("friction"):
        raise ValueError("the drive compensates friction: build the law with friction: false")
    seed = np.zeros(n) if last_command is None else np.array(last_command, dtype=float)
    if seed.shape != (n,) or np.any(np.isinf(seed)):
        raise ValueError(f"last_command must be {n} values, finite or NaN (no limit on the first "
                         f"command), got {np.asarray(last_command).tolist()}")
    P = np.ascontiguousarray(law.model.params)
    # the struct's rate_limit: the largest change per call, one drive cycle's (rate x period)
    stage = dict(effort_limit=limit, rate_limit=drive.step(n), compensates=drive.compensates,
                 last_command=seed, drive_period=drive.period)
    kind = type(law)
    if kind is ComputedTorque or kind is PDGravity:
        name = "computed_torque" if kind is ComputedTorque else "pd_gravity"
        tau = law.torque if kind is ComputedTorque else np.zeros(n)
        table = [law._mode if kind is ComputedTorque else np.zeros(n), _c(law._gains),
                 _c(law._full, np.bool_), _c(law._integral), _c(law._limit), int(law._integrates),
                 _c(law._work), law._v if kind is ComputedTorque else law._u, tau, np.zeros((3, n))]
        return NativeLaw(name, law, LAW, P, law._work, law._integral, table, **stage)
    if kind is AdaptiveComputedTorque:
        table = [int(law._mode == "payload"), int(law._friction), law._adapted, _c(law._lambda),
                 _c(law._kd), _c(law._dead), _c(law._gamma), np.array([law._leakage]),
                 _c(law._initial), _c(law._low), _c(law._high), _c(law._estimate),
                 _c(law._columns, np.intp), _c(law._work), _c(law._Y), _c(law.torque),
                 law._estimate.size, law._Y.shape[1]]
        return NativeLaw("adaptive_computed_torque", law, LAW, P, law._Y, law._estimate, table,
                         **stage)
    if kind is OperationalSpace or kind is CartesianImpedance:
        impedance = kind is CartesianImpedance
        offset = np.ascontiguousarray(law._offset, dtype=float)
        started = np.array([impedance and law._started], dtype=np.int64)
        table = [law._carrier, offset, int(law._explicit), law._mode,
                 np.array([law._eps, law._tc if impedance else 0.0]), _c(law._buf), law._buf.size,
                 law._tau, started, offset.size]
        name = "cartesian_impedance" if impedance else "operational_space"
        return NativeLaw(name, law, LAW, P, law._buf, None, table, **stage)
    raise ValueError(f"no native step for {kind.__name__}; there is one for computed_torque, "
                     "pd_gravity, adaptive_computed_torque, operational_space and cartesian_impedance")


def native_observer(observer: MomentumObserver) -> NativeLaw:
    """The C entry point of ``observer``'s step (``MomentumObserver.advance``) and of its reset,
    started (``reset``) first; following an adaptive law, it reads the law's estimate where the
    law writes it. A later ``follow`` makes the handle STALE: build another."""
    if not observer._started:
        raise ValueError("native_observer: reset(q, qd) the observer first (p(0) is not known)")
    law = observer._law
    estimate = np.zeros(0) if law is None else law._estimate[:law._adapted]
    table = [_c(observer._rows, np.intp), _c(observer._cols, np.intp),
             observer._rows.size, estimate, _c(observer.gain), int(observer.friction),
             _c(observer._ws), _c(observer._state), _c(observer.residual), observer._ws.shape[1],
             _c(observer._P)]
    return NativeLaw("momentum_observer", observer, OBSERVER,
                     np.ascontiguousarray(observer.model.params), observer._state,
                     observer.residual, table, reset="momentum_observer_reset")


# CPU seconds of compiling the seven steps, the kernels they call already in numba's cache (a fresh
# process on the shared 2-core machine, loaded: 17.1-19.3 s over 3 runs; main's six steps took
# 15.5 s in the same hour, 10 s on 2026-12-01)
COMPILE_SECONDS = 18


def warm_up(notify=print):
    """Compile (or load from numba's cache) every step."""
    from ..plumbing.kernels import warm_up as _warm_up
    return _warm_up("native entry points", lambda: [compiled(name) for name in _STEPS], notify,
                    COMPILE_SECONDS)
