"""The simulator's engines without ROS (robodyn_ros.sim).

MuJoCo is the test-only oracle here: a rigid-body engine nobody here wrote, loading the same URDF.
Its inverse dynamics, mass matrix and forward dynamics must equal our model's to rounding on the
three shipped arms and on random arms with turned axes, fixed links and a payload; one RK4 step of
each engine must agree. Then what both engines share: efforts clamped at the URDF limits and
counted, position limits that hold, and no non-finite state ever returned.
"""
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.sim import StepError, make_engine
from robodyn_ros.sim import mujoco_engine
from urdf_factory import random_urdf

mujoco = pytest.importorskip("mujoco")
ROOT = Path(__file__).resolve().parents[1]
ARMS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "urdf").glob("*.urdf"))
DT = 1e-3


def load(xml, **kwargs):
    with warnings.catch_warnings():  # the raw data sets' non-physical inertias
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(xml, **kwargs)


def without_coulomb(model):
    """The model with its viscous friction only: MuJoCo's damping, and nothing else."""
    return RobotModel([dataclasses.replace(link, coulomb_positive=0.0, coulomb_negative=0.0)
                       for link in model.links], model.tip, model.gravity, model.name)


def inside_limits(model, rng):
    """A configuration strictly inside the position limits (no limit constraint is active)."""
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return rng.uniform(lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo))


def assert_mujoco_is_the_model(m, d, model, seed, rtol=1e-12):
    """mj_inverse, mj_fullM and mj_forward's qacc against our NE, CRBA and forward dynamics."""
    rng = np.random.default_rng(seed)
    n = model.dof
    for _ in range(5):
        q, qd, qdd = inside_limits(model, rng), rng.normal(size=n), rng.normal(size=n)
        d.qpos[:], d.qvel[:], d.qacc[:] = q, qd, qdd
        mujoco.mj_inverse(m, d)
        tau = model.inverse_dynamics(q, qd, qdd, friction=False) + model.viscous * qd
        np.testing.assert_allclose(d.qfrc_inverse, tau, rtol=0, atol=rtol * abs(tau).max())
        M = np.zeros((n, n))
        mujoco.mj_fullM(m, d, M)
        ours = model.mass_matrix(q)
        np.testing.assert_allclose(M, ours, rtol=0, atol=rtol * abs(ours).max())
        effort = np.where(np.isfinite(model.effort_limit), model.effort_limit, 10.0)
        d.ctrl[:] = rng.uniform(-effort, effort)
        mujoco.mj_forward(m, d)
        assert d.nefc == 0  # no limit is active: qacc is the unconstrained forward dynamics
        qacc = model.forward_dynamics(q, qd, d.ctrl - model.viscous * qd, friction=False)
        np.testing.assert_allclose(d.qacc, qacc, rtol=0, atol=rtol * abs(qacc).max())


@pytest.mark.parametrize("urdf", ARMS)
def test_mujoco_dynamics_are_the_models_on_the_shipped_arms(urdf):
    xml = (ROOT / urdf).read_text()
    model = load(xml)
    m, d = mujoco_engine.compile_urdf(xml, model, DT)
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4 and m.opt.timestep == DT
    np.testing.assert_array_equal(m.dof_armature, model.armature)
    assert_mujoco_is_the_model(m, d, model, seed=0)


def test_without_mj_setconst_the_written_back_inertias_give_wrong_dynamics(monkeypatch):
    # why compile_urdf calls it: constants derived from the placeholders would stay, silently
    monkeypatch.setattr(mujoco, "mj_setConst", lambda m, d: None)
    xml = (ROOT / "urdf/puma560.urdf").read_text()
    model = load(xml)
    m, d = mujoco_engine.compile_urdf(xml, model, DT)
    with pytest.raises(AssertionError):
        assert_mujoco_is_the_model(m, d, model, seed=0, rtol=1e-3)


@pytest.mark.parametrize("seed", range(6))
def test_mujoco_matches_random_arms_with_fixed_links_and_a_payload(seed):
    rng = np.random.default_rng(seed)
    arm = random_urdf(rng, 5, friction=True)
    model = without_coulomb(load(arm.xml, tip_link=arm.tip))
    payload = (1.5, rng.uniform(-0.1, 0.1, 3))
    scale = 1.3
    m, d = mujoco_engine.compile_urdf(arm.xml, model, DT, payload=(*payload, arm.tip),
                                      mass_scale=scale)
    truth = model.scaled(mass=scale).with_payload(payload[0], com=payload[1])
    assert_mujoco_is_the_model(m, d, truth, seed, rtol=1e-11)


@pytest.mark.parametrize("urdf", ARMS)
def test_one_step_of_each_engine_agrees(urdf):
    xml = (ROOT / urdf).read_text()
    model = without_coulomb(load(xml))
    ours = make_engine("robodyn", model, DT)
    theirs = make_engine("mujoco", model, DT, xml)
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, qd = inside_limits(model, rng), rng.normal(size=model.dof)
        tau = model.gravity_torques(q) + rng.normal(size=model.dof)
        a, b = ours.step(q, qd, tau), theirs.step(q, qd, tau)
        np.testing.assert_allclose(b[0], a[0], rtol=0, atol=1e-13)
        np.testing.assert_allclose(b[1], a[1], rtol=0, atol=1e-10)


def test_mujoco_engine_leaves_out_coulomb_friction_and_says_so():
    xml = (ROOT / "urdf/puma560.urdf").read_text()
    model = load(xml)
    assert make_engine("mujoco", model, DT, xml).coulomb_dropped
    assert not make_engine("mujoco", model.scaled(friction=0.0), DT, xml).coulomb_dropped
    m, _ = mujoco_engine.compile_urdf(xml, model, DT)
    assert not m.dof_frictionloss.any()


# ---------------------------------------------------------------- what both engines share
@pytest.fixture(params=["robodyn", "mujoco"])
def puma(request):
    xml = (ROOT / "urdf/puma560.urdf").read_text()
    model = load(xml)
    return make_engine(request.param, model, DT, xml), model


def test_efforts_beyond_the_limits_are_clamped_and_counted(puma):
    engine, model = puma
    q = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(engine.applied(np.full(6, 1e6)), model.effort_limit)
    np.testing.assert_array_equal(engine.applied(-np.full(6, 1e308)), -model.effort_limit)
    tau = model.gravity_torques(q)
    engine.step(q, np.zeros(6), tau)
    assert engine.clamped == 0
    engine.step(q, np.zeros(6), np.full(6, 1e6))
    assert engine.clamped == 1


def test_a_runaway_command_never_gives_an_absurd_state(puma):
    # issue 12: [1e6]*6 and a burst of 1e308/1e200 made positions of 1e42 rad, then NaN
    engine, model = puma
    q, qd = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0]), np.zeros(6)
    burst = np.array([1e308, -1e200, 1e6, -1e308, 1e200, -1e6])
    commands = [np.full(6, 1e6)] * 1000 + [burst] * 500
    slack = 0.03 if engine.name == "mujoco" else 0.0  # MuJoCo's limits are soft: an impact sinks in
    for tau in commands:
        q, qd = engine.step(q, qd, tau)
        assert np.all(np.isfinite(q)) and np.all(np.isfinite(qd))
        assert np.all(q >= model.lower - slack) and np.all(q <= model.upper + slack)
        assert np.abs(qd).max() < 100.0
    assert engine.clamped == len(commands)
    assert engine.stopped > 0


def test_the_builtin_stop_holds_the_joint_on_the_limit():
    model = load((ROOT / "urdf/planar2.urdf").read_text())
    engine = make_engine("robodyn", model, DT)
    q, qd = np.array([model.upper[0] - 1e-3, 0.0]), np.array([2.0, 0.0])
    q, qd = engine.step(q, qd, np.array([model.effort_limit[0], 0.0]))
    assert q[0] == model.upper[0] and qd[0] == 0.0 and engine.stopped == 1
    q, qd = engine.step(q, qd, np.array([-model.effort_limit[0], 0.0]))  # away from the stop: free
    assert q[0] < model.upper[0] and qd[0] < 0.0 and engine.stopped == 1


def test_a_failed_step_raises_instead_of_returning_garbage(puma):
    engine, _ = puma
    with pytest.raises(StepError):
        engine.step(np.full(6, np.nan), np.zeros(6), np.zeros(6))
    assert not Path("MUJOCO_LOG.TXT").exists()


def test_a_singular_mass_matrix_is_a_step_error():
    model = load((ROOT / "urdf/planar2.urdf").read_text()).scaled(mass=0.0)
    with pytest.raises(StepError, match="positive definite"):
        make_engine("robodyn", model, DT).step(np.zeros(2), np.zeros(2), np.zeros(2))


def test_missing_mujoco_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(mujoco_engine, "mujoco", None)
    xml = (ROOT / "urdf/planar2.urdf").read_text()
    with pytest.raises(ImportError, match=r"pip install robodyn_ros\[mujoco\]"):
        make_engine("mujoco", load(xml), DT, xml)


def test_an_unknown_engine_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="robodyn, mujoco"):
        make_engine("gazebo", load((ROOT / "urdf/planar2.urdf").read_text()), DT)
