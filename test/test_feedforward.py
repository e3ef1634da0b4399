"""Newton–Euler feedforward of trajectory points, without ROS.

The efforts are checked against a second formulation (M q̈ + C q̇ + g + friction from the CRBA mass
matrix and the Coriolis matrix) and against model.inverse_dynamics point by point; the velocities
and accelerations derived where a trajectory lacks them are checked against finite differences of
the positions that TrajectorySampler (the JTC spline) produces after each point's time."""
import numpy as np
import pytest

from robodyn_ros.control.feedforward import EffortFeedforward
from robodyn_ros.control.trajectory import JointTrajectory, TrajectoryError, \
    TrajectorySampler, point_derivatives

from conftest import JOINTS, Q0

RNG = np.random.default_rng(11)
TIMES = np.array([0.4, 1.0, 1.7, 2.1, 3.0])
P = Q0 + RNG.uniform(-0.4, 0.4, (TIMES.size, 6))
V = RNG.uniform(-0.8, 0.8, (TIMES.size, 6))
A = RNG.uniform(-2.0, 2.0, (TIMES.size, 6))
SHUFFLED = [5, 2, 0, 4, 1, 3]  # a message order unlike the chain's
NAMES = [JOINTS[j] for j in SHUFFLED]
CASES = {"linear": (None, None), "cubic": (V, None), "quintic": (V, A)}


def message_order(chain_values):
    return np.asarray(chain_values)[..., SHUFFLED]


def shuffled(velocities=None, accelerations=None, positions=P, times=TIMES):
    """The trajectory as a message would carry it: columns in NAMES order."""
    return JointTrajectory(NAMES, times, message_order(positions),
                           None if velocities is None else message_order(velocities),
                           None if accelerations is None else message_order(accelerations))


def spline_by_finite_differences(velocities, accelerations, h=1e-3):
    """(q̇, q̈) at each point's time from positions the sampler gives just after it: one-sided
    differences exact for cubics (the segments starting there), in chain order."""
    sampler = TrajectorySampler(JOINTS, P[0], time=0.0)
    sampler.set_trajectory(JointTrajectory(JOINTS, TIMES, P, velocities, accelerations),
                           now=10.0, start_time=10.0)
    qd, qdd = [], []
    for t in TIMES + 10.0:
        q0, q1, q2, q3 = (sampler.sample(t + k * h)[0] for k in range(4))
        qd.append((-11.0 * q0 + 18.0 * q1 - 9.0 * q2 + 2.0 * q3) / (6.0 * h))
        qdd.append((2.0 * q0 - 5.0 * q1 + 4.0 * q2 - q3) / h**2)
    return np.array(qd), np.array(qdd)


@pytest.mark.parametrize("kind", ["linear", "cubic"])
def test_derived_derivatives_are_those_of_the_jtc_spline(kind):
    velocities, _ = CASES[kind]
    qd, qdd = point_derivatives(JointTrajectory(JOINTS, TIMES, P, velocities))
    fd_qd, fd_qdd = spline_by_finite_differences(velocities, None)
    # at every point but the last, the segment that starts there
    np.testing.assert_allclose(qd[:-1], fd_qd[:-1], rtol=0, atol=1e-7)
    np.testing.assert_allclose(qdd[:-1], fd_qdd[:-1], rtol=0, atol=1e-5)
    # the last point as JTC holds it: its given velocity (JTC's own check wants it zero unless
    # allow_nonzero_velocity_at_trajectory_end) or zero, and zero acceleration
    np.testing.assert_array_equal(qd[-1], 0.0 if velocities is None else V[-1])
    np.testing.assert_array_equal(qdd[-1], 0.0)
    if velocities is None:
        np.testing.assert_array_equal(qdd, 0.0)  # linear segments: constant velocity


def test_given_derivatives_are_used_as_they_are():
    qd, qdd = point_derivatives(JointTrajectory(JOINTS, TIMES, P, V, A))
    np.testing.assert_array_equal(qd, V)
    np.testing.assert_array_equal(qdd, A)


@pytest.mark.parametrize("friction", [True, False])
@pytest.mark.parametrize("kind", CASES)
def test_efforts_are_newton_euler_of_each_point_in_message_order(model, kind, friction):
    velocities, accelerations = CASES[kind]
    efforts = EffortFeedforward(model, friction=friction).efforts(
        shuffled(velocities, accelerations))
    fd_qd, fd_qdd = spline_by_finite_differences(velocities, accelerations)
    qd = fd_qd if velocities is None else V
    qdd = fd_qdd if accelerations is None else A
    qd[-1] = 0.0 if velocities is None else V[-1]
    qdd[-1] = 0.0 if accelerations is None else A[-1]
    assert efforts.shape == (TIMES.size, 6)
    for i in range(TIMES.size):
        # one point at a time (the single-state kernel; the core uses the batch one)
        expected = model.inverse_dynamics(P[i], qd[i], qdd[i], friction=friction)
        np.testing.assert_allclose(efforts[i], message_order(expected), rtol=1e-6, atol=1e-4)
        # a second formulation: M(q) q̈ + C(q, q̇) q̇ + g(q) (+ viscous and Coulomb friction)
        closed = (model.mass_matrix(P[i]) @ qdd[i] + model.coriolis_matrix(P[i], qd[i]) @ qd[i]
                  + model.gravity_torques(P[i])
                  + (model.friction_torques(qd[i]) if friction else 0.0))
        np.testing.assert_allclose(efforts[i], message_order(closed), rtol=1e-6, atol=1e-4)


def test_one_point_is_held_with_gravity_compensation(model):
    efforts = EffortFeedforward(model).efforts(JointTrajectory(JOINTS, [1.0], P[:1]))
    np.testing.assert_allclose(efforts[0], model.gravity_torques(P[0]), rtol=1e-12, atol=1e-9)


def test_friction_adds_the_urdf_friction_at_the_point_velocity(model):
    trajectory = shuffled(V, A)
    with_friction = EffortFeedforward(model, friction=True).efforts(trajectory)
    without = EffortFeedforward(model, friction=False).efforts(trajectory)
    np.testing.assert_allclose(with_friction - without,
                               message_order(model.friction_torques(V)), rtol=1e-9, atol=1e-9)


def test_what_the_drive_adds_is_left_out(model):
    """Behind a drive that adds gravity and friction: M q̈ + C q̇ alone (the second formulation's
    terms), so that the drive's g(q) and friction are not counted twice."""
    from robodyn_ros.control.drive import DRIVE_FRICTION, DRIVE_GRAVITY, Drive
    efforts = EffortFeedforward(model, drive=Drive(DRIVE_GRAVITY | DRIVE_FRICTION)).efforts(
        shuffled(V, A))
    for i in range(TIMES.size):
        inertial = model.mass_matrix(P[i]) @ A[i] + model.coriolis_matrix(P[i], V[i]) @ V[i]
        np.testing.assert_allclose(efforts[i], message_order(inertial), rtol=1e-6, atol=1e-4)


def test_a_friction_file_replaces_the_urdf_friction(model, tmp_path):
    """An identified URDF's friction file (smooth Coulomb, an offset on one joint): its friction,
    in closed form, in place of the URDF's."""
    from robodyn_ros.dynamics.friction import FrictionForm, FrictionModel

    forms = tuple(FrictionForm.parse("coulomb+tanh=0.1+offset" if j == 1 else "asymmetric") for j in range(6))
    values = tuple(np.array([0.3, 0.7, -0.2]) if j == 1 else np.array([0.1, 0.4, 0.5]) for j in range(6))
    path = FrictionModel(tuple(JOINTS), forms, values).save(tmp_path / "arm.friction.yaml")
    trajectory = shuffled(V, A)
    efforts = EffortFeedforward(model, friction=FrictionModel.load(path, JOINTS)).efforts(trajectory)
    without = EffortFeedforward(model, friction=False).efforts(trajectory)
    expected = 0.1 * V + np.where(V > 0, 0.4, np.where(V < 0, -0.5, 0.0))
    expected[:, 1] = 0.3 * V[:, 1] + 0.7 * np.tanh(V[:, 1] / 0.1) - 0.2
    np.testing.assert_allclose(efforts - without, message_order(expected), rtol=1e-9, atol=1e-9)


BAD = {
    "unknown joint": (lambda: JointTrajectory(NAMES[:5] + ["gripper"], TIMES, P),
                      "not in the chain: ['gripper']"),
    "missing joint": (lambda: JointTrajectory(NAMES[:5], TIMES, P[:, :5]), "missing: "),
    "beyond a position limit": (
        lambda: shuffled(positions=np.vstack([P[:-1], P[-1] + [0, 0, 3.0, 0, 0, 0]])),
        "point 4: joint 'joint_3' at"),
}


@pytest.mark.parametrize("case", BAD)
def test_rejections_name_the_reason(model, case):
    make, reason = BAD[case]
    with pytest.raises(TrajectoryError) as error:
        EffortFeedforward(model).efforts(make())
    assert reason in str(error.value)


def test_limit_margin_admits_points_just_beyond_the_limit(model):
    beyond = P.copy()
    beyond[-1, 1] = model.upper[1] + 0.05
    with pytest.raises(TrajectoryError, match="outside its limits"):
        EffortFeedforward(model).efforts(JointTrajectory(JOINTS, TIMES, beyond))
    efforts = EffortFeedforward(model, position_limit_margin=0.1).efforts(
        JointTrajectory(JOINTS, TIMES, beyond))
    assert np.all(np.isfinite(efforts))


@pytest.mark.parametrize("points,reason", [(0, "no points"), (11, "more than")])
def test_sizes_are_refused_before_any_work(model, points, reason):
    with pytest.raises(TrajectoryError, match=reason):
        EffortFeedforward(model, max_points=10).admit(points)


def test_a_hostile_list_of_names_gives_a_bounded_reason(model):
    names = [f"joint_{i}" for i in range(100_000)]
    with pytest.raises(TrajectoryError) as error:
        EffortFeedforward(model).efforts(JointTrajectory(names, [1.0], np.zeros((1, len(names)))))
    assert len(str(error.value)) < 1000


@pytest.mark.parametrize("field,value", [("positions", np.nan), ("velocities", np.inf)])
def test_non_finite_points_are_refused(field, value):
    bad = {"positions": P.copy(), "velocities": V.copy()}
    bad[field][2, 3] = value
    with pytest.raises(TrajectoryError, match=f"{field} of point 2, joint 3"):
        JointTrajectory(JOINTS, TIMES, bad["positions"], bad["velocities"])
