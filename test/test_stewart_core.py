"""The stewart_platform node's logic without ROS (robodyn_ros.stewart.force_loop): targets
accepted, rejected or refused with their reason, forces withheld beyond the limits and resumed,
enable/disable, the limits validated together. A fake clock, no DDS, milliseconds per test.

Expected forces come from StewartPlatform.inverse_dynamics, which test_stewart_dynamics checks
against physics (power balance, Fichter's statics, every body's equations); here the question is
which forces the loop hands out, when, and why not."""
import dataclasses
import math
import re

import numpy as np
import pytest
from stewart_cases import GOOD, det_h, good_forces, platform, singular_pose_on_path_iii

from robodyn_ros.spatial import rotations
from robodyn_ros.stewart.force_loop import (LEG_NAMES, MAX_WRENCH, Disabled, ForceLoop, Forces,
                                            Idle, Level, Limits, Rejection, Withheld)
from robodyn_ros.apps.stewart_path import PAPER_PATHS
from robodyn_ros.spatial.trajectory import PoseTrajectory

LIMITS = Limits(condition_warning=1.0e3, condition_limit=1.0e4, force_limit=0.0,
                quaternion_tolerance=1.0e-3)   # the node's defaults
Z3 = np.zeros(3)


class FakeClock:
    def __init__(self, t=100.0):
        self.t = t

    def __call__(self):
        return self.t


def make_loop(sp=None, clock=None, **limits):
    return ForceLoop(sp or platform(), dataclasses.replace(LIMITS, **limits), clock or FakeClock())


def good_setpoint(loop):
    g = GOOD
    return loop.setpoint(g["t"], rotations.matrix_quaternion(g["R"]), g["v"], g["w"], g["a"],
                         g["al"])


def assert_serving_good(loop, wrench=(Z3, Z3)):
    e = loop.evaluate()
    assert isinstance(e, Forces), e
    assert np.allclose(e.result.forces, good_forces(platform(), wrench), rtol=1e-9, atol=1e-9)


def test_no_target_nothing_to_publish():
    e = make_loop().evaluate()
    assert isinstance(e, Idle) and e.level is Level.OK and e.message == "no target yet"


def test_accepted_setpoint_and_wrench_give_the_inverse_dynamics_forces():
    sp, loop = platform(), make_loop()
    assert good_setpoint(loop) is None
    e = loop.evaluate()
    assert isinstance(e, Forces) and e.level is Level.OK and e.message == "ok"
    assert np.allclose(e.result.forces, good_forces(sp), rtol=1e-9, atol=1e-9)
    assert np.allclose(e.result.leg_lengths, sp.inverse_kinematics(GOOD["t"], GOOD["R"]).lengths)
    assert e.values["condition_number"] == pytest.approx(e.result.condition_number)
    assert e.values["max_abs_force"] == pytest.approx(np.abs(good_forces(sp)).max())
    wrench = (np.array([10.0, -5.0, 20.0]), np.array([1.0, 2.0, -1.0]))
    assert loop.external_wrench(*wrench) is None
    assert_serving_good(loop, wrench)
    assert not np.allclose(good_forces(sp, wrench), good_forces(sp))   # the wrench mattered
    assert loop.external_wrench(Z3, Z3) is None
    assert_serving_good(loop)


def test_malformed_setpoints_are_rejected_and_the_target_kept():
    loop = make_loop()
    good_setpoint(loop)
    cases = {
        "not finite": ([0.2, math.nan, 0.5], [0, 0, 0, 1]),
        "quaternion norm": ([0.2, 0.0, 0.5], [0, 0, 0.5, 0.5]),
        "shape (2,)": ([0.2, 0.0], [0, 0, 0, 1]),
        "not an array of numbers": (["a", "b", "c"], [0, 0, 0, 1]),
        "orientation is not an array of numbers": ([0.2, 0.0, 0.5], [[0, 0], [0]]),
    }
    for reason, (p, q) in cases.items():
        r = loop.setpoint(p, q)
        assert isinstance(r, Rejection) and r.level is Level.WARN and reason in r.reason, r
        assert loop.last_rejection == r
        e = loop.evaluate()   # still serving the previous valid setpoint, warning why
        assert e.level is Level.WARN and str(r) in e.message
        assert_serving_good(loop)
    good_setpoint(loop)   # an accepted target clears the warning
    assert loop.last_rejection is None and loop.evaluate().level is Level.OK


def test_singular_targets_are_refused_as_errors_and_the_target_kept():
    sp, loop = platform(), make_loop()
    t, R = singular_pose_on_path_iii(sp)
    assert sp.inverse_dynamics(t, R, *np.zeros((4, 3))).condition_number > 1e8
    good_setpoint(loop)
    r = loop.setpoint(t, rotations.matrix_quaternion(R))
    assert r.level is Level.ERROR and "condition number" in r.reason
    assert str(r).startswith("setpoint rejected: condition number")
    assert_serving_good(loop)
    # a trajectory reaching through Path III's singularity is refused as a whole, naming the point
    q = [rotations.matrix_quaternion(GOOD["R"]), rotations.matrix_quaternion(R)]
    r = loop.trajectory([0.0, 1.0], np.stack([GOOD["t"], t]), q, *np.zeros((4, 2, 3)))
    assert r.level is Level.ERROR and str(r).startswith("trajectory rejected: point 1: condition")
    assert_serving_good(loop)


def test_forces_are_withheld_beyond_the_limits_never_clipped_and_resume():
    sp, loop = platform(), make_loop()
    good_setpoint(loop)
    cond = loop.evaluate().result.condition_number
    loop.reconfigure({"condition_warning": cond / 4, "condition_limit": cond / 2})
    e = loop.evaluate()
    assert isinstance(e, Withheld) and e.level is Level.ERROR   # no forces in it: never clipped
    assert e.message == f"forces withheld: {e.reason}" and "condition_limit" in e.reason
    loop.reconfigure({"condition_limit": 1e4, "condition_warning": 1e3})
    assert_serving_good(loop)
    # an actuator-force limit below the current forces withholds them too
    peak = np.abs(good_forces(sp)).max()
    loop.reconfigure({"force_limit": peak / 2})
    e = loop.evaluate()
    assert isinstance(e, Withheld) and "force_limit" in e.reason
    assert e.values["max_abs_force"] == pytest.approx(peak)
    loop.reconfigure({"force_limit": 0.0})
    assert_serving_good(loop)
    # between warning and limit: published, with a WARN
    loop.reconfigure({"condition_warning": cond / 2})
    e = loop.evaluate()
    assert isinstance(e, Forces) and e.level is Level.WARN and e.message == "ill-conditioned pose"


def test_a_huge_external_wrench_is_rejected_with_its_reason():
    """A wrench of 1e308 used to be taken: its forces overflowed, and valid setpoints were then
    refused as 'no finite forces (singular pose)'."""
    loop = make_loop()
    good_setpoint(loop)
    for force, moment, reason in [([0.0, 0.0, 1e308], Z3, "force of 1e+308 N beyond 1e+09 N"),
                                  ([1e9, 1e9, 0.0], Z3, "force of 1.414e+09 N beyond"),
                                  (Z3, [0.0, -2e9, 0.0], "moment of 2e+09 N m beyond 1e+09 N m")]:
        r = loop.external_wrench(force, moment)
        assert r.level is Level.WARN and reason in r.reason, r
        assert_serving_good(loop)   # the wrench in use is unchanged
        assert good_setpoint(loop) is None   # and valid setpoints are still taken


def test_the_largest_wrench_accepted_cannot_overflow_the_forces():
    """MAX_WRENCH at the worst poses that may be published: along Path III up to its singularity,
    every pose below the highest condition_limit (1e12) has finite forces under it."""
    sp = platform()
    path, _ = PAPER_PATHS["III"]
    s = path.sample(np.linspace(3.6, 3.7, 2001))
    n = len(s.time)
    wrench = np.tile([MAX_WRENCH, MAX_WRENCH, MAX_WRENCH], (n, 1)) / math.sqrt(3)
    r = sp.inverse_dynamics(*s.pose_args(), wrench, wrench)
    publishable = r.condition_number < 1e12
    assert r.condition_number[publishable].max() > 1e7   # close to the singularity
    assert np.all(np.isfinite(r.forces[publishable]))
    loop = make_loop()
    good_setpoint(loop)
    assert loop.external_wrench(wrench[0], wrench[0]) is None   # |f| = |m| = MAX_WRENCH


def test_overflowing_forces_are_refused_as_overflow_not_as_singular():
    loop = make_loop()
    good_setpoint(loop)
    r = loop.setpoint(GOOD["t"], rotations.matrix_quaternion(GOOD["R"]), Z3, [0.0, 1e160, 0.0])
    assert r.level is Level.ERROR and "forces not finite" in r.reason and "overflow" in r.reason
    assert "singular" not in r.reason
    assert_serving_good(loop)


def test_platform_force_limit_applies_when_the_parameter_is_zero():
    peak = float(np.abs(good_forces(platform())).max())
    sp = dataclasses.replace(platform(), force_limit=peak / 2)
    loop = make_loop(sp)
    r = good_setpoint(loop)
    assert r.level is Level.ERROR and "force_limit" in r.reason
    loop.reconfigure({"force_limit": 1e9})   # the parameter overrides the file
    assert good_setpoint(loop) is None


def quaternions(rotation_matrices):
    return np.array([rotations.matrix_quaternion(R) for R in rotation_matrices])


def pose_trajectory(sp, taus):
    """Knots of Path III at the path times ``taus``, at rest, one second apart."""
    path, _ = PAPER_PATHS["III"]
    s = path.sample(taus)
    return s, (np.arange(len(taus), dtype=float), s.position, quaternions(s.rotation),
               *np.zeros((4, len(taus), 3)))


def test_trajectory_crossing_a_singularity_withholds_forces_and_resumes_by_itself():
    """Two knots of Path III on either side of its singularity are each well-conditioned (accepted),
    but the motion between them must cross det H = 0: there no forces are published, and they come
    back by themselves once the sampled pose is within the limits again."""
    sp, clock = platform(), FakeClock()
    loop = make_loop(clock=clock)
    s, knots = pose_trajectory(sp, [3.4, 3.9])
    assert np.all(sp.inverse_dynamics(*s.pose_args()).condition_number < LIMITS.condition_limit)
    assert det_h(sp, s.position[0], s.rotation[0]) * det_h(sp, s.position[1], s.rotation[1]) < 0
    assert loop.trajectory(*knots) is None
    start = clock.t
    traj = loop.target
    assert isinstance(traj, PoseTrajectory) and loop.trajectory_start == start

    def det(tau):
        x = traj.sample(tau)
        return det_h(sp, x.position, x.rotation)

    lo, hi = 0.0, 1.0   # bisection in trajectory time for the crossing
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if det(lo) * det(mid) < 0 else (mid, hi)
    assert isinstance(loop.evaluate(), Forces)
    clock.t = start + lo
    e = loop.evaluate()
    assert isinstance(e, Withheld) and "condition_limit" in e.reason
    clock.t = start + 1.5   # after the last knot: held there at rest, within the limits
    e = loop.evaluate()
    assert isinstance(e, Forces) and e.level is not Level.ERROR
    rest = sp.inverse_dynamics(s.position[1], s.rotation[1], *np.zeros((4, 3)))
    assert np.allclose(e.result.forces, rest.forces, rtol=1e-9)


def test_trajectory_is_sampled_on_the_clock():
    """Path I as a trajectory: forces at the knots are the inverse dynamics there; between them leg
    lengths and forces stay within the knots' range and the legs move."""
    sp, clock = platform(), FakeClock()
    loop = make_loop(clock=clock)
    path, dtau = PAPER_PATHS["I"]
    sample = path.sample(path.times(dtau))
    r = sp.inverse_dynamics(*sample.pose_args())
    lengths = sp.inverse_kinematics(sample.position, sample.rotation).lengths
    quats = quaternions(sample.rotation)
    rates = (sample.linear_velocity, sample.angular_velocity, sample.linear_acceleration,
             sample.angular_acceleration)
    assert loop.trajectory(sample.time, sample.position, quats, *rates, start=clock.t + 2.0) is None
    start = loop.trajectory_start
    assert start == clock.t + 2.0   # a stamp is the start; 0 is the time of receipt
    e = loop.evaluate()   # before its start: the first pose, at rest
    first = sp.inverse_dynamics(sample.position[0], sample.rotation[0], *np.zeros((4, 3)))
    assert np.allclose(e.result.forces, first.forces, rtol=1e-9)
    for i in (3, len(sample.time) // 2, len(sample.time) - 2):
        clock.t = start + sample.time[i]
        assert np.allclose(loop.evaluate().result.forces, r.forces[i], rtol=1e-7, atol=1e-7)
    legs = []
    for tau in np.linspace(0.0, sample.time[-1], 200):
        clock.t = start + tau
        e = loop.evaluate()
        assert isinstance(e, Forces)
        L, F = e.result.leg_lengths, e.result.forces
        # a leg length is not linear in the pose: between knots 0.1 s apart (position lerped,
        # orientation slerped) it may leave the knots' range, by under a micrometre on this path
        assert np.all(L >= lengths.min(axis=0) - 1e-5) and np.all(L <= lengths.max(axis=0) + 1e-5)
        assert np.all(np.abs(F) <= 1.05 * np.abs(r.forces).max(axis=0))
        legs.append(L)
    assert np.all(np.ptp(legs, axis=0) > 0)   # sampled in time: the legs move along the path
    # an empty trajectory stops it: the pose of the moment, held at rest
    clock.t = start + 0.5 * sample.time[-1]
    here = loop.current_state()
    assert loop.trajectory([], *np.zeros((6, 0, 3))) is None
    clock.t += 10.0
    held = sp.inverse_dynamics(here.position, here.rotation, *np.zeros((4, 3)))
    assert np.allclose(loop.evaluate().result.forces, held.forces, rtol=1e-9)


def test_trajectory_stamp_zero_starts_at_receipt():
    clock = FakeClock(42.0)
    loop = make_loop(clock=clock)
    _, knots = pose_trajectory(platform(), [0.0, 1.0])
    assert loop.trajectory(*knots) is None and loop.trajectory_start == 42.0


def test_leg_setpoint_closes_through_forward_kinematics():
    sp, loop = platform(), make_loop()
    lengths = sp.inverse_kinematics(GOOD["t"], GOOD["R"]).lengths
    r = loop.leg_setpoint(lengths)
    assert r.level is Level.WARN and "no current pose" in r.reason
    good_setpoint(loop)
    t, R = np.array([0.22, 0.03, 0.52]), rotations.rpy_matrix([0.0, 0.05, -0.1])
    lengths = sp.inverse_kinematics(t, R).lengths
    expected = sp.inverse_dynamics(t, R, *np.zeros((4, 3))).forces
    assert loop.leg_setpoint(lengths[::-1], [f"leg{i}" for i in range(6, 0, -1)]) is None
    assert np.allclose(loop.evaluate().result.forces, expected, rtol=1e-7)
    r = loop.leg_setpoint([0.01] * 6)
    assert r.level is Level.WARN and "forward kinematics" in r.reason
    assert np.allclose(loop.evaluate().result.forces, expected, rtol=1e-7)


# m: home, GOOD and the pose below fit, the too-long pose's leg 4 does not
LEG_LIMITS = (0.42, 0.72)


def test_leg_setpoint_obeys_the_leg_length_limits():
    sp = dataclasses.replace(platform(), leg_length_limits=LEG_LIMITS)
    loop = make_loop(sp)
    assert good_setpoint(loop) is None
    # within the limits: accepted through forward kinematics
    t, R = np.array([0.2, 0.0, 0.45]), np.eye(3)
    inside = sp.inverse_kinematics(t, R).lengths
    assert np.all((inside > LEG_LIMITS[0]) & (inside < LEG_LIMITS[1]))
    assert loop.leg_setpoint(inside) is None
    expected = sp.inverse_dynamics(t, R, *np.zeros((4, 3))).forces
    assert np.allclose(loop.evaluate().result.forces, expected, rtol=1e-7)
    good_setpoint(loop)
    # reachable (forward kinematics converges) but leg 4 beyond the upper limit: rejected
    too_long = sp.inverse_kinematics(np.array([0.22, 0.03, 0.52]),
                                     rotations.rpy_matrix([0.0, 0.05, -0.1])).lengths
    assert too_long[3] > LEG_LIMITS[1]
    short = inside.copy()
    short[0] = 0.4   # one leg below the lower limit
    for lengths in (too_long, short):
        r = loop.leg_setpoint(lengths)
        assert r.level is Level.WARN and "outside [0.42, 0.72] m" in r.reason
        assert_serving_good(loop)


def test_malformed_inputs_are_rejected_with_bounded_reasons():
    sp, loop = platform(), make_loop()
    good_setpoint(loop)
    lengths = sp.inverse_kinematics(GOOD["t"], GOOD["R"]).lengths.tolist()
    names = list(LEG_NAMES)
    _, knots = pose_trajectory(sp, [3.0, 3.1])
    twice = (np.zeros(2),) + knots[1:]
    cases = [
        (loop.leg_setpoint, (lengths[:3], names[:3]), "6 positions, got 3"),
        (loop.leg_setpoint, (lengths + [0.5], names + ["leg7"]), "6 positions, got 7"),
        (loop.leg_setpoint, (lengths + [0.5],), "6 positions, got 7"),
        (loop.leg_setpoint, (lengths, ["leg1"] * 6), "names must be"),
        (loop.leg_setpoint, (lengths, names[:5] + ["leg7"]), "names must be"),
        (loop.leg_setpoint, (lengths[:5] + [math.nan], names), "not finite"),
        (loop.leg_setpoint, (lengths[:5] + [-0.5], names), "must be positive"),
        (lambda: loop.trajectory(*knots, start=-5.0), (), "header.stamp is negative"),
        (lambda: loop.trajectory(*twice), (), "strictly increasing"),
        (lambda: loop.trajectory(knots[0], *(k[:1] for k in knots[1:])), (),
         "positions has shape (1, 3), expected (2, 3)"),
        (loop.external_wrench, ([0.0, math.nan, 0.0], Z3), "external wrench rejected: not finite"),
        (loop.external_wrench, (Z3, [1.0, 2.0]), "moment has shape"),
    ]
    for method, args, reason in cases:
        r = method(*args)
        assert isinstance(r, Rejection) and r.level is Level.WARN, (reason, r)
        assert reason in str(r) or reason in r.reason, (reason, r)
        assert_serving_good(loop)
    # 100,000 unknown names: the reason gives their count and the first few, not all of them
    r = loop.leg_setpoint(lengths, [f"joint{i}" for i in range(100_000)])
    assert "names must be" in r.reason and "100000 in all" in r.reason and "joint4'" in r.reason
    assert len(str(r)) <= 1100 and "joint99999" not in r.reason


def test_rejection_reasons_are_bounded_whatever_their_source():
    loop = make_loop()
    r = loop.reject("setpoint", "x" * 1_000_000)
    assert len(r.reason) <= 1000 and "1000000 characters" in r.reason


def test_enable_and_disable():
    loop = make_loop()
    good_setpoint(loop)
    assert loop.enable(False) == "disabled: no forces are published"
    e = loop.evaluate()
    assert isinstance(e, Disabled) and e.level is Level.OK and e.message == "disabled"
    assert e.values["condition_number"] > 1.0   # still evaluated and reported
    loop.reconfigure({"condition_limit": 1.0, "condition_warning": 1.0})
    assert isinstance(loop.evaluate(), Withheld)   # beyond the limits: still an ERROR, disabled too
    loop.reconfigure({"condition_limit": 1e4, "condition_warning": 1e3})
    assert loop.enable(True) == "enabled"
    assert_serving_good(loop)


def test_limits_are_validated_together_before_any_is_applied():
    loop = make_loop()
    with pytest.raises(ValueError, match="condition_warning 100000 > condition_limit 10000"):
        loop.reconfigure({"condition_warning": 1e5})
    # a valid change with an invalid one: neither is applied
    with pytest.raises(ValueError, match="condition_warning"):
        loop.reconfigure({"condition_limit": 5e3, "condition_warning": 1e5})
    assert loop.limits == LIMITS
    bad = [({"force_limit": -1.0}, "negative"), ({"force_limit": "1e3"}, "finite number"),
           ({"condition_limit": True}, "finite number"), ({"force_limit": math.inf}, "finite"),
           ({"condition_warning": 0.5}, "at least 1"), ({"quaternion_tolerance": 1.0}, "[0, 1)"),
           ({"gain": 1.0}, "unknown limits ['gain']")]
    for change, reason in bad:
        with pytest.raises(ValueError, match=re.escape(reason)):
            loop.reconfigure(change)
        assert loop.limits == LIMITS
    loop.reconfigure({"condition_limit": 5e3, "force_limit": 100})
    assert loop.limits.condition_limit == 5e3 and loop.force_limit == 100
