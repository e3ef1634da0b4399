"""What the drive receives from the nodes at the edges, over real DDS (the loop's own behaviour at
every edge: test_drive_cycles.py): a recorder of the commands sent to the drive. The controller
with a rate limit of 1000 N m/s and a 1 ms drive (1 N m a cycle): a stall of the states is held
by a ramp the watchdog's thread sends at the drive's period; a controller configured again goes on
from the command the drive holds; one deactivated (or shut down) before any state sends nothing.
The feed-forward node: the efforts joint_trajectory_controller adds, interpolated as JTC does at
every drive cycle, change by at most rate x period, across a trajectory's start and a
preemption."""
import time
import warnings

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from rclpy.parameter import Parameter
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from conftest import JOINTS, Q0, URDF, wait_for_subscriber
from test_nodes_feedforward import relayed

pytestmark = pytest.mark.usefixtures("ros")
RATE, PERIOD = 1000.0, 1e-3
STEP = RATE * PERIOD
DRIVE = dict(effort_rate_limit=[RATE], drive_period=PERIOD)


def states_for(rig, seconds, q=Q0):
    """A joint state about every millisecond for ``seconds`` (wall), the probe spinning between."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rig.publish_state(q)
        rig.executor.spin_once(timeout_sec=0.001)


def worst_consecutive(commands):
    return float(np.abs(np.diff(np.array(commands), axis=0)).max())


def test_a_stall_is_held_by_a_ramp_at_the_drive_s_period(rig, model):
    """States stop: after state_timeout the watchdog's thread sends on_timeout zero from g(q)
    (some 30 N m) one N m a command, a drive period apart, not in one step."""
    rig.controller(on_timeout="zero", state_timeout=0.1, **DRIVE)
    wait_for_subscriber(rig, rig.joint_states)
    states_for(rig, 0.3)   # the first command rises from 0 at the rate, to g(q)
    rig.spin_until(lambda: len(rig.commands) and np.abs(
        rig.commands[-1] - model.gravity_torques(Q0)).max() < 1e-6, what="g(q) reached")
    count = len(rig.commands)
    stalled = time.monotonic()
    rig.spin_until(lambda: not rig.commands[-1].any(), timeout=5.0, what="zero reached")
    ramp = rig.commands[count - 1:]
    assert worst_consecutive(ramp) <= STEP * (1 + 1e-9)
    assert len(ramp) > np.abs(model.gravity_torques(Q0)).max()   # a step per N m
    # stale after 0.1 s, then some 30 cycles of 1 ms: not one step per 10 ms watchdog period
    assert rig.command_times[-1] - stalled < 0.1 + 0.3


def test_configured_again_the_rate_limit_goes_on_from_what_the_drive_holds(rig, model):
    """Deactivated (hold_gravity: g(q) held), cleaned up, configured and activated again: the
    first command of the new configuration is within one step of what the drive holds, not a
    step from 0."""
    ctl = rig.controller(state_timeout=5.0, **DRIVE)
    wait_for_subscriber(rig, rig.joint_states)
    states_for(rig, 0.3)
    rig.spin_until(lambda: len(rig.commands) and np.abs(
        rig.commands[-1] - model.gravity_torques(Q0)).max() < 1e-6, what="g(q) reached")
    ctl.trigger_deactivate()
    ctl.trigger_cleanup()
    ctl.trigger_configure()
    ctl.trigger_activate()
    count = len(rig.commands)
    states_for(rig, 0.1)
    rig.spin_for(0.2)   # every command, the old configuration's last ones first, delivered
    assert len(rig.commands) > count + 20
    assert worst_consecutive(rig.commands[count - 1:]) <= STEP * (1 + 1e-9)
    np.testing.assert_allclose(rig.commands[-1], model.gravity_torques(Q0), atol=1e-6)


@pytest.mark.parametrize("kind", ["hold_gravity", "zero"])
def test_deactivating_before_any_state_sends_nothing(rig, kind):
    """No measured state: hold_gravity would be g(0), another pose's, and zero would drop what
    the drive holds; the drive keeps what it has."""
    ctl = rig.controller(on_deactivate=kind, **DRIVE)
    rig.spin_until(lambda: ctl.active, what="active")
    ctl.trigger_deactivate()
    rig.spin_for(0.3)
    assert rig.commands == []


# ------------------------------------------------------------------ the feed-forward node

def feedforward(rig, **params):
    from robodyn_ros.nodes.feedforward import EffortFeedforwardNode
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the PUMA data's link-3 inertia is not physical
        return rig.add(EffortFeedforwardNode(namespace=rig.ns, parameter_overrides=[
            Parameter(k, value=v) for k, v in {"urdf_file": URDF, **params}.items()]))


def trajectory(start, points):
    """A trajectory stamped ``start`` (s) through ``points`` [(time_from_start, q)], at rest."""
    msg = JointTrajectory(joint_names=JOINTS)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(start * 1e9), 1_000_000_000)
    for t, q in points:
        msg.points.append(JointTrajectoryPoint(
            positions=list(map(float, q)), velocities=[0.0] * 6, accelerations=[0.0] * 6,
            time_from_start=Duration(sec=int(t), nanosec=round(t % 1 * 1e9))))
    return msg


def jtc_efforts(forwarded, times):
    """The efforts JTC adds at ``times`` (s): each trajectory from its stamp, interpolated
    linearly from the effort in effect at its start to its points, its last held."""
    before, knots = np.zeros(6), None
    for msg in forwarded:
        start = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        if knots is not None:
            before = np.array([np.interp(start, knots[0], knots[1][:, i]) for i in range(6)])
            keep = knots[0] < start
            knots = (np.append(knots[0][keep], start), np.vstack([knots[1][keep], before]))
        else:
            knots = (np.array([start]), before[None])
        at = start + np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                               for p in msg.points])
        knots = (np.concatenate([knots[0], at]),
                 np.vstack([knots[1], [list(p.effort) for p in msg.points]]))
    return np.array([[np.interp(t, knots[0], knots[1][:, i]) for i in range(6)] for t in times])


def test_the_feedforward_efforts_change_within_the_rate_at_every_drive_cycle(rig, model):
    """A trajectory whose first point, 10 ms in, wants g(q) (some 30 N m from JTC's 0), then a
    goal preempting it mid-way for another pose: the efforts JTC adds, at every drive cycle,
    change by at most rate x period; the last points' efforts are NE's own (reached)."""
    feedforward(rig, **DRIVE)
    forwarded, publisher = relayed(rig)
    now = rig.probe.get_clock().now().nanoseconds * 1e-9 + 1.0
    first = trajectory(now, [(0.01, Q0), (0.5, Q0 + 0.3), (1.0, Q0 + 0.3)])
    publisher.publish(first)
    rig.spin_until(lambda: forwarded, what="the first trajectory")
    publisher.publish(trajectory(now + 0.2, [(0.01, Q0 - 0.4), (1.0, Q0 - 0.4)]))
    rig.spin_until(lambda: len(forwarded) == 2, what="the preempting one")
    times = now + PERIOD * np.arange(1500)
    efforts = jtc_efforts(forwarded, times)
    # (times in epoch seconds are rounded to a quarter of a microsecond: 1e-3 of a cycle)
    assert np.abs(np.diff(efforts, axis=0)).max() <= STEP * (1 + 1e-3)
    np.testing.assert_allclose(efforts[-1], model.gravity_torques(Q0 - 0.4), atol=1e-9)


def test_a_state_stamped_ahead_of_the_node_s_clock_commands_nothing(rig):
    """A driver's clock 2 s ahead: its states are refused (no command), counted, and the offset
    of the good ones that follow is on the report: small, negative (the latency)."""
    from sensor_msgs.msg import JointState
    ctl = rig.controller(**DRIVE)
    wait_for_subscriber(rig, rig.joint_states)
    ahead = JointState(name=JOINTS, position=list(map(float, Q0)), velocity=[0.0] * 6)
    for _ in range(5):
        stamp = rig.probe.get_clock().now().nanoseconds * 1e-9 + 2.0
        ahead.header.stamp.sec, ahead.header.stamp.nanosec = divmod(round(stamp * 1e9), 10**9)
        rig.joint_states.publish(ahead)
        rig.spin_for(0.02)
    rig.spin_for(0.2)
    assert rig.commands == [] and ctl.loop.rejected.count == 5
    assert "ahead of this node's clock" in ctl.loop.rejected.last_reason
    states_for(rig, 0.1)
    rig.spin_until(lambda: rig.commands, what="a command")
    values = ctl.loop.report()[2]
    assert values["states stamped ahead, refused (total)"] == 5
    assert -50.0 < values["clock offset, stamp - arrival (ms) median"] <= 0.0
