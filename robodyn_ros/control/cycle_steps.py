"""The control cycle's per-message steps as compiled calls: taking a joint state (the chain's
joints picked from the message, checked for NaN and inf; straight from its serialized bytes when
it names the joints the last one did, with the reference sampled at its stamp when it is the
ordinary next state) and finishing the command (the law's effort checked for NaN and inf, clamped
to the effort limits, put into joints order). In NumPy these were some ten calls
of about a microsecond each per message; numba runs the plain loops below
(``robodyn_ros.plumbing.kernels``), which the tests also run interpreted.
"""
import numpy as np

from ..plumbing.kernels import (BOOL, BYTE_VECTOR, BYTES, C_ARRAY3, C_MATRIX, C_VECTOR,
                                INDEX_VECTOR, INT32_VECTOR, INT_VECTOR, VECTOR, Direct, inline,
                                kernel)
from .trajectory import SAMPLE, sample_into


@inline
def clamped(t, limit):
    """``t`` within ±``limit``, and whether it was outside."""
    if t > limit:
        return limit, True
    if t < -limit:
        return -limit, True
    return t, False


@kernel
def saturate_into(tau, limit, index, out):
    """out[k] = tau[index[k]] clamped to [-limit, +limit] of that joint (``index``: chain joint of
    each joints-order entry). Returns -1 when some tau is NaN or inf (out is then not written),
    else the number of joints clamped."""
    n = tau.shape[0]
    for i in range(n):
        if not np.isfinite(tau[i]):
            return -1
    count = 0
    for k in range(n):
        i = index[k]
        out[k], hit = clamped(tau[i], limit[i])
        count += hit
    return count


@inline
def take_state(position, velocity, match, q, qd):
    """q[i] = position[match[i]] and qd[i] = velocity[match[i]] (``match``: the message's entry of
    each chain joint, every one within both vectors). Returns False when one of them is NaN or
    inf (q and qd are written all the same)."""
    finite = True
    for i in range(match.shape[0]):
        k = match[i]
        q[i] = position[k]
        qd[i] = velocity[k]
        if not (np.isfinite(q[i]) and np.isfinite(qd[i])):
            finite = False
    return finite


@inline
def _u32(raw, at):
    """The little-endian unsigned 32-bit integer at byte ``at``."""
    return (np.int64(raw[at]) | np.int64(raw[at + 1]) << 8 | np.int64(raw[at + 2]) << 16
            | np.int64(raw[at + 3]) << 24)


@kernel
def take_serialized_state(message, names, match, q, qd, stamp):
    """take_state from the bytes of a serialized sensor_msgs/JointState (``message``, CDR) whose
    name sequence is byte for byte ``names`` (its count, then its strings: the last state's, whose
    ``match`` this is), with its header stamp into ``stamp`` (sec, nanosec). Returns False
    (q, qd and stamp then hold nothing to use) unless the message is little-endian, has those
    names, one position and one velocity per name within its bytes, all of them finite, and a stamp
    a clock gives (sec >= 0, nanosec < 1e9): it is then read field by field, which finds a new name
    list, or the reason to refuse it."""
    raw = np.frombuffer(message, np.uint8)
    size = raw.shape[0] - 4                    # the body, after the encapsulation's 4 bytes
    if size < 12 or raw[1] != 1:
        return False
    at = _same_strings(raw, (12 + _u32(raw, 12) + 3) & ~3, size, names)   # after frame_id
    if at < 0:
        return False
    n = _u32(names, 0)
    body = raw[4:4 + (size & ~7)].view(np.float64)   # CDR aligns a double to 8 from the body
    position, at = _doubles(raw, at, n, size)
    velocity, at = _doubles(raw, at, n, size)
    effort, at = _doubles(raw, at, -1, size)   # not taken; the message must hold it all the same
    if position < 0 or velocity < 0 or effort < 0:
        return False
    stamp[0] = _u32(raw, 4) - (_u32(raw, 4) >> 31 << 32)   # int32
    stamp[1] = _u32(raw, 8)
    if stamp[0] < 0 or stamp[1] >= 1_000_000_000:   # no clock gives it: the reader says so
        return False
    return take_state(body[position:position + n], body[velocity:velocity + n], match, q, qd)


#: ``take_ordinary_state``'s clock vector: the time now (s, the loop's clock), the latest stamp
#: taken since time last went back (s), state_timeout (s), ``ordinary_dt``'s last cycle's time
#: (s; NaN: none since a hold), and how far ahead of now a stamp may be (s)
NOW, NEWEST, TIMEOUT, LAST, AHEAD = range(5)
#: a law's answering call (``ControlLaw``): the state is not the ordinary next one
DECLINED = -2


@kernel
def take_ordinary_state(message, names, match, q, qd, stamp, times, knots, origins, stacked,
                        samples):
    """take_serialized_state, and whether the state is the ordinary next one: stamped after every
    state taken since time last went back (``times[NEWEST]``, which it becomes), so neither
    answered yet nor older, at most ``times[TIMEOUT]`` before ``times[NOW]`` and at most
    ``times[AHEAD]`` after it. Only then is the
    reference sampled at its stamp into ``samples`` (sample_into of ``knots``, ``origins``,
    ``stacked``) and True returned; else False, with nothing but q, qd and stamp written."""
    # both steps are called, not inlined: compiled for their own Direct calls with these types,
    # they are linked as they are (inlined, this module's compile took 5.4 s of CPU, not 3.1)
    if not take_serialized_state(message, names, match, q, qd, stamp):
        return False
    t = stamp[0] + 1e-9 * stamp[1]   # as the loop converts a header stamp, to the bit
    if not (t > times[NEWEST] and times[NOW] - t <= times[TIMEOUT]
            and t - times[NOW] <= times[AHEAD]):
        return False
    times[NEWEST] = t
    sample_into(knots, origins, stacked, t, samples)
    return True


@inline
def ordinary_dt(message, names, match, q, qd, stamp, times, knots, origins, stacked, samples):
    """take_ordinary_state, then the cycle's time step from ``times[LAST]`` (0 after none, never
    negative) as the loop takes it; -1.0 when the state is not the ordinary next one. For a
    law's answering kernel: the law's step follows in the same compiled call."""
    if not take_ordinary_state(message, names, match, q, qd, stamp, times, knots, origins, stacked,
                               samples):
        return -1.0
    last = times[LAST]
    return 0.0 if np.isnan(last) else max(times[NEWEST] - last, 0.0)


@inline
def _same_strings(raw, at, size, names):
    """The body offset after the sequence of strings at ``at`` if it is the one serialized in
    ``names`` (count, then each string's size and bytes), else -1. The padding between strings
    is not compared: a serializer leaves whatever its buffer held there."""
    if at + 4 > size or _u32(raw, 4 + at) != _u32(names, 0):
        return -1
    k = 4                                      # in names, whose start is aligned as ``at`` is
    for _ in range(_u32(names, 0)):
        k = (k + 3) & ~3
        length = _u32(names, k) + 4            # the size and the characters
        if at + k + length > size:
            return -1
        for i in range(length):
            if raw[4 + at + k + i] != names[k + i]:
                return -1
        k += length
    return at + k


@inline
def _doubles(raw, at, n, size):
    """The sequence of doubles whose count follows body offset ``at``: the index of its first
    value among the body's doubles, and the offset after it; -1 (and ``size``) when its count is
    not ``n`` (any count with -1) or it ends beyond the body's ``size`` bytes."""
    at = (at + 3) & ~3
    if at + 4 > size:
        return -1, size
    count = _u32(raw, 4 + at)
    if n >= 0 and count != n:
        return -1, size
    at += 4
    if count:
        at = (at + 7) & ~7
    if at + 8 * count > size:
        return -1, size
    return at >> 3, at + 8 * count


@kernel
def state_into(out, starts, q_des, qd_des, qdd_des, q, qd, effort, index):
    """A cycle's state into ``out`` as a JointTrajectoryControllerState carries it, in joints
    order: from ``starts[0]``, ``starts[1]``, ... the reference's position, velocity and
    acceleration, the measured position and velocity, the position and velocity errors (chain
    order, taken at ``index``: the chain joint of each joints-order entry), then ``effort``
    (joints order already)."""
    for k in range(index.shape[0]):
        i = index[k]
        out[starts[0] + k] = q_des[i]
        out[starts[1] + k] = qd_des[i]
        out[starts[2] + k] = qdd_des[i]
        out[starts[3] + k] = q[i]
        out[starts[4] + k] = qd[i]
        out[starts[5] + k] = q_des[i] - q[i]
        out[starts[6] + k] = qd_des[i] - qd[i]
        out[starts[7] + k] = effort[k]


@kernel
def answered_state_into(listened, out, starts, head, stamp, samples, q, qd, effort, index):
    """With ``listened``, an answered cycle's state (state_into at the reference sampled into
    ``samples``) into a serialized controller state's doubles ``out``, and the state's
    (sec, nanosec) ``stamp`` into its header stamp ``head`` (int32): the whole message a
    listener gets, written where the cycle is computed (``ControlLoop.answer``)."""
    if listened:
        head[0] = stamp[0]
        head[1] = stamp[1]
        state_into(out, starts, samples[0], samples[1], samples[2], q, qd, effort, index)


# the loop's calls: float64 vectors and index vectors, which ControlLoop always passes
TAKE_STATE = Direct(take_state, VECTOR, VECTOR, INDEX_VECTOR, VECTOR, VECTOR)
TAKE_SERIALIZED_STATE = Direct(take_serialized_state, BYTES, BYTE_VECTOR, INDEX_VECTOR, VECTOR, VECTOR,
                               INT_VECTOR)
_ORDINARY = (BYTES, BYTE_VECTOR, INDEX_VECTOR, VECTOR, VECTOR, INT_VECTOR, C_VECTOR, VECTOR, VECTOR,
             C_ARRAY3, C_MATRIX)   # take_ordinary_state's arguments
TAKE_ORDINARY_STATE = Direct(take_ordinary_state, *_ORDINARY)
#: the state's message as answer writes it: listened, its doubles, where each field starts, its
#: header stamp (answered_state_into)
STATE_OUT = (BOOL, VECTOR, INDEX_VECTOR, INT32_VECTOR)
ANSWERED_STATE = Direct(answered_state_into, *STATE_OUT, INT_VECTOR, C_MATRIX, VECTOR, VECTOR,
                        VECTOR, INDEX_VECTOR)
#: the arguments of a law's answering call after the law's own: take_ordinary_state's, then the
#: state's message (STATE_OUT)
ORDINARY_STATE = (*_ORDINARY, *STATE_OUT)
STATE_INTO = Direct(state_into, VECTOR, INDEX_VECTOR, *[VECTOR] * 6, INDEX_VECTOR)
SATURATE = Direct(saturate_into, VECTOR, VECTOR, INDEX_VECTOR, VECTOR)


def warm_up() -> None:
    """Compile the calls now, or load them from numba's cache (a loop makes them every cycle):
    this module's and the reference's sampling (``trajectory.SAMPLE``)."""
    TAKE_STATE.ready()
    TAKE_SERIALIZED_STATE.ready()
    TAKE_ORDINARY_STATE.ready()
    STATE_INTO.ready()
    ANSWERED_STATE.ready()
    SATURATE.ready()
    SAMPLE.ready()
