"""The simulator's drive (sim/drive.py) without ROS: what it adds comes from ITS model — on MuJoCo
MuJoCo's own bias forces (equal to our g(q) and damping: a peer's formulation), on our engine the
arm with its masses scaled (g is linear in the masses: exactly the scale times ours) — and a
command that changes faster than its limit is counted, or stops the arm."""
import warnings
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.control.drive import DRIVE_FRICTION, DRIVE_GRAVITY
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.sim import make_engine, make_plant
from robodyn_ros.sim.drive import TorqueDrive, attach_drive, plant_drive

ROOT = Path(__file__).resolve().parents[1]
PANDA = (ROOT / "urdf/panda.urdf").read_text()
DT = 1e-3
BOTH = DRIVE_GRAVITY | DRIVE_FRICTION


def panda():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(PANDA)


def test_our_engine_s_drive_adds_its_perturbed_model_s_gravity_and_friction():
    model = panda()
    engine = make_engine("robodyn", model, DT)
    drive = attach_drive(engine, BOTH, np.full(model.dof, np.inf), mass_scale=1.05)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd = rng.uniform(-1.0, 1.0, (2, model.dof))
        np.testing.assert_allclose(drive.added(q, qd), 1.05 * model.gravity_torques(q)
                                   + model.friction_torques(qd), rtol=1e-12, atol=1e-12)


def test_mujoco_s_drive_adds_mujoco_s_own_bias_forces():
    pytest.importorskip("mujoco")
    model = panda()
    engine = make_engine("mujoco", model, DT, PANDA)
    drive = attach_drive(engine, BOTH, np.full(model.dof, np.inf))
    rng = np.random.default_rng(4)
    for _ in range(5):
        q, qd = rng.uniform(-1.0, 1.0, (2, model.dof))
        # the Panda's URDF has viscous friction only (MuJoCo's damping), no Coulomb friction
        ours = model.gravity_torques(q) + model.viscous * qd
        np.testing.assert_allclose(drive.added(q, qd), ours, rtol=1e-9, atol=1e-9)


def test_behind_the_drive_a_command_of_zero_holds_the_arm_at_rest():
    """The drive adds g(q): a command of nothing holds the Panda still on both engines; a whole
    g(q) command (a law unaware of the drive) counts gravity twice and moves it."""
    model = panda()
    q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
    for name in ("robodyn", "mujoco"):
        if name == "mujoco":
            pytest.importorskip("mujoco")
        engine = make_engine(name, model, DT, PANDA)
        attach_drive(engine, DRIVE_GRAVITY, np.full(model.dof, np.inf))
        for command, still in ((np.zeros(model.dof), True),
                               (model.gravity_torques(q0), False)):
            q, qd = q0.copy(), np.zeros(model.dof)
            for _ in range(200):
                q, qd = engine.step(q, qd, command)
            assert (np.max(np.abs(q - q0)) < 1e-6) == still, name


def test_a_command_over_the_rate_is_counted_and_with_stop_brakes_the_arm():
    limit = np.array([1000.0, 1000.0])
    drive = TorqueDrive(lambda q, qd, bits: np.zeros(2), 0, limit)
    zero = np.zeros(2)
    drive.torque(np.array([0.0, 0.0]), zero, zero, DT)
    drive.torque(np.array([1.0, -1.0]), zero, zero, DT)   # exactly 1000 N m/s: allowed
    assert drive.violations == 0
    drive.torque(np.array([2.1, -1.0]), zero, zero, DT)   # 1100 N m/s
    assert drive.violations == 1 and not drive.stopped
    assert drive.peak_rate == pytest.approx(1100.0)
    stopping = TorqueDrive(lambda q, qd, bits: np.zeros(2), 0, limit, stop=True)
    stopping.torque(zero, zero, zero, DT)
    assert stopping.torque(np.array([5.0, 0.0]), zero, zero, DT) is None and stopping.stopped
    stopping.reset()
    assert not stopping.stopped and stopping.violations == 1


def test_a_stopped_drive_brakes_the_engine_and_reports_no_torque():
    model = panda()
    engine = make_engine("robodyn", model, DT)
    drive = attach_drive(engine, DRIVE_GRAVITY, np.full(model.dof, 1000.0), stop=True)
    q, qd = np.zeros(model.dof), np.full(model.dof, 0.1)
    engine.step(q, qd, np.zeros(model.dof))
    q2, qd2 = engine.step(q, qd, np.full(model.dof, 3.0))   # 3000 N m/s
    assert drive.stopped and np.array_equal(q2, q) and not qd2.any()
    assert not engine.joint_torque(np.zeros(model.dof), q, qd).any()


def test_the_plant_s_drive_is_shared_by_both_engines_and_its_settings_named():
    model = panda()
    order = JointOrder(model.joint_names)
    bare, loaded = make_plant("robodyn", model, DT, PANDA, payload_mass=2.0)
    drive = plant_drive((bare, loaded), order, ["gravity"], [1000.0], mass_scale=1.05)
    assert bare.drive is drive and loaded.drive is drive
    q = np.full(model.dof, 0.3)
    # a drive does not know the payload: its g(q) is the bare arm's
    np.testing.assert_allclose(drive.added(q, q), 1.05 * model.gravity_torques(q), rtol=1e-12,
                               atol=1e-12)
    assert plant_drive((bare, loaded), order, [], []) is None
    with pytest.raises(ValueError, match="drive_rate_limit"):
        plant_drive((bare, loaded), order, ["gravity"], [1.0, 2.0])
    with pytest.raises(ValueError, match="drive_compensates"):
        plant_drive((bare, loaded), order, ["inertia"], [])
