"""An arm that reports motor currents, identified: the stand-in for a UR (test/ur_stand_in.py:
MuJoCo's UR5 of example-robot-data behind drives of gains we chose, with viscous, Coulomb and
stiction friction, current noise, RTDE-like stamps at 500 and 125 Hz) recorded with and without a
2.5 kg payload, and a separate validation run.

What each test shows: the drive gains come back within 2 % and within their σ, the arm's base
parameters and the payload within theirs; where the arm rests, g i is the static torque within the
Coulomb level; the model predicts the validation run's measured currents within 1.2 times the
noise floor (the ε a perfect model would get: ‖noise‖ / ‖i‖), better than the maker's own target
current; and ``robodyn-ros identify`` takes the bags and config/ur_drives.yaml as they are.
"""
import functools
import json

import numpy as np
import pytest

import ur_stand_in as stand_in
from robodyn_ros.apps.identify import main as identify_main
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.drives import JointDrives
from robodyn_ros.dynamics.friction import FrictionModel
from robodyn_ros.dynamics.inertial_parameters import standard_parameters
from robodyn_ros.identification.drive_gains import identify_drive_gains
from robodyn_ros.identification.gram import predictions
from robodyn_ros.identification.identify import _states
from robodyn_ros.identification.layout import Layout
from robodyn_ros.identification.samples import filtered_states
from robodyn_ros.plumbing.resources import find_share_file

RATES = (500.0, 125.0)
# the low-pass cut-off (Hz) per sample rate: 40 Hz at 500 Hz, 30 Hz (under half of Nyquist) at
# 125 Hz, above the closed loop's content that the currents carry (at 20 Hz the model, fed
# filtered states, misses 1-2 % of the currents on the shoulder joints)
CUTOFF = {500.0: 40.0, 125.0: 30.0}
quiet = dict(progress=lambda line: None)


@functools.lru_cache(maxsize=None)
def simulated(rate):
    """(run without the payload, run with it, validation run) at ``rate``: 30, 30 and 20 s of
    excitation, the first two from and back to rest, the validation one only moving."""
    return (stand_in.simulate(30.0, motion_seed=1, rate=rate, seed=0),
            stand_in.simulate(30.0, motion_seed=2, payload=True, rate=rate, seed=50),
            stand_in.simulate(20.0, motion_seed=3, rate=rate, seed=100, rest=0.0))


@pytest.fixture(scope="module")
def ur5():
    return RobotModel.from_urdf(stand_in.URDF, root_link=stand_in.ROOT, tip_link=stand_in.TIP)


@pytest.fixture(scope="module")
def truth(tmp_path_factory):
    return stand_in.truth_models(tmp_path_factory.mktemp("truth"))


@pytest.fixture(scope="module", params=RATES, ids=lambda rate: f"{rate:g}Hz")
def identified(request, ur5):
    rate = request.param
    bare, loaded, validation = simulated(rate)
    estimate = identify_drive_gains(ur5, stand_in.recording(bare, "run"), stand_in.recording(loaded, "payload run"),
                                    stand_in.PAYLOAD[0], cutoff_hz=CUTOFF[rate], **quiet)
    return rate, estimate, validation


def test_drive_gains_are_found_within_2_percent_and_their_sigma(identified):
    _, estimate, _ = identified
    error = estimate.gains / stand_in.GAINS - 1.0
    assert np.abs(error).max() < 0.02, error
    assert np.abs((estimate.gains - stand_in.GAINS) / estimate.std).max() < 3.5
    assert estimate.poorly_known() == []


def test_the_arm_and_the_payload_are_found_within_their_sigma(identified, truth):
    _, estimate, _ = identified
    arm, holding = truth
    z = (estimate.parameters - estimate.base.from_standard(standard_parameters(arm))) / estimate.parameters_std
    # the sign law misses the plant's Stribeck fall and the rest of its friction below 0.05 rad/s:
    # a few parameters a little beyond 3σ, none beyond 5σ
    assert np.median(np.abs(z)) < 1.2 and np.mean(np.abs(z) > 3.0) < 0.05 and np.abs(z).max() < 5.0
    payload = (standard_parameters(holding) - standard_parameters(arm))[50:60]
    assert estimate.payload[0] == stand_in.PAYLOAD[0]
    assert np.abs((estimate.payload - payload)[1:] / estimate.payload_std[1:]).max() < 5.0


def test_where_the_arm_rests_the_gains_give_the_static_torques(identified):
    _, estimate, _ = identified
    assert {check.run for check in estimate.statics} == {"run", "payload run"}
    for check in estimate.statics:
        assert check.states > 100 and check.ok.all(), estimate.statics_table()


def test_validation_currents_are_predicted_within_1_2_noise_floors(identified, ur5):
    rate, estimate, validation = identified
    layout = Layout.of(ur5)
    pi = np.zeros(len(layout.names))
    pi[layout.base.columns] = estimate.parameters
    t, q, qd, qdd, _ = _states(ur5, stand_in.recording(validation), CUTOFF[rate], 0.0, 0.02, None, "validation")[0]
    epsilon, floor, maker = stand_in.validation_scores(validation, t, predictions(layout, q, qd, qdd, [pi])[0]
                                                       / estimate.gains)
    assert epsilon < 1.2 * floor, (epsilon, floor)
    assert epsilon < maker


# ---------------------------------------------------------------- robodyn-ros identify on the bags
@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    """The 500 Hz runs as rosbag2 files, as ur_robot_driver's /joint_states and RTDE's target current."""
    directory = tmp_path_factory.mktemp("ur_bags")
    return {name: stand_in.write_bag(directory / name, run) for name, run in zip(
        ("run", "payload", "validation"), simulated(500.0))}


@pytest.fixture(scope="module")
def from_bags(bags, tmp_path_factory):
    out = tmp_path_factory.mktemp("ur_identified")
    argv = [str(bags["run"]), "--urdf", str(stand_in.URDF), "--root-link", stand_in.ROOT, "--tip-link", stand_in.TIP,
            "-o", str(out / "ur5.urdf"), "--json", str(out / "report.json"), "--cutoff", "40",
            "--drive-gains", str(find_share_file("config/ur_drives.yaml")), "--payload-run", str(bags["payload"]),
            "--payload-mass", str(stand_in.PAYLOAD[0]), "--holdout", str(bags["validation"])]
    return out, identify_main(argv)


def test_a_urs_raw_currents_give_a_model_and_a_validation_score(from_bags, ur5):
    out, status = from_bags
    assert status == 0
    drives = JointDrives.load(out / "ur5.drives.yaml", ur5.joint_names)
    assert set(drives.units) == {"A"} and np.all(drives.std > 0.0)
    assert np.abs(drives.gains / stand_in.GAINS - 1.0).max() < 0.02
    report = json.loads((out / "report.json").read_text())
    assert report["drives"]["source"].startswith("identified from")
    assert all(check["ok"][joint] for check in report["drive_gain_identification"]["statics"]
               for joint in ur5.joint_names)
    # the validation score, until identify --validate: the held-out run's (the seam, doc/identification.md)
    held_out = report["relative_error_stacked"]
    assert held_out["held-out/consistent"] < 0.5 * held_out["held-out/nominal"]


def validation_epsilon(out, ur5, cutoff=40.0):
    """(ε, floor, maker's ε) of the written model (URDF, friction file, drives file) on the
    validation run's currents: what a user's validation does with the three files."""
    model = RobotModel.from_urdf(out / "ur5.urdf", root_link=stand_in.ROOT, tip_link=stand_in.TIP)
    friction = FrictionModel.load(out / "ur5.friction.yaml", model.joint_names)
    drives = JointDrives.load(out / "ur5.drives.yaml", model.joint_names)
    validation = simulated(500.0)[2]
    stretches, _ = filtered_states(validation.stamps - validation.stamps[0], validation.q, validation.qd,
                                   validation.current, cutoff)
    t = np.concatenate([s.t for s in stretches])
    q, qd, qdd = (np.concatenate([getattr(s, name) for s in stretches]) for name in ("q", "qd", "qdd"))
    torque = model.inverse_dynamics(q, qd, qdd, friction=False) + friction.torques(qd)
    return stand_in.validation_scores(validation, t, drives.efforts(torque))


@pytest.mark.xfail(strict=True, reason="friction at rest (issue 45 item 3, branch ident-processing): identify "
                   "fits the sign law on the run's rest stretches too; the drive-gain estimate, which leaves "
                   "them out, is within 1.2 noise floors (test_validation_currents_are_predicted_...)")
def test_the_identified_model_predicts_validation_currents_within_1_2_noise_floors(from_bags, ur5):
    epsilon, floor, maker = validation_epsilon(from_bags[0], ur5)
    assert epsilon < 1.2 * floor and epsilon < maker


def test_currents_without_their_gains_are_named_in_one_line(bags, tmp_path, capsys):
    argv = [str(bags["run"]), "--urdf", str(stand_in.URDF), "--root-link", stand_in.ROOT, "--tip-link", stand_in.TIP,
            "-o", str(tmp_path / "ur5.urdf")]
    assert identify_main(argv + ["--drive-gains", str(find_share_file("config/ur_drives.yaml"))]) == 2
    error = capsys.readouterr().err
    assert "unknown" in error and "--payload-run BAG --payload-mass KG" in error and "Traceback" not in error
    assert identify_main(argv + ["--payload-run", str(bags["payload"])]) == 2
    assert "--payload-run needs --payload-mass" in capsys.readouterr().err
    assert identify_main(argv + ["--max-gap", "1e-9"]) == 2     # stops after the check, before the estimate
    warning = [line for line in capsys.readouterr().err.splitlines() if "not N m" in line]
    assert len(warning) == 1 and "--drive-gains" in warning[0] and "config/ur_drives.yaml" in warning[0]
