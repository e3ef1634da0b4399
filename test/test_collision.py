"""Collision detection, isolation and threshold calibration (control/collision.py), without DDS:
the threshold fit against a linear-programming solver (SciPy's HiGHS) and closed forms, detection
and isolation on hand-made residuals, and a simulated contact on the PUMA — a force on link 3 while
it tracks the 004 motion with a model 5 % off — detected within a few cycles, isolated to link 3,
with thresholds calibrated from a rosbag2 recording of the collision-free motion written by rosbags.
"""
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.optimize import linprog

from robodyn_ros.apps.collision import calibrate
from robodyn_ros.apps.collision import main as collision_command
from robodyn_ros.control.collision import (JOINTS, NODE, SLOPE, STATIC, CollisionDetector, Thresholds,
                                           child_links, fit_thresholds, residuals, thresholds_yaml)
from robodyn_ros.control.laws import ComputedTorque
from robodyn_ros.control.trajectory import JointTrajectory, TrajectorySampler
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.integrate import rk4_step
from robodyn_ros.identification.bag import BagError, write_joint_states

ROOT = Path(__file__).resolve().parents[1]
PUMA_URDF = ROOT / "urdf" / "puma560.urdf"
DT = 1e-3
K_O = 50.0
FLOOR = 0.01   # N m: the least static threshold (the noise-free wrist sees micro-newton-metres)
Q_START = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])   # the 004 motion
Q_GOAL = np.radians([45.0, 30.0, 0.0, 45.0, 60.0, 90.0])


# --- the fit ------------------------------------------------------------------------------------

def lp_envelope(x, y):
    """min a + b mean(x) s.t. a + b x_k >= y_k, a, b >= 0, by SciPy's LP solver."""
    result = linprog([1.0, np.mean(x)], A_ub=-np.column_stack([np.ones_like(x), x]), b_ub=-y,
                     bounds=[(0, None), (0, None)], method="highs")
    assert result.success
    return result.x


@pytest.mark.parametrize("seed", range(8))
def test_fit_is_the_linear_programme_optimum(seed):
    rng = np.random.default_rng(seed)
    # a recording that never rests (seeds 4..7) leaves the optimum at a = 0 more often
    qd = np.abs(rng.normal(0.0, [0.2, 1.0, 3.0], (500, 3))) + (0.5 if seed >= 4 else 0.0)
    offset = [0.0, 0.5][seed % 2]    # without it every point lies under a line through 0: a = 0
    r = rng.uniform(0.0, 1.0, (500, 3)) * (offset + [0.1, 2.0, 0.3] * qd)
    t = fit_thresholds(["a", "b", "c"], r, qd, K_O, margin=1.0)
    for i in range(3):
        a, b = lp_envelope(qd[:, i], r[:, i])
        mean = qd[:, i].mean()
        cost = t.static[i] + t.per_velocity[i] * mean
        assert cost == pytest.approx(a + b * mean, rel=1e-7)
        assert np.all(t.at(qd)[:, i] >= r[:, i] - 1e-12)          # above every sample


def test_fit_closed_forms():
    # samples on the line 2 + 3|q̇| and below it: that line, times the margin
    qd = np.array([[0.0], [1.0], [2.0], [0.5], [1.5]])
    r = np.array([[2.0], [5.0], [8.0], [1.0], [-4.0]])           # |r| is what counts
    t = fit_thresholds(["j"], r, qd, K_O, margin=1.5)
    assert (t.static[0], t.per_velocity[0]) == pytest.approx((3.0, 4.5))
    static = fit_thresholds(["j"], r, qd, K_O, margin=1.5, velocity_term=False)
    assert (static.static[0], static.per_velocity[0]) == (12.0, 0.0)
    assert fit_thresholds(["j"], r, qd, K_O, margin=1.5, floor=4.0).static[0] == 4.0
    # the largest residual at rest: no slope helps
    t = fit_thresholds(["j"], np.array([[9.0], [1.0]]), np.array([[0.0], [3.0]]), K_O, margin=1.0)
    assert (t.static[0], t.per_velocity[0]) == (9.0, 0.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(margin=0.5), "margin"), (dict(margin=np.nan), "margin"),
    (dict(r=np.zeros((3, 2))), "shape"), (dict(gain=0.0), "gain"), (dict(gain=-1.0), "gain"),
    (dict(floor=-1.0), "floor")])
def test_fit_refuses(kwargs, match):
    args = dict(joint_names=["j"], r=np.zeros((3, 1)), qd=np.zeros((3, 1)), gain=K_O, margin=1.5)
    with pytest.raises(ValueError, match=match):
        fit_thresholds(**{**args, **kwargs})


def test_thresholds_refuse_negative_or_nan():
    with pytest.raises(ValueError, match="static.*'b'"):
        Thresholds(("a", "b"), [1.0, -1.0], 0.0, K_O)
    with pytest.raises(ValueError, match="per_velocity"):
        Thresholds(("a", "b"), 1.0, [0.0, np.nan], K_O)


def test_yaml_is_a_parameter_file_of_the_controller():
    t = Thresholds(("j1", "j2"), [1.0, 2.5], [0.5, 0.0], K_O)
    params = yaml.safe_load(thresholds_yaml(t))[NODE]["ros__parameters"]
    assert params == {JOINTS: ["j1", "j2"], STATIC: [1.0, 2.5], SLOPE: [0.5, 0.0],
                      "collision_observer_gain": [K_O, K_O]}


# --- detection and isolation ------------------------------------------------------------------

TWO_LINKS = """<robot name="r"><link name="base"/><link name="upper"/><link name="lower"/>
<joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/></joint>
<joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/></joint></robot>"""


def test_child_links():
    assert child_links(TWO_LINKS, ["elbow", "shoulder"]) == ["lower", "upper"]
    with pytest.raises(ValueError, match="wrist"):
        child_links(TWO_LINKS, ["wrist"])


def test_detection_and_isolation_closed_form():
    t = Thresholds(("j1", "j2", "j3"), [1.0, 1.0, 1.0], [2.0, 0.0, 0.0], K_O)
    detector = CollisionDetector(t, ["l1", "l2", "l3"])
    qd = np.array([1.0, 0.0, 0.0])
    assert detector.check(0.0, np.array([2.9, -0.9, 1.0]), qd) is None   # 2.9 < 1 + 2·1; 1.0 not > 1
    assert detector.check(0.0, np.array([np.nan, 0.0, 0.0]), qd) is None
    event = detector.check(1.25, np.array([3.5, -1.5, 0.2]), qd)
    assert (event.joint, event.link, event.crossing) == ("j2", "l2", ("j1", "j2"))
    np.testing.assert_array_equal(event.thresholds, [3.0, 1.0, 1.0])
    assert "l2" in event.reason and "j2" in event.reason and "1.250 s" in event.reason
    # while the event lasts (some residual beyond its threshold) an earlier joint crossing moves
    # nothing, a later one moves the isolation however late, not the time; once every residual is
    # back within its threshold the event has ended and nothing moves it
    assert detector.check(1.252, np.array([9.0, 0.0, 0.0]), qd) is event and not detector.moved
    moved = detector.check(1.75, np.array([9.0, 0.0, -7.0]), qd)
    assert (moved.time, moved.joint, moved.link, moved.isolated_time) == (1.25, "j3", "l3", 1.75)
    assert detector.moved and moved.ended is None
    assert detector.check(1.751, np.array([9.0, 0.0, -7.0]), qd) is moved and not detector.moved
    ended = detector.check(1.76, np.zeros(3), qd)
    assert ended.ended == 1.76 and ended.link == "l3"
    short = CollisionDetector(t, ["l1", "l2", "l3"])
    first = short.check(1.25, np.array([3.5, -1.5, 0.2]), qd)
    over = short.check(1.26, np.zeros(3), qd)
    assert over.ended == 1.26 and over.link == first.link == "l2"
    assert short.check(1.27, np.array([0.0, 0.0, -7.0]), qd) is over and not short.moved
    detector.reset()
    assert detector.check(3.0, np.zeros(3), qd) is None
    assert detector.check(3.0, np.array([0.0, 0.0, -7.0]), qd).link == "l3"


def test_reason_is_bounded():
    n = 5000
    names = tuple(f"joint_with_a_long_name_{i}" for i in range(n))
    detector = CollisionDetector(Thresholds(names, 1.0, 0.0, K_O), names)
    event = detector.check(0.0, np.full(n, 2.0), np.zeros(n))
    assert event.joint == names[-1] and len(event.reason) <= 1000


# --- a simulated contact ----------------------------------------------------------------------

def puma():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        return RobotModel.from_urdf(PUMA_URDF).scaled(friction=0.0)


def point_jacobian(model, q, link, point):
    """J (3 x n) of the velocity of ``point`` (in the frame of ``link``): J_v − [R p]× J_ω."""
    J = model.frame_jacobian(q, link)
    arm = model.frame_pose(q, link)[:3, :3] @ point
    skew = np.array([[0.0, -arm[2], arm[1]], [arm[2], 0.0, -arm[0]], [-arm[1], arm[0], 0.0]])
    return J[:3] - skew @ J[3:]


def simulate(model, plant, duration, push=None):
    """The plant tracking the 004 motion (3 s quintic) under computed torque with ``model``;
    ``push`` = (start time, joint, point in the frame of the body it moves, force in the base
    frame there), held over each step as the torque is. Returns
    t, q, qd, the applied torque held over each step (row k: over the step ending at k)."""
    sampler = TrajectorySampler(model.joint_names, Q_START)
    sampler.set_trajectory(JointTrajectory(model.joint_names, [3.0], [Q_GOAL], [np.zeros(6)],
                                           [np.zeros(6)]), 0.0)
    law = ComputedTorque(model, {"kp": 100.0, "kd": 20.0})
    steps = int(round(duration / DT))
    q, qd = np.zeros((steps + 1, 6)), np.zeros((steps + 1, 6))
    held = np.zeros((steps + 1, 6))
    q[0] = Q_START
    for k in range(steps):
        tau = law.compute(q[k], qd[k], *sampler.sample(k * DT), DT).copy()
        external = np.zeros(6)
        if push is not None and k * DT >= push[0]:
            external = point_jacobian(plant, q[k], push[1], push[2]).T @ push[3]
        q[k + 1], qd[k + 1] = rk4_step(plant, q[k], qd[k], tau + external, DT)
        held[k + 1] = tau
    return np.arange(steps + 1) * DT, q, qd, held


@pytest.fixture(scope="module")
def contact_case(tmp_path_factory):
    model = puma()
    plant = model.scaled(mass=1.05)   # the controller's and observer's model is 5 % light
    free = simulate(model, plant, 3.5)
    bag = write_joint_states(tmp_path_factory.mktemp("bag") / "free", free[0], model.joint_names,
                             free[1], velocity=free[2], effort=free[3])
    pushed = simulate(model, plant, 3.5, push=(1.5, "joint_3", np.array([0.2, 0.0, 0.0]),
                                                np.array([0.0, 0.0, -80.0])))
    return model, free, bag, pushed


def test_calibrated_from_a_bag_silent_on_the_recording_and_detects_the_contact(contact_case):
    model, free, bag, pushed = contact_case
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        result = calibrate(bag, PUMA_URDF, gain=K_O, friction=False, floor=FLOOR)
    # the bag holds what the arrays held: the same residuals, and thresholds above every one
    np.testing.assert_allclose(result.residuals, residuals(model, *free, K_O, friction=False),
                               atol=1e-12)
    thresholds = result.thresholds
    assert np.all(np.abs(result.residuals) < thresholds.at(free[2]))
    assert thresholds.static[1] > 1.0             # the 5 % mass error is what it sees
    assert thresholds.static.min() == FLOOR
    links = child_links(PUMA_URDF, model.joint_names)
    detector = CollisionDetector(thresholds, links)
    t, q, qd, tau = pushed
    r = residuals(model, t, q, qd, tau, K_O, friction=False)
    events = [detector.check(t[k], r[k], qd[k]) for k in range(len(t))]
    first = next(e for e in events if e)
    # the force acts from the step that starts at 1.5 s; r is first-order: within a few cycles
    assert 1.5 < first.time <= 1.5 + 0.005
    # joint 2 bears most of the push and crosses first; joint 3 a few cycles later; none after it
    assert events[-1].joint == "joint_3" and events[-1].link == links[2] == "link_3"
    assert events[-1].isolated_time <= 1.5 + 0.010 and events[-1].ended is None   # still pushed


def test_the_calibrate_command_writes_the_parameter_file_the_controller_loads(contact_case,
                                                                            tmp_path, capsys):
    _, _, bag, _ = contact_case
    out = tmp_path / "thresholds.yaml"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        status = collision_command(["calibrate", str(bag), "--urdf", str(PUMA_URDF), "--gain",
                                    str(K_O), "--no-friction", "--floor", str(FLOOR), "-o", str(out)])
        expected = calibrate(bag, PUMA_URDF, gain=K_O, friction=False, floor=FLOOR).thresholds
    assert status == 0
    values = yaml.safe_load(out.read_text())[NODE]["ros__parameters"]
    np.testing.assert_allclose(values[STATIC], expected.static, rtol=1e-12)
    np.testing.assert_allclose(values[SLOPE], expected.per_velocity, rtol=1e-12)
    assert values[JOINTS] == list(expected.joint_names)
    assert "max |r|" in capsys.readouterr().err
    assert collision_command(["calibrate", str(tmp_path / "missing"), "--urdf", str(PUMA_URDF)]) == 2


def test_torque_conventions_agree(contact_case):
    """The command answering state k (acting over the next step) is the held torque of k + 1."""
    model, (t, q, qd, held), _, _ = contact_case
    command = np.vstack([held[1:], held[-1:]])
    np.testing.assert_array_equal(residuals(model, t, q, qd, command, K_O, torque="command"),
                                  residuals(model, t, q, qd, held, K_O))


def test_calibrate_needs_effort(tmp_path):
    t = np.arange(200) * DT
    bag = write_joint_states(tmp_path / "no_effort", t, puma().joint_names, np.zeros((200, 6)),
                             velocity=np.zeros((200, 6)))
    with pytest.raises(BagError, match="no effort"):
        calibrate(bag, PUMA_URDF)


@pytest.mark.parametrize("change, match", [
    (dict(t=np.array([0.0, 1.0, 1.0])), "increase"), (dict(torque="measured"), "torque"),
    (dict(q=np.zeros((3, 5))), r"q, qd, tau \(N, 6\)")])
def test_residuals_refuse(change, match):
    args = dict(model=puma(), t=np.array([0.0, 1.0, 2.0]), q=np.zeros((3, 6)), qd=np.zeros((3, 6)),
                tau=np.zeros((3, 6)), gain=K_O)
    with pytest.raises(ValueError, match=match):
        residuals(**{**args, **change})


def test_the_command_floors_a_noise_free_recording_at_what_a_drive_knows(contact_case, tmp_path,
                                                                         capsys):
    # issue 46: a simulated recording gave the wrist thresholds of 0.0003 N m, which no arm can
    # use; by default a_i is at least 1 % of the joint's effort limit, read here from the URDF's
    # own <limit effort> and not through our model
    import xml.etree.ElementTree as ET
    _, _, bag, _ = contact_case
    limits = {j.get("name"): float(j.find("limit").get("effort"))
              for j in ET.parse(PUMA_URDF).getroot().findall("joint") if j.find("limit") is not None}
    out = tmp_path / "thresholds.yaml"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        assert collision_command(["calibrate", str(bag), "--urdf", str(PUMA_URDF), "--gain", str(K_O),
                                  "--no-friction", "-o", str(out)]) == 0
        fitted = calibrate(bag, PUMA_URDF, gain=K_O, friction=False, floor=0.0).thresholds
    values = yaml.safe_load(out.read_text())[NODE]["ros__parameters"]
    floor = np.array([0.01 * limits[j] for j in values[JOINTS]])
    np.testing.assert_allclose(values[STATIC], np.maximum(fitted.static, floor), rtol=1e-12)
    wrist = [j for j, a in zip(values[JOINTS], fitted.static) if a < 0.01 * limits[j]]
    assert wrist and fitted.static.min() < 1e-2           # what the recording alone asked for
    err = capsys.readouterr().err
    note = next(line for line in err.splitlines() if "note:" in line)
    assert all(j in note for j in wrist) and "effort limit" in note
    # a floor per joint, and a wrong count named
    assert collision_command(["calibrate", str(bag), "--urdf", str(PUMA_URDF), "--no-friction",
                              "--floor", "1", "2", "-o", str(out)]) == 2
    assert "2 values for the 6 joints" in capsys.readouterr().err
