"""A serialized joint state into the control loop, without ROS: by which of three paths, its stamp
checked, and whether a cycle answers it (rate 0: one answer per measurement).

The paths, cheapest first: the ordinary 1 kHz case answered in one step (``ControlLoop.answer``);
a state naming the joints the last one did, taken straight from its bytes (``reader.take``);
any other read field by field (``reader.read``) and matched by name (``ControlLoop.set_state``).
``reader`` is the node's (``nodes.messages.JointStateReader``): ``names``, ``names_bytes`` and
``stamp`` of the last state read, ``take(raw, match, q, qd)`` -> its stamp or None,
``read(raw)`` -> (stamp, names, position, velocity, effort). ``lock`` guards the loop against
the node's other threads (the node's cycle holds it already: a reentrant lock).
"""
from __future__ import annotations

import numpy as np

from ..plumbing.stamps import stamp_seconds, unanswered
from .loop import Accepted, Command, ControlLoop, Rejection


class StateIntake:
    def __init__(self, loop: ControlLoop, reader, lock):
        self.loop, self.reader, self._lock = loop, reader, lock
        self.stamp = None      # the last valid state's (sec, nanosec)
        self._answered = None  # the last state a cycle answered, (sec, nanosec)

    def answer(self, raw: bytes, state_out) -> Command | None:
        """The ordinary case in one step, the state's message written into ``state_out``
        (``ControlLoop.answer``); None, nothing changed, in any other."""
        reader = self.reader
        with self._lock:
            command = self.loop.answer(raw, reader.names, reader.names_bytes, reader.stamp,
                                       state_out)
        if command is not None:   # (sec, nanosec) as a plain tuple: a Time costs a call more
            self._answered = self.stamp = tuple(reader.stamp.tolist())
        return command

    def take(self, raw: bytes) -> Accepted | Rejection:
        """Any state ``answer`` declined, taken by the cheapest path that reads it."""
        loop, reader = self.loop, self.reader
        match = loop.match_of(reader.names)
        if match is not None:   # the joints the last state named: taken straight from its bytes
            q, qd = np.empty(loop.model.dof), np.empty(loop.model.dof)  # new: the loop keeps them
            stamp = reader.take(raw, match, q, qd)
            if stamp is not None:
                with self._lock:
                    result = loop.take_state(q, qd, stamp.sec + 1e-9 * stamp.nanosec)
                return self._taken(stamp, result)
        try:
            stamp, names, position, velocity, effort = reader.read(raw)
            seconds = stamp_seconds(stamp, "header.stamp")
        except ValueError as exc:
            return loop.reject(f"joint state: {exc}")
        with self._lock:
            result = loop.set_state(names, position, velocity, seconds, effort)
        return self._taken(stamp, result)

    def _taken(self, stamp, result):
        if not isinstance(result, Rejection):
            self.stamp = stamp
        return result

    def due(self, simulated) -> bool:
        """Whether the last state taken is still to be answered (``plumbing.stamps.unanswered``;
        ``simulated()``: whether the node runs on simulated time); True marks it answered."""
        if self.stamp is None or not unanswered(self.stamp, self._answered, simulated):
            return False
        self._answered = (self.stamp[0], self.stamp[1])
        return True
