"""computed_torque_controller with adaptive_computed_torque, and arm_simulator's pick-up, over real
DDS (conftest.py: loopback, a domain of this run's own): ~/parameter_estimates and its layout, the
drift on /diagnostics, ~/reset_estimates, estimates kept through a hold and a gain change, the safe
command on deactivation; payload_time at start and set at run time."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from robodyn_ros.identification import standard_parameters

from conftest import Q0

pytestmark = pytest.mark.usefixtures("ros")
NODE = "computed_torque_controller"
PAYLOAD = 2.0


def rows(msg):
    """(names, estimates, model's values) of a ~/parameter_estimates message, by its layout."""
    first, second = msg.layout.dim
    assert (first.label, first.size, first.stride) == ("estimate,model", 2, 2 * second.size)
    assert second.stride == second.size == len(msg.data) // 2
    names = second.label.split(",")
    data = np.array(msg.data).reshape(2, second.size)
    return names, data[0], data[1]


def test_estimates_topic_reset_hold_gain_change_and_deactivate(rig, model):
    rig.simulator(friction_scale=0.0, publish_rate=1000.0, lockstep=True, command_timeout=5.0,
                  payload_mass=PAYLOAD)
    ctl = rig.controller(use_sim_time=True, control_law="adaptive_computed_torque", friction=False,
                         state_timeout=5.0)
    received, reports = [], []
    rig.probe.create_subscription(Float64MultiArray, f"{rig.ns}/{NODE}/parameter_estimates",
                                  received.append, 10)
    rig.probe.create_subscription(DiagnosticArray, "/diagnostics", reports.append, 10)

    # holding the start against the tool's weight, which the model lacks: the mass is learnt
    def mass():
        _, now, start = rows(received[-1])
        return now[0] - start[0]
    rig.spin_until(lambda: received and mass() > 0.9 * PAYLOAD, timeout=90.0,
                   what="the payload mass estimate")
    names, now, start = rows(received[-1])
    last = model.joint_names[-1]
    assert names == [f"{last}.{c}" for c in ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz",
                                             "Iyz", "Izz")]
    np.testing.assert_allclose(start, standard_parameters(model)[50:60], rtol=1e-12, atol=1e-15)
    rig.spin_until(lambda: any(v.key == "payload mass estimate (kg)" and float(v.value) > 1.5
                               for r in reports for s in r.status if s.name.startswith(NODE)
                               for v in s.values), what="the drift on /diagnostics")

    learnt = ctl.loop.law.estimates
    assert rig.call(Trigger, f"{NODE}/hold", Trigger.Request()).success
    assert ctl.set_parameters([Parameter("kd", value=25.0)])[0].successful   # a new law object
    assert ctl.loop.law.params["kd"] == 25.0
    np.testing.assert_allclose(ctl.loop.law.estimates[0], learnt[0], atol=0.05 * PAYLOAD)

    # deactivate: the safe command of any law, g(q) of the model at the last state
    count = len(rig.commands)
    assert rig.call(ChangeState, f"{NODE}/change_state", ChangeState.Request(
        transition=Transition(id=Transition.TRANSITION_DEACTIVATE))).success
    rig.spin_until(lambda: len(rig.commands) > count, what="the on_deactivate command")
    np.testing.assert_allclose(rig.commands[-1], model.gravity_torques(ctl.loop.q), atol=1e-9)
    kept = ctl.loop.law.estimates

    answer = rig.call(Trigger, f"{NODE}/reset_estimates", Trigger.Request())
    assert answer.success and "10 estimates back" in answer.message
    np.testing.assert_array_equal(ctl.loop.law.estimates, start)
    count = len(received)
    rig.spin_until(lambda: len(received) > count + 1, what="estimates after the reset")
    _, now, start_again = rows(received[-1])
    np.testing.assert_array_equal(now, start_again)
    assert abs(kept[0] - start[0]) > 0.5 * PAYLOAD       # what the reset undid


def test_reset_estimates_of_a_law_without_estimates_says_so(rig):
    rig.controller()
    answer = rig.call(Trigger, f"{NODE}/reset_estimates", Trigger.Request())
    assert not answer.success and "ComputedTorque estimates no parameters" in answer.message


def test_simulator_picks_the_payload_up_at_payload_time(rig, model):
    """Held by the bare arm's gravity torque, the arm stays put until payload_time, then sags under
    the payload; payload_time set at run time schedules the pick-up."""
    sim = rig.simulator(friction_scale=0.0, publish_rate=1000.0, lockstep=True,
                        command_timeout=30.0, payload_mass=PAYLOAD, payload_time=0.2)
    publisher = rig.probe.create_publisher(Float64MultiArray, f"{rig.ns}/commands", 10)
    hold = Float64MultiArray(data=model.gravity_torques(Q0).tolist())
    # lockstep: one command per state, the arm's own weight held exactly
    answered = [0]

    def answer(_):
        answered[0] += 1
        publisher.publish(hold)
    rig.probe.create_subscription(JointState, f"{rig.ns}/joint_states",
                                  answer, 10)
    rig.spin_until(lambda: answered[0] and sim.time_ns > 0.15e9, what="0.15 s of simulated time")
    assert np.abs(sim.q - Q0).max() < 1e-9                      # no payload yet
    rig.spin_until(lambda: sim.time_ns > 0.3e9, what="0.3 s of simulated time")
    assert np.abs(sim.q - Q0).max() > 1e-4                      # carrying it: it sags
    # put down (a time in the future), then picked up again at run time
    assert sim.set_parameters([Parameter("payload_time", value=1e3)])[0].successful
    q = sim.q.copy()
    rig.spin_until(lambda: sim.time_ns > 0.4e9, what="0.4 s of simulated time")
    assert sim.engine is sim._engines[0]
    assert sim.set_parameters([Parameter("payload_time", value=0.0)])[0].successful
    rig.spin_until(lambda: sim.time_ns > 0.45e9, what="0.45 s of simulated time")
    assert sim.engine is sim._engines[1] and np.abs(sim.q - q).max() > 0.0
