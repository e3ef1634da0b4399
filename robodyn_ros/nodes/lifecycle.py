"""Managed nodes, mapped as ros2_control maps its controllers.

``ManagedNode`` turns the lifecycle transitions into four methods of a node: ``configure``
(load the model, validate the parameters, create the interfaces; a ConfigurationError refuses the
transition with its reason), ``activate`` (start commanding), ``deactivate`` (leave one documented
safe output and stop) and ``teardown`` (destroy what configure made). With the ``autostart``
parameter (default true) the node configures and activates itself, so ``ros2 run`` behaves as an
unmanaged node; without it a lifecycle manager (launch_ros, ``ros2 lifecycle set``) drives it
through the standard ``~/change_state`` service.

``spin`` (nodes/process.py) runs a node's process.
"""
from __future__ import annotations

import gc
import threading
import traceback

from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.publisher import Publisher
from std_msgs.msg import String

from ..plumbing.failures import reason
from .common import ConfigurationError, Parameters
from .description import DESCRIPTION_QOS, describes_robot

RCLError = rclpy_implementation.RCLError
SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE
#: Longer than any transition's label ("unconfigured_shutdown"); a longer one is refused unread.
MAX_LABEL = 64
UNCONFIGURED = "the node is not configured"
WAITING_FOR_MANAGER = "unconfigured: waiting for a lifecycle manager (autostart is false)"


def _refuse(request, response):
    response.success, response.message = False, UNCONFIGURED  # std_srvs' Trigger and SetBool
    return response


#: What a kept entity does between cleanup and the next configure (ManagedNode._park)
PARKED = {"subscription": lambda msg: None, "service": _refuse, "timer": lambda: None}


class ManagedNode(LifecycleNode):
    """A lifecycle node whose subclass implements configure/activate/deactivate/teardown."""

    def __init__(self, name: str, specs, **kwargs):
        super().__init__(name, **kwargs)
        self.params = Parameters(self, specs)
        self.active = False
        self.configure_error = ""
        self._finalized = False
        self._owned = []  # what configure created and cleanup destroys: publishers, threads
        self._lasting = {}  # (kind, name) -> the subscription, service or timer (see _keep)
        # set while configure runs (nothing commands yet): a signal then ends the process at once
        # (spin, nodes/process.py), as while the node is made
        self.configuring = threading.Event()
        self._change_state = self._service_change_state.callback
        self._service_change_state.callback = self._on_change_state

    def own(self, entity):
        """``entity``, destroyed by teardown (a publisher, or anything with ``destroy()``)."""
        self._owned.append(entity)
        return entity

    def subscribe(self, msg_type, topic: str, callback, qos=10, **kwargs):
        """A subscription of this configuration (``create_subscription``'s arguments), kept for
        the node's life: see :meth:`_keep`."""
        return self._keep(("subscription", topic), callback, lambda: self.create_subscription(
            msg_type, topic, callback, qos, **kwargs))

    def serve(self, srv_type, name: str, callback):
        """A service of this configuration, kept for the node's life (:meth:`_keep`); cleanup
        leaves it answering ``success`` false, ``UNCONFIGURED``."""
        return self._keep(("service", name), callback,
                          lambda: self.create_service(srv_type, name, callback))

    def every(self, period: float, callback, name: str):
        """A timer of this configuration calling ``callback`` every ``period`` s, kept for the
        node's life (:meth:`_keep`); cleanup cancels it."""
        timer = self._keep(("timer", name), callback,
                           lambda: self.create_timer(period, callback))
        timer.timer_period_ns = round(period * 1e9)
        timer.reset()
        return timer

    def _keep(self, key, callback, create):
        """The entity of ``key``, created by the first configuration that asks for it and
        pointed at ``callback`` by each; cleanup parks it. Destroyed at cleanup and created again
        at configure while messages arrived, an entity crashed the process (SIGSEGV, the
        lifecycle stress test): rclpy 7.1's EventsExecutor keys what it queued by the entity's
        address, and ran an event queued for the destroyed one when the new one took its place."""
        entity = self._lasting.get(key)
        if entity is None:
            entity = self._lasting[key] = create()
        entity.callback = callback
        return entity

    def _park(self):
        """Every kept entity: messages dropped, requests refused, timers cancelled."""
        for (kind, _), entity in self._lasting.items():
            if kind == "timer":
                entity.cancel()
            entity.callback = PARKED[kind]

    def _on_change_state(self, request, response):
        """rclpy's ~/change_state, refusing (success false) what would end the process or flood
        the log: a transition id not registered from the current state raises out of rclpy's
        callback, and rcl_lifecycle logs an unknown label whole (a 10 kB label, a 10 kB line)."""
        if len(request.transition.label) > MAX_LABEL:
            return response
        try:
            return self._change_state(request, response)
        except RCLError as exc:
            self.get_logger().warning(f"change_state {request.transition.id} refused: {exc}",
                                      throttle_duration_sec=2.0)
            response.success = False
            return response

    # the subclass's part ------------------------------------------------------------------
    def configure(self) -> None:
        """Load, validate, create the interfaces; ConfigurationError (a ValueError) refuses."""

    def activate(self) -> None:
        """Start commanding."""

    def deactivate(self) -> None:
        """Leave one safe output and stop commanding."""

    def teardown(self) -> None:
        """Destroy what configure created (it may have stopped half-way) and park what it kept;
        a subclass that keeps more state resets it and calls this."""
        for entity in reversed(self._owned):
            self.destroy_publisher(entity) if isinstance(entity, Publisher) else entity.destroy()
        self._owned.clear()
        self._park()

    def destroy_node(self) -> None:
        """Tear down first (a thread of configure's, such as the controller's watchdog, stops
        before the publishers it uses go), then destroy the node and its state machine, which
        rclpy's LifecycleNode leaves (it would keep the rcl node alive: ``release``)."""
        self.teardown()
        super().destroy_node()
        self._state_machine.destroy_when_not_in_use()

    # the lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Configure and activate now when ``autostart`` is set; a configuration that fails is
        then a ConfigurationError (``ros2 run`` prints it and exits 1)."""
        if not self.params["autostart"]:
            self.get_logger().info(WAITING_FOR_MANAGER)
            return
        if self.trigger_configure() != SUCCESS:
            raise ConfigurationError(self.configure_error or "configure failed: its log says why")
        self.trigger_activate()

    def start_when_described(self) -> None:
        """``start`` now when the parameters name a robot description; else once
        /robot_description publishes one (its URDF kept in ``published``; with ``autostart``:
        configured and activated then), warning meanwhile."""
        self.published = None
        if describes_robot(self.params):
            return self.start()
        self.create_subscription(String, "robot_description", self._on_description, DESCRIPTION_QOS)
        self.get_logger().warning("no robot_description or urdf_file: waiting for "
                                  "/robot_description")

    def _on_description(self, msg: String) -> None:
        self.published = msg.data   # a later one serves the next configure
        if (self.params["autostart"] and self._state_machine.current_state[1] == "unconfigured"
                and self.trigger_configure() == SUCCESS):
            self.trigger_activate()

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.configuring.set()
        try:
            self.configure()
        except ValueError as exc:  # ConfigurationError and the loaders' errors: the user's to fix
            return self._not_configured(str(exc))
        except Exception as exc:  # noqa: BLE001 - rclpy would swallow it, reason and all
            # anything else is the installation's or ours: its reason, its traceback in the log
            return self._not_configured(reason(exc), traceback.format_exc())
        finally:
            self.configuring.clear()
        self.configure_error = ""
        freeze_heap()  # what configure built (the model, the compiled kernels) stays
        return SUCCESS

    def _not_configured(self, why: str, trace: str = "") -> TransitionCallbackReturn:
        """Configure refused: ``why`` to the log (with ``trace``), /diagnostics and ``ros2 run``."""
        self.configure_error = why
        self.get_logger().error(f"configure failed: {why}" + (f"\n{trace}" if trace else ""))
        self.teardown()
        return FAILURE

    def unconfigured_status(self) -> str:
        """Why the node is not configured, as /diagnostics says it: configure's reason; else
        waiting for /robot_description, when the parameters name none and none came; else
        waiting for a lifecycle manager, without autostart."""
        if self.configure_error:
            return self.configure_error
        if getattr(self, "published", ...) is None and not describes_robot(self.params):
            return "waiting for /robot_description"
        return "unconfigured" if self.params["autostart"] else WAITING_FOR_MANAGER

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.activate()
        self.active = True
        return SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self.deactivate()
        return SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.teardown()
        gc.unfreeze()  # what teardown dropped may be collected; configure freezes again
        return SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        if self.active:
            self.on_deactivate(state)
        self.teardown()
        self._finalized = True
        return SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self.teardown()
        return SUCCESS  # back to unconfigured

    def finish(self) -> None:
        """The shutdown transition from whatever state the node is in (the process is ending)."""
        if not self._finalized:
            self.trigger_shutdown()


def freeze_heap() -> None:
    """Leave everything allocated so far out of the garbage collector's full collections: a
    node's heap (rclpy, numpy, numba, the model: ~130,000 objects) took a full collection
    250-330 ms, which a burst of inputs triggers and which stopped the commands as long (the
    fuzzer's largest gaps); what is frozen lives as long as the process anyway. Garbage is
    collected first: frozen, a reference cycle is never freed (a configuration that cleanup
    dropped and that no full collection had reached stayed, 60-110 kB a reconfiguration)."""
    gc.collect()
    gc.freeze()
