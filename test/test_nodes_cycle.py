"""computed_torque_controller's cycle on a thread of its own (issue 44), over real DDS: states
answered while the executor's thread is busy, a collision's reaction sent before the rest of the
collision's work, one answer (the newest state) for a burst after a stall, and the watchdog's safe
command never crossed by a rate cycle's. The test holds the rig's executor (it does not spin it:
its thread is the one a goal's conversion would occupy); a listener spun on a thread of its own
hears the node meanwhile."""
import threading
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import JOINTS, Q0, STATE_TOPIC, JointTrajectoryControllerState, register_laws

pytestmark = pytest.mark.usefixtures("ros")
NODE = "computed_torque_controller"


class Listener:
    """A node on an executor spun by a thread of its own: what it hears, with the monotonic
    time it arrived, while the rig's executor is held."""

    def __init__(self, ns):
        self.node = Node("listener", namespace=ns)
        self.heard = {}
        self._executor = EventsExecutor()
        self._executor.add_node(self.node)
        self._stop = False
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def listen(self, kind, topic):
        heard = self.heard[topic] = []
        self.node.create_subscription(kind, topic, lambda m: heard.append((time.monotonic(), m)),
                                      1000)
        return heard

    def _spin(self):
        while not self._stop:
            self._executor.spin_once(timeout_sec=0.02)

    def close(self):
        self._stop = True
        self._thread.join()
        self._executor.remove_node(self.node)
        self.node.destroy_node()
        self._executor.shutdown()


@pytest.fixture
def listener(rig):
    heard = Listener(rig.ns)
    yield heard
    heard.close()


def _stamp_of(msg):
    return msg.header.stamp.sec, msg.header.stamp.nanosec


def _state(q, qd=None, stamp=None):
    msg = JointState(name=JOINTS, position=list(map(float, q)),
                     velocity=list(map(float, np.zeros(6) if qd is None else qd)))
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp or time.time_ns(), 1_000_000_000)
    return msg


def _ready(rig, listener, **params):
    """The controller up, answering, and the listener hearing its commands and states."""
    ctl = rig.controller(**params)
    commands = listener.listen(Float64MultiArray, f"{rig.ns}/commands")
    states = listener.listen(JointTrajectoryControllerState,
                             f"{rig.ns}/{NODE}/{STATE_TOPIC.removeprefix('~/')}")
    rig.spin_until(lambda: rig.joint_states.get_subscription_count() > 0, what="discovery")
    rig.spin_until(lambda: listener.node.count_publishers(f"{rig.ns}/commands") > 0 and
                   ctl._state._publisher.get_subscription_count() > 0, what="the listener matched")
    ctl._state.refresh()
    rig.joint_states.publish(_state(Q0))
    rig.spin_until(lambda: commands and states, what="a first answer")
    return ctl, commands, states


def test_states_are_answered_while_the_executor_is_busy(rig, listener):
    """The rig's executor held for half a second (as by a goal's conversion): the cycle's thread
    answers the states meanwhile. On one thread for all, none was answered before the executor
    ran again, and then only the ten its queue kept."""
    ctl, commands, states = _ready(rig, listener, state_timeout=5.0)
    before = len(commands)
    for _ in range(50):   # 100 Hz, and the rig's executor is not spun
        rig.joint_states.publish(_state(Q0))
        time.sleep(0.01)
    time.sleep(0.1)
    assert len(commands) - before >= 40, f"{len(commands) - before} of 50 answered"


def test_a_collision_reaction_leaves_before_the_rest_of_the_collision(rig, listener):
    """The detection cycle sends the reaction's command; the contact's location, the wrench, the
    log line, the abort and ~/collision come from the executor's thread after it. With the
    executor held, the reaction arrives and ~/collision does not; it follows once the executor
    runs."""
    ctl, commands, states = _ready(rig, listener, state_timeout=5.0, friction=False,
                                   collision_observer_gain=[50.0], collision_thresholds=[5.0],
                                   collision_reaction="stop")
    events = listener.listen(DiagnosticStatus, f"{rig.ns}/{NODE}/collision")
    rig.spin_until(lambda: ctl._collisions._event_pub.get_subscription_count() > 0,
                   what="the listener matched ~/collision")
    for _ in range(20):   # at rest: the residual stays small
        rig.joint_states.publish(_state(Q0))
        rig.spin_for(0.01)
    assert ctl.loop.collisions == 0
    jump = _state(Q0, [0.5, 0, 0, 0, 0, 0])   # joint 1's momentum from nowhere: a collision
    rig.joint_states.publish(jump)
    deadline = time.monotonic() + 5.0
    while not any(_stamp_of(m) == _stamp_of(jump) for _, m in states):
        assert time.monotonic() < deadline, "no answer to the colliding state"
        time.sleep(0.01)
    time.sleep(0.2)
    assert ctl.loop.collisions == 1 and events == []   # detected, reacted, not yet reported
    rig.spin_until(lambda: events, what="~/collision once the executor runs")
    assert events[0][1].level == DiagnosticStatus.ERROR
    answered = next(t for t, m in states if _stamp_of(m) == _stamp_of(jump))
    assert answered < events[0][0]


@pytest.mark.parametrize("burst", [10, 50])
def test_a_burst_after_a_stall_is_answered_once_by_its_newest_state(rig, listener, burst):
    """The node stalled (its lock held, its executor not spun) while a burst of states arrives:
    once it runs again it answers the newest state, once. With a queue of ten, it answered the
    ten the queue kept, the oldest first: old states, each a command."""
    ctl, commands, states = _ready(rig, listener, state_timeout=5.0)
    rig.spin_for(0.2)
    count = len(states)
    first = time.time_ns()
    stamps = [first + k * 1_000_000 for k in range(burst)]
    with ctl._lock:
        for stamp in stamps:
            rig.joint_states.publish(_state(Q0, stamp=stamp))
        time.sleep(0.3)   # every state of the burst delivered
    time.sleep(0.3)
    rig.spin_for(0.3)
    answered = [_stamp_of(m) for _, m in states[count:]]
    assert answered == [divmod(stamps[-1], 1_000_000_000)], answered
    assert len(commands) == len(states)


SLOW_LAW = '''
import threading
import time
import numpy as np
from robodyn_ros.control import ControlLaw

SLOW = threading.Event()      # set by the test: the next step takes DURATION
STARTED = threading.Event()   # set when it begins
DURATION = 0.4
TORQUE = 0.5

class SlowOnceLaw(ControlLaw):
    parameters = {}
    def _configure(self, params):
        pass
    def compute(self, q, qd, q_des, qd_des, qdd_des, dt):
        if SLOW.is_set():
            SLOW.clear()
            STARTED.set()
            time.sleep(DURATION)
        return np.full(self.dof, TORQUE)
'''


@pytest.fixture
def slow_law(tmp_path, monkeypatch):
    (tmp_path / "robodyn_test_slow_law.py").write_text(SLOW_LAW)
    register_laws(tmp_path, monkeypatch, "robodyn_test_slow_law", slow_once="SlowOnceLaw")
    import robodyn_test_slow_law
    return robodyn_test_slow_law


def test_the_watchdog_never_crosses_a_rate_cycle(rig, listener, slow_law):
    """rate > 0: a cycle whose law takes longer than state_timeout, the states stopped. The
    watchdog's safe command waits for that cycle's command and follows it; no cycle's command
    follows the safe one (they shared the command buffer without a lock: the safe command, then
    the late cycle's torque, which the drive kept)."""
    rig.controller(rate=100.0, state_timeout=0.1, on_timeout="zero", control_law="slow_once")
    commands = listener.listen(Float64MultiArray, f"{rig.ns}/commands")
    rig.spin_until(lambda: rig.joint_states.get_subscription_count() > 0, what="discovery")
    rig.spin_until(lambda: listener.node.count_publishers(f"{rig.ns}/commands") > 0,
                   what="the listener matched")
    slow_law.SLOW.set()
    deadline = time.monotonic() + 10.0
    while not slow_law.STARTED.is_set():   # states until the slow step begins
        assert time.monotonic() < deadline, "the slow step never began"
        rig.joint_states.publish(_state(Q0))
        rig.spin_for(0.01)
    rig.spin_for(1.0)   # the step ends; the watchdog commands
    sent = [np.array(m.data) for _, m in commands]
    safe = [k for k, c in enumerate(sent) if not c.any()]
    assert safe, "no safe command"
    assert all(not c.any() for c in sent[safe[0]:]), "a cycle's torque followed the safe command"
    assert np.allclose(sent[safe[0] - 1], slow_law.TORQUE)   # the slow cycle's, before it
