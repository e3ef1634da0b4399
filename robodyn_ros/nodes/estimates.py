"""What computed_torque_controller shows of a law that adapts its model (``adaptive_computed_torque``,
or any law with ``estimate_names``, ``estimates``, ``initial_estimates`` and ``reset_estimates()``).

* ``~/parameter_estimates`` (std_msgs/Float64MultiArray, every PERIOD s of the node's clock, while
  the law estimates): a 2 × k array, row-major. ``layout.dim[0]`` is labelled ``estimate,model``
  (size 2): row 0 holds the current estimates, row 1 the model's values they started from (what
  ``~/reset_estimates`` returns to). ``layout.dim[1]`` is labelled with the k parameter names,
  comma-separated, in column order (e.g. ``joint_6.m,joint_6.mx,...``; base parameters carry the
  name of their standard column, doc/identification.md).
* ``/diagnostics``: the drift, estimate − model, of the parameter that moved most and, when the last
  body's parameters are estimated (``adapt: payload``), the payload they add: mass and centre of
  mass (in the last joint frame).
* ``~/reset_estimates`` (std_srvs/Trigger): back to the model's values.

Nothing here touches the estimates otherwise: a hold, an enable or a deactivate leave them, a
parameter change that builds a new law of the same kind hands them over
(``control.succession.carry_over``, the loop's).
"""
from __future__ import annotations

import numpy as np
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from std_srvs.srv import Trigger

from ..control.succession import estimates_of

PERIOD = 0.1   # s between two ~/parameter_estimates


class EstimatesInterface:
    """``~/parameter_estimates`` and ``~/reset_estimates`` of a controller node whose loop is
    ``loop`` (its law may change at run time; ``lock`` guards it against the watchdog's thread)."""

    def __init__(self, node, loop, lock):
        self._loop, self._lock = loop, lock
        self._publisher = node.create_publisher(Float64MultiArray, "~/parameter_estimates", 10)
        node.serve(Trigger, "~/reset_estimates", self._on_reset)  # both kept by the node
        node.every(PERIOD, self._publish, "parameter_estimates")
        self._node = node
        self._names, self._msg = None, None

    def _publish(self):
        law = estimates_of(self._loop.law)
        if law is None:
            return
        names = tuple(law.estimate_names)
        if names != self._names:   # the layout once per law, the numbers every time
            k = len(names)
            self._names, self._msg = names, Float64MultiArray()
            self._msg.layout.dim = [MultiArrayDimension(label="estimate,model", size=2, stride=2 * k),
                                    MultiArrayDimension(label=",".join(names), size=k, stride=k)]
        self._msg.data = np.concatenate([law.estimates, law.initial_estimates]).tolist()
        self._publisher.publish(self._msg)

    def _on_reset(self, request, response):
        law = estimates_of(self._loop.law)
        if law is None:
            response.success = False
            response.message = (f"control law {type(self._loop.law).__name__} estimates no "
                                "parameters")
            return response
        with self._lock:
            law.reset_estimates()
        response.success = True
        response.message = f"{len(law.estimate_names)} estimates back to the model's values"
        self._node.get_logger().info(response.message)
        return response

    def destroy(self):
        self._node.destroy_publisher(self._publisher)
