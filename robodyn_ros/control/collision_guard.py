"""What a controller does about a collision: the momentum observer's residual every cycle, the
detector on it, and the reaction (Haddadin, De Luca & Albu-Schäffer, IEEE T-RO 33(6), 2017, §VI).

Reactions (``collision_reaction``), from the moment of detection until ``reset``:

* ``none``: report only; the law goes on.
* ``stop``: hold where the collision was detected (the loop's hold: the law tracks that
  position, with its gains) — stiff: the arm stays at the contact and presses with what the
  position error at detection asks.
* ``float``: gravity (and, with the law's ``friction``, friction) compensation only: no position
  is held, so the arm yields to the push and the contact force falls to what the arm's own
  momentum and the obstacle's stiffness leave.
* ``reflex``: for ``reflex_duration`` seconds, float plus K_R r, the residual (≈ τ_ext) times
  ``reflex_gain``: the drives push the way the contact pushes, away from it; then float.

While a collision stands the loop refuses references and goals (the caller must reset first), and
the reaction's torque goes through the same finite check and saturation as every command.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..dynamics.drives import PARAMETERS as DRIVE_PARAMETERS
from ..dynamics.drives import LOADED, PLAUSIBLE, JointDrives, from_parameters
from ..plumbing.reasons import bounded
from .collision import CollisionDetector, Thresholds
from .contact_location import locate
from .joints import JointOrder
from .laws import GravityCompensation
from .momentum_observer import MomentumObserver

REACTIONS = ("none", "stop", "float", "reflex")
FLOATING = ("float", "reflex")
RELOCATE = 1.5   # the residual's growth (max |r_i| / h_i) at which the contact is located again
AT_REST = 0.05   # rad/s (m/s): below it on every joint, a measured effort is near g(q)
# the controller's parameters that make the guard (doc/collisions.md)
SETTINGS = ("collision_observer_gain", "collision_joints", "collision_thresholds",
            "collision_thresholds_per_velocity", "collision_reaction", "collision_reflex_gain",
            "collision_reflex_duration", "collision_torque", *DRIVE_PARAMETERS)
TORQUES = ("command", "measured")


class CollisionGuard:
    """The observer and detector of one arm, its joints in chain order.

    ``thresholds``: a :class:`Thresholds` in chain order, or None to observe without detecting.
    ``links``: the link each joint moves (the event names it). ``max_gap``: seconds between two
    states beyond which the observer starts afresh (an outage is no step). ``friction``: whether
    the observer and the floating reaction include the model's friction (the law's setting).
    ``shapes``: the links' collision shapes (``contact_location.link_shapes``): while the event
    lasts, each time the residual reaches RELOCATE times the strength it was last located at (and
    at detection, and when the isolation moves) the event's ``located`` is the link of the
    contact that explains the residual (``contact_location.contact``) among the isolated link and
    those after it, a shape fixed to a link counted as that link's; ``located_at``: the time of
    that state. ``drives``: what each joint's measured effort is (``dynamics.drives.JointDrives``
    in chain order; None: torques): a measured current is made a torque with its drive gain, and
    :meth:`residual_in` gives the residual in each joint's unit."""

    def __init__(self, model, gain, thresholds: Thresholds | None, links, reaction: str = "stop",
                 reflex_gain: float = 1.0, reflex_duration: float = 0.1, friction: bool = True,
                 max_gap: float = 0.1, torque: str = "command", shapes=(),
                 drives: JointDrives | None = None):
        if reaction not in REACTIONS:
            raise ValueError(f"collision_reaction must be one of {list(REACTIONS)}, got {reaction!r}")
        if torque not in TORQUES:
            raise ValueError(f"collision_torque must be one of {list(TORQUES)}, got {torque!r}")
        if not (np.isfinite(reflex_gain) and reflex_gain >= 0.0):
            raise ValueError(f"collision_reflex_gain must be finite and >= 0, got {reflex_gain!r}")
        if not (np.isfinite(reflex_duration) and reflex_duration >= 0.0):
            raise ValueError(f"collision_reflex_duration must be finite and >= 0 s, got "
                             f"{reflex_duration!r}")
        self.observer = MomentumObserver(model, gain, friction)
        self.detector = None if thresholds is None else CollisionDetector(thresholds, links)
        self.model, self.links, self.shapes = model, tuple(links), tuple(shapes)
        self._strength = 0.0   # max |r_i| / h_i when the event was last located
        self.located_at = None  # the time of the state the event was last located at
        self.moved = False     # whether this cycle moved the event's isolation or location
        self.reaction, self.reflex_gain, self.reflex_duration = reaction, reflex_gain, reflex_duration
        self._float = GravityCompensation(model, {"friction": friction})
        self._max_gap = max_gap
        self._last_t = None
        self.residual = self.observer.residual   # updated in place every cycle
        self.event = None
        self.measured = torque == "measured"
        self.drives = JointDrives.torques_measured(model.joint_names) if drives is None else drives
        self._gains = np.array(self.drives.gains)   # a measured effort times these: N m (N)
        self._torques = not self.drives.measures_currents.any()   # every effort a torque already
        self._torque = np.zeros(model.dof)   # the measured effort as a torque
        self._effort = None          # the state's measured effort (chain order), when measured
        self.unmeasured = 0          # states without a usable effort: the command stood in
        #: None: a contact is located here, in the cycle; else ``locate_later(guard, event, q, r,
        #: first)`` locates it elsewhere (``locate``'s arguments, copies) and calls :meth:`place`
        #: (a node: the locator's milliseconds must not delay the detection cycle's command)
        self.locate_later = None

    def follow(self, law) -> None:
        """Take the model from an adaptive law's current estimates (a payload it learned is no
        collision), or from the arm's model for any other law."""
        self.observer.follow(law if hasattr(law, "estimate_names") else None)
        self._last_t = None   # p(0) from the new parameters at the next state

    def measure(self, effort) -> None:
        """The state's measured effort in chain order, the torque the joints applied over the
        step that ends at it (a driver's effort field); None: none that can be used (the
        command the controller sent stands in, counted in ``unmeasured``)."""
        self._effort = None
        if effort is not None and np.all(np.isfinite(effort)):
            self._effort = effort if self._torques else np.multiply(effort, self._gains, out=self._torque)
        self.unmeasured += self._effort is None

    def implausible(self, q, qd) -> str | None:
        """One line when the measured torque, at rest (``qd`` below AT_REST), is not the model's
        gravity torque where gravity loads a joint (the ratio outside PLAUSIBLE: currents taken
        for N m, or wrong drive gains), saying what to set; None otherwise, or not measured."""
        effort = self._effort
        if not self.measured or effort is None or np.max(np.abs(qd)) > AT_REST:
            return None
        g = self.model.gravity_torques(q)
        loaded = np.flatnonzero(np.abs(g) > LOADED * np.abs(g).max()) if np.abs(g).max() > 0 else []
        scale = {self.model.joint_names[i]: effort[i] / g[i] for i in loaded}
        low, high = PLAUSIBLE
        if all(low <= v <= high for v in scale.values()):
            return None
        what = ("check drive_gains (drives_file)" if self.drives.measures_currents.any() else
                "if they are motor currents (ur_robot_driver's), set drives_file or effort_units and "
                "drive_gains (N m/A)")
        return bounded(f"the measured efforts at rest are {', '.join(f'{v:.2g}' for v in scale.values())} "
                       f"times the model's gravity torque ({', '.join(scale)}): not the joint torques; {what}")

    def residual_in(self) -> np.ndarray:
        """The residual (chain order) in each joint's measured unit: a current joint's in A (the
        residual over its drive gain: the current the external torque draws), others' as they
        are (N m or N)."""
        return self.residual / self._gains

    def observe(self, t: float, q, qd, applied) -> bool:
        """One cycle: the state (q, q̇) at time ``t`` and the torque ``applied`` since the last
        one (float64 vectors in chain order, as the loop keeps them: the command sent, unless the
        effort is measured). True when this
        cycle detects a new collision (``event``)."""
        if self.measured and self._effort is not None:
            applied = self._effort
        dt = None if self._last_t is None else t - self._last_t
        self._last_t = t
        if dt is None or not 0.0 < dt <= self._max_gap:   # the first state, or after an outage
            self.observer.reset(q, qd)
            return False
        r = self.observer.advance(q, qd, applied, dt)   # the loop's float64 vectors
        self.moved = False
        if r is None:             # a residual that would not be finite: kept out, start afresh
            self._last_t = None
            return False
        if self.detector is None:
            return False
        known = self.event
        self.event = event = self.detector.check(t, r, qd)
        if event is not None and event.ended is None and self.shapes:
            self._locate(event, q, r, qd, known is None)
        self.moved = known is not None and (self.detector.moved or self.event is not event)
        return known is None and self.event is not None

    def _locate(self, event, q, r, qd, new: bool) -> None:
        """The event's ``located`` again, when new, moved or RELOCATE times stronger."""
        strength = float(np.max(np.abs(r) / self.detector.thresholds.at(qd)))
        if not (new or self.detector.moved or strength >= RELOCATE * self._strength):
            return
        self._strength, self.located_at = strength, self._last_t
        first = self.links.index(event.link)
        if self.locate_later is not None:
            return self.locate_later(self, event, q.copy(), r.copy(), first)
        self.place(event, locate(self.model, self.shapes, q, r, first))

    def place(self, event, joint: int | None) -> bool:
        """The contact of ``event`` located on the body ``joint`` moves (``locate``'s answer), if
        that event still stands: whether the standing event's ``located`` changed."""
        now = self.event
        if joint is None or now is None or now.time != event.time or \
                self.links[joint] == now.located:
            return False
        self.event = self.detector.event = dataclasses.replace(now, located=self.links[joint])
        return True

    @property
    def reacting(self) -> bool:
        """Whether the reaction's torque replaces the law's (float, reflex)."""
        return self.event is not None and self.reaction in FLOATING

    def compute(self, q, qd, q_des=None, qd_des=None, qdd_des=None, dt=0.0):
        """The floating reaction's torque at (q, q̇) (a law's signature: the reference is
        ignored), with the reflex while it lasts."""
        tau = self._float.compute(q, qd)
        if self.reaction == "reflex" and self._last_t - self.event.time < self.reflex_duration:
            tau += self.reflex_gain * self.residual
        return tau

    def reset(self) -> None:
        """The collision is dealt with: the next crossing is a new one, of a residual started
        afresh at the next state (the old one still decays from the contact; if the contact
        stands, the new one finds it again within a few cycles)."""
        self.event = None
        self._last_t = None
        if self.detector is not None:
            self.detector.reset()

    def restart(self) -> None:
        """Start the observer afresh at the next state (e.g. after a new activation)."""
        self._last_t = None


def guard_from_settings(model, order: JointOrder, values, links, friction: bool,
                        max_gap: float, shapes=()) -> CollisionGuard | None:
    """The guard the controller's ``SETTINGS`` ask for (None: no observer). Per-joint values are
    one for every joint or one per joint of ``collision_joints`` (empty: the controller's
    ``joints``); ValueError naming the parameter (a ModelError naming the drives file)."""
    drives = from_parameters(order.names, values.get("drives_file") or "",   # checked, observer or not
                             values.get("effort_units"), values.get("drive_gains"))
    gain = list(values.get("collision_observer_gain") or [])
    static = list(values.get("collision_thresholds") or [])
    if not gain:
        if static:
            raise ValueError("collision_thresholds need the observer: set collision_observer_gain "
                             "(the gain they were calibrated with)")
        return None
    names = list(values.get("collision_joints") or order.names)
    try:
        thresholds_order = JointOrder(order.chain, names)
    except ValueError as exc:
        raise ValueError(f"collision_joints: {exc}") from None

    def chain(name, given):
        v = np.asarray(given, dtype=float)
        if v.shape not in ((1,), (len(names),)):
            raise ValueError(f"{name} must be one value or {len(names)} (collision_joints order "
                             f"{bounded(names)}), got {bounded(list(given))}")
        return thresholds_order.to_chain(np.broadcast_to(v, (len(names),)))

    gain = chain("collision_observer_gain", gain)
    thresholds = None if not static else Thresholds(
        order.chain, chain("collision_thresholds", static),
        chain("collision_thresholds_per_velocity",
              list(values.get("collision_thresholds_per_velocity") or [0.0])), gain)
    return CollisionGuard(model, gain, thresholds, links, values.get("collision_reaction", "stop"),
                          float(values.get("collision_reflex_gain", 1.0)),
                          float(values.get("collision_reflex_duration", 0.1)), friction, max_gap,
                          values.get("collision_torque", "command"), shapes,
                          drives.in_order(order.chain))
