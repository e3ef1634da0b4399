"""computed_torque_controller as a ROS 2 user drives it, over real DDS: the lifecycle through the
standard services, FollowJointTrajectory and query_state as MoveIt and joint_trajectory_controller
clients use them, the controller state, and every parameter readable in one request."""
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rcl_interfaces.srv import GetParameters, ListParameters
from rclpy.action import ActionClient
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from conftest import JOINTS, Q0

pytestmark = pytest.mark.usefixtures("ros")
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from action_msgs.msg import GoalStatus  # noqa: E402
from control_msgs.msg import JointTolerance  # noqa: E402
from control_msgs.srv import QueryTrajectoryState  # noqa: E402

from robodyn_ros.nodes.common import stamp_parts  # noqa: E402
from robodyn_ros.nodes.lifecycle import UNCONFIGURED  # noqa: E402
from robodyn_ros.nodes.goal_server import MAX_PENDING_GOALS  # noqa: E402

NODE = "computed_torque_controller"


def transition(rig, transition_id):
    return rig.call(ChangeState, f"{NODE}/change_state",
                    ChangeState.Request(transition=Transition(id=transition_id))).success


def state_id(rig):
    return rig.call(GetState, f"{NODE}/get_state", GetState.Request()).current_state.id


def commands_after(rig, publish, seconds=0.3):
    count = len(rig.commands)
    publish()
    rig.spin_for(seconds)
    return rig.commands[count:]


def test_lifecycle_over_the_standard_services(rig, model):
    ctl = rig.controller(autostart=False, on_deactivate="zero", state_timeout=5.0)
    assert state_id(rig) == State.PRIMARY_STATE_UNCONFIGURED and ctl.loop is None
    assert transition(rig, Transition.TRANSITION_CONFIGURE)
    assert state_id(rig) == State.PRIMARY_STATE_INACTIVE
    rig.spin_until(lambda: rig.joint_states.get_subscription_count() > 0, what="discovery")
    assert commands_after(rig, lambda: rig.publish_state(Q0)) == []  # inactive: no command

    q = Q0 + 0.05
    rig.publish_state(q)
    rig.spin_for(0.2)
    assert transition(rig, Transition.TRANSITION_ACTIVATE)
    rig.publish_state(q)  # activate holds the measured position: the law's command is g(q)
    np.testing.assert_allclose(rig.next_command(), model.gravity_torques(q), atol=1e-9)

    count = len(rig.commands)
    assert transition(rig, Transition.TRANSITION_DEACTIVATE)
    rig.spin_until(lambda: len(rig.commands) > count, what="the on_deactivate command")
    assert len(rig.commands) == count + 1 and not rig.commands[-1].any()  # zero, once
    assert commands_after(rig, lambda: rig.publish_state(q)) == []

    assert transition(rig, Transition.TRANSITION_CLEANUP)
    assert state_id(rig) == State.PRIMARY_STATE_UNCONFIGURED and ctl.loop is None
    # the inputs and the action stay for the node's life (ManagedNode._keep says why), parked
    client = ActionClient(rig.probe, FollowJointTrajectory,
                          f"{rig.ns}/{NODE}/follow_joint_trajectory")
    rig.spin_until(client.server_is_ready, what="the action server, unconfigured")
    assert not send(rig, client, goal_to(q, 1.0)).accepted
    hold = rig.call(Trigger, f"{NODE}/hold", Trigger.Request())   # kept too: it refuses
    assert not hold.success and hold.message == UNCONFIGURED
    assert commands_after(rig, lambda: rig.publish_state(q)) == []
    assert transition(rig, Transition.TRANSITION_CONFIGURE)  # and again, from scratch
    assert transition(rig, Transition.TRANSITION_ACTIVATE)
    rig.publish_state(q)   # a measured state: something to deactivate from (none: nothing sent)
    rig.next_command()
    count = len(rig.commands)
    assert transition(rig, Transition.TRANSITION_ACTIVE_SHUTDOWN)
    rig.spin_until(lambda: len(rig.commands) > count, what="the command at shutdown")
    assert not rig.commands[-1].any()   # zero: no rate limit, at once
    assert state_id(rig) == State.PRIMARY_STATE_FINALIZED


RAISING_REQUEST = """
import sys
import rclpy
from rclpy.experimental import EventsExecutor
from robodyn_ros.nodes.messages import FollowJointTrajectory
from robodyn_ros.nodes.goal_server import GoalServer

rclpy.init()
node = rclpy.create_node("raising_request")
server = GoalServer(node, FollowJointTrajectory, "~/follow_joint_trajectory",
                    lambda handle: None, on_refused=lambda: None)
executor = EventsExecutor()
executor.add_node(node)
executor.create_task(server.execute, {"result": None})  # rclpy cannot unpack it: it raises
for _ in range(5):
    executor.spin_once(timeout_sec=0.05)
print("still running")
"""


def test_an_action_request_that_raises_is_logged_and_the_process_runs_on(tmp_path):
    """rclpy 7.1's EventsExecutor ends the process (SIGSEGV) when a task raises (rclpy#1641),
    and the action server handles its requests in tasks: what rclpy lets out is logged and the
    request dropped. In a process of its own: without that, the failure is a crash."""
    run = subprocess.run([sys.executable, "-c", RAISING_REQUEST], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "still running" in run.stdout
    assert "action server: TypeError" in run.stderr


def test_deactivate_holds_gravity_by_default(rig, model):
    rig.controller(state_timeout=5.0)
    rig.spin_until(lambda: rig.joint_states.get_subscription_count() > 0, what="discovery")
    rig.publish_state(Q0 + 0.1)
    rig.next_command()
    count = len(rig.commands)
    assert transition(rig, Transition.TRANSITION_DEACTIVATE)
    rig.spin_until(lambda: len(rig.commands) > count, what="the on_deactivate command")
    np.testing.assert_allclose(rig.commands[-1], model.gravity_torques(Q0 + 0.1), atol=1e-9)


def test_every_declared_parameter_has_a_value_in_one_request(rig):
    rig.controller()
    names = rig.call(ListParameters, f"{NODE}/list_parameters",
                     ListParameters.Request()).result.names
    assert {"effort_limits", "joints", "kp", "constraints.goal", "autostart"} <= set(names)
    values = rig.call(GetParameters, f"{NODE}/get_parameters",
                      GetParameters.Request(names=names)).values
    assert len(values) == len(names)  # rclpy answers nothing at all if one is unset
    assert all(v.type != 0 for v in values)


# wall seconds without a joint state before the loop's controller goes stale: the whole loop runs
# on the test's one thread, which a loaded CI machine once held for a second; the watchdog's own
# test takes 1 s
STATE_TIMEOUT = 5.0


def start_loop(rig, state_timeout=STATE_TIMEOUT):
    """The simulated PUMA under the controller on simulated time, and an action client."""
    sim = rig.simulator(friction_scale=0.0, publish_rate=250.0, lockstep=True,
                        command_timeout=state_timeout)
    ctl = rig.controller(use_sim_time=True, friction=False, state_timeout=state_timeout,
                         **{"constraints.goal": [0.01], "constraints.goal_time": 2.0})
    client = ActionClient(rig.probe, FollowJointTrajectory,
                          f"{rig.ns}/{NODE}/follow_joint_trajectory")
    rig.spin_until(lambda: sim.time_ns > 0.2e9 and client.server_is_ready(), what="the loop")
    return sim, ctl, client


@pytest.fixture
def loop(rig):
    return start_loop(rig)


def goal_to(target, seconds, joints=JOINTS):
    point = JointTrajectoryPoint(positions=list(map(float, target)), velocities=[0.0] * 6)
    point.time_from_start.sec, point.time_from_start.nanosec = int(seconds), int(
        seconds % 1 * 1e9)
    return FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=joints,
                                                                 points=[point]))


def send(rig, client, goal, feedback=None):
    future = client.send_goal_async(goal, feedback_callback=feedback)
    rig.spin_until(future.done, what="the goal response")
    return future.result()


def result_of(rig, handle, timeout=60.0):
    future = handle.get_result_async()
    rig.spin_until(future.done, timeout=timeout, what="the goal's result")
    return future.result()


def test_a_goal_is_reached_within_tolerance_with_feedback(rig, loop):
    sim, ctl, client = loop
    target = Q0 + np.radians([-10.0, 10.0, -20.0, 15.0, 20.0, 30.0])
    feedback = []
    handle = send(rig, client, goal_to(target, 0.5), feedback.append)
    assert handle.accepted
    # query_state while it moves: the reference at a time within the trajectory
    now = ctl.get_clock().now().to_msg()
    query = rig.call(QueryTrajectoryState, f"{NODE}/query_state",
                     QueryTrajectoryState.Request(time=now))
    assert query.success and list(query.name) == JOINTS and len(query.position) == 6
    result = result_of(rig, handle)
    assert result.status == GoalStatus.STATUS_SUCCEEDED
    assert result.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert np.abs(sim.q - target).max() < 0.01
    assert feedback and list(feedback[-1].feedback.joint_names) == JOINTS
    assert len(rig.states) > 10  # ~/controller_state flows
    np.testing.assert_allclose(rig.states[-1].points[0].positions, target, atol=1e-9)


def test_bad_goals_are_rejected(rig, loop):
    sim, ctl, client = loop
    unknown = goal_to(Q0, 1.0, joints=JOINTS[:5] + ["gripper"])
    assert not send(rig, client, unknown).accepted
    assert not send(rig, client, goal_to(Q0 + [0.0, 0.0, 9.0, 0.0, 0.0, 0.0], 1.0)).accepted
    empty = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=JOINTS))
    assert not send(rig, client, empty).accepted
    assert "goal: " in ctl.loop.rejected.last_reason
    late = goal_to(Q0, 1.0)
    late.goal_time_tolerance.nanosec = 1_000_000_000  # a duration no clock gives
    assert not send(rig, client, late).accepted
    assert "goal_time_tolerance" in ctl.loop.rejected.last_reason


def test_cancel_holds_and_a_new_goal_preempts(rig, loop):
    sim, ctl, client = loop
    far = Q0 + np.radians([40.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    first = send(rig, client, goal_to(far, 20.0))
    rig.spin_until(lambda: sim.time_ns > 0.6e9, what="some motion")
    second = send(rig, client, goal_to(far, 20.0))
    aborted = result_of(rig, first)
    assert aborted.status == GoalStatus.STATUS_ABORTED
    assert aborted.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert "preempted" in aborted.result.error_string

    rig.spin_until(lambda: sim.time_ns > 1.2e9, what="more motion")
    cancel = second.cancel_goal_async()
    rig.spin_until(cancel.done, what="the cancel response")
    assert result_of(rig, second).status == GoalStatus.STATUS_CANCELED
    held = sim.q.copy()
    rig.spin_until(lambda: sim.time_ns > 2.5e9, what="holding")
    assert np.abs(sim.q - held).max() < 0.01  # it holds where it was, not the goal
    assert np.abs(sim.q - far).max() > 0.1


def test_a_path_tolerance_violation_aborts_and_holds(rig, loop):
    sim, ctl, client = loop
    goal = goal_to(Q0 + np.radians([30.0, 0.0, 0.0, 0.0, 0.0, 0.0]), 0.3)
    goal.path_tolerance = [JointTolerance(name=j, position=1e-7) for j in JOINTS]
    result = result_of(rig, send(rig, client, goal))
    assert result.status == GoalStatus.STATUS_ABORTED
    assert result.result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED


def test_a_goal_is_aborted_when_the_joint_states_stop_and_a_new_plant_is_held(rig):
    """Issue 23 §1: the joint-state publisher dies mid-goal. Within its watchdog (state_timeout
    1 s, wall time) the goal is aborted with the reason, not left running until it fails; a new
    publisher with another state is held where it is, not driven toward the old goal."""
    sim, ctl, client = start_loop(rig, state_timeout=1.0)
    far = Q0 + np.radians([40.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    handle = send(rig, client, goal_to(far, 20.0))
    rig.spin_until(lambda: sim.time_ns > 0.6e9, what="some motion")
    rig.executor.remove_node(sim)   # its states (and /clock) stop
    stopped = time.monotonic()
    result = result_of(rig, handle, timeout=10.0)
    assert time.monotonic() - stopped < 1.0 + 0.5   # the watchdog's bound and a little
    assert result.status == GoalStatus.STATUS_ABORTED
    assert result.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert "no valid joint state for 1.0 s" in result.result.error_string
    elsewhere = Q0 + np.radians([-5.0, 3.0, 0.0, 0.0, 0.0, 0.0])
    for _ in range(3):
        rig.publish_state(elsewhere, stamp_now=False)
        rig.spin_for(0.05)
    rig.spin_until(lambda: not ctl.loop.stale, what="control to resume")
    np.testing.assert_allclose(ctl.loop.reference[0], elsewhere, atol=1e-12)


def test_a_paused_drive_aborts_the_goal_and_its_backlog_commands_nothing(rig):
    """Issue 23 §1, the drive paused (SIGSTOP) instead of killed: the goal is aborted with the
    reason within the watchdog's bound and /diagnostics says ERROR; after SIGCONT the state the
    drive sampled before the pause arrives 1.5 s old and commands nothing (refused, with its
    age), and control resumes on the fresh states, holding the measured position."""
    ctl = rig.controller(friction=False, state_timeout=0.5)
    reports = []
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)
    client = ActionClient(rig.probe, FollowJointTrajectory,
                          f"{rig.ns}/{NODE}/follow_joint_trajectory")
    drive = subprocess.Popen([sys.executable, str(Path(__file__).with_name("paused_drive.py")),
                              f"{rig.ns}/joint_states", *map(str, Q0)],
                             stdout=subprocess.PIPE, text=True)
    try:
        rig.spin_until(lambda: client.server_is_ready() and len(rig.states) > 50,
                       what="the drive's states answered")
        handle = send(rig, client, goal_to(Q0 + np.radians([40.0, 0, 0, 0, 0, 0]), 20.0))
        rig.spin_for(0.2)
        drive.send_signal(signal.SIGUSR1)
        backlog = tuple(map(int, drive.stdout.readline().split()[1:]))  # its stamp (sec, ns)
        paused = time.monotonic()
        result = result_of(rig, handle, timeout=10.0)
        assert time.monotonic() - paused < 0.5 + 0.5   # the watchdog's bound and a little
        assert result.status == GoalStatus.STATUS_ABORTED
        assert "no valid joint state for 0.5 s" in result.result.error_string
        rig.spin_until(lambda: any(
            s.level == DiagnosticStatus.ERROR and "stale" in s.message
            for r in reports for s in r.status if rig.ns in s.name), what="ERROR on /diagnostics")
        rig.spin_for(max(paused + 1.5 - time.monotonic(), 0.0))
        count = len(rig.states)
        drive.send_signal(signal.SIGCONT)
        rig.spin_until(lambda: len(rig.states) > count + 50, what="control on fresh states")
        answered = {(s.header.stamp.sec, s.header.stamp.nanosec) for s in rig.states}
        assert backlog not in answered
        assert "before it arrived, more than state_timeout 0.5 s: not used" in \
            ctl.loop.rejected.last_reason
        np.testing.assert_allclose(ctl.loop.reference[0], Q0, atol=1e-12)
    finally:
        drive.kill()
        drive.wait()


def test_a_clock_that_jumps_back_aborts_the_goal_and_holds(rig):
    """Issue 23 §2: /clock and the states' stamps go back from ~100 s to 1 s (a simulation
    reset) in the middle of a goal: the goal is aborted with the reason, the trajectory (on the
    old clock's times) is dropped and the controller holds where the arm is, commanding finite
    efforts."""
    ctl = rig.controller(use_sim_time=True, friction=False, state_timeout=STATE_TIMEOUT)
    clock = rig.probe.create_publisher(Clock, "/clock", 10)
    client = ActionClient(rig.probe, FollowJointTrajectory,
                          f"{rig.ns}/{NODE}/follow_joint_trajectory")

    def plant(t, q=Q0):   # the simulation at t: its clock, and the arm at rest at q
        stamp = Clock()
        stamp.clock.sec, stamp.clock.nanosec = stamp_parts(t)
        clock.publish(stamp)
        msg = JointState(name=JOINTS, position=list(map(float, q)), velocity=[0.0] * 6)
        msg.header.stamp = stamp.clock
        rig.joint_states.publish(msg)
        rig.executor.spin_once(timeout_sec=0.002)

    t = [100.0]

    def run_until(condition, what, q=Q0):   # the plant at 1 ms steps
        deadline = time.monotonic() + 30.0
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            t[0] += 0.001
            plant(t[0], q)

    run_until(lambda: client.server_is_ready() and ctl.loop.received is not None
              and rig.commands, "the controller commanding")
    future = client.send_goal_async(goal_to(Q0 + np.radians([20.0, 0, 0, 0, 0, 0]), 5.0))
    run_until(future.done, "the goal's acceptance")
    handle = future.result()
    assert handle.accepted
    steps = iter(range(100))
    run_until(lambda: next(steps, None) is None, "0.1 s of the goal")
    assert ctl.loop.trajectory_span is not None
    result = handle.get_result_async()
    moved = Q0 + 0.01
    t[0] = 1.0   # reset
    run_until(result.done, "the goal's result", moved)
    assert result.result().status == GoalStatus.STATUS_ABORTED
    assert "time went back from 100." in result.result().result.error_string
    assert ctl.loop.trajectory_span is None
    count = len(rig.commands)
    run_until(lambda: len(rig.commands) > count + 10, "commands after the reset", moved)
    np.testing.assert_allclose(ctl.loop.reference[0], moved, atol=1e-12)
    assert np.all(np.isfinite(rig.commands[-1]))


def test_a_burst_of_goals_is_answered_at_once_beyond_the_few_that_may_wait(rig, loop):
    """Goals that arrive faster than they are handled do not pile up: the executor takes (and
    converts) every ready goal before it handles any, so beyond MAX_PENDING_GOALS waiting the
    rest are refused at once, with the reason."""
    sim, ctl, client = loop
    burst = 10   # within the goal service's queue (10): DDS drops none before they are taken
    futures = [client.send_goal_async(goal_to(Q0 + 0.01 * (k % 3), 0.5)) for k in range(burst)]
    time.sleep(0.5)   # every request delivered before the executor takes the first
    rig.spin_until(lambda: all(f.done() for f in futures), what="every goal's answer")
    accepted = sum(f.result().accepted for f in futures)
    assert 1 <= accepted <= MAX_PENDING_GOALS
    assert ctl.loop.rejected.count == burst - accepted
    assert "goals already wait to be handled" in ctl.loop.rejected.last_reason
