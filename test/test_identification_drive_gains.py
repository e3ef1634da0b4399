"""Efforts that are motor currents: the drives file (``dynamics.drives``), the check that says
efforts are not N m (``identification.efforts``), and the drive gains identified with the
parameters from a run with a known payload beside one without (``identification.drive_gains``,
Gautier & Briot's global identification) on synthetic PUMA runs whose truth is known.

What each test shows: exact currents give the gains back to the accuracy of central differences;
with current noise the gains' errors are what their reported σ says (over seeds); the payload's
mass alone fixes the scale (its centre of mass and inertia are found); a payload on the tool axis
cannot separate the wrist's gain and is refused saying so; a current read as N m is named in one
line with what to pass. The MuJoCo stand-in of a UR and ``robodyn-ros identify`` on its bags:
test_identification_currents.py.
"""
import numpy as np
import pytest

from robodyn_ros.dynamics import ModelError
from robodyn_ros.dynamics.drives import JointDrives, drives_file
from robodyn_ros.dynamics.inertial_parameters import standard_parameters
from robodyn_ros.identification.bag import Recording
from robodyn_ros.identification.drive_gains import StaticCheck, _check_identifiable, identify_drive_gains
from robodyn_ros.identification.efforts import effort_scales, implausible_efforts
from robodyn_ros.identification.identify import IdentificationError
from robodyn_ros.identification.synthetic import synthetic_run
from robodyn_ros.plumbing.resources import find_share_file

START = np.radians([90, 0, 90, 0, 0, 0])
GAINS = np.array([11.0, 14.0, 9.5, 4.0, 3.5, 3.0])     # N m/A
PAYLOAD = (3.0, np.array([0.04, -0.03, 0.05]), np.diag([6e-3, 5e-3, 4e-3]))
quiet = dict(progress=lambda line: None)


def currents(recording, gains, noise=0.0, seed=0):
    """The recording with its torques as the currents of drives of ``gains`` (plus white noise, A)."""
    current = recording.effort / gains + np.random.default_rng(seed).normal(0.0, noise, recording.effort.shape)
    return Recording(**{**recording.__dict__, "effort": current})


def runs(plant, payload=PAYLOAD, noise=0.0, seed=0, seconds=20.0, **motion):
    """(a run without the payload, one with it) of ``plant``, as currents."""
    bare = synthetic_run(plant, START, seconds, seed=seed + 1, **motion)
    loaded = synthetic_run(plant.with_payload(*payload), START, seconds, seed=seed + 2, **motion)
    return (currents(bare, GAINS, noise, seed + 3), currents(loaded, GAINS, noise, seed + 4))


# ---------------------------------------------------------------- the drives file
def test_drives_file_round_trips_and_names_what_is_wrong(tmp_path):
    joints = ("a", "b", "c")
    drives = JointDrives(joints, ("A", "N m", "A"), [12.5, 1.0, np.nan], [0.1, 0.0, np.nan], "test")
    path = drives.save(tmp_path / "d.drives.yaml")
    back = JointDrives.load(path, ["c", "a", "b"])
    assert back.joints == ("c", "a", "b") and back.units == ("A", "A", "N m")
    np.testing.assert_array_equal(back.gains[1:], [12.5, 1.0])
    assert np.isnan(back.gains[0]) and back.std[1] == 0.1 and back.unknown == ["c"]
    with pytest.raises(ModelError, match=r"\['c'\] are unknown"):
        back.torques(np.ones(3))
    np.testing.assert_allclose(drives.in_order(["a", "b"]).torques([[2.0, 3.0]]), [[25.0, 3.0]])
    assert drives_file(tmp_path / "arm.urdf") == tmp_path / "arm.drives.yaml"
    for text, message in (("format: x\n", "not a drives file"),
                          ("format: robodyn_ros.drives/1\njoints: {a: {effort: V}}\n", "'a': effort must be"),
                          ("format: robodyn_ros.drives/1\njoints: {a: {effort: A, gain: x}}\n", "'a': gain"),
                          ("format: robodyn_ros.drives/1\njoints: {a: {effort: A, gain: 0}}\n", "'a'.*nonzero")):
        (tmp_path / "bad.yaml").write_text(text)
        with pytest.raises(ModelError, match=rf"bad.yaml: .*{message}"):
            JointDrives.load(tmp_path / "bad.yaml", ["a"])
    with pytest.raises(ModelError, match=r"bad.yaml: no drives for joint 'z'"):
        (tmp_path / "bad.yaml").write_text("format: robodyn_ros.drives/1\njoints: {a: {effort: A}}\n")
        JointDrives.load(tmp_path / "bad.yaml", ["z"])


def test_gains_given_as_values_and_the_ur_driver_file():
    joints = ["j1", "j2"]
    drives = JointDrives.parse("10, -12.5", joints)
    assert drives.units == ("A", "A") and drives.gains.tolist() == [10.0, -12.5]   # a sign is a gain too
    with pytest.raises(ModelError, match="3 values for the 2 joints"):
        JointDrives.parse("1,2,3", joints)
    ur = JointDrives.load(find_share_file("config/ur_drives.yaml"))
    assert ur.joints == ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                         "wrist_2_joint", "wrist_3_joint")
    assert set(ur.units) == {"A"} and len(ur.unknown) == 6    # UR publishes no drive gains


# ---------------------------------------------------------------- efforts that are not N m
def test_currents_read_as_newton_metres_are_named_with_what_to_pass(plant, nominal):
    run = synthetic_run(plant, START, 5.0)
    assert implausible_efforts(nominal, run) is None           # torques: the nominal model is near
    scales = effort_scales(nominal, currents(run, GAINS))
    # joint 1 turns about the vertical, the wrist carries little: only the loaded joints are judged
    assert set(scales) == {"joint_2", "joint_3"}
    assert max(scales.values()) < 1.0 / 3.0
    line = implausible_efforts(nominal, currents(run, GAINS))
    assert "\n" not in line and "--drive-gains" in line and "--payload-run" in line and "0.1, 0.22 times" in line


# ---------------------------------------------------------------- the global identification
def test_exact_currents_give_the_gains_and_the_payload_back(plant, nominal):
    bare, loaded = runs(plant)
    estimate = identify_drive_gains(nominal, bare, loaded, PAYLOAD[0], **quiet)
    np.testing.assert_allclose(estimate.gains, GAINS, rtol=1e-5)
    # the arm's base parameters (the plant's, tool included) and the payload found with them
    truth = estimate.base.from_standard(standard_parameters(plant))
    np.testing.assert_allclose(estimate.parameters, truth, rtol=0, atol=1e-5 * np.abs(truth).max())
    payload = (standard_parameters(plant.with_payload(*PAYLOAD)) - standard_parameters(plant))[50:60]
    np.testing.assert_allclose(estimate.payload, payload, rtol=0, atol=1e-5 * PAYLOAD[0])
    assert estimate.payload_std[0] == 0.0 and np.all(estimate.payload_std[1:] > 0.0)
    assert estimate.fit["run"].max() < 1e-4


def test_a_known_centre_of_mass_is_kept(plant, nominal):
    bare, loaded = runs(plant)
    estimate = identify_drive_gains(nominal, bare, loaded, PAYLOAD[0], PAYLOAD[1], **quiet)
    np.testing.assert_allclose(estimate.gains, GAINS, rtol=1e-5)
    assert np.all(estimate.payload_std[:4] == 0.0) and np.all(estimate.payload_std[4:] > 0.0)


def test_gain_errors_are_what_their_sigma_says(plant, nominal):
    noise = 0.02    # A, white on every current sample at 1 kHz
    z = []
    for seed in range(4):
        estimate = identify_drive_gains(nominal, *runs(plant, noise=noise, seed=10 * seed), PAYLOAD[0], **quiet)
        z.append((estimate.gains - GAINS) / estimate.std)
        assert np.all(estimate.std / GAINS < 0.02)
    z = np.concatenate(z)
    assert np.max(np.abs(z)) < 4.0
    assert 0.4 < np.sqrt(np.mean(z ** 2)) < 1.8          # neither too narrow nor too wide a σ


def test_a_payload_on_the_tool_axis_leaves_the_last_gain_poorly_known_and_says_so(plant, nominal):
    # a point mass on the last axis: joint 6's torque never sees it, and its gain's scale comes only
    # through the wrist's coupling to the joints that do
    on_axis = (3.0, np.zeros(3), np.zeros((3, 3)))
    estimate = identify_drive_gains(nominal, *runs(plant, payload=on_axis, noise=0.02), on_axis[0], np.zeros(3),
                                    **quiet)
    relative = estimate.std / estimate.gains
    assert relative[5] > 0.05 and relative[:5].max() < 0.01
    assert abs(estimate.gains[5] / GAINS[5] - 1) < 4 * relative[5]
    assert estimate.poorly_known() == ["joint_6"]
    assert "joint_6" in estimate.warning() and "off the tool axis" in estimate.warning()
    with pytest.raises(IdentificationError, match="the payload's mass must be positive"):
        identify_drive_gains(nominal, *runs(plant, seconds=5.0), 0.0, **quiet)


def test_runs_that_leave_joints_still_are_refused_naming_what_they_hide(plant, nominal):
    with pytest.raises(IdentificationError, match=r"joints \['joint_4', 'joint_5', 'joint_6'\] barely move.*"
                       "move every joint"):
        identify_drive_gains(nominal, *runs(plant, seconds=10.0, joints=slice(0, 3)), PAYLOAD[0], **quiet)


def test_a_direction_no_data_shows_is_named():
    # the second unknown never moves the torques, the third only with the first
    N = np.array([[2.0, 0.0, 2.0], [0.0, 0.0, 0.0], [2.0, 0.0, 2.0]])
    with pytest.raises(IdentificationError, match=r"cannot separate.*: b; a barely change"):
        _check_identifiable(N, ["a", "b", "c"])
    _check_identifiable(np.eye(3), ["a", "b", "c"])


def test_static_check_flags_a_gross_gain_error():
    check = StaticCheck("run", 100, measured=np.array([10.0, -20.0]), predicted=np.array([10.5, -10.0]),
                        band=np.array([1.0, 2.0]))
    assert check.ok.tolist() == [True, False]
    assert check.report(["a", "b"])["ok"] == {"a": True, "b": False}
