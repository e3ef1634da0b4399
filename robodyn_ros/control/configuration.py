"""The control loop's configuration, without ROS: a change validated whole against the current
configuration before any of it is applied (``ControlLoop.prepare``, then ``apply``).

A configuration holds ``control_law`` and the law's parameters (per-joint ones given in `joints`
order, taken to the chain's), the loop's own settings (``effort_limits``, ``on_timeout``), the
drive's (``drive_compensates``, ``drive_period``, ``effort_rate_limit``: ``drive.Drive``) and the
collision guard's. Behind a drive that compensates friction the law is built without the model's
friction (``friction: false``), whatever its ``friction`` says: the drive adds its own.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..plumbing.reasons import bounded
from .collision_guard import SETTINGS as COLLISION_SETTINGS
from .collision_guard import CollisionGuard, guard_from_settings
from .drive import DRIVE_FRICTION, Drive
from .joints import JointOrder
from .law import ControlLaw
from .safe_commands import ON_TIMEOUT

#: Law parameters given per joint (or as a matrix) in `joints` order; laws take chain order.
PER_JOINT = ("kp", "kd", "ki", "integral_limit", "lambda", "dead_zone", "posture_kp", "posture_kd",
             "torque_rate_limit")
#: Settings of the loop itself (the rest of a configuration is the law's).
DRIVE_SETTINGS = ("drive_compensates", "drive_period", "effort_rate_limit")
LOOP_SETTINGS = ("control_law", "effort_limits", "on_timeout", *DRIVE_SETTINGS, *COLLISION_SETTINGS)
#: the loop's settings that are no law's
OWN = {"effort_limits", "on_timeout", *DRIVE_SETTINGS, *COLLISION_SETTINGS}
KEEP = object()   # a Reconfiguration that leaves the collision guard as it is


@dataclasses.dataclass(frozen=True)
class Reconfiguration:
    """A validated change, ready to apply (see :meth:`Settings.prepare`)."""
    values: Mapping[str, Any]
    law: ControlLaw | None
    limit: np.ndarray | None
    guard: CollisionGuard | None | object = KEEP
    drive: Drive | None = None


def _law_value(value):
    """A one-element list is one number for every joint."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


class Settings:
    """How one arm's loop validates a configuration: ``order`` its joints, ``law_class(name)``
    the law registered under a name, ``links`` the link each joint moves and ``shapes`` their
    collision shapes (the guard's), ``state_timeout`` the guard's longest gap."""

    def __init__(self, model, order: JointOrder, law_class: Callable[[str], type[ControlLaw]],
                 links, shapes, state_timeout: float):
        self.model, self.order, self._law_class = model, order, law_class
        self._links, self._shapes, self._state_timeout = links, shapes, state_timeout

    def prepare(self, config: Mapping[str, Any], law: ControlLaw | None,
                guard: CollisionGuard | None, changes: Mapping[str, Any]) -> Reconfiguration:
        """``changes`` to ``config`` (running ``law`` and ``guard``, None before the first) checked
        all before any is applied: ValueError with the reason, or a :class:`Reconfiguration`."""
        values = {**config, **changes}
        new_law = limit = None
        if "on_timeout" in changes and changes["on_timeout"] not in ON_TIMEOUT:
            raise ValueError(f"on_timeout must be one of {list(ON_TIMEOUT)}, "
                             f"got {bounded(repr(changes['on_timeout']))}")
        if "effort_limits" in changes:
            limit = self.effort_limits(changes["effort_limits"])
        drive = self.drive(values) if changes.keys() & set(DRIVE_SETTINGS) else None
        if changes.keys() - OWN or "drive_compensates" in changes:   # the law's friction
            new_law = self.make_law(values)
        new_guard = KEEP
        friction = bool((new_law or law).params.get("friction", True))
        if changes.keys() & set(COLLISION_SETTINGS) or (
                new_law is not None and friction != bool(law and law.params.get("friction", True))):
            if guard is not None and guard.event is not None:
                raise ValueError("a collision stands: reset it (reset_collision) before changing "
                                 "the collision settings")
            new_guard = guard_from_settings(self.model, self.order, values, self._links, friction,
                                            self._state_timeout, self._shapes)
        return Reconfiguration(values, new_law, limit, new_guard, drive)

    def drive(self, values) -> Drive:
        """The drive the settings ``values`` describe; ValueError naming the parameter."""
        return Drive.of(self.order, values.get("drive_compensates"),
                        values.get("drive_period", Drive.period), values.get("effort_rate_limit"))

    def make_law(self, values) -> ControlLaw:
        name = values["control_law"]
        cls = self._law_class(name)  # UnknownLawError (a ValueError) lists the available ones
        # a parameter nobody set is None: the law's own default then applies
        params = {k: self._chain_order(k, _law_value(values[k]))
                  for k in cls.parameters if values.get(k) is not None}
        if "friction" in cls.parameters and self.drive(values).compensates & DRIVE_FRICTION:
            params["friction"] = False   # the drive's own (module docstring)
        try:
            return cls(self.model, params)
        except ValueError:
            raise
        except Exception as exc:  # a plugin's own failure must not take the node down
            raise ValueError(f"control law '{name}' failed to configure: {exc!r}") from exc

    def _chain_order(self, name, value):
        """A per-joint gain (n values) or matrix gain (n*n row-major) given in `joints` order, in
        the chain order the law works in; anything else (one number, a wrong size the law will
        refuse, a plugin's own parameter) as given."""
        if name not in PER_JOINT or not isinstance(value, list):
            return value
        n = self.model.dof
        try:
            v = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return value
        if v.shape == (n,):
            return self.order.to_chain(v).tolist()
        if v.shape == (n * n,) and n > 1:
            return self.order.matrix_to_chain(v.reshape(n, n)).ravel().tolist()
        return value

    def effort_limits(self, limits) -> np.ndarray:
        """effort_limits (joints order; empty: the model's) in chain order."""
        if limits is None or len(limits) == 0:
            return self.model.effort_limit.copy()
        try:
            v = np.asarray(limits, dtype=float)
        except (TypeError, ValueError):
            v = None
        if v is None or v.shape != (self.model.dof,) or np.any(np.isnan(v)) or np.any(v <= 0):
            raise ValueError(f"effort_limits must be {self.model.dof} positive values in joints "
                             f"order {bounded(self.order.names)} (or empty for the URDF's), "
                             f"got {bounded(repr(list(limits)))}")
        return self.order.to_chain(v)
