"""Joint-trajectory sampling: JTC interpolation, splicing, joint matching and rejections.

The polynomial checks solve the boundary-value problem of each segment independently with numpy
(a Vandermonde-type system of the boundary conditions), so they do not reuse the closed forms."""
import math

import numpy as np
import pytest

from robodyn_ros.control.trajectory import JointTrajectory, TrajectoryError, TrajectorySampler

JOINTS = ["shoulder", "elbow", "wrist"]
TIMES = [0.5, 1.2, 2.0, 3.1]
RNG = np.random.default_rng(7)
P = RNG.uniform(-1.5, 1.5, (4, 3))
V = RNG.uniform(-1.0, 1.0, (4, 3))
A = RNG.uniform(-2.0, 2.0, (4, 3))


def boundary_polynomial(T, p0, p1, v0=None, v1=None, a0=None, a1=None):
    """Coefficients (lowest first) of the least-degree polynomial meeting the boundary values,
    from solving the linear system of its conditions at τ = 0 and τ = T."""
    conditions = [(0, 0.0, p0), (0, T, p1)]
    if v0 is not None:
        conditions += [(1, 0.0, v0), (1, T, v1)]
    if a0 is not None:
        conditions += [(2, 0.0, a0), (2, T, a1)]
    degree = len(conditions) - 1
    rows = []
    for order, tau, _ in conditions:
        rows.append([math.perm(k, order) * tau ** (k - order) if k >= order else 0.0
                     for k in range(degree + 1)])
    return np.linalg.solve(np.array(rows), np.array([value for *_, value in conditions]))


def evaluate(coefficients, tau):
    p = np.polynomial.Polynomial(coefficients)
    return p(tau), p.deriv(1)(tau), p.deriv(2)(tau)


def sampler_with(velocities=None, accelerations=None):
    """A sampler holding the first waypoint since t = 0, given the trajectory at 10 s."""
    sampler = TrajectorySampler(JOINTS, P[0], time=0.0)
    sampler.set_trajectory(JointTrajectory(JOINTS, TIMES, P, velocities, accelerations),
                           now=10.0, start_time=10.0)
    return sampler


CASES = {"linear": (None, None), "cubic": (V, None), "quintic": (V, A)}


@pytest.mark.parametrize("kind", CASES)
def test_hits_every_waypoint_exactly(kind):
    vel, acc = CASES[kind]
    sampler = sampler_with(velocities=vel, accelerations=acc)
    for i, t in enumerate(TIMES):
        q, qd, qdd = sampler.sample(10.0 + t)
        np.testing.assert_allclose(q, P[i], rtol=0, atol=1e-12)
        if vel is not None and i < len(TIMES) - 1:  # the last point is held at rest
            np.testing.assert_allclose(qd, V[i], rtol=0, atol=1e-12)
        if acc is not None and i < len(TIMES) - 1:
            np.testing.assert_allclose(qdd, A[i], rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", CASES)
def test_segments_match_the_boundary_value_polynomial(kind):
    vel, acc = CASES[kind]
    sampler = sampler_with(velocities=vel, accelerations=acc)
    for i in range(len(TIMES) - 1):
        T = TIMES[i + 1] - TIMES[i]
        for j in range(len(JOINTS)):
            coefficients = boundary_polynomial(
                T, P[i, j], P[i + 1, j],
                *(() if vel is None else (V[i, j], V[i + 1, j])),
                *(() if acc is None else (A[i, j], A[i + 1, j])))
            for tau in np.linspace(0.0, T, 7, endpoint=False):
                got = [x[j] for x in sampler.sample(10.0 + TIMES[i] + tau)]
                np.testing.assert_allclose(got, evaluate(coefficients, tau), rtol=0, atol=1e-10)


def test_linear_segments_have_constant_velocity_and_no_acceleration():
    sampler = sampler_with()
    _, qd, qdd = sampler.sample(10.0 + 1.5)
    np.testing.assert_allclose(qd, (P[2] - P[1]) / (TIMES[2] - TIMES[1]), rtol=1e-12)
    np.testing.assert_array_equal(qdd, 0.0)


def one_sided_derivatives(sampler, t, h=1e-7):
    """Left and right finite-difference derivatives of (q, q̇) at t."""
    (q_l, qd_l, _), (q_0, qd_0, _), (q_r, qd_r, _) = (sampler.sample(t + s) for s in (-h, 0.0, h))
    return ((q_0 - q_l) / h, (q_r - q_0) / h), ((qd_0 - qd_l) / h, (qd_r - qd_0) / h)


@pytest.mark.parametrize("kind", ["cubic", "quintic"])
def test_continuity_at_interior_waypoints(kind):
    vel, acc = CASES[kind]
    sampler = sampler_with(velocities=vel, accelerations=acc)
    for i, t in enumerate(TIMES[1:-1], start=1):
        (dq_left, dq_right), (ddq_left, ddq_right) = one_sided_derivatives(sampler, 10.0 + t)
        # C1: the position's slope is the waypoint velocity from both sides
        np.testing.assert_allclose(dq_left, V[i], atol=1e-4)
        np.testing.assert_allclose(dq_right, V[i], atol=1e-4)
        if kind == "quintic":  # C2: the velocity's slope is the waypoint acceleration
            np.testing.assert_allclose(ddq_left, A[i], atol=1e-4)
            np.testing.assert_allclose(ddq_right, A[i], atol=1e-4)
        else:  # a cubic spline through given velocities is C1 only: its acceleration jumps
            assert np.max(np.abs(ddq_left - ddq_right)) > 1e-2


def test_sampled_derivatives_are_derivatives_of_the_sampled_position():
    sampler = sampler_with(velocities=V, accelerations=A)
    for t in np.linspace(10.0, 10.0 + TIMES[-1], 23)[1:-1]:
        h = 1e-5
        q_m, qd_m, _ = sampler.sample(t - h)
        _, qd, qdd = sampler.sample(t)
        q_p, qd_p, _ = sampler.sample(t + h)
        np.testing.assert_allclose((q_p - q_m) / (2 * h), qd, atol=1e-6)
        np.testing.assert_allclose((qd_p - qd_m) / (2 * h), qdd, atol=1e-5)


@pytest.mark.parametrize("kind", CASES)
def test_holds_the_last_point_at_rest(kind):
    vel, acc = CASES[kind]
    sampler = sampler_with(velocities=vel, accelerations=acc)
    assert sampler.end_time == pytest.approx(10.0 + TIMES[-1])
    for t in (10.0 + TIMES[-1], 10.0 + TIMES[-1] + 1e-3, 1e6):
        q, qd, qdd = sampler.sample(t)
        np.testing.assert_array_equal(q, P[-1])
        np.testing.assert_array_equal(qd, 0.0)
        np.testing.assert_array_equal(qdd, 0.0)


def test_before_the_first_point_runs_from_the_state_at_the_start_time():
    # Holding P[0] since t = 0; the trajectory starts at 10 s and its first point, 0.5 s later,
    # carries velocities and accelerations: the implicit start point (P[0], 0, 0) at 10 s makes a
    # quintic segment with it.
    sampler = TrajectorySampler(JOINTS, P[0], time=0.0)
    target = RNG.uniform(-1, 1, 3)
    sampler.set_trajectory(JointTrajectory(JOINTS, [0.5], [target], [V[1]], [A[1]]), 10.0)
    for t in (0.0, 5.0, 10.0):
        q, qd, qdd = sampler.sample(t)
        np.testing.assert_array_equal(q, P[0])
        np.testing.assert_array_equal(qd, 0.0)
    for j in range(3):
        coefficients = boundary_polynomial(0.5, P[0, j], target[j], 0.0, V[1, j], 0.0, A[1, j])
        for tau in (0.1, 0.25, 0.4):
            got = [x[j] for x in sampler.sample(10.0 + tau)]
            np.testing.assert_allclose(got, evaluate(coefficients, tau), atol=1e-10)


def test_new_trajectory_replaces_the_old_one_from_its_start_time():
    old = sampler_with(velocities=V, accelerations=A)  # runs 10.5 .. 13.1 s
    new = sampler_with(velocities=V, accelerations=A)
    target = np.array([0.3, -0.2, 0.1])
    # received at 11.0 s, stamped to start at 11.5 s, first point 0.4 s after that
    new.set_trajectory(JointTrajectory(JOINTS, [0.4], [target]), now=11.0, start_time=11.5)
    for t in (11.0, 11.2, 11.4999):
        for a, b in zip(new.sample(t), old.sample(t)):
            np.testing.assert_array_equal(a, b)
    # from 11.5 s: linear (the new point has no velocities) from the old reference's position
    q_splice = old.sample(11.5)[0]
    for tau in (0.0, 0.1, 0.3):
        q, qd, qdd = new.sample(11.5 + tau)
        np.testing.assert_allclose(q, q_splice + (target - q_splice) * tau / 0.4, atol=1e-12)
        np.testing.assert_allclose(qd, (target - q_splice) / 0.4, atol=1e-12)
        np.testing.assert_array_equal(qdd, 0.0)
    np.testing.assert_array_equal(new.sample(12.0)[0], target)


def test_splice_keeps_the_reference_smooth():
    # A quintic continuation from the old reference's full state: position, velocity and
    # acceleration are continuous through the splice.
    sampler = sampler_with(velocities=V, accelerations=A)
    before = sampler.sample(11.7)
    sampler.set_trajectory(JointTrajectory(JOINTS, [1.0], [P[0]], [V[0]], [A[0]]), now=11.0,
                           start_time=11.7)
    after = sampler.sample(11.7)
    for a, b in zip(before, after):
        np.testing.assert_allclose(a, b, atol=1e-12)
    (dq_l, dq_r), (ddq_l, ddq_r) = one_sided_derivatives(sampler, 11.7)
    np.testing.assert_allclose(dq_l, dq_r, atol=1e-4)
    np.testing.assert_allclose(ddq_l, ddq_r, atol=1e-4)


@pytest.mark.parametrize("stamp", [0.0, None])
def test_zero_stamp_starts_now(stamp):
    sampler = TrajectorySampler(JOINTS, P[0], time=0.0)
    sampler.set_trajectory(JointTrajectory(JOINTS, [1.0], [P[1]]), now=4.0, start_time=stamp)
    assert sampler.end_time == 5.0
    np.testing.assert_allclose(sampler.sample(4.5)[0], (P[0] + P[1]) / 2, atol=1e-12)


def test_start_in_the_past_joins_the_trajectory_where_it_is_now():
    late = TrajectorySampler(JOINTS, P[3], time=0.0)
    late.set_trajectory(JointTrajectory(JOINTS, TIMES, P, V, A), now=11.5, start_time=10.0)
    reference = sampler_with(velocities=V, accelerations=A)
    np.testing.assert_array_equal(late.sample(11.0)[0], P[3])  # before "now" the old hold
    for t in (11.5, 12.0, 12.9, 14.0):
        for a, b in zip(late.sample(t), reference.sample(t)):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_joints_are_matched_by_name_in_any_order():
    order = [2, 0, 1]
    permuted = TrajectorySampler(JOINTS, P[0], time=0.0)
    permuted.set_trajectory(JointTrajectory([JOINTS[k] for k in order], TIMES, P[:, order],
                                            V[:, order], A[:, order]), now=10.0)
    reference = sampler_with(velocities=V, accelerations=A)
    for t in np.linspace(9.0, 14.0, 17):
        for a, b in zip(permuted.sample(t), reference.sample(t)):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_hold_drops_the_trajectory():
    sampler = sampler_with(velocities=V)
    sampler.hold(P[2], time=11.0)
    q, qd, qdd = sampler.sample(12.0)
    np.testing.assert_array_equal(q, P[2])
    np.testing.assert_array_equal(qd, 0.0)
    assert sampler.end_time == 11.0


def test_history_does_not_grow_with_each_trajectory():
    sampler = TrajectorySampler(JOINTS, P[0])
    for k in range(200):
        sampler.set_trajectory(JointTrajectory(JOINTS, [0.01, 0.02], P[:2]), now=0.005 * k)
    assert len(sampler._knots) < 10


def with_value(array, index, value):
    array = array.copy()
    array[index] = value
    return array


BAD = {
    "missing joints": dict(joint_names=JOINTS[:2], positions=P[:, :2]),
    "unknown joints": dict(joint_names=JOINTS[:2] + ["gripper"]),
    "repeated": dict(joint_names=["shoulder", "shoulder", "wrist"]),
    "increase strictly": dict(times=[0.5, 1.2, 1.2, 3.1]),
    "does not come after": dict(times=[0.5, 1.2, 1.0, 3.1]),
    "negative": dict(times=[-0.1, 1.2, 2.0, 3.1]),
    "positions has shape": dict(positions=P[:, :2]),
    "velocities has shape": dict(velocities=V[:3]),
    "accelerations has shape": dict(velocities=V, accelerations=A.ravel()),
    "positions of point 1, joint 2 is nan": dict(positions=with_value(P, (1, 2), np.nan)),
    "velocities of point 0, joint 0 is inf": dict(velocities=with_value(V, (0, 0), np.inf)),
    "times contain NaN": dict(times=[0.5, np.nan, 2.0, 3.1]),
    "non-empty": dict(times=[], positions=np.zeros((0, 3))),
    "without velocities": dict(accelerations=A),
    "not numeric": dict(positions=[["a", "b", "c"]] * 4),
}


@pytest.mark.parametrize("reason", BAD)
def test_rejections_name_the_reason_and_keep_the_reference(reason):
    fields = dict(joint_names=JOINTS, times=TIMES, positions=P, velocities=None, accelerations=None)
    fields.update(BAD[reason])
    sampler = TrajectorySampler(JOINTS, P[0])
    with pytest.raises(TrajectoryError, match=reason):
        sampler.set_trajectory(JointTrajectory(**fields), now=1.0)
    np.testing.assert_array_equal(sampler.sample(2.0)[0], P[0])
    assert issubclass(TrajectoryError, ValueError)


def test_rejects_a_trajectory_that_ends_in_the_past():
    sampler = TrajectorySampler(JOINTS, P[0])
    with pytest.raises(TrajectoryError, match="ends in the past"):
        sampler.set_trajectory(JointTrajectory(JOINTS, TIMES, P), now=20.0, start_time=10.0)
    np.testing.assert_array_equal(sampler.sample(21.0)[0], P[0])


def test_rejects_a_bad_hold_position():
    sampler = TrajectorySampler(JOINTS, P[0])
    with pytest.raises(TrajectoryError, match="3 finite values"):
        sampler.hold([0.0, np.nan, 0.0], 1.0)
    with pytest.raises(TrajectoryError, match="3 finite values"):
        sampler.hold([0.0, 0.0], 1.0)
