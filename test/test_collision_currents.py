"""Collision detection on an arm whose joint states carry motor currents (a UR through
ur_robot_driver): thresholds calibrated on a free run of the MuJoCo UR stand-in (currents with
noise, RTDE-like stamps), held against a second free run and a push MuJoCo applies; the
controller's drive parameters refused where they do not fit the joints; the residual on
/diagnostics in N m and in A. The node wiring over DDS: test_nodes_collision.py."""
import numpy as np
import pytest

from robodyn_ros.apps.collision import calibrate, main
from robodyn_ros.control.collision_guard import CollisionGuard
from robodyn_ros.dynamics.drives import JointDrives, from_parameters
from robodyn_ros.dynamics.link import ModelError

ur = pytest.importorskip("ur_stand_in")   # MuJoCo's UR5 behind drives of our choosing

GAIN = 50.0        # K_O, 1/s
MARGIN = 1.5       # calibrate's default
PUSH = (4.0, 4.4, "forearm_link", np.array([0.0, 0.0, -200.0]))   # s, s, body, N (world): pressing down
SECONDS = 10.0     # the excitation's period (identification.synthetic.PERIOD): it ends at rest


@pytest.fixture(scope="module")
def plant(tmp_path_factory):
    """The arm's model as a perfect identification gives it: the plant's masses, rotor inertia,
    viscous and Coulomb friction, the Coulomb smooth (tanh(q̇ / STRIBECK), as the laws take it: a
    sign would put ±Fc into the residual at rest on 1e-4 rad/s), not the stiction nor the
    Stribeck fall, which no model here has."""
    import dataclasses

    arm = ur.truth_models(tmp_path_factory.mktemp("plant"))[0]
    return type(arm)([dataclasses.replace(link, coulomb_tanh=ur.STRIBECK) for link in arm.links],
                     arm.tip, arm.gravity, arm.name, arm.frames)


GIVEN = ",".join(f"{g:g}" for g in ur.GAINS)


@pytest.fixture(scope="module")
def free_bag(tmp_path_factory):
    """A free run of the stand-in as its driver records it: currents in ``effort``."""
    return ur.write_bag(tmp_path_factory.mktemp("free") / "free", ur.simulate(SECONDS, motion_seed=3, seed=1))


@pytest.fixture(scope="module")
def calibration(plant, free_bag):
    """``robodyn-ros collision calibrate``'s work on the free run, with the drive gains."""
    return calibrate(free_bag, None, model=plant, gain=GAIN, drive_gains=GIVEN, floor=0.0)


def watch(plant, thresholds, run, links):
    """The controller's guard along ``run`` as its states arrive (currents in ``effort``, made
    torques by the guard's drive gains): (the first detection or None, the largest |r| / h)."""
    from robodyn_ros.control.collision import Thresholds

    names = plant.joint_names
    guard = CollisionGuard(plant, np.full(6, GAIN), Thresholds(names, thresholds.static,
                           thresholds.per_velocity, GAIN), links, "none", torque="measured",
                           drives=JointDrives.currents(names, ur.GAINS))
    worst = 0.0
    for t, q, qd, current in zip(run.stamps, run.q, run.qd, run.current):
        guard.measure(current)
        if guard.observe(t, q, qd, None):
            return guard.event, worst
        worst = max(worst, float(np.max(np.abs(guard.residual) / thresholds.at(qd))))
    return None, worst


def test_the_calibration_is_in_newton_metres_from_the_currents(calibration):
    # the currents read as N m would be the torques over 9-13: the residual of a model that sees
    # a tenth of gravity (27 N m on the shoulder); converted, what is left is the friction the
    # model lacks (at most the stiction, at a reversal) and the noise (0.4-0.75 N m a sample)
    # through the observer's filter
    assert calibration.warning is None
    assert np.all(calibration.drives.measures_currents)
    np.testing.assert_array_equal(calibration.drives.gains, ur.GAINS)
    peak = np.abs(calibration.residuals).max(axis=0)
    assert np.all(peak < ur.STICTION + 1.0), peak


def test_the_currents_read_as_newton_metres_are_said_implausible(plant, free_bag):
    result = calibrate(free_bag, None, model=plant, gain=GAIN, floor=0.0)   # no drive gains
    assert result.warning and "--drive-gains" in result.warning


def test_the_command_writes_the_drives_the_controller_reads_by_joint_name(free_bag, tmp_path, capsys):
    """The parameter file sets the controller as it was calibrated: a drives file (written beside
    it from the values given; by joint name, so the controller's joints may be in any order) and
    the measured torque. The nominal UR5 here: the command's wiring, not the thresholds."""
    import yaml

    out = tmp_path / "thresholds.yaml"
    assert main(["calibrate", str(free_bag), "--urdf", str(ur.URDF), "--root-link", ur.ROOT,
                 "--tip-link", ur.TIP, "--drive-gains", GIVEN, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "(A)" in err and "current, gain 12.5 N m/A" in err
    values = yaml.safe_load(out.read_text())["computed_torque_controller"]["ros__parameters"]
    assert values["collision_torque"] == "measured"
    assert values["drives_file"] == str(tmp_path / "thresholds.drives.yaml")
    shuffled = list(reversed(ur.JOINTS))   # a controller whose joints are in another order
    np.testing.assert_array_equal(from_parameters(shuffled, values["drives_file"]).gains, ur.GAINS[::-1])
    # a drives file given is named as it is
    assert main(["calibrate", str(free_bag), "--urdf", str(ur.URDF), "--root-link", ur.ROOT,
                 "--tip-link", ur.TIP, "--drive-gains", values["drives_file"], "-o", str(out)]) == 0
    assert yaml.safe_load(out.read_text())["computed_torque_controller"]["ros__parameters"][
        "drives_file"] == values["drives_file"]


def test_a_second_free_run_raises_no_alarm(plant, calibration):
    # another motion and other noise, stamps and gaps: the thresholds were fitted on one run,
    # with MARGIN over its envelope; the second run stays within them
    run = ur.simulate(SECONDS, motion_seed=5, seed=7)
    event, worst = watch(plant, calibration.thresholds, run, list(ur.LINKS))
    assert event is None, event.reason
    assert worst < 1.0


def test_a_push_is_detected_within_the_first_order_bound(plant, calibration):
    # the observer is a first-order filter of the external torque: r_i(t) = τ_i (1 - e^(-K_O t))
    # after a step τ_i, plus what the free motion leaves (at most h_i / MARGIN where the fit
    # holds). So joint i crosses h_i once τ_i (1 - e^(-K_O t)) > h_i (1 + 1 / MARGIN), at most
    # -ln(1 - h_i (1 + 1/MARGIN) / τ_i) / K_O after the push, plus the time to the next state
    # (the largest stamp gap in the push: 2 ms, or one of the driver's 10-34 ms gaps) and the
    # stamps' 2 ms jitter; τ_i is its least magnitude over the push (Jᵀf moves with the arm)
    run = ur.simulate(SECONDS, motion_seed=5, seed=7, push=PUSH)
    start, end = PUSH[0], PUSH[1]
    t = run.tick_time
    pushed = (t >= start) & (t < end)
    tau = run.external[pushed]
    steady = np.all(np.sign(tau) == np.sign(tau[0]), axis=0)           # no sign change
    least = np.where(steady, np.abs(tau).min(axis=0), 0.0)
    h = calibration.thresholds.static + calibration.thresholds.per_velocity * np.abs(run.qd[pushed]).max(axis=0)
    need = h * (1.0 + 1.0 / MARGIN)
    can = least > need
    assert can.any(), (least, need)     # the push is strong enough for the bound to say something
    bound = np.min(-np.log(1.0 - need[can] / least[can]) / GAIN)
    stamps = run.stamps - (run.stamps[0] - t[0])
    gap = np.diff(stamps[(stamps >= start - 0.05) & (stamps <= end)]).max()
    event, _ = watch(plant, calibration.thresholds, run, list(ur.LINKS))
    assert event is not None
    delay = event.time - (run.stamps[0] - t[0]) - start
    assert 0.0 <= delay <= bound + gap + 0.002, (delay, bound, gap)
    # the push is on the forearm: isolated to it or before it (what its torque reached)
    assert list(ur.LINKS).index(event.link) <= list(ur.LINKS).index("forearm_link")


@pytest.mark.parametrize("kwargs, says", [
    ({"units": ["A"] * 5}, "effort_units: 5 values for the 6 joints"),
    ({"gains": [12.0, 13.0]}, "drive_gains: 2 values for the 6 joints"),
    ({"gains": [12.0, 13.0, 11.0, 0.0, 9.0, 9.0]}, "drive_gains: joint 'wrist_1_joint'"),
    ({"gains": [12.0, 13.0, 11.0, 9.0, -9.0, 9.0]}, "drive_gains: joint 'wrist_2_joint': a drive gain is a positive"),
    ({"gains": [12.0, 13.0, 11.0, 9.0, 9.0, float("inf")]}, "drive_gains: joint 'wrist_3_joint'"),
    ({"units": ["A"]}, "the drive gains of ['shoulder_pan_joint'"),
    ({"units": ["N m", "A", "A", "A", "A", "Nm"], "gains": [1.0, 2, 2, 2, 2, 1]},
     "effort_units: joint 'wrist_3_joint': 'Nm'"),
    ({"units": ["N m", "A", "A", "A", "A", "A"], "gains": [2.0]},
     "drive_gains: joint 'shoulder_pan_joint' measures N m"),
])
def test_drive_parameters_that_do_not_fit_the_joints_are_refused_in_one_line(kwargs, says):
    with pytest.raises(ModelError) as caught:
        from_parameters(ur.JOINTS, **kwargs)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_drives_file_that_does_not_fit_is_refused_naming_the_file_and_joint(tmp_path):
    drives = JointDrives.currents(ur.JOINTS[:5], ur.GAINS[:5])   # a five-joint arm's file
    path = drives.save(tmp_path / "five.drives.yaml")
    with pytest.raises(ModelError, match=r"five\.drives\.yaml: no drives for joint 'wrist_3_joint'"):
        from_parameters(ur.JOINTS, str(path))
    with pytest.raises(ModelError, match=r"ur_drives\.yaml: the drive gains of .* are unknown"):
        from_parameters(ur.JOINTS, "config/ur_drives.yaml")   # the maker's: gains to identify
    with pytest.raises(ModelError, match="give the file or the values, not both"):
        from_parameters(ur.JOINTS, str(path), gains=[12.0])
    both = from_parameters(ur.JOINTS, str(JointDrives.currents(ur.JOINTS, ur.GAINS).save(tmp_path / "ur.yaml")))
    np.testing.assert_array_equal(both.gains, ur.GAINS)
    np.testing.assert_array_equal(from_parameters(ur.JOINTS, gains=list(ur.GAINS)).gains, ur.GAINS)
    assert from_parameters(ur.JOINTS).units == ("N m",) * 6


def test_calibrate_refuses_gains_that_do_not_fit_before_any_work(tmp_path, capsys):
    assert main(["calibrate", str(tmp_path / "none"), "--urdf", str(ur.URDF), "--root-link", ur.ROOT,
                 "--tip-link", ur.TIP, "--drive-gains", "12,13", "-o", str(tmp_path / "t.yaml")]) == 2
    err = capsys.readouterr().err
    assert "2 values for the 6 joints" in err and err.count("\n") == 1
    with pytest.raises(SystemExit):   # values need -o: the drives file is written beside it
        main(["calibrate", str(tmp_path / "none"), "--urdf", str(ur.URDF), "--drive-gains", GIVEN])
    assert "needs -o" in capsys.readouterr().err
    # the maker's file, gains unknown: said before the bag (absent here) is read
    assert main(["calibrate", str(tmp_path / "none"), "--urdf", str(ur.URDF), "--root-link", ur.ROOT,
                 "--tip-link", ur.TIP, "--drive-gains", "config/ur_drives.yaml"]) == 2
    err = capsys.readouterr().err
    assert "the drive gains of ['shoulder_pan_joint'" in err and err.count("\n") == 1


def test_the_loop_takes_currents_through_its_drive_gains_and_reports_both_units():
    """The PUMA rig of test_collision_guard.py held at rest, its driver reporting each joint's
    current (the applied torque over a gain): told the gains, the observer sees the torques and
    no collision, and the report's residual in A is the residual in N m over each gain; not told
    (efforts taken as N m), the same currents are a 'collision' of the unexplained gravity."""
    from robodyn_ros.control.loop import WARN
    from test_collision_guard import CHAIN, Rig

    gains = np.array([20.0, 30.0, 15.0, 5.0, 4.0, 3.0])
    told = Rig(collision_reaction="none", collision_torque="measured", drive_gains=list(gains))
    blind = Rig(collision_reaction="none", collision_torque="measured")
    for rig in (told, blind):
        applied = np.zeros(6)
        for _ in range(200):
            rig.loop.set_state(CHAIN, rig.q, rig.qd, stamp=rig.t, effort=applied / gains)
            effort = rig.loop.cycle().effort.copy()
            applied = rig.engine.applied(effort)
            rig.q, rig.qd = rig.engine.step(rig.q, rig.qd, applied)
            rig.t += 1e-3
    assert told.events == [] and np.max(np.abs(told.loop.guard.residual)) < 0.05
    assert blind.events and "joint_2" in blind.events[0].crossing   # 28 N m of gravity read as 28/30
    values = told.loop.report()[2]
    r = np.array([values[f"residual {j} (N m)"] for j in CHAIN])
    np.testing.assert_array_equal(r, told.loop.guard.residual)
    np.testing.assert_allclose([values[f"residual {j} (A)"] for j in CHAIN], r / gains, rtol=1e-15)
    assert not any(key.endswith("(A)") for key in blind.loop.report()[2])
    # at rest the currents read as N m are a fraction (1/gain) of the gravity they hold: said, with
    # what to set; converted, they are the torques (the blind rig reset, so its collision does not
    # hide the warning behind its ERROR)
    assert told.loop.report()[2]["measured effort"] == "plausible as torques"
    blind.loop.reset_collision()
    level, message, values = blind.loop.report()
    assert "set drives_file or effort_units and drive_gains" in message and level == WARN
    assert values["measured effort"] == message and "0.033" in message   # 1/30 on joint 2


def test_the_loop_refuses_drive_parameters_that_do_not_fit_with_or_without_the_observer():
    from test_collision_guard import Rig

    with pytest.raises(ValueError, match=r"drive_gains: 4 values for the 6 joints"):
        Rig(drive_gains=[1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"drive_gains: joint 'joint_3': a drive gain is a positive"):
        Rig(collision_observer_gain=[], collision_thresholds=[], drive_gains=[2.0, 2.0, -1.0, 2.0, 2.0, 2.0])
