"""A FollowJointTrajectory goal judged as joint_trajectory_controller judges it, without ROS:
control_msgs/JointTolerance's special values, a goal's tolerances over the defaults, and the
outcome with JTC's error codes."""
import numpy as np
import pytest

from robodyn_ros.control.goal import (GOAL_TOLERANCE_VIOLATED, PATH_TOLERANCE_VIOLATED, SUCCESSFUL,
                                      GoalMonitor, Tolerances, for_goal, resolve)

JOINTS = ["a", "b", "c"]
DEFAULTS = Tolerances.defaults(3, path=0.1, goal=0.01, stopped_velocity=0.05, goal_time=0.5)


@pytest.mark.parametrize("default, given, resolved", [
    (0.1, 0.3, 0.3),    # a positive value is the tolerance
    (0.1, 0.0, 0.1),    # 0 keeps the default
    (0.1, -1.0, 0.0),   # -1 erases it: no check
])
def test_tolerance_values(default, given, resolved):
    assert resolve(default, given) == resolved


def test_an_illegal_tolerance_is_refused():
    with pytest.raises(ValueError, match="illegal tolerance -0.5"):
        resolve(0.1, -0.5)


def test_a_goal_overrides_the_defaults_per_joint():
    tol, why = for_goal(DEFAULTS, JOINTS, path=[("b", 0.2, 0.0)], goal=[("c", -1.0, 0.3)],
                        goal_time=2.0)
    assert why == ""
    np.testing.assert_array_equal(tol.path_position, [0.1, 0.2, 0.1])
    np.testing.assert_array_equal(tol.goal_position, [0.01, 0.01, 0.0])
    np.testing.assert_array_equal(tol.goal_velocity, [0.05, 0.05, 0.3])
    assert tol.goal_time == 2.0
    assert (DEFAULTS.path_position == 0.1).all()  # the defaults are left alone


@pytest.mark.parametrize("path, goal_time, reason", [
    ([("elbow", 0.2, 0.0)], 0.0, "joint 'elbow' of the path_tolerance is not one"),
    ([("a", -3.0, 0.0)], 0.0, "illegal tolerance -3.0"),
    ([], -2.0, "illegal tolerance -2.0"),
])
def test_bad_goal_tolerances_fall_back_to_the_defaults_as_jtc_does(path, goal_time, reason):
    tol, why = for_goal(DEFAULTS, JOINTS, path=path, goal=[], goal_time=goal_time)
    assert tol is DEFAULTS and reason in why and "default tolerances apply" in why


def test_path_tolerance_aborts_before_the_last_point_only():
    monitor = GoalMonitor(DEFAULTS, end_time=10.0, joints=JOINTS)
    assert monitor.check(5.0, [0.09, 0.0, -0.09], np.zeros(3)) is None
    outcome = monitor.check(5.0, [0.0, 0.11, 0.0], np.zeros(3))
    assert outcome.code == PATH_TOLERANCE_VIOLATED and "joint 'b'" in outcome.text
    # from the last point on, the path tolerance no longer applies: the goal's does
    assert monitor.check(10.0, [0.0, 0.11, 0.0], np.zeros(3)) is None


def test_the_goal_succeeds_within_tolerance_and_at_rest():
    monitor = GoalMonitor(DEFAULTS, end_time=10.0, joints=JOINTS)
    assert monitor.check(10.1, [0.005, 0.0, 0.0], [0.0, 0.06, 0.0]) is None  # still moving
    outcome = monitor.check(10.2, [0.005, 0.0, 0.0], [0.0, 0.04, 0.0])
    assert outcome.code == SUCCESSFUL and outcome.succeeded


def test_goal_time_tolerance_aborts_a_goal_not_reached_in_time():
    monitor = GoalMonitor(DEFAULTS, end_time=10.0, joints=JOINTS)
    assert monitor.check(10.5, [0.02, 0.0, 0.0], np.zeros(3)) is None  # exactly goal_time late
    outcome = monitor.check(10.6, [0.02, 0.0, 0.0], np.zeros(3))
    assert outcome.code == GOAL_TOLERANCE_VIOLATED and "exceeding by 0.6" in outcome.text
    patient = GoalMonitor(Tolerances.defaults(3, goal=0.01, goal_time=0.0), 10.0, JOINTS)
    assert patient.check(1e6, [0.02, 0.0, 0.0], np.zeros(3)) is None  # 0: waits for ever


def test_no_tolerance_means_no_check():
    monitor = GoalMonitor(Tolerances.defaults(3, stopped_velocity=0.0), 10.0, JOINTS)
    assert monitor.check(5.0, [1e3] * 3, [1e3] * 3) is None
    assert monitor.check(10.0, [1e3] * 3, [1e3] * 3).code == SUCCESSFUL
