"""What computed_torque_controller shows of the momentum observer and a collision (doc/collisions.md).

* ``~/external_torque`` (sensor_msgs/JointState): the residual r ≈ τ_ext per joint in ``effort``
  (N m or N), ``name`` the controller's ``joints``, stamped with the state's stamp; position and
  velocity empty (ext_observer_ros's layout). At most ``external_torque_rate`` Hz, while someone
  listens (asked once per diagnostics period, as for ~/controller_state).
* ``~/external_wrench_estimate`` (geometry_msgs/WrenchStamped): the contact wrench at the tip
  frame's origin, base frame (``header.frame_id`` the chain's root link), F̂ = (Jᵀ)⁺ r damped as
  the task-space laws damp a singular direction (``control.contact_location.wrench_estimate``;
  Franka's O_F_ext_hat_K): the tip wrench that would cause r; a contact elsewhere on the arm shows
  as some wrench at the tip all the same. Same rate, while someone listens: it is not computed
  otherwise (cold, at 1 kHz, the estimate and the two messages cost a node with the observer some
  45 µs a state at 100 Hz, more than the observer's step).
* ``~/collision`` (diagnostic_msgs/DiagnosticStatus, level ERROR): each detected collision, its
  reason as ``message`` and, as values, the time, the joints crossing, the isolated joint and
  link, when it was isolated there, the link the contact is located on (nearest the wrench
  estimate's line of action among the isolated link and those after it), the residuals and
  thresholds, the reaction and the wrench estimate then; again, with the same time, each time the
  isolation or the location moves while the event lasts (``control/collision.py``). The wrench
  estimate is the wrench the contact exerts on the arm, reduced to the tip frame's origin, in the
  base frame: [f; n] (N, N m), n the moment about that origin (doc/collisions.md, "Conventions").
* ``~/reset_collision`` (std_srvs/Trigger): the collision is dealt with; the controller holds where
  the arm is and takes references and goals again. A new activation resets it too.

On detection a running FollowJointTrajectory goal aborts (PATH_TOLERANCE_VIOLATED) with the reason,
and /diagnostics reports ERROR until the reset.
"""
from __future__ import annotations

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from ..control.contact_location import locate, wrench_estimate
from ..plumbing.reasons import bounded
from .cycle import post


class CollisionInterface:
    """The module docstring's topics on ``node`` for the guard of ``loop`` (it may come and go
    with a parameter change); ``base`` the chain's root link; ``abort(why)`` ends a running goal;
    ``lock`` the node's, which the cycle holds.

    The detection cycle sends its reaction's command and nothing more: the contact's location
    (0.4 ms), the wrench estimate, the log line, the goal's abort and the messages follow on the
    executor's thread (``cycle.post``), from copies of the detection's state and residual."""

    def __init__(self, node, loop, base: str, rate: float, abort, lock):
        self._node, self._loop, self._abort, self._lock = node, loop, abort, lock
        self._period = 1.0 / rate if rate > 0.0 else None
        self._next = -np.inf
        self._torque_pub = node.create_publisher(JointState, "~/external_torque", 10)
        self._wrench_pub = node.create_publisher(WrenchStamped, "~/external_wrench_estimate", 10)
        self._event_pub = node.create_publisher(DiagnosticStatus, "~/collision", 10)
        self._torque = JointState(name=list(loop.order.names))
        self._wrench = WrenchStamped()
        self._wrench.header.frame_id = base
        self.listened = (True, True)   # whether anybody listens to the residual, the wrench
        self._queued = 0   # reports posted and not yet sent
        self._alive = True  # until destroyed: a report posted before is dropped then
        node.serve(Trigger, "~/reset_collision", self._on_reset)
        loop.on_collision = self._on_collision
        loop.on_isolation = self._on_isolation
        self.follow_guard()

    def follow_guard(self) -> None:
        """Locate the contacts of the loop's guard (new with a parameter change) off the cycle."""
        if self._loop.guard is not None:
            self._loop.guard.locate_later = self._locate_later

    def refresh(self) -> None:
        """Ask the graph who listens (once per diagnostics period, not per cycle)."""
        self.listened = (self._torque_pub.get_subscription_count() > 0,
                         self._wrench_pub.get_subscription_count() > 0)

    def after_cycle(self, stamp) -> None:
        """The residual and the wrench estimate at the cycle's state, stamped ``stamp`` (sec,
        nanosec), each if someone listens, at most every 1/rate seconds of the loop's time (sent
        from the executor's thread)."""
        guard, loop = self._loop.guard, self._loop
        if guard is None or self._period is None or loop.time < self._next or \
                self.listened == (False, False):
            return
        self._next = loop.time + self._period
        post(self._node, self._send_estimates, stamp, loop.q.copy(), guard.residual.copy(),
             *self.listened)

    def _send_estimates(self, stamp, q, r, torque: bool, wrench: bool) -> None:
        loop = self._loop
        if not self._alive:
            return
        if torque:
            self._torque.header.stamp.sec, self._torque.header.stamp.nanosec = stamp
            self._torque.effort = loop.order.from_chain(r).tolist()
            self._torque_pub.publish(self._torque)
        if wrench:
            self._wrench.header.stamp.sec, self._wrench.header.stamp.nanosec = stamp
            f = wrench_estimate(loop.model, q, r)
            w = self._wrench.wrench
            w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z = f.tolist()
            self._wrench_pub.publish(self._wrench)

    # the cycle's thread, under the lock: copies handed on ----------------------------------------
    def _on_collision(self, event) -> None:
        self._post_report(event, False)

    def _on_isolation(self, event) -> None:
        """The standing collision isolated further out: said, and published again."""
        self._post_report(event, True)

    def _post_report(self, event, isolation: bool) -> None:
        self._queued += 1
        post(self._node, self._report, event, self._loop.q.copy(),
             self._loop.guard.residual.copy(), isolation)

    def _locate_later(self, guard, event, q, r, first: int) -> None:
        post(self._node, self._locate, guard, event, q, r, first)

    # the executor's thread -------------------------------------------------------------------
    def _locate(self, guard, event, q, r, first: int) -> None:
        """Where the contact is (the guard's ``locate_later``); published again if the located
        link changed after the event was reported (a report still queued will say it)."""
        if not self._alive:
            return
        joint = locate(guard.model, guard.shapes, q, r, first)
        with self._lock:
            tell = guard.place(event, joint) and not self._queued and guard is self._loop.guard
            if tell:
                self._queued += 1
                told = (guard.event, self._loop.q.copy(), guard.residual.copy())
        if tell:
            self._report(*told, True)

    def _report(self, event, q, r, isolation: bool) -> None:
        with self._lock:
            self._queued -= 1
        if not self._alive:
            return
        guard = self._loop.guard
        if guard is not None and guard.event is not None and guard.event.time == event.time:
            event = guard.event   # located since
        wrench = wrench_estimate(self._loop.model, q, r)
        if not isolation:
            why = (f"{event.reason}; contact wrench estimate at the tip "
                   f"{np.round(wrench, 3).tolist()} (N, N m, base frame); reaction "
                   f"{self._loop.guard.reaction}")
            self._node.get_logger().error(why)
            self._abort(bounded(why))
            return self._publish(event, wrench, event.reason)
        why = (f"collision at {event.time:.3f} s isolated further out: link '{event.link}' or "
               f"after it (joint '{event.joint}' crossed at {event.isolated_time:.3f} s)"
               + (f", located on '{event.located}'" if event.located else ""))
        self._node.get_logger().warning(why)
        self._publish(event, wrench, why)
    def _publish(self, event, wrench, message) -> None:
        loop = self._loop
        values = {"time (s)": f"{event.time:.6f}", "joints crossing": ", ".join(event.crossing),
                  "isolated joint": event.joint, "isolated link": event.link,
                  "isolated at (s)": f"{event.isolated_time:.6f}",
                  "located link": event.located or "",
                  "residuals": str(np.round(loop.order.from_chain(event.residuals), 6).tolist()),
                  "thresholds": str(np.round(loop.order.from_chain(event.thresholds), 6).tolist()),
                  "joints": ", ".join(loop.order.names), "reaction": loop.guard.reaction,
                  "wrench estimate (N, N m)": str(np.round(wrench, 6).tolist())}
        self._event_pub.publish(DiagnosticStatus(
            level=DiagnosticStatus.ERROR, name=f"{self._node.get_name()}: collision",
            message=bounded(message), hardware_id=loop.model.name,
            values=[KeyValue(key=k, value=v) for k, v in values.items()]))

    def _on_reset(self, request, response):
        with self._lock:
            result = self._loop.reset_collision()
        response.success = not hasattr(result, "reason")
        response.message = getattr(result, "reason", None) or result.note
        self._node.get_logger().info(response.message)
        return response

    def destroy(self):
        self._alive = False
        for publisher in (self._torque_pub, self._wrench_pub, self._event_pub):
            self._node.destroy_publisher(publisher)
