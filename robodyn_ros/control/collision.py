"""Collision detection and isolation on the momentum observer's residual (Haddadin, De Luca &
Albu-Schäffer, IEEE T-RO 33(6), 2017, §IV–V), and thresholds calibrated from a collision-free
recording (Mamedov & Mikhel, Frontiers in Robotics and AI 7:571574, 2020).

Threshold of joint i at velocity q̇_i:  h_i(q̇_i) = a_i + b_i |q̇_i|  (N m, or N for a prismatic joint;
b_i per rad/s or m/s): a floor set by noise and model error at rest, a slope for what grows with
speed — friction and the model's error in it above all.

* **Detection**: a collision when |r_i| > h_i(q̇_i) for some joint i.
* **Isolation**: an external force on link k acts on joints 0..k only (τ_ext = J_kᵀ F, and J_k has
  zero columns after k), so the collided link is at or after the last joint, in chain order, whose
  residual crosses its threshold; the event names that joint's child link. While the event lasts
  (some residual beyond its threshold) the isolation follows the last joint that has crossed: the
  joints near the base bear most of a push and cross first, the joint next to the contact may
  cross many cycles later (a force nearly through its axis gives it little torque, a push that
  grows slowly crosses the joints one by one). Once every residual is back within its threshold
  the isolation is final.
* **Calibration** (``fit_thresholds``): along a collision-free recording, per joint, the tightest line
  above every |r_k| — a_i, b_i ≥ 0 minimising the mean of a_i + b_i |q̇_i| over the recording subject
  to a_i + b_i |q̇_ik| ≥ |r_ik| for every sample (a linear programme: the upper convex hull of the
  points (|q̇|, |r|), touched where the recording spends its time) — then multiplied by ``margin``
  (> 1: what the recording did not show). ``velocity_term=False`` gives the static threshold
  a_i = margin max_k |r_ik|, b_i = 0.
* **The floor** (``effort_floor``): a_i is at least what a drive leaves unknown at rest, which a
  recording -- a simulation above all -- may not show: ``FLOOR_FRACTION`` of the joint's effort
  limit. A servo joint's torque is its motor current times a torque constant through a gear: the
  current is measured to ~0.05 % of its peak (a 12-bit converter over ± the peak), the torque
  constant holds to a few per cent, and the motor's cogging and the gear's ripple add 1-5 % of the
  rated torque at the tooth frequency; a residual smaller than 1 % of the limit is therefore below
  what the drive's own torque is known to, and a threshold there trips on the first motion the
  recording lacked. (libfranka's examples set a Panda's collision thresholds at 20 to 12 N m, a
  fifth of the large joints' 87 N m limit: far above this floor.)
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from collections.abc import Sequence

import numpy as np
import yaml

from ..dynamics.description import read_description
from ..plumbing.kernels import VECTOR, Direct, kernel
from ..plumbing.reasons import bounded
from .momentum_observer import MomentumObserver

__all__ = ["CollisionDetector", "CollisionEvent", "Thresholds", "child_links", "effort_floor",
           "fit_thresholds", "residuals", "thresholds_yaml"]

MARGIN = 1.5          # default factor over the recording's envelope
FLOOR_FRACTION = 0.01  # of a joint's effort limit: the least static threshold (module docstring)
NODE = "computed_torque_controller"
# the parameter names the controller loads (doc/collisions.md)
STATIC, SLOPE, JOINTS, GAIN = ("collision_thresholds", "collision_thresholds_per_velocity",
                               "collision_joints", "collision_observer_gain")


@dataclasses.dataclass(frozen=True)
class Thresholds:
    """h_i(q̇_i) = static_i + per_velocity_i |q̇_i| for the joints ``joint_names`` (module
    docstring), calibrated (or chosen) for the observer gain ``gain`` (1/s): the residual's noise
    grows with K_O, so thresholds hold for the gain they were calibrated with."""
    joint_names: tuple
    static: np.ndarray
    per_velocity: np.ndarray
    gain: np.ndarray

    def __post_init__(self):
        n = len(self.joint_names)
        for name in ("static", "per_velocity", "gain"):
            value = np.array(np.broadcast_to(np.asarray(getattr(self, name), dtype=float), (n,)))
            bad = ~np.isfinite(value) | (value < 0.0) | ((value == 0.0) if name == "gain" else False)
            if bad.any():
                raise ValueError(f"thresholds: {name} must be finite and "
                                 f"{'> 0' if name == 'gain' else '>= 0'} for every joint, got "
                                 f"{bounded(value)} (joint '{self.joint_names[int(np.argmax(bad))]}')")
            value.flags.writeable = False
            object.__setattr__(self, name, value)
        object.__setattr__(self, "joint_names", tuple(self.joint_names))

    def at(self, qd):
        """h(q̇) per joint."""
        return self.static + self.per_velocity * np.abs(qd)


def residuals(model, t, q, qd, tau, gain, *, friction=True, torque="held", law=None):
    """The observer's residual along a recording (rows of t (N,), q, qd, tau (N, n)), r[0] = 0.
    ``torque``: "held", tau[k] acted over (t_(k−1), t_k] (a simulator's applied effort, a driver's
    measured one); "command", tau[k] is the command answering state k, acting over
    (t_k, t_(k+1)]. ``law``: an adaptive law whose estimates the observer follows."""
    t = np.asarray(t, dtype=float)
    q, qd, tau = (np.asarray(x, dtype=float) for x in (q, qd, tau))
    n = model.dof
    if t.ndim != 1 or len(t) < 2 or any(x.shape != (len(t), n) for x in (q, qd, tau)):
        raise ValueError(f"residuals: expected t (N,) with N >= 2 and q, qd, tau (N, {n}), got "
                         f"{t.shape}, {q.shape}, {qd.shape}, {tau.shape}")
    if torque not in ("held", "command"):
        raise ValueError(f"residuals: torque must be 'held' or 'command', got {torque!r}")
    dt = np.diff(t)
    if not np.all(dt > 0.0):
        k = int(np.argmax(~(dt > 0.0)))
        raise ValueError(f"residuals: times must increase: t[{k + 1}] = {t[k + 1]} after "
                         f"t[{k}] = {t[k]}")
    observer = MomentumObserver(model, gain, friction)
    if law is not None:
        observer.follow(law)
    observer.reset(q[0], qd[0])
    r = np.zeros((len(t), n))
    shift = 1 if torque == "command" else 0
    for k in range(1, len(t)):
        r[k] = observer.step(q[k], qd[k], tau[k - shift], dt[k - 1])
    return r


def _envelope(x, y):
    """(a, b) >= 0 minimising a + b mean(x) with a + b x_k >= y_k for every k (module docstring).
    For a given b the best a is max(y − b x, 0): a convex, piecewise linear cost in b whose corners
    are the slopes of the upper convex hull of the points and the origin (a >= 0 is the origin's
    constraint), so the optimum is b = 0 or one of those."""
    mean = float(np.mean(x))
    x, y = np.append(x, 0.0), np.append(y, 0.0)
    order = np.lexsort((-y, x))
    hull = []
    for xi, yi in zip(x[order].tolist(), y[order].tolist()):   # Andrew's monotone chain, upper
        while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (yi - hull[-2][1])
                                  - (hull[-1][1] - hull[-2][1]) * (xi - hull[-2][0])) >= 0.0:
            hull.pop()
        hull.append((xi, yi))
    slopes = [0.0] + [(y1 - y0) / (x1 - x0) for (x0, y0), (x1, y1) in zip(hull, hull[1:])
                      if x1 > x0 and y1 > y0]
    return min(((float(np.max(y - b * x)), b) for b in slopes),
               key=lambda ab: ab[0] + ab[1] * mean)


def fit_thresholds(joint_names, r, qd, gain, margin=MARGIN, velocity_term=True,
                   floor=0.0) -> Thresholds:
    """Thresholds from the residuals ``r`` (N, n) and velocities ``qd`` (N, n) of a collision-free
    recording, made with observer gain ``gain`` (module docstring); ``floor`` (one value or one
    per joint, N m): the least static threshold, for the joints the recording barely loaded (a
    noise-free simulation's wrist sees micro-newton-metres, which any other motion exceeds)."""
    r, qd = np.abs(np.asarray(r, dtype=float)), np.abs(np.asarray(qd, dtype=float))
    n = len(joint_names)
    if r.ndim != 2 or r.shape[1] != n or r.shape != qd.shape or len(r) == 0:
        raise ValueError(f"fit_thresholds: expected r and qd of shape (N, {n}) alike, got "
                         f"{r.shape} and {qd.shape}")
    if not (np.isfinite(margin) and margin >= 1.0):
        raise ValueError(f"fit_thresholds: margin must be finite and >= 1, got {margin!r}")
    static, slope = np.zeros(n), np.zeros(n)
    for i in range(n):
        if velocity_term:
            static[i], slope[i] = _envelope(qd[:, i], r[:, i])
        else:
            static[i] = r[:, i].max()
    floor = np.broadcast_to(np.asarray(floor, dtype=float), (n,))
    if not np.all(np.isfinite(floor) & (floor >= 0.0)):
        raise ValueError(f"fit_thresholds: floor must be finite and >= 0, got {bounded(floor)}")
    return Thresholds(tuple(joint_names), np.maximum(margin * static, floor), margin * slope,
                      np.broadcast_to(np.asarray(gain, dtype=float), (n,)))


def effort_floor(model, fraction=FLOOR_FRACTION) -> np.ndarray:
    """The least static threshold per joint (module docstring): ``fraction`` of the joint's effort
    limit; 0 for a joint without one (the URDF gives none: nothing to reason from)."""
    limit = np.asarray(model.effort_limit, dtype=float)
    return np.where(np.isfinite(limit), fraction * limit, 0.0)


def thresholds_yaml(thresholds: Thresholds, node: str = NODE) -> str:
    """The ROS 2 parameter file the controller loads (``--params-file``)."""
    values = {JOINTS: list(thresholds.joint_names),
              STATIC: [float(x) for x in thresholds.static],
              SLOPE: [float(x) for x in thresholds.per_velocity],
              GAIN: [float(x) for x in thresholds.gain]}
    header = ("# collision thresholds h_i = collision_thresholds[i] + "
              "collision_thresholds_per_velocity[i] |qd_i| (N m, N m s/rad), for the momentum "
              "observer's gain collision_observer_gain (1/s); doc/collisions.md\n")
    return header + yaml.safe_dump({node: {"ros__parameters": values}}, sort_keys=False)


def child_links(urdf, joint_names: Sequence[str]) -> list[str]:
    """The child link of each joint of ``joint_names`` in the URDF (a path, XML text or bytes):
    the link a joint moves, which isolation names."""
    source, text = read_description(urdf)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f"{source}: not XML: {exc}") from None
    children = {j.get("name"): j.find("child").get("link") for j in root.findall("joint")
                if j.find("child") is not None}
    missing = [j for j in joint_names if j not in children]
    if missing:
        raise ValueError(f"{source}: no joint {bounded(missing)} with a <child> link")
    return [children[j] for j in joint_names]


@kernel
def last_crossing(r, qd, static, slope):
    """The last joint i with |r_i| > static_i + slope_i |q̇_i|, or −1 (NaN never crosses)."""
    last = -1
    for i in range(r.shape[0]):
        if abs(r[i]) > static[i] + slope[i] * abs(qd[i]):
            last = i
    return last


_LAST_CROSSING = Direct(last_crossing, VECTOR, VECTOR, VECTOR, VECTOR)


@dataclasses.dataclass(frozen=True)
class CollisionEvent:
    """A detected collision: when (``time``), the residuals and thresholds then (in
    ``joint_names`` order), and the isolation so far: the furthest joint that has crossed its
    threshold since (``joint``, at ``isolated_time``) and its child link, on which or after which
    the contact is; ``ended``: when every residual was back within its threshold (None while the
    event lasts), from which time the isolation no longer moves; ``located``: that link or one
    after it, nearest the line of action of the wrench estimate (None: not located; the
    collision guard sets it, ``contact_location``)."""
    time: float
    joint_names: tuple
    residuals: np.ndarray
    thresholds: np.ndarray
    joint: str
    link: str
    isolated_time: float
    ended: float | None = None
    located: str | None = None

    @property
    def crossing(self) -> tuple:
        """The joints whose residual was beyond its threshold at detection, in chain order."""
        return tuple(self.joint_names[i]
                     for i in np.flatnonzero(np.abs(self.residuals) > self.thresholds))

    @property
    def reason(self) -> str:
        """One bounded line for a log, an aborted goal, a diagnostic."""
        crossing = self.crossing
        i = self.joint_names.index(crossing[-1])
        return bounded(f"collision at {self.time:.3f} s: joint '{crossing[-1]}' residual "
                       f"{self.residuals[i]:+.3g} beyond its threshold {self.thresholds[i]:.3g} "
                       f"(crossing: {bounded(list(crossing))}); isolated to link '{self.link}' or "
                       f"after it (joint '{self.joint}' crossed at {self.isolated_time:.3f} s)"
                       + (f", located on '{self.located}'" if self.located else ""))


class CollisionDetector:
    """``check(t, r, q̇)`` once per cycle (module docstring): None until a residual crosses its
    threshold; from then on the ``CollisionEvent``, its isolation moved to a later joint whenever
    one crosses while the event lasts (a contact loads the joints before it too, and the nearer
    ones may cross first), until ``reset()``. ``moved``: whether the last check moved the
    isolation of a standing event. ``links``: the link each joint moves (``child_links``)."""

    def __init__(self, thresholds: Thresholds, links: Sequence[str]):
        if len(links) != len(thresholds.joint_names):
            raise ValueError(f"CollisionDetector: {len(links)} links for "
                             f"{len(thresholds.joint_names)} joints")
        self.thresholds, self.links = thresholds, tuple(links)
        self._static = np.array(thresholds.static)
        self._slope = np.array(thresholds.per_velocity)
        self.event, self.moved = None, False
        self._isolated = -1
        _LAST_CROSSING.ready()

    def reset(self) -> None:
        """Forget the collision: the next crossing is a new one."""
        self.event, self.moved, self._isolated = None, False, -1

    def check(self, t: float, r, qd):
        """None, or the event (r and q̇ float64 vectors in the thresholds' joint order)."""
        last = _LAST_CROSSING.call(r, qd, self._static, self._slope)
        event = self.event
        self.moved = False
        if event is None:
            if last >= 0:
                names = self.thresholds.joint_names
                self.event = CollisionEvent(float(t), names, np.array(r), self.thresholds.at(qd),
                                            names[last], self.links[last], float(t))
                self._isolated = last
        elif event.ended is None:
            if last < 0:
                self.event = dataclasses.replace(event, ended=float(t))
            elif last > self._isolated:
                self.event = dataclasses.replace(event, joint=self.thresholds.joint_names[last],
                                                 link=self.links[last], isolated_time=float(t))
                self._isolated, self.moved = last, True
        return self.event


def warm_up() -> None:
    """Compile the per-cycle check now, or load it from numba's cache."""
    _LAST_CROSSING.ready()
