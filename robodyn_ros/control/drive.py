"""The command stage every command path shares: a law's full joint torque to the effort sent to
the drive.

A drive that adds gravity (and friction) compensation itself — libfranka's ``Torques`` are
"desired joint-level torques without gravity and friction", UR's ``direct_torque`` "always
compensates for gravity" — must not get g(q) from the law as well, or the arm is pushed up with
its own weight. What the drive adds is estimated from OUR model (the drive's own is not known
here): the stage takes it off the law's torque, then saturates at the effort limits, then limits
the change from the last command sent to ``rate`` · dt per joint (libfranka refuses a torque
that changes faster than 1000 N·m/s, ``kMaxTorqueRate``). In that order: the saturation may not
undo the rate limit (which would then be broken exactly when it matters), and the rate limit
acts on what is sent.

The kernels take plain arrays and scalars (no objects), so that a compiled caller — a law's
1 kHz step, or a numba ``cfunc`` behind a C ABI — calls them as they are.
"""
from __future__ import annotations

import numpy as np

from ..dynamics.newton_euler import FRICTION, GRAVITY, NO_WRENCH, joint_friction, rnea
from ..plumbing.kernels import (FLOAT, INDEX_VECTOR, INT, PARAMETERS, VECTOR, Direct, as_declared,
                                kernel, scratch)
from .cycle_steps import clamped

#: bits of ``compensates``: what the drive adds to the command it is sent (newton_euler's modes)
DRIVE_GRAVITY, DRIVE_FRICTION = GRAVITY, FRICTION
#: what ``compensates`` may name, as the parameter ``drive_compensates`` spells it
COMPENSATIONS = {"gravity": DRIVE_GRAVITY, "friction": DRIVE_FRICTION}
#: drive_command_into's result: saturated + RATE_LIMITED * rate_limited (-1: NaN or inf)
RATE_LIMITED = 1 << 16


@kernel
def drive_adds_into(P, compensates, q, qd, out):
    """What a drive that adds ``compensates`` (DRIVE_GRAVITY | DRIVE_FRICTION bits) puts on top of
    its command, by the model ``P`` (chain order, into ``out``): g(q), and the joint friction at
    q̇ (Newton–Euler's own, ``joint_friction``). Zero for 0."""
    n = out.shape[0]
    if compensates & DRIVE_GRAVITY:
        zero = scratch(1, n)[0]
        for i in range(n):
            zero[i] = 0.0
        # rnea's one compiled version (the types its Direct call declares)
        rnea(P, as_declared(q), as_declared(zero), as_declared(zero), NO_WRENCH,
             as_declared(GRAVITY), as_declared(out))
    else:
        for i in range(n):
            out[i] = 0.0
    if compensates & DRIVE_FRICTION:
        for i in range(n):
            out[i] += joint_friction(P, i, qd[i])


@kernel
def drive_command_into(P, compensates, q, qd, tau, limit, rate, dt, index, previous, effort):
    """The command sent for the law's full torque ``tau`` (chain order, not changed):

    1. u = tau − drive_adds_into(P, compensates, q, qd) (nothing taken off for 0);
    2. u clamped to ±``limit`` (chain order);
    3. u within ``previous`` ± ``rate`` · ``dt`` (``rate`` chain order, N·m/s or N/s, inf: no
       limit; ``previous`` the last command sent, joints order, NaN where there was none;
       ``dt`` the seconds since it was sent);

    into ``effort`` in joints order (``index``: the chain joint of each entry; ``effort`` may be
    ``previous`` itself). Returns -1 when tau or what the drive adds has NaN or inf (``effort``
    is then not written), else saturated + RATE_LIMITED · rate_limited, the numbers of joints
    each step changed."""
    n = tau.shape[0]
    adds = scratch(1, n)[0]
    drive_adds_into(P, compensates, q, qd, as_declared(adds))   # its Direct version
    for i in range(n):
        if not (np.isfinite(tau[i]) and np.isfinite(adds[i])):
            return -1
    saturated = 0
    limited = 0
    for k in range(n):
        i = index[k]
        u, hit = clamped(tau[i] - adds[i], limit[i])
        saturated += hit
        last = previous[k]
        step = rate[i] * dt
        if np.isfinite(last) and step < np.inf:
            change, hit = clamped(u - last, step)
            if hit:
                u = last + change
                limited += 1
        effort[k] = u
    return saturated + RATE_LIMITED * limited


def saturated(code: int) -> int:
    """How many joints drive_command_into's ``code`` saturated."""
    return code % RATE_LIMITED


def rate_limited(code: int) -> int:
    """How many joints drive_command_into's ``code`` rate-limited."""
    return code // RATE_LIMITED


# the loop's calls: the model's packed parameters, float64 vectors, an index vector
DRIVE_ADDS = Direct(drive_adds_into, PARAMETERS, INT, VECTOR, VECTOR, VECTOR)
DRIVE_COMMAND = Direct(drive_command_into, PARAMETERS, INT, VECTOR, VECTOR, VECTOR, VECTOR, VECTOR,
                       FLOAT, INDEX_VECTOR, VECTOR, VECTOR)


class CommandStage:
    """One controller's stage: what its drive adds (``compensates`` bits), its rate limits (chain
    order, inf: none) and the command buffer ``effort`` (joints order), which always holds the
    last command sent: the rate limit's previous one. Every command the controller sends is
    written by :meth:`send` (a law's compiled short path writes ``effort`` itself while the
    stage is :attr:`plain`, and sets ``sent_at``)."""

    def __init__(self, model, index: np.ndarray, effort: np.ndarray, compensates: int = 0,
                 rate: np.ndarray | None = None):
        self._params, self._index, self.effort = model.params, index, effort
        self.compensates = int(compensates)
        self.rate = np.full(model.dof, np.inf) if rate is None else rate
        self.sent_at: float | None = None   # when the last command was sent (None: none yet)
        self._adds = np.zeros(model.dof)

    @property
    def rate(self) -> np.ndarray:
        """The rate limits, chain order (inf: none)."""
        return self._rate

    @rate.setter
    def rate(self, rate) -> None:
        self._rate = np.asarray(rate, dtype=float)
        #: nothing to take off and no rate limit: the saturation alone (kept, as a cycle asks)
        self.plain = self.compensates == 0 and not np.any(np.isfinite(self._rate))

    def send(self, q, qd, tau, limit, t: float, only: int = -1) -> int:
        """drive_command_into of ``tau`` (chain order, float64) at the state (q, q̇) and time
        ``t`` into ``effort``, from the last command sent; of what the drive adds, ``only`` the
        bits given are taken off (default all; 0: none, for a command that is no joint torque,
        as ``zero``). Its code (-1: nothing sent)."""
        dt = 0.0 if self.sent_at is None else max(t - self.sent_at, 0.0)
        code = DRIVE_COMMAND.call(self._params, self.compensates & only, q, qd, tau,
                                  limit, self._rate, dt, self._index, self.effort, self.effort)
        if code >= 0:
            self.sent_at = t
        return code

    def adds(self, q, qd) -> np.ndarray:
        """What the drive adds at (q, q̇) by the model, chain order (a buffer the next call
        overwrites; zero for a plain effort drive)."""
        if self.compensates:
            DRIVE_ADDS.call(self._params, self.compensates, q, qd, self._adds)
        return self._adds


def compensation_bits(names) -> int:
    """``drive_compensates`` (a list of 'gravity', 'friction'; empty: none) as its bits;
    ValueError naming the option for anything else."""
    bits = 0
    for name in names:
        if name not in COMPENSATIONS:
            raise ValueError(f"drive_compensates: {name!r} is not one of {sorted(COMPENSATIONS)}")
        bits |= COMPENSATIONS[name]
    return bits


def warm_up() -> None:
    """Compile the calls now, or load them from numba's cache."""
    DRIVE_ADDS.ready()
    DRIVE_COMMAND.ready()
