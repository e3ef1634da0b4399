"""A FollowJointTrajectory goal's tolerances and outcome, as ros2_controllers' joint_trajectory_controller
(JTC) judges them, without ROS.

Tolerances (control_msgs/JointTolerance): a positive value is the tolerance, 0 keeps the default,
-1 erases it (no check); a tolerance of 0 is never checked. While the reference is before its last
point, an error beyond a *path* tolerance aborts the goal (PATH_TOLERANCE_VIOLATED). From the last
point on, the goal succeeds once every error is within the *goal* tolerances (velocity: the default
``stopped_velocity_tolerance``); if that has not happened ``goal_time_tolerance`` after the last
point (0: wait for ever), the goal aborts (GOAL_TOLERANCE_VIOLATED). An error in a goal's
tolerances makes JTC use the defaults (and say so); so does this.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np

from ..plumbing.reasons import bounded

# FollowJointTrajectory.Result error codes (control_msgs), so that the core needs no control_msgs
SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP = 0, -1, -2, -3
PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = -4, -5
_ERASE = -1.0


@dataclasses.dataclass(frozen=True)
class Tolerances:
    """Per joint (`joints` order): path and goal tolerances of position and velocity; 0 = none."""
    path_position: np.ndarray
    path_velocity: np.ndarray
    goal_position: np.ndarray
    goal_velocity: np.ndarray
    goal_time: float

    @classmethod
    def defaults(cls, dof: int, path: float = 0.0, goal: float = 0.0,
                 stopped_velocity: float = 0.01, goal_time: float = 0.0) -> Tolerances:
        """JTC's ``constraints``: one trajectory and one goal tolerance for every joint."""
        return cls(np.full(dof, path), np.zeros(dof), np.full(dof, goal),
                   np.full(dof, stopped_velocity), goal_time)

    @classmethod
    def from_parameters(cls, params, dof: int) -> Tolerances:
        """The controller's ``constraints.*`` parameters (JTC's names): a trajectory and a goal
        tolerance, each one value or one per joint; ValueError naming the parameter."""
        per_joint = []
        for name in ("constraints.trajectory", "constraints.goal"):
            values = np.asarray(params[name] or [0.0], dtype=float)
            if values.size not in (1, dof) or np.any(values < 0) or not np.all(np.isfinite(values)):
                raise ValueError(f"{name} must be one value or {dof} (joints order), each >= 0, "
                                 f"got {params[name]}")
            per_joint.append(np.broadcast_to(values, (dof,)).copy())
        return cls(per_joint[0], np.zeros(dof), per_joint[1],
                   np.full(dof, params["constraints.stopped_velocity_tolerance"]),
                   params["constraints.goal_time"])


def resolve(default: float, given: float) -> float:
    """A goal's tolerance value against the default (control_msgs/JointTolerance)."""
    if given > 0.0:
        return given
    if abs(given - _ERASE) < 1e-7:
        return 0.0
    if given < 0.0:
        raise ValueError(f"illegal tolerance {given} (> 0, 0 = default or -1 = none)")
    return default


def for_goal(defaults: Tolerances, joints: Sequence[str], path: Iterable, goal: Iterable,
             goal_time: float) -> tuple[Tolerances, str]:
    """The goal's tolerances: ``path`` and ``goal`` are (name, position, velocity) triples.
    Returns them and '' — or the defaults and why the goal's could not be used."""
    try:
        values = {f.name: getattr(defaults, f.name).copy()
                  for f in dataclasses.fields(Tolerances) if f.name != "goal_time"}
        index = {name: i for i, name in enumerate(joints)}
        for kind, entries in (("path", path), ("goal", goal)):
            for name, position, velocity in entries:
                if name not in index:
                    raise ValueError(f"joint {bounded(repr(name), max_chars=80)} of the "
                                     f"{kind}_tolerance is not one of this controller's")
                i = index[name]
                for field, given in (("position", position), ("velocity", velocity)):
                    array = values[f"{kind}_{field}"]
                    array[i] = resolve(array[i], given)
        return Tolerances(**values, goal_time=resolve(defaults.goal_time, goal_time)), ""
    except ValueError as exc:
        return defaults, f"{exc}: the default tolerances apply"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How a goal ended: a FollowJointTrajectory.Result error code and its text."""
    code: int
    text: str

    @property
    def succeeded(self) -> bool:
        return self.code == SUCCESSFUL


class GoalMonitor:
    """Judges one goal each control cycle from the error (reference - measured, `joints` order)."""

    def __init__(self, tolerances: Tolerances, end_time: float, joints: Sequence[str]):
        self.tolerances, self.end_time, self.joints = tolerances, end_time, list(joints)

    @staticmethod
    def _beyond(error: np.ndarray, tolerance: np.ndarray) -> np.ndarray:
        return (tolerance > 0.0) & (np.abs(error) > tolerance)

    def check(self, t: float, position_error, velocity_error) -> Outcome | None:
        """The goal's outcome at time ``t`` (reference clock), or None while it runs on."""
        tol = self.tolerances
        e, ed = np.asarray(position_error), np.asarray(velocity_error)
        if t < self.end_time:
            bad = self._beyond(e, tol.path_position) | self._beyond(ed, tol.path_velocity)
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                return Outcome(PATH_TOLERANCE_VIOLATED,
                               f"Aborted due to path tolerance violation: joint "
                               f"'{self.joints[j]}' position error {e[j]:.6g}, velocity error "
                               f"{ed[j]:.6g}")
            return None
        outside = self._beyond(e, tol.goal_position) | self._beyond(ed, tol.goal_velocity)
        if not outside.any():
            return Outcome(SUCCESSFUL, "Goal successfully reached!")
        late = t - self.end_time
        if tol.goal_time != 0.0 and late > tol.goal_time:
            return Outcome(GOAL_TOLERANCE_VIOLATED,
                           f"Aborted due to goal_time_tolerance exceeding by {late:.6f} seconds")
        return None
