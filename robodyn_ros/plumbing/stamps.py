"""Message stamps as every node reads them, without ROS: a builtin_interfaces Time or Duration is
anything with ``sec`` and ``nanosec``."""
from __future__ import annotations


def stamp_seconds(stamp, what: str = "time") -> float:
    """A builtin_interfaces Time or Duration (``sec``, ``nanosec``) in seconds; ValueError for
    one no clock gives: a negative time, or ``nanosec`` of a second or more (the same rule for a
    header stamp and a ``time_from_start`` in every node)."""
    if stamp.sec < 0 or stamp.nanosec >= 1_000_000_000:
        raise ValueError(f"{what} sec={stamp.sec}, nanosec={stamp.nanosec} is no valid time (sec "
                         "must be >= 0 and nanosec < 1e9)")
    return stamp.sec + 1e-9 * stamp.nanosec


def stamp_parts(seconds: float) -> tuple[int, int]:
    """Seconds (>= 0) as a stamp's (sec, nanosec), to the nearest nanosecond."""
    return divmod(round(seconds * 1e9), 1_000_000_000)


def unanswered(stamp, answered, simulated) -> bool:
    """Whether a measurement stamped ``stamp`` is one to answer, the last one answered being
    stamped ``answered`` ((sec, nanosec) or None). One answer per measurement: a step-locked
    simulator publishes an unanswered state again, and a second, stale answer would take the
    place of the next state's and leave the loop a period behind for good. The stamp is compared
    exactly (as float seconds two a nanosecond apart are one). A zero stamp means unstamped (each
    answered) on wall time only: on simulated time (``simulated()``, asked only then) it is the
    first instant, which a standing simulator publishes again until its first command."""
    exact = (stamp[0], stamp[1])
    return exact != answered or (exact == (0, 0) and not simulated())
