"""The drive's parameters reach the nodes over real DDS (the behaviour itself: test_drive_loop.py,
test_sim_drive.py): arm_simulator's drive adds gravity and counts rate violations, the controller
with drive_compensates holds the arm still behind it, its rate limit keeps a set point's step
within 1000 N m/s, and both say so on /diagnostics; the deactivation reaches its command in steps
within the limit."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from trajectory_msgs.msg import JointTrajectoryPoint

from conftest import Q0, wait_for_subscriber

pytestmark = pytest.mark.usefixtures("ros")
RATE = 1000.0


def values(reports, name):
    """The last /diagnostics values of the status named ``name`` (a dict; {} before one)."""
    for report in reversed(reports):
        for status in report.status:
            if status.name.endswith(name):
                return {kv.key: kv.value for kv in status.values}
    return {}


def test_behind_the_simulated_drive_the_controller_holds_and_keeps_the_rate(rig):
    reports = []
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)
    # a command every drive cycle (1 ms), as a Franka takes them: at 250 Hz each command would
    # step the torque once in 4 ms, which the drive, judging each 1 ms, counts as 4 times the rate
    sim = rig.simulator(friction_scale=0.0, publish_rate=1000.0, lockstep=True, command_timeout=5.0,
                        drive_compensates=["gravity"], drive_mass_scale=1.0,
                        drive_rate_limit=[RATE], diagnostic_period=0.2)
    ctl = rig.controller(use_sim_time=True, friction=False, state_timeout=5.0,
                         drive_compensates=["gravity"], effort_rate_limit=[RATE],
                         diagnostic_period=0.2)
    rig.spin_until(lambda: sim.time_ns > 0.3e9 and len(rig.commands) > 20, what="the loop")
    assert np.abs(sim.q - Q0).max() < 1e-6   # gravity once: nothing lifts or drops the arm
    assert np.abs(rig.commands[-1]).max() < 1e-6   # the drive holds it all
    reference = rig.probe.create_publisher(JointTrajectoryPoint,
                                           f"{rig.ns}/computed_torque_controller/reference", 10)
    wait_for_subscriber(rig, reference)
    reference.publish(JointTrajectoryPoint(positions=(Q0 + 0.05).tolist()))   # a step
    rig.spin_until(lambda: ctl.loop.rate_limits.count > 0, what="the rate limit acting")
    rig.spin_until(lambda: int(values(reports, "computed_torque_controller").get(
        "rate limits (total)", 0)) > 0, what="the rate limits on /diagnostics")
    rig.spin_until(lambda: "drive rate violations (total)" in values(reports, "arm_simulator"),
                   what="the drive on the simulator's /diagnostics")
    assert values(reports, "arm_simulator")["drive rate violations (total)"] == "0"
    assert sim.drive.violations == 0 and sim.drive.peak_rate <= RATE * (1 + 1e-9)
    reference.publish(JointTrajectoryPoint(positions=(Q0 - 0.05).tolist()))   # another step,
    rig.spin_until(lambda: np.abs(rig.commands[-1]).max() > 3.0, what="a command far from 0")
    count = len(rig.commands)   # and deactivated in the middle of it
    ctl.trigger_deactivate()   # on_deactivate hold_gravity: 0 behind the drive, reached in steps
    rig.spin_until(lambda: len(rig.commands) > count and np.abs(rig.commands[-1]).max() < 1e-9,
                   what="the deactivation's last step")
    steps = np.array(rig.commands[count - 1:])
    assert len(steps) > 2 and np.abs(np.diff(steps, axis=0)).max() <= RATE * 1e-3 * (1 + 1e-9)
