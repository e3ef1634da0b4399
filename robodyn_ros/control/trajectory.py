"""Joint-trajectory sampling with the interpolation of ros2_controllers' joint_trajectory_controller.

Between two points the segment is (JTC ``Trajectory::interpolate_between_points``):

* quintic when both points carry positions, velocities and accelerations,
* cubic when both carry positions and velocities,
* linear otherwise (constant velocity, zero acceleration).

A :class:`JointTrajectory` is the pure-Python counterpart of ``trajectory_msgs/JointTrajectory``:
times are the points' ``time_from_start`` in seconds. A :class:`TrajectorySampler` keeps the
reference of one controller in its own joint order and is sampled every control cycle.

How the node uses it (the JTC conventions)::

    sampler = TrajectorySampler(joints, position=q_measured, time=now)   # holds where it starts
    # on ~/joint_trajectory:
    start = stamp if stamp != 0 else now              # header.stamp, or "now" when it is zero
    sampler.set_trajectory(JointTrajectory(msg.joint_names, times, pos, vel, acc), now, start)
    # every cycle:
    q_des, qd_des, qdd_des = sampler.sample(now)

Times are float seconds on one clock (e.g. ``node.get_clock().now().nanoseconds * 1e-9``; at the
Unix epoch of today a double resolves ~0.4 µs, far below a control period).

A new trajectory replaces the old one **from its start time**: until then the old reference keeps
playing; from the start time the reference runs from the old reference's state at that instant
(position, velocity and acceleration — the implicit first point, as JTC uses the current state) to
the new trajectory's first point, then through its points, and holds the last one (zero velocity
and acceleration). Splicing on the *desired* state keeps the reference continuous, so a new goal
makes no jump in the feedback term (JTC's ``open_loop_control`` behaviour). To start from the
measured state instead (JTC's default), call :meth:`TrajectorySampler.hold` with the measured
position first. If the start time is already past, the reference joins the new trajectory where
it is at ``now``, as JTC does.
"""
from __future__ import annotations

import collections
from collections.abc import Sequence

import numpy as np

from ..plumbing.kernels import C_ARRAY3, C_MATRIX, FLOAT, VECTOR, Direct, kernel
from ..plumbing.reasons import bounded

__all__ = ["JointTrajectory", "TrajectoryError", "TrajectorySampler", "limit_violation",
           "point_derivatives", "segment_coefficients"]

_DEGREE = 5  # every segment is stored as a quintic; cubic and linear ones have zero high terms
_VEL_WEIGHTS = np.arange(1.0, _DEGREE + 1)  # d/dτ τ^k = k τ^(k-1)
_ACC_WEIGHTS = _VEL_WEIGHTS[1:] * _VEL_WEIGHTS[:-1]  # k (k-1) for k = 2..5


@kernel
def sample_into(knots, origins, stacked, t, out):
    """out = [q; q̇; q̈] (3, n) at time ``t`` of the piece i whose interval [knots[i], knots[i+1])
    holds t (piece 0 before knots[0], evaluated there): the polynomials in t - origins[i] whose
    coefficients ``stacked[i]`` holds, one row per power, those of q, q̇ and q̈ side by side. One
    compiled call: the bisection, the powers and the product in NumPy cost 5.6 us a cycle."""
    lo, hi = 0, knots.shape[0]
    while lo < hi:   # bisect_right
        mid = (lo + hi) // 2
        if t < knots[mid]:
            hi = mid
        else:
            lo = mid + 1
    i = max(lo - 1, 0)
    s = max(t, knots[0]) - origins[i]
    n = out.shape[1]
    for r in range(3):
        for j in range(n):
            value, power = 0.0, 1.0
            for k in range(stacked.shape[1]):
                value += power * stacked[i, k, r * n + j]
                power *= s
            out[r, j] = value


SAMPLE = Direct(sample_into, VECTOR, VECTOR, C_ARRAY3, FLOAT, C_MATRIX)


class TrajectoryError(ValueError):
    """A trajectory that cannot be followed; the message says why."""


def _points_array(name: str, values, shape: tuple[int, int]) -> np.ndarray:
    try:
        array = np.array(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TrajectoryError(f"{name} is not numeric: {exc}") from None
    if array.shape != shape:
        raise TrajectoryError(
            f"{name} has shape {array.shape}, expected {shape} (points x joints)")
    if not np.all(np.isfinite(array)):
        point, joint = np.argwhere(~np.isfinite(array))[0]
        raise TrajectoryError(f"{name} of point {point}, joint {joint} is {array[point, joint]}")
    array.flags.writeable = False
    return array


class JointTrajectory:
    """Validated waypoints: ``positions[i, j]`` is joint ``joint_names[j]`` at ``times[i]``.

    ``times`` are each point's time from the trajectory's start (s), strictly increasing and
    >= 0. ``velocities``/``accelerations`` are optional, for every point or for none (as the
    arrays are (points, joints)); accelerations need velocities (JTC has no segment for them).
    """

    def __init__(self, joint_names: Sequence[str], times, positions, velocities=None,
                 accelerations=None):
        names = [str(n) for n in joint_names]
        if len(set(names)) != len(names):  # counted once each: names.count is O(n^2)
            duplicated = sorted(n for n, k in collections.Counter(names).items() if k > 1)
            raise TrajectoryError(f"joint names repeated: {bounded(duplicated)}")
        try:
            times = np.array(times, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TrajectoryError(f"times are not numeric: {exc}") from None
        if times.ndim != 1 or times.size == 0:
            raise TrajectoryError(f"times must be a non-empty 1-D sequence, got shape {times.shape}")
        if not np.all(np.isfinite(times)):
            raise TrajectoryError(f"times contain NaN or inf: {times.tolist()}")
        if times[0] < 0.0:
            raise TrajectoryError(f"time_from_start of point 0 is negative ({times[0]} s)")
        steps = np.diff(times)
        if np.any(steps <= 0.0):
            i = int(np.argmax(steps <= 0.0))
            raise TrajectoryError(
                f"time_from_start must increase strictly: point {i + 1} at {times[i + 1]} s "
                f"does not come after point {i} at {times[i]} s")
        if accelerations is not None and velocities is None:
            raise TrajectoryError("accelerations given without velocities")
        shape = (times.size, len(names))
        times.flags.writeable = False
        self.joint_names = names
        self.times = times
        self.positions = _points_array("positions", positions, shape)
        self.velocities = None if velocities is None else _points_array(
            "velocities", velocities, shape)
        self.accelerations = None if accelerations is None else _points_array(
            "accelerations", accelerations, shape)

    def reordered(self, joint_names: Sequence[str]) -> JointTrajectory:
        """The same trajectory with its columns in the order of ``joint_names`` (a controller's
        joints): every controller joint must appear, and no other."""
        missing = [n for n in joint_names if n not in self.joint_names]
        unknown = [n for n in self.joint_names if n not in joint_names]
        if missing or unknown:
            raise TrajectoryError(
                "trajectory joints do not match the controller's: "
                + "; ".join(f"{what} joints {names}" for what, names in
                            (("missing", missing), ("unknown", unknown)) if names))
        order = [self.joint_names.index(n) for n in joint_names]

        def columns(a):
            return None if a is None else a[:, order]
        return JointTrajectory(joint_names, self.times, columns(self.positions),
                               columns(self.velocities), columns(self.accelerations))


def segment_coefficients(duration, p0, p1, v0=None, v1=None, a0=None, a1=None) -> np.ndarray:
    """Coefficients c (6, n) of p(τ) = Σ c_k τ^k on [0, duration] with JTC's boundary conditions:
    linear through p0, p1; cubic also matching v0, v1; quintic also a0, a1. For m segments at
    once, give m durations and (m, n) boundary values: c is then (6, m, n)."""
    p0 = np.asarray(p0, dtype=float)
    c = np.zeros((_DEGREE + 1, *p0.shape))
    dp = np.asarray(p1, dtype=float) - p0
    T = np.asarray(duration, dtype=float)
    if T.ndim:
        T = T[:, None]  # one duration per segment, broadcast over the joints
    c[0] = p0
    if v0 is None or v1 is None:
        c[1] = dp / T
    elif a0 is None or a1 is None:
        c[1] = v0
        c[2] = (3.0 * dp - (2.0 * v0 + v1) * T) / T**2
        c[3] = (-2.0 * dp + (v0 + v1) * T) / T**3
    else:
        c[1] = v0
        c[2] = 0.5 * a0
        c[3] = (20.0 * dp - (12.0 * v0 + 8.0 * v1) * T - (3.0 * a0 - a1) * T**2) / (2.0 * T**3)
        c[4] = (-30.0 * dp + (16.0 * v0 + 14.0 * v1) * T + (3.0 * a0 - 2.0 * a1) * T**2) / (
            2.0 * T**4)
        c[5] = (12.0 * dp - 6.0 * (v0 + v1) * T + (a1 - a0) * T**2) / (2.0 * T**5)
    return c


def point_derivatives(trajectory: JointTrajectory) -> tuple[np.ndarray, np.ndarray]:
    """Velocities and accelerations (points x joints) of JTC's spline at each point's time, as
    JTC samples them there: the given values where the trajectory has them, else the derivatives
    of the segment that starts at the point (the right limit: a linear spline's velocity jumps
    and a cubic's acceleration jumps at interior points). The last point is held as JTC holds
    it: its given velocity (or zero) and zero acceleration unless given."""
    P, V, A = trajectory.positions, trajectory.velocities, trajectory.accelerations
    velocities = np.zeros_like(P) if V is None else V.copy()
    accelerations = np.zeros_like(P) if A is None else A.copy()
    if P.shape[0] > 1 and A is None:
        a, b = slice(None, -1), slice(1, None)
        c = segment_coefficients(np.diff(trajectory.times), P[a], P[b],
                                 *((None, None) if V is None else (V[a], V[b])))
        velocities[a] = c[1]  # dp/dτ at τ = 0
        accelerations[a] = 2.0 * c[2]
    return velocities, accelerations


def limit_violation(positions: np.ndarray, joint_names: Sequence[str], lower, upper,
                    margin: float = 0.0) -> str:
    """Why positions (points x joints) leave [lower - margin, upper + margin], or ''."""
    low, high = positions < lower - margin, positions > upper + margin
    if not (low.any() or high.any()):
        return ""
    point, joint = np.argwhere(low | high)[0]
    return (f"point {point}: joint '{joint_names[joint]}' at {positions[point, joint]:.6g} is "
            f"outside its limits [{lower[joint]:.6g}, {upper[joint]:.6g}]")


class TrajectorySampler:
    """The reference (q, q̇, q̈) of one controller as a function of time.

    Internally a piecewise quintic: piece i is valid on ``[knots[i], knots[i+1])`` and evaluated at
    ``τ = t - origins[i]``; the last piece is the hold of the final point up to ``knots[-1] = inf``.
    """

    def __init__(self, joint_names: Sequence[str], position, time: float = 0.0,
                 max_pieces: int | None = None):
        self.joint_names = [str(n) for n in joint_names]
        #: most segments the reference may hold (a trajectory that would exceed it is refused),
        #: which bounds the memory of trajectories queued in the future
        self.max_pieces = max_pieces
        self.hold(position, time)

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    @property
    def end_time(self) -> float:
        """When the reference reaches its final point and starts holding it."""
        return self._knots[-2]

    def hold(self, position, time: float) -> None:
        """Hold ``position`` (zero velocity and acceleration) from ``time`` on, dropping any
        trajectory (the node's ``~/hold`` and its start-up state)."""
        position = np.array(position, dtype=float)
        if position.shape != (self.dof,) or not np.all(np.isfinite(position)):
            raise TrajectoryError(
                f"hold position must be {self.dof} finite values, got {position.tolist()}")
        self._set_pieces([float(time), np.inf], [float(time)], _constant(position)[None])

    def set_trajectory(self, trajectory: JointTrajectory, now: float,
                       start_time: float | None = None) -> None:
        """Follow ``trajectory`` from ``start_time`` (its header stamp; ``None`` or 0 = ``now``).

        Raises :class:`TrajectoryError` when its joints are not the controller's or when it ends
        before ``now``; the current reference is then left unchanged.
        """
        trajectory = trajectory.reordered(self.joint_names)
        start = float(now) if not start_time else float(start_time)
        times = start + trajectory.times
        if times[-1] < now:
            raise TrajectoryError(
                f"trajectory ends in the past: its last point is at {times[-1]:.6f} s, "
                f"now is {now:.6f} s")
        splice = max(start, float(now))
        P, V, A = trajectory.positions, trajectory.velocities, trajectory.accelerations
        knots, origins, kept = self._pieces_before(splice, now)
        first = int(np.searchsorted(times, splice, side="right"))  # points still ahead
        pieces = [kept]
        if first == 0:
            # The implicit first point: the old reference's state at the splice time.
            q, qd, qdd = self.sample(splice)
            pieces.append(segment_coefficients(
                times[0] - splice, q, P[0],
                qd, None if V is None else V[0], qdd, None if A is None else A[0])[None])
            origins.append(splice)
            knots.append(times[0])
            first = 1
        # every later segment at once: a 10,000-point trajectory costs milliseconds, not a second
        a, b = slice(first - 1, -1), slice(first, None)
        pieces.append(np.moveaxis(segment_coefficients(
            times[b] - times[a], P[a], P[b],
            *((None, None) if V is None else (V[a], V[b])),
            *((None, None) if A is None else (A[a], A[b]))), 1, 0))
        origins += times[a].tolist()
        knots += times[b].tolist()
        pieces.append(_constant(P[-1])[None])
        origins.append(knots[-1])
        knots.append(np.inf)
        count = sum(len(p) for p in pieces)
        if self.max_pieces is not None and count > self.max_pieces:
            raise TrajectoryError(
                f"the reference would hold {count} segments (those of the trajectory and the ones "
                f"still ahead of its start), more than {self.max_pieces}")
        self._set_pieces(knots, origins, np.concatenate(pieces))

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Desired position, velocity and acceleration at time ``t`` (new arrays, joint order).
        Before the earliest retained piece the reference is evaluated at its start."""
        out = np.empty((3, len(self.joint_names)))
        self.sample_into(t, out)
        return out[0], out[1], out[2]

    def sample_into(self, t: float, out: np.ndarray) -> None:
        """:meth:`sample` into the rows of ``out`` (3 x joints, float64, C order)."""
        SAMPLE.call(*self.pieces, float(t), out)

    def _pieces_before(self, splice: float, now: float):
        """The current pieces that still matter: those active between ``now`` and ``splice``,
        cut at ``splice`` (older and superseded pieces are dropped so the history does not grow).
        Returns knots, origins (lists) and the kept coefficients (k, 6, n)."""
        lows, highs = np.array(self._knots[:-1]), np.array(self._knots[1:])
        keep = np.flatnonzero((lows < splice) & (highs > now))
        knots = self._knots
        kept = [max(knots[i], now) if j == 0 else knots[i] for j, i in enumerate(keep.tolist())]
        return (kept + [splice], [self._origins[i] for i in keep.tolist()],
                self._coefficients[keep])

    def _set_pieces(self, knots, origins, pieces) -> None:
        self._knots = [float(k) for k in knots]
        self._origins = [float(o) for o in origins]
        self._coefficients = c = np.asarray(pieces, dtype=float)
        velocity, acceleration = np.zeros_like(c), np.zeros_like(c)
        velocity[:, :-1] = c[:, 1:] * _VEL_WEIGHTS[:, None]
        acceleration[:, :-2] = c[:, 2:] * _ACC_WEIGHTS[:, None]
        # the pieces store [c | derivative c | 2nd derivative c]: one pass gives q, q̇, q̈; in C
        # order, which SAMPLE's machine code reads (concatenate keeps its inputs' order)
        stacked = np.ascontiguousarray(np.concatenate([c, velocity, acceleration], axis=2))
        #: sample_into's knots, origins and stacked coefficients
        self.pieces = (np.array(self._knots), np.array(self._origins), stacked)


def _constant(position: np.ndarray) -> np.ndarray:
    c = np.zeros((_DEGREE + 1, position.size))
    c[0] = position
    return c
