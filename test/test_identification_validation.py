"""Validation runs (issue 45, item 5): the identified model scored on other runs than the one it
was fitted to, per run, pooled and per joint (ε = ‖τ − τ̂‖ / ‖τ‖, in %), with the robot
controller's own prediction of the efforts beside it when the runs carry one.

The arm is the identification demo's PUMA 560 plant; the identification run and the validation
runs are different motions (other Fourier series, other seeds), torque noise 0.2 N m. The efforts
are scored as recorded, so the figures are held to closed forms: the identified model's error is
the noise over the efforts (σ per joint), and a "maker" whose prediction is the truth × 1.1
scores 10 %.
"""
import json

import matplotlib.image
import numpy as np
import pytest

from robodyn_ros.apps.identify import main as identify_main
from robodyn_ros.identification.bag import FLOAT64_MULTI_ARRAY, read_joint_states, register_type, write_joint_states
from robodyn_ros.identification.identify import identify
from robodyn_ros.identification.synthetic import fourier_motion, synthetic_run
from robodyn_ros.identification.validation import read_prediction, validate

from conftest import URDF

START = np.radians([90, 0, 90, 0, 0, 0])
NOISE = 0.2
PREDICTION = "/maker/target_effort"


@pytest.fixture(scope="module")
def identified(plant, nominal):
    return identify(nominal, synthetic_run(plant, START, 20.0, noise=NOISE, seed=1), progress=lambda line: None)


def other_run(plant, seed, seconds=12.0):
    return synthetic_run(plant, START, seconds, noise=NOISE, seed=seed, amplitude=0.08)


def bag_with_prediction(path, plant, seed, gain=1.1):
    """A validation run written as a driver and its controller would log it: /joint_states with
    the measured efforts, and the controller's own prediction (the truth × ``gain``) as the
    efforts of a JointState topic (with its target positions), stamped alike."""
    run = other_run(plant, seed)
    t, q, qd, qdd = fourier_motion(plant, START, 12.0, seed=seed, amplitude=0.08)
    truth = plant.inverse_dynamics(q, qd, qdd)
    from rosbags.typesys import Stores, get_typestore
    types = get_typestore(Stores.ROS2_JAZZY).types
    header, stamp, state = types["std_msgs/msg/Header"], types["builtin_interfaces/msg/Time"], types[
        "sensor_msgs/msg/JointState"]
    messages = [(s, state(header=header(stamp=stamp(*divmod(int(round(s * 1e9)), 1_000_000_000)), frame_id=""),
                          name=list(run.joint_names), position=position, velocity=np.zeros(0), effort=gain * row))
                for s, position, row in zip(t, q, truth)]
    return write_joint_states(path, run.t, run.joint_names, run.position, run.velocity, run.effort,
                              extra={PREDICTION: ("sensor_msgs/msg/JointState", messages)})


def test_each_run_scores_at_its_noise_floor_and_the_pool_is_the_runs_together(plant, nominal, identified):
    runs = [other_run(plant, seed) for seed in (5, 6)]
    validation = validate(identified, runs)
    assert [run.source for run in validation.runs] == ["synthetic run"] * 2
    for run in validation.runs:
        # scored as recorded: a perfect model scores the noise, sigma per joint over the efforts' norm
        floor = np.linalg.norm(np.full(run.measured.shape, NOISE)) / np.linalg.norm(run.measured)
        assert run.fits["identified"].stacked == pytest.approx(floor, rel=0.05)
        assert len(run.t) > 0.9 * 12000                                   # every sample but the trims
        assert run.fits["nominal"].stacked > 20 * run.fits["identified"].stacked
    # pooled: one stacked figure over both runs' states, from the per-run residuals
    residual = sum(np.sum((r.measured - r.predicted["identified"]) ** 2) for r in validation.runs)
    total = sum(np.sum(r.measured ** 2) for r in validation.runs)
    assert validation.pooled["identified"].stacked == pytest.approx(np.sqrt(residual / total), rel=1e-12)
    report = validation.report()
    assert report["pooled"]["identified"]["stacked"] == pytest.approx(100 * validation.pooled["identified"].stacked)
    assert set(report["runs"][0]["identified"]["joints"]) == set(nominal.joint_names)


def test_the_makers_prediction_is_scored_beside_ours(plant, nominal, identified, tmp_path):
    bag = bag_with_prediction(tmp_path / "validation", plant, seed=7)
    measured, maker = read_prediction(bag, nominal.joint_names, "/joint_states", PREDICTION)
    np.testing.assert_array_equal(measured.time_ns, maker.time_ns)
    validation = validate(identified, [measured], [maker], maker="UR target")
    fits = validation.runs[0].fits
    assert list(fits) == ["identified", "nominal", "UR target"]
    assert fits["UR target"].stacked == pytest.approx(0.1 / 1.0, rel=0.03)        # (1.1 τ − τ) / τ
    assert fits["identified"].stacked < 0.2 * fits["UR target"].stacked   # at the noise floor, 1.2 %


def test_a_prediction_sent_as_effort_commands_is_paired_as_the_commands_are(plant, nominal, tmp_path):
    """A Float64MultiArray prediction, each received right after its state: paired by receive time
    (read_joint_states' rule), every state kept."""
    run = other_run(plant, seed=8, seconds=3.0)
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    register_type(store, FLOAT64_MULTI_ARRAY)
    array, layout = store.types[FLOAT64_MULTI_ARRAY], store.types["std_msgs/msg/MultiArrayLayout"]
    commands = [(s + 1e-4, array(layout=layout(dim=[], data_offset=0), data=2.0 * row))
                for s, row in zip(run.t, run.effort)]
    bag = write_joint_states(tmp_path / "commands", run.t, run.joint_names, run.position, run.velocity, run.effort,
                             extra={PREDICTION: (FLOAT64_MULTI_ARRAY, commands)})
    measured, maker = read_prediction(bag, nominal.joint_names, "/joint_states", PREDICTION)
    assert len(measured.t) == len(run.t)
    np.testing.assert_allclose(maker.effort, 2.0 * measured.effort)


def test_identify_command_validates_on_other_bags_prints_writes_and_plots(plant, nominal, tmp_path, capsys):
    run = synthetic_run(plant, START, 20.0, noise=NOISE, seed=1)
    bag = write_joint_states(tmp_path / "run", run.t, run.joint_names, run.position, run.velocity, run.effort)
    others = [bag_with_prediction(tmp_path / f"validation{k}", plant, seed) for k, seed in enumerate((7, 9))]
    out, report, png = tmp_path / "identified.urdf", tmp_path / "report.json", tmp_path / "validation.png"
    assert identify_main([str(bag), "--urdf", URDF, "-o", str(out), "--json", str(report),
                          "--validate", *map(str, others), "--prediction-topic", PREDICTION,
                          "--prediction-name", "controller", "--validation-plot", str(png)]) == 0
    printed = capsys.readouterr().out
    assert "validation runs" in printed and "pooled / controller" in printed and "pooled / identified" in printed
    validation = json.loads(report.read_text())["validation"]
    assert len(validation["runs"]) == 2
    assert validation["pooled"]["controller"]["stacked"] == pytest.approx(10.0, rel=0.03)
    assert validation["pooled"]["identified"]["stacked"] < 0.2 * validation["pooled"]["controller"]["stacked"]
    image = matplotlib.image.imread(png)
    assert image.shape[0] > 500 and image.shape[2] in (3, 4)
    # a validation bag without the topic: one line naming it, exit 2
    assert identify_main([str(bag), "--urdf", URDF, "-o", str(out), "--validate", str(bag),
                          "--prediction-topic", "/nope"]) == 2
    assert "no topic /nope" in capsys.readouterr().err


def test_read_joint_states_is_what_validation_reads(tmp_path, plant):
    run = other_run(plant, seed=10, seconds=2.0)
    bag = write_joint_states(tmp_path / "plain", run.t, run.joint_names, run.position, run.velocity, run.effort)
    measured, maker = read_prediction(bag, run.joint_names, "/joint_states", "/joint_states")
    np.testing.assert_array_equal(maker.effort, read_joint_states(bag).effort)
