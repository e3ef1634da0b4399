"""From a recorded run to a model: ``identify`` and ``robodyn-ros identify`` on synthetic runs whose
truth is known — a PUMA 560 unlike its nominal model (other masses, a tool, other friction), moving
along a band-limited Fourier series, its torques its own inverse dynamics.

What each test shows: noiseless data give the true base parameters back (to the accuracy of
central differences at 1 kHz, ~1e-6 relative: the estimator alone, on exact accelerations, reaches
1e-8, test_identification_base.py); with torque noise of σ the held-out residual is σ, as the noise
predicts; the written URDF is the identified model, MuJoCo loads it and check-urdf passes it; bags
in both storage formats are read; a run that cannot identify the model is refused saying why.
"""
import json

import numpy as np
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.identification import regressor, standard_parameters
from robodyn_ros.identification.bag import write_joint_states
from robodyn_ros.identification.identify import IdentificationError, identify
from robodyn_ros.apps.identify import main as identify_main
from robodyn_ros.identification.synthetic import fourier_motion, synthetic_run

from conftest import URDF

RATE = 1000.0   # Hz, synthetic_run's default


START = np.radians([90, 0, 90, 0, 0, 0])   # the 004 start


def run(plant, nominal, noise=0.0, seed=1, seconds=20.0, **motion):
    return synthetic_run(plant, START, seconds, noise=noise, seed=seed, **motion)


def test_noiseless_run_gives_the_true_base_parameters(plant, nominal):
    result = identify(nominal, run(plant, nominal), progress=lambda line: None)
    truth = result.base.from_standard(standard_parameters(plant))
    scale = np.abs(truth).max()
    np.testing.assert_allclose(result.least_squares.parameters, truth, rtol=0, atol=1e-5 * scale)
    nominal_error = np.abs(result.base.from_standard(standard_parameters(nominal)) - truth).max()
    assert nominal_error > 1e3 * 1e-5 * scale            # the truth is far from the nominal model
    for data in ("training", "held-out"):
        assert result.fits[(data, "base")].relative.max() < 1e-5
        assert result.fits[(data, "consistent")].relative.max() < 1e-2
        assert result.fits[(data, "nominal")].relative.max() > 0.1
    # the consistent model is a set of rigid bodies with non-negative friction
    assert np.min(result.consistent.min_eigenvalues) >= 0.0
    assert all(link.viscous >= 0 and link.coulomb_positive >= 0 for link in result.model.links)


def test_torque_noise_shows_as_itself_on_held_out_data(plant, nominal):
    sigma = 0.05   # N m
    result = identify(nominal, run(plant, nominal, noise=sigma, seed=2), progress=lambda line: None)
    held_out = result.fits[("held-out", "base")].rms
    # the filter passes only the noise below its cut-off: sigma * sqrt(2 f_c / f_s) for a
    # forward-backward Butterworth (its equivalent noise bandwidth is close to f_c)
    expected = sigma * np.sqrt(2.0 * result.cutoff_hz / RATE)
    np.testing.assert_allclose(held_out, expected, rtol=0.25)
    # and the standard deviations the estimate reports are what the parameters' spread is
    truth = result.base.from_standard(standard_parameters(plant))
    z = (result.least_squares.parameters - truth) / result.least_squares.std
    assert np.abs(z).max() < 6.0


def test_a_run_that_moves_one_joint_is_refused_saying_what_it_cannot_show(plant, nominal):
    with pytest.raises(IdentificationError, match="does not excite every base parameter"):
        identify(nominal, run(plant, nominal, joints=slice(5, 6)), progress=lambda line: None)


def test_a_run_without_torques_is_refused(plant, nominal):
    recording = run(plant, nominal)
    recording = type(recording)(**{**recording.__dict__, "effort": None})
    with pytest.raises(IdentificationError, match="no joint torques"):
        identify(nominal, recording, progress=lambda line: None)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_identify_command_on_a_bag_writes_the_identified_urdf(plant, nominal, tmp_path, storage, capsys):
    recording = run(plant, nominal, seconds=12.0)
    bag = write_joint_states(tmp_path / "run", recording.t, recording.joint_names, recording.position,
                             recording.velocity, recording.effort, storage=storage)
    out, report = tmp_path / "identified.urdf", tmp_path / "report.json"
    assert identify_main([str(bag), "--urdf", URDF, "-o", str(out), "--json", str(report),
                          "--plot", str(tmp_path / "torques.png")]) == 0
    printed = capsys.readouterr().out
    assert "cond(W_base)" in printed and "held-out / base" in printed
    identified = RobotModel.from_urdf(out)
    t, q, qd, qdd = fourier_motion(nominal, START, 3.0, seed=9)   # a motion the run never made
    expected = plant.inverse_dynamics(q, qd, qdd)
    error = identified.inverse_dynamics(q, qd, qdd) - expected
    assert np.sqrt(np.mean(error ** 2)) < 1e-2 * np.sqrt(np.mean(expected ** 2))
    summary = json.loads(report.read_text())
    assert summary["cond_W_base"] > 1 and summary["min_pseudo_inertia_eigenvalue"] >= 0
    assert len(summary["base_parameters"]) == 58
    assert (tmp_path / "torques.png").stat().st_size > 10_000
    mujoco = pytest.importorskip("mujoco")
    from robodyn_ros.sim.check_urdf import check
    assert check(out.read_text()) == []
    model = mujoco.MjModel.from_xml_string(out.read_text())
    assert model.nv == 6


def test_identify_command_refuses_a_bag_without_the_topic(nominal, tmp_path, capsys):
    bag = write_joint_states(tmp_path / "run", np.arange(200) * 1e-3, ["a", "b"], np.zeros((200, 2)),
                             topic="/other")
    assert identify_main([str(bag), "--urdf", URDF, "-o", str(tmp_path / "x.urdf")]) == 2
    assert "/joint_states" in capsys.readouterr().err
    assert not (tmp_path / "x.urdf").exists()


def test_regressor_of_the_plant_is_the_one_identify_uses(plant, nominal):
    """The plant differs from the nominal model in parameters only: one regressor serves both."""
    t, q, qd, qdd = fourier_motion(nominal, START, 0.05)
    np.testing.assert_array_equal(regressor(plant, q, qd, qdd), regressor(nominal, q, qd, qdd))


def test_payload_only_finds_the_tool_on_a_known_arm(nominal):
    """The arm known, a 2 kg tool unknown: ``payload_only`` estimates one rigid body on the last
    link and the model it gives has the tool's mass and first moment."""
    tool = nominal.with_payload(2.0, com=(0.01, -0.02, 0.08), inertia=np.diag([0.004, 0.004, 0.002]))
    result = identify(nominal, run(tool, nominal, seconds=12.0), payload_only=True,
                      progress=lambda line: None)
    last, truth = result.model.links[-1], tool.links[-1]
    assert abs(last.mass - truth.mass) < 1e-3 * 2.0
    np.testing.assert_allclose(last.mass * last.com, truth.mass * truth.com, atol=1e-4)
    assert [link.mass for link in result.model.links[:-1]] == [link.mass for link in nominal.links[:-1]]
