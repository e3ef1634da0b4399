"""The controller's state as ros2_controllers publishes it: ``~/controller_state``
(control_msgs/JointTrajectoryControllerState: reference, feedback, error, output, in ``joints``
order).

The message is kept serialized (``SerializedState``) and published only while somebody listens
(checked with every diagnostics report)."""
from __future__ import annotations

import array

import numpy as np

from ..control.cycle_steps import STATE_INTO
from .messages import JointTrajectoryControllerState
from .serialized import located, markers, serialized, write_stamp

TOPIC = "~/controller_state"


# the fields written every cycle: (point, field) in the order of ``SerializedState.write``
_FIELDS = ((0, "positions"), (0, "velocities"), (0, "accelerations"), (1, "positions"),
           (1, "velocities"), (2, "positions"), (2, "velocities"), (3, "effort"))


class SerializedState:
    """The state message kept serialized, as the command is: every field it fills has one value
    per joint every cycle, so each sits at a fixed place in the bytes, found once by serializing
    distinct marker values; a cycle writes the values in place (converting a message object
    cost ~70 us)."""

    def __init__(self, joints):
        msg = JointTrajectoryControllerState(joint_names=list(joints))
        points = [msg.reference, msg.feedback, msg.error, msg.output]
        values = markers(len(_FIELDS), len(joints))
        for (point, field), v in zip(_FIELDS, values):
            setattr(points[point], field, array.array("d", v))
        self._raw = serialized(msg)
        # every double of the message's body (CDR aligns a double to 8 from the body's start, 4
        # bytes into the message), and where each field starts among them
        self._body = np.frombuffer(self._raw, "<f8", (len(self._raw) - 4) // 8, 4)
        offsets = [field.ctypes.data - self._body.ctypes.data
                   for field in located(self._raw, values)]
        self._starts = np.array([offset // 8 for offset in offsets], dtype=np.intp)
        if any(offset % 8 for offset in offsets):
            raise RuntimeError("serialized controller state: a field is not aligned to 8 bytes")
        #: where ``ControlLoop.answer`` writes a cycle's state (``cycle_steps.STATE_OUT`` but
        #: the first): the doubles, where each field starts, header.stamp (sec, nanosec: int32)
        self.out = (self._body, self._starts, np.frombuffer(self._raw, np.int32, 2, 4))
        STATE_INTO.ready()   # at setup, not in the first cycle

    def write(self, stamp, reference, q, qd, effort, index) -> bytes:
        """The message for (sec, nanosec) ``stamp``; the chain-order arrays are taken at
        ``index`` (joints order), ``effort`` is in joints order already (one compiled call,
        ``cycle_steps.state_into``: field by field in NumPy it cost 3.9 us)."""
        write_stamp(self._raw, *stamp)
        STATE_INTO.call(self._body, self._starts, *reference, q, qd, effort, index)
        return bytes(self._raw)

    def __bytes__(self) -> bytes:
        """The message as last written."""
        return bytes(self._raw)


class ControllerStatePublisher:
    """``~/controller_state``, written in place each cycle and sent while somebody listens."""

    def __init__(self, node, joints):
        self._node = node
        self._state = SerializedState(joints)
        self._publisher = node.create_publisher(JointTrajectoryControllerState, TOPIC, 10)
        self.listened = True

    @property
    def listened(self) -> bool:
        """Whether anybody listens (as :meth:`refresh` last found)."""
        return self.out[0]

    @listened.setter
    def listened(self, value: bool) -> None:
        #: ``ControlLoop.answer``'s ``state_out``: it writes the message while somebody listens
        self.out = (bool(value), *self._state.out)

    def refresh(self) -> None:
        """Whether anybody listens (called once per diagnostics period)."""
        self.listened = self._publisher.get_subscription_count() > 0

    def publish(self, loop, stamp, effort: np.ndarray) -> None:
        """The loop's last cycle: its reference, the measured state, the error and ``effort``
        (the command sent); ``stamp`` (sec, nanosec) is the joint state's own header stamp, so
        that a listener can match the two exactly (an unstamped state's: the cycle's time)."""
        if self.listened:
            self._publisher.publish(self._state.write(stamp, loop.reference, loop.q, loop.qd,
                                                      effort, loop.order.index))

    def send(self) -> None:
        """The state ``ControlLoop.answer`` wrote into :attr:`out`, if anybody listens."""
        if self.out[0]:
            self._publisher.publish(bytes(self._state))

    def destroy(self) -> None:
        self._node.destroy_publisher(self._publisher)
