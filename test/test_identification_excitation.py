"""Excitation trajectories (Swevers et al. 1997): the finite Fourier series starts and ends at rest
at the start pose and its derivatives are those of q; the optimised motion keeps every limit less
the margin at 1 kHz over the whole run (checked here from the series and the model's inverse
dynamics, not from the module's own bookkeeping) and lowers cond(W_base), recomputed here from the
regressor; the optimiser's gradients are those of its functions; ``robodyn-ros excite`` writes a
FollowJointTrajectory goal whose points are the series' and which the controller's trajectory
sampler plays back as the series, and refuses bad arguments with a reason."""
import dataclasses

import numpy as np
import pytest
import yaml

from robodyn_ros.control import JointTrajectory, TrajectorySampler
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.identification import regressor
from robodyn_ros.dynamics.base_parameters import base_parameters
from robodyn_ros.dynamics.inertial_parameters import standard_parameters
from robodyn_ros.identification.excitation import (ExcitationError, ExcitationProblem, FourierSeries,
                                                   goal_document, optimise_excitation)
from robodyn_ros.apps.excite import main, write_goal

PUMA = "urdf/puma560.urdf"
PLANAR = "urdf/planar2.urdf"


def random_series(seed, joints=3, harmonics=4, period=2.5, scale=1.0):
    rng = np.random.default_rng(seed)
    return FourierSeries.from_free([f"j{i}" for i in range(joints)], rng.uniform(-1.0, 1.0, joints),
                                   period, rng.normal(0.0, scale, (joints, 2 * (harmonics - 1))))


@pytest.mark.parametrize("seed", range(3))
def test_series_is_at_rest_at_the_start_pose_at_the_start_and_after_every_period(seed):
    series = random_series(seed)
    for k in range(4):                                           # t = 0 and the end of 3 periods
        q, qd, qdd = (x[0] for x in series.evaluate([k * series.period]))
        np.testing.assert_allclose(q, series.start, rtol=0, atol=1e-12)
        np.testing.assert_allclose(qd, 0.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(qdd, 0.0, rtol=0, atol=1e-12)
    # and it moves in between
    assert np.abs(series.evaluate([0.3 * series.period])[1]).min() > 1e-3


def test_series_is_the_papers_formula_and_its_derivatives_are_finite_differences():
    series = random_series(5)
    t = np.linspace(0.0, 2 * series.period, 401)
    q, qd, qdd = series.evaluate(t)
    # q_j(t) = q0_j + Σ_l a_jl/(ω l) sin(ω l t) − b_jl/(ω l) cos(ω l t), term by term
    w = 2.0 * np.pi / series.period
    paper = np.tile(series.q0, (len(t), 1))
    for l in range(1, series.harmonics + 1):
        paper += (np.outer(np.sin(w * l * t), series.a[:, l - 1])
                  - np.outer(np.cos(w * l * t), series.b[:, l - 1])) / (w * l)
    np.testing.assert_allclose(q, paper, rtol=0, atol=1e-12)
    # central differences: truncation h²/6 |q⁽³⁾| ≤ 1e-7, rounding 1e-16 |q| / h ~ 1e-11
    h = 1e-5
    up, down = series.evaluate(t + h), series.evaluate(t - h)
    np.testing.assert_allclose(qd, (up[0] - down[0]) / (2 * h), rtol=0, atol=1e-6)
    np.testing.assert_allclose(qdd, (up[1] - down[1]) / (2 * h), rtol=0, atol=1e-6)
    h = 1e-4   # the second difference: truncation h²/12 |q⁽⁴⁾| ~ 1e-7, rounding 1e-16 |q| / h² ~ 1e-8
    up, down = series.evaluate(t + h), series.evaluate(t - h)
    np.testing.assert_allclose(qdd, (up[0] - 2 * q + down[0]) / h**2, rtol=0, atol=1e-5)


def test_a_series_that_does_not_start_at_rest_is_refused():
    series = random_series(1)
    with pytest.raises(ExcitationError, match="not at rest"):
        dataclasses.replace(series, a=series.a + 0.1)


def limited_models():
    """PUMA 560 with its effort limits cut to 40 % so that the torques bind; the planar arm with a
    continuous first joint and no velocity limit on the second (the unbounded cases)."""
    puma = RobotModel.from_urdf(PUMA)
    yield "puma-weak", RobotModel([dataclasses.replace(link, effort=0.4 * link.effort)
                                   for link in puma.links], puma.tip, puma.gravity, puma.name)
    planar = RobotModel.from_urdf(PLANAR)
    first, second = planar.links
    yield "planar-unbounded", RobotModel(
        [dataclasses.replace(first, lower=-np.inf, upper=np.inf),
         dataclasses.replace(second, velocity=np.inf)], planar.tip, planar.gravity, planar.name)


SETTINGS = dict(period=4.0, harmonics=3, samples=40, acceleration_limit=6.0, margin=0.15,
                starts=1, seed=3, iterations=60)


@pytest.fixture(scope="module", params=list(limited_models()), ids=lambda case: case[0])
def optimised(request):
    name, model = request.param
    return model, optimise_excitation(model, **SETTINGS)


def test_optimised_motion_keeps_every_limit_less_the_margin_at_1khz(optimised):
    model, result = optimised
    periods = 2
    t = np.arange(0.0, periods * SETTINGS["period"] + 1e-9, 1e-3)
    q, qd, qdd = result.series.evaluate(t)
    tau = model.inverse_dynamics(q, qd, qdd)
    allowed = 1.0 - SETTINGS["margin"]
    bounded = np.isfinite(model.lower) & np.isfinite(model.upper)
    lower, upper = model.lower[bounded], model.upper[bounded]
    assert np.all(np.abs(q[:, bounded] - 0.5 * (lower + upper)) <= allowed * 0.5 * (upper - lower))
    assert np.all(np.abs(qd) <= allowed * model.velocity_limit)
    assert np.all(np.abs(qdd) <= allowed * SETTINGS["acceleration_limit"])
    assert np.all(np.abs(tau) <= allowed * model.effort_limit)


def test_optimisation_lowers_cond_of_the_base_regressor(optimised):
    model, result = optimised
    samples = SETTINGS["samples"]
    t = (np.arange(samples) + 0.5) * SETTINGS["period"] / samples
    W = base_parameters(model).base_regressor(regressor(model, *result.series.evaluate(t)))
    cond = np.linalg.cond(W.reshape(-1, W.shape[-1]))
    assert cond == pytest.approx(result.cond, rel=1e-9)
    assert result.cond < result.cond_start


def test_gradients_are_those_of_the_objective_and_the_constraints():
    problem = ExcitationProblem(RobotModel.from_urdf(PUMA), period=5.0, harmonics=3, samples=40)
    x = problem.onto_limits(np.random.default_rng(2).normal(size=problem.size))
    h = 1e-6
    steps = h * np.eye(problem.size)
    objective = [(problem.log_cond(x + e) - problem.log_cond(x - e)) / (2 * h) for e in steps]
    np.testing.assert_allclose(problem.log_cond_gradient(x), objective, rtol=0, atol=1e-4)
    constraints = np.array([(problem.constraints(x + e) - problem.constraints(x - e)) / (2 * h)
                            for e in steps]).T
    np.testing.assert_allclose(problem.constraint_jacobian(x), constraints, rtol=0, atol=1e-4)


def points_of(path):
    """A goal file's trajectory as a JointTrajectory, read as ros2 action send_goal reads it."""
    goal = yaml.safe_load(path.read_text())["trajectory"]
    points = goal["points"]
    times = [p["time_from_start"]["sec"] + 1e-9 * p["time_from_start"]["nanosec"] for p in points]
    return JointTrajectory(goal["joint_names"], times, [p["positions"] for p in points],
                           [p["velocities"] for p in points], [p["accelerations"] for p in points])


def test_goal_file_reads_back_as_the_arrays_and_plays_back_as_the_series(tmp_path):
    series = random_series(7, joints=3, harmonics=5, period=10.0, scale=0.3)   # |q̇| < 5.4 rad/s
    trajectory = series.joint_trajectory(rate=20.0, periods=2, joints=["j2", "j0", "j1"])
    write_goal(tmp_path / "goal.yaml", trajectory)
    loaded = points_of(tmp_path / "goal.yaml")
    assert loaded.joint_names == ["j2", "j0", "j1"]
    times, q, qd, qdd = series.sampled(20.0, periods=2)
    assert len(times) == 401 and times[-1] == 20.0
    np.testing.assert_allclose(loaded.times, times, rtol=0, atol=1e-9)
    for got, want in zip((loaded.positions, loaded.velocities, loaded.accelerations), (q, qd, qdd)):
        np.testing.assert_array_equal(got, want[:, [2, 0, 1]])    # every float in full
    # the controller's sampler (JTC's quintic between points with q, q̇, q̈) follows the series:
    # measured 1e-10 rad, 7e-9 rad/s, 9e-7 rad/s² at 20 Hz; checked to 1e-9, 1e-7, 1e-5
    sampler = TrajectorySampler(series.joint_names, series.start, time=0.0)
    sampler.set_trajectory(loaded, now=0.0)
    fine = np.arange(0.0, 20.0, 4e-3)   # 12 instants in each 50 ms segment
    want = series.evaluate(fine)
    got = np.array([np.concatenate(sampler.sample(t)) for t in fine]).reshape(len(fine), 3, -1)
    for k, tolerance in enumerate((1e-9, 1e-7, 1e-5)):
        np.testing.assert_allclose(got[:, k], want[k], rtol=0, atol=tolerance)
    # and holds the start pose at rest after the end
    np.testing.assert_array_equal(np.concatenate(sampler.sample(21.0)),
                                  np.concatenate([series.start, np.zeros(6)]))


def test_goal_file_is_a_follow_joint_trajectory_goal_as_ros2_action_send_goal_reads_it(tmp_path):
    import control_msgs.action as action
    set_message = pytest.importorskip("rosidl_runtime_py.set_message",   # what send_goal applies
                                      reason="rosidl_runtime_py (the ros2 CLI's) is not installed")
    set_message_fields = set_message.set_message_fields

    series = random_series(3, joints=2, harmonics=3, period=2.0, scale=0.3)
    trajectory = series.joint_trajectory(rate=20.0)
    write_goal(tmp_path / "goal.yaml", trajectory)
    goal = action.FollowJointTrajectory.Goal()
    set_message_fields(goal, yaml.safe_load((tmp_path / "goal.yaml").read_text()))
    assert goal.trajectory.joint_names == ["j0", "j1"] and len(goal.trajectory.points) == 41
    point = goal.trajectory.points[7]
    assert (point.time_from_start.sec, point.time_from_start.nanosec) == (0, 350_000_000)
    assert list(point.accelerations) == trajectory.accelerations[7].tolist()


def test_excite_command_writes_the_optimised_motion_in_the_goals_joint_order(tmp_path, capsys):
    output = tmp_path / "excite.yaml"
    start = [0.4, -0.3]                                          # joint_2, joint_1
    assert main(["--urdf", PLANAR, "--joints", "joint_2", "joint_1", "--start", *map(str, start),
                 "--period", "3", "--periods", "2", "--harmonics", "3", "--samples", "40",
                 "--starts", "2", "-o", str(output)]) == 0
    printed = capsys.readouterr()
    assert "start 2/2" in printed.err and "cond(W_base)" in printed.out
    assert "predicted relative σ of the" in printed.out and "inf %" not in printed.out
    assert "0.1 N·m of white torque noise" in printed.out
    loaded = points_of(output)
    assert loaded.joint_names == ["joint_2", "joint_1"]
    np.testing.assert_array_equal(loaded.positions[[0, -1]], [start, start])
    np.testing.assert_array_equal(loaded.velocities[[0, -1]], 0.0)
    # the same optimisation, asked of the library: the file holds its motion at 20 Hz
    series = optimise_excitation(RobotModel.from_urdf(PLANAR), start[::-1], period=3.0,
                                 harmonics=3, samples=40, starts=2).series
    times, q, qd, qdd = series.sampled(20.0, periods=2)
    np.testing.assert_allclose(loaded.times, times, rtol=0, atol=1e-9)
    for got, want in zip((loaded.positions, loaded.velocities, loaded.accelerations), (q, qd, qdd)):
        np.testing.assert_allclose(got, want[:, ::-1], rtol=0, atol=1e-12)


def test_goal_document_times_are_seconds_and_nanoseconds():
    trajectory = JointTrajectory(["a"], [0.0, 0.25, 1.999999999, 3.0], [[0.0]] * 4)
    stamps = [p["time_from_start"] for p in goal_document(trajectory)["trajectory"]["points"]]
    assert stamps == [{"sec": 0, "nanosec": 0}, {"sec": 0, "nanosec": 250_000_000},
                      {"sec": 1, "nanosec": 999_999_999}, {"sec": 3, "nanosec": 0}]
    assert "velocities" not in goal_document(trajectory)["trajectory"]["points"][0]


@pytest.mark.parametrize("arguments, reason", [
    (["--start", "0", "3"], "joint 'joint_2' at 3 is outside"),
    (["--start", "0"], "--start needs 2 values"),
    (["--joints", "joint_1", "elbow"], "not in the chain: ['elbow']"),
    (["--accel-limit", "1", "2", "3"], "--accel-limit needs 2 values"),
    (["--accel-limit", "-1"], "acceleration limit must be one positive value"),
    (["--harmonics", "1"], "harmonics must be an integer >= 2"),
    (["--margin", "1"], "margin must be a fraction"),
    (["--periods", "0"], "--periods must be an integer >= 1"),
    (["--urdf", "missing.urdf"], "missing.urdf: cannot read URDF"),
    (["-o", "no/such/directory/goal.yaml"], "its directory does not exist"),
])
def test_bad_arguments_are_refused_with_the_reason(arguments, reason, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--urdf", PLANAR, "-o", str(tmp_path / "goal.yaml"), *arguments])
    assert stop.value.code == 2
    assert reason in capsys.readouterr().err
    assert not (tmp_path / "goal.yaml").exists()


def test_a_start_pose_whose_gravity_exceeds_the_effort_limit_is_refused():
    puma = RobotModel.from_urdf(PUMA)
    weak = RobotModel([dataclasses.replace(link, effort=10.0) for link in puma.links], puma.tip,
                      puma.gravity, puma.name)
    with pytest.raises(ExcitationError, match="holding it takes 37.48 on joint 'joint_2'"):
        ExcitationProblem(weak)


def test_predicted_std_is_what_least_squares_reports_and_the_estimates_spread(optimised):
    """``predicted_std``: before anything is recorded, the σ that OLS reports on a recording of the
    motion with white torque noise — checked against OLS itself and the spread of 40 estimates."""
    from robodyn_ros.identification.estimate import ordinary_least_squares
    from robodyn_ros.identification.excitation import predicted_std

    model, result = optimised
    noise, rate = 0.05, 500.0
    std, relative = predicted_std(model, result.series, noise, rate)
    base = base_parameters(model)
    t = np.arange(0.0, SETTINGS["period"], 1.0 / rate)
    q, qd, qdd = result.series.evaluate(t)
    W, tau = base.base_regressor(regressor(model, q, qd, qdd)), model.inverse_dynamics(q, qd, qdd)
    rng = np.random.default_rng(8)
    estimates = [ordinary_least_squares(W, tau + rng.normal(0.0, noise, tau.shape)) for _ in range(40)]
    np.testing.assert_allclose(estimates[0].std, std, rtol=0.1)
    spread = np.std([e.parameters for e in estimates], axis=0)
    assert np.all(np.abs(spread / std - 1.0) < 0.45)                   # 40 draws: ±~25 % each
    nominal = np.abs(base.from_standard(standard_parameters(model)))
    shown = nominal > 1e-12 * nominal.max()
    np.testing.assert_allclose(relative[shown], 100.0 * std[shown] / nominal[shown])
    assert np.all(np.isinf(relative[~shown]))
