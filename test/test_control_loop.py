"""The controller's safety behaviour without ROS: ControlLoop with fake clocks, milliseconds each.

Staleness and resume, a failing law, saturation, reconfiguration accepted or refused whole,
joint order, bounded rejection reasons, and the node's watchdog thread on the loop. The node
tests only check that the wiring reaches it.
"""
import threading
import time
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from sensor_msgs.msg import JointState

from robodyn_ros.control import ControlLaw, JointTrajectory, cycle_steps, load_law
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.control.laws import ComputedTorque
from robodyn_ros.control.cycle_timing import CAPACITY
from robodyn_ros.control.loop import (ERROR, OK, UNHEARD, WARN, Accepted, Command, ControlLoop,
                                      Dropped, LawFailure, Rejection, Stale, _Window)
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.plumbing.kernels import interpreted
from robodyn_ros.nodes.controller_state import SerializedState
from robodyn_ros.nodes.messages import JointStateReader
from robodyn_ros.nodes.serialized import SerializedJointState
from robodyn_ros.nodes.watchdog import WatchdogThread
from robodyn_ros.plumbing.reasons import CountedEvent, bounded
from robodyn_ros.plumbing.resources import find_share_file

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the PUMA data's link 3 inertia warns, rightly
    PUMA = RobotModel.from_urdf(str(find_share_file("urdf/puma560.urdf")))
CHAIN = list(PUMA.joint_names)
ORDER = CHAIN[::-1]  # message order differs from the chain's
Q0 = np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0])
GAINS = {"control_law": "computed_torque", "kp": 100.0, "kd": 20.0, "friction": False}


class FakeClock:
    def __init__(self, t=100.0):
        self.t = t

    def __call__(self):
        return self.t


class NanLaw(ControlLaw):
    def _configure(self, params):
        pass

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        return np.full(self.dof, np.nan)


class RaisingLaw(NanLaw):
    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        raise RuntimeError("plugin bug")


class Float32Law(NanLaw):
    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        return np.ones(self.dof, np.float32)


class StringLaw(NanLaw):
    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        return np.array(["effort"] * self.dof)


class DoubledComputedTorque(ComputedTorque):
    """A plugin's law built on computed_torque that computes otherwise."""

    def compute(self, q, qd, q_des, qd_des, qdd_des, dt=0.0):
        return 2.0 * super().compute(q, qd, q_des, qd_des, qdd_des, dt)


def laws(name):
    return {"nan_test": NanLaw, "raising_test": RaisingLaw, "float32_test": Float32Law,
            "string_test": StringLaw, "doubled_test": DoubledComputedTorque}.get(name) \
        or load_law(name)


def make_loop(order=ORDER, timeout=0.1, log=None, max_trajectory_points=10_000,
              position_limit_margin=0.0, **config):
    clock, steady = FakeClock(), FakeClock(0.0)
    loop = ControlLoop(PUMA, JointOrder(CHAIN, order), {**GAINS, **config}, timeout, clock=clock,
                       steady=steady, log=[].append if log is None else log.append, law_class=laws,
                       max_trajectory_points=max_trajectory_points,
                       position_limit_margin=position_limit_margin)
    return loop, clock, steady


def state(loop, q=Q0, qd=np.zeros(6), names=CHAIN, stamp=0.0):
    return loop.set_state(names, q, qd, stamp)


def to_message(values):
    """Chain-order values in the reversed message order used here."""
    return np.asarray(values)[::-1]


def test_first_state_starts_a_hold_and_commands_the_gravity_torque():
    loop, clock, steady = make_loop()
    assert not loop.active and loop.watchdog() is None  # nothing before a state
    assert state(loop) == Accepted()
    command = loop.cycle()
    assert type(command) is Command
    # holding the start with zero error: the command is g(q) (+ nothing), in message order
    np.testing.assert_allclose(command.effort, to_message(PUMA.gravity_torques(Q0)), atol=1e-12)


def test_stale_state_gives_the_on_timeout_command_then_resumes_by_holding():
    loop, clock, steady = make_loop(ki=5.0, integral_limit=1.0)
    state(loop)
    loop.set_reference(to_message(Q0 + 0.1))
    for _ in range(10):  # wind the integral up against the reference
        clock.t += 0.001
        loop.cycle()
    assert np.abs(loop.law.integral).max() > 0.0
    steady.t += 0.1
    assert loop.watchdog() is None  # exactly state_timeout: not yet stale
    steady.t += 1e-6
    stale = loop.watchdog()
    assert isinstance(stale, Stale) and stale.first and not loop.active
    np.testing.assert_allclose(stale.effort, to_message(PUMA.gravity_torques(Q0)), atol=1e-12)
    again = loop.watchdog()
    assert not again.first and np.array_equal(again.effort, stale.effort)
    assert loop.report()[0] == ERROR

    moved = Q0 + 0.3  # the arm sagged while nobody controlled it
    result = state(loop, q=moved)
    assert "resumes" in result.note and loop.active
    assert not loop.law.integral.any()  # the integral wound up before the outage is forgotten
    loop.cycle()
    np.testing.assert_allclose(loop.reference[0], moved)  # holds where it is, not the old target


def test_on_timeout_zero_is_no_effort():
    loop, clock, steady = make_loop(on_timeout="zero")
    state(loop)
    steady.t += 0.2
    assert not loop.watchdog().effort.any()


@pytest.mark.parametrize("law, reason", [("nan_test", "NaN or inf"),
                                         ("raising_test", "raised RuntimeError")])
def test_a_failing_law_gives_the_safe_command_and_is_reported(law, reason):
    lines = []
    loop, clock, steady = make_loop(log=lines, control_law=law)
    state(loop)
    result = loop.cycle()
    assert isinstance(result, LawFailure) and reason in result.reason
    assert np.all(np.isfinite(result.effort))
    np.testing.assert_allclose(result.effort, to_message(PUMA.gravity_torques(Q0)), atol=1e-12)
    assert loop.law_failures == 1 and len(lines) == 1 and reason in lines[0]
    level, message, values = loop.report()
    assert level == ERROR and "failed 1 time" in message
    assert values["control law failures (total)"] == 1


def test_efforts_saturate_at_the_limits_in_message_order_and_are_counted():
    loop, clock, steady = make_loop(effort_limits=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    state(loop)
    assert loop.set_reference(to_message(Q0 + 0.5)) == Accepted()
    effort = loop.cycle().effort
    np.testing.assert_array_equal(np.abs(effort), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert loop.saturations.count == 1 and ORDER[0] in loop.saturations.last_reason
    assert loop.report()[0] == WARN


def test_the_saturation_kernel_is_clip_then_reorder_and_refuses_nan_and_inf():
    source = interpreted(cycle_steps)["saturate_into"]    # the same loop, run by the interpreter
    rng = np.random.default_rng(5)
    for n in (1, 6, 7):
        index = rng.permutation(n)
        limit = rng.uniform(0.5, 2.0, n)
        limit[0] = np.inf                                 # a joint without a limit
        tau = rng.normal(scale=2.0, size=n)
        expected = np.clip(tau, -limit, limit)[index]
        for run in (cycle_steps.SATURATE.call, source):
            out = np.full(n, -7.0)
            assert run(tau, limit, index, out) == np.count_nonzero(np.abs(tau) > limit)
            np.testing.assert_array_equal(out, expected)
            for bad in (np.nan, np.inf, -np.inf):
                spoiled = tau.copy()
                spoiled[-1] = bad
                out = np.full(n, -7.0)
                assert run(spoiled, limit, index, out) == -1 and np.all(out == -7.0)


def test_a_state_of_other_shapes_is_refused_before_it_is_read():
    loop, clock, steady = make_loop()
    for position, velocity in ((np.zeros((6, 2)), np.zeros(6)), (np.zeros(6), np.zeros(5)),
                               (np.zeros(7), np.zeros(7)), ([[0.0] * 6], np.zeros(6))):
        result = loop.set_state(CHAIN, position, velocity)
        assert isinstance(result, Rejection) and "a position and a velocity per name" in result.reason
    assert loop.received is None                          # nothing was taken
    assert loop.set_state(CHAIN, list(Q0), (0.0,) * 6) == Accepted()   # lists and tuples are


def test_taking_a_state_picks_the_chain_joints_and_flags_nan_and_inf():
    source = interpreted(cycle_steps)["take_state"]
    rng = np.random.default_rng(6)
    position, velocity = rng.normal(size=(2, 9))      # a message with more joints than the chain
    match = rng.permutation(9)[:6]
    for run in (cycle_steps.TAKE_STATE.call, source):
        q, qd = np.empty(6), np.empty(6)
        assert run(position, velocity, match, q, qd)
        np.testing.assert_array_equal(q, position[match])
        np.testing.assert_array_equal(qd, velocity[match])
        for values in (position, velocity):
            for bad in (np.nan, np.inf):
                spoiled = values.copy()
                spoiled[match[3]] = bad
                given = (spoiled, velocity) if values is position else (position, spoiled)
                assert not run(*given, match, q, qd)
        unread = position.copy()
        unread[np.setdiff1d(np.arange(9), match)] = np.nan  # entries of other joints: not read
        assert run(unread, velocity, match, q, qd)


def test_the_ordinary_state_is_taken_checked_and_sampled_by_its_kernel_as_by_its_source():
    """cycle_steps.take_ordinary_state's machine code against its source run by the
    interpreter: the state taken, its stamp checked against the newest one taken and the
    clock, and only then the reference sampled at it, as the sampler samples it."""
    loop, clock, _ = make_loop()
    state(loop, stamp=clock.t)
    far = Q0 + np.radians([20.0, -10.0, 15.0, 30.0, -30.0, 40.0])
    assert isinstance(loop.set_trajectory(JointTrajectory(CHAIN, [0.5], [far])), Accepted)
    raw, stamp = _message(Q0 + 0.01, np.full(6, 0.5), clock.t + 0.2)
    reader = JointStateReader(JointState)
    reader.read(raw)
    source = interpreted(cycle_steps)["take_ordinary_state"]
    expected = np.empty((3, 6))
    loop._sampler.sample_into(stamp, expected)
    for newest, now, taken in [(clock.t, clock.t + 0.25, True),    # newer, and fresh
                               (stamp, clock.t + 0.25, False),     # the newest again
                               (clock.t, clock.t + 0.35, False),   # stamped 0.15 s before now
                               (clock.t, clock.t + 0.15, False)]:  # 0.05 s ahead of now
        results = []
        for run in (cycle_steps.TAKE_ORDINARY_STATE.call, source):
            q, qd, parts, samples = np.empty(6), np.empty(6), np.zeros(2, np.int64), np.zeros((3, 6))
            times = np.array([now, newest, 0.1, 0.0, 0.02])
            done = run(raw, reader.names_bytes, loop.match_of(CHAIN), q, qd, parts, times,
                       *loop._sampler.pieces, samples)
            results.append((done, q.tolist(), qd.tolist(), parts.tolist(), times.tolist(),
                            samples.tolist()))
        assert results[0] == results[1]
        done, q, qd, parts, times, samples = results[0]
        assert done == taken and q == (Q0 + 0.01).tolist() and qd == [0.5] * 6
        assert times[1] == (stamp if taken else newest)
        assert samples == (expected.tolist() if taken else np.zeros((3, 6)).tolist())


def test_the_match_of_the_last_states_names_is_given_for_those_names_only():
    """What an adapter taking the next state from its bytes picks the chain's joints by."""
    loop, clock, steady = make_loop()
    names = list(to_message(CHAIN))
    assert loop.match_of(names) is None                   # no state yet
    assert loop.set_state(names, to_message(Q0), np.zeros(6)) == Accepted()
    np.testing.assert_array_equal(np.asarray(names)[loop.match_of(list(names))], CHAIN)
    assert loop.match_of(names[::-1]) is None             # other names: read them
    loop.apply(loop.prepare({"collision_observer_gain": [50.0], "collision_torque": "measured"}))
    assert loop.match_of(names) is None                   # its effort is taken: read it
    loop.apply(loop.prepare({"collision_torque": "command"}))
    assert loop.match_of(names) is not None
    short = names[:-1]
    assert isinstance(loop.set_state(short, Q0[:-1], np.zeros(5)), Rejection)
    assert loop.match_of(short) is None and loop.match_of(names) is None


def _message(q, qd, stamp, names=CHAIN):
    """A serialized JointState of ``names`` at ``stamp`` (s, rounded to the nanosecond); its
    stamp as a loop is given it (s)."""
    message = SerializedJointState(names, JointState)
    message.position[:], message.velocity[:] = q, qd
    sec, nanosec = divmod(round(stamp * 1e9), 1_000_000_000)
    return message.write(sec, nanosec), sec + 1e-9 * nanosec


def _answer(loop, raw, state_out=UNHEARD):
    """loop.answer of the serialized JointState ``raw``, its names' bytes as a node's reader
    keeps them (having read a state of those names)."""
    reader = JointStateReader(JointState)
    reader.read(raw)
    answer = loop.answer(raw, reader.names, reader.names_bytes, reader.stamp, state_out)
    assert answer is None or tuple(reader.stamp) == tuple(reader.read(raw)[0])
    return answer


def _window(loop):
    """What a cycle leaves in the loop that the next reads or reports (the timings aside)."""
    w = loop._window
    return (loop.q.tolist(), loop.qd.tolist(), loop.stamp, loop.time, loop.received, loop.stale,
            loop._last_t, loop._latest, w.cycles, loop.saturations.count,
            loop.law_failures, loop.rejected.count, loop.collisions, loop._applied.tolist(),
            None if loop.guard is None else loop.guard.residual.tolist(),
            None if loop.reference is None else [r.tolist() for r in loop.reference])


def _written(state: SerializedState) -> tuple:
    """The stamp and the fields a cycle writes into a serialized controller state (the bytes
    between them are what its serializer's buffer held)."""
    body, starts, head = state.out
    return tuple(head.tolist()), [body[start:start + 6].tolist() for start in starts]


GUARD = {"collision_observer_gain": [50.0], "collision_thresholds": [30.0]}


@pytest.mark.parametrize("law, config", [
    ("computed_torque", {}), ("adaptive_computed_torque", {}),
    ("adaptive_computed_torque", {"adapt": "all"}), ("nan_test", {}), ("doubled_test", {}),
    ("computed_torque", GUARD), ("computed_torque", {**GUARD, "collision_reaction": "reflex"})])
def test_answer_is_take_state_then_cycle_in_one_step(law, config):
    """The 1 kHz path (ControlLoop.answer) gives what take_state then cycle give, bit for bit:
    the one-call law, a law computed in Python, one that fails, saturation, the integral, the
    momentum observer and its detection (the random states below collide within a few
    cycles), stopping or reacting; and the controller state it writes is the message the node
    writes after a cycle, unless the law failed (no state is published then)."""
    loops = [make_loop(control_law=law, ki=5.0, integral_limit=1.0,
                       effort_limits=[60.0, 60.0, 60.0, 2.0, 2.0, 2.0], **config)[:2]
             for _ in range(2)]
    guard = "collision_observer_gain" in config
    written, answered = (SerializedState(loops[0][0].order.names) for _ in range(2))
    rng = np.random.default_rng(7)
    for loop, clock in loops:
        state(loop, stamp=clock.t)
        loop.cycle()
        far = Q0 + np.radians([20.0, -10.0, 15.0, 30.0, -30.0, 40.0])
        assert isinstance(loop.set_trajectory(JointTrajectory(CHAIN, [0.5], [far])), Accepted)
    for k in range(40):
        q, qd = Q0 + 0.05 * rng.standard_normal(6), rng.standard_normal(6)
        if k == 39 and not guard:   # finite, yet the torque overflows (the last: it winds up)
            qd[1] = 1e300
        results = []
        for i, (loop, clock) in enumerate(loops):
            clock.t += 0.001 + 1e-4 * (k % 3)
            raw, stamp = _message(q, qd, clock.t - 2e-4)
            if i == 0:
                assert loop.take_state(q.copy(), qd.copy(), stamp) == Accepted()
                command = loop.cycle()
                if type(command) is Command:
                    written.write(divmod(round(stamp * 1e9), 1_000_000_000), loop.reference,
                                  loop.q, loop.qd, command.effort, loop.order.index)
            else:
                listened, before = k % 5 > 0, bytes(answered)   # every fifth: nobody listens
                command = _answer(loop, raw, (listened, *answered.out))
            results.append((type(command), command.effort.tolist(), _window(loop)))
        assert results[0] == results[1]
        if listened and type(command) is Command:
            assert _written(answered) == _written(written)
        else:   # nothing written: nobody listened, or the law failed
            assert bytes(answered) == before
    # the first cycle too; computed torque fails at the overflow, the adaptive law saturates
    assert loops[1][0].law_failures == {"nan_test": 41, "adaptive_computed_torque": 0}.get(
        law, 0 if guard else 1)
    assert loops[1][0].collisions == (1 if guard else 0)
    assert law == "nan_test" or loops[1][0].saturations.count > 0   # the limits of 2 N·m bite
    reports = [loop.report()[2] for loop, _ in loops]
    for values in reports:   # the timings differ, the rest not
        assert values["compute time (us) max"] > 0 and values["latency state stamp to command (ms) max"] > 0
    timed = [key for key in reports[0] if key.endswith(("mean", "max")) or "rate" in key]
    assert {k: v for k, v in reports[0].items() if k not in timed} == \
        {k: v for k, v in reports[1].items() if k not in timed}


def _outside_the_ordinary(case, loop, clock, steady):
    """Make ``case`` hold for the next state; its stamp, position and names."""
    q, names = Q0 + 0.01, CHAIN
    if case == "unstamped":
        return 0.0, q, names
    if case == "backlog":   # newer than the last state, yet stamped long before it arrived
        clock.t += 0.3
        return clock.t - 0.2, q, names
    if case == "the last stamp again":   # a step-locked simulator's state, published again
        return clock.t, q, names
    if case == "older than the last":   # out of order, yet fresh
        return clock.t - 0.05, q, names
    if case == "time back":   # a simulation reset
        clock.t = 2.0
    elif case == "stale":
        steady.t += 1.0
        assert loop.watchdog() is not None
    elif case == "disabled":
        loop.enable(False)
    elif case == "reference point":
        loop.set_reference(to_message(Q0 + 0.1))
    elif case == "measured torque":   # the observer takes the state's effort, which answer has not
        loop.apply(loop.prepare({**GUARD, "collision_torque": "measured"}))
    elif case == "NaN":
        q = Q0 + [0.01, np.nan, 0.0, 0.0, 0.0, 0.0]
    elif case == "other names":
        names = CHAIN[::-1]
    return clock.t + 0.001, q, names


@pytest.mark.parametrize("case", ["no state yet", "unstamped", "backlog", "the last stamp again",
                                  "older than the last", "time back", "stale", "disabled",
                                  "reference point", "measured torque", "NaN", "other names"])
def test_answer_declines_outside_the_ordinary_case_and_changes_nothing(case):
    """Each case answer leaves to take_state and cycle gets None and leaves the loop as it was:
    what set_state and cycle then do is what they do without the attempt."""
    loops = [make_loop(timeout=0.1) for _ in range(2)]
    results = []
    for i, (loop, clock, steady) in enumerate(loops):
        if case != "no state yet":
            state(loop, stamp=clock.t)
            loop.cycle()
            clock.t += 0.5
            state(loop, stamp=clock.t)
            loop.cycle()
        stamp, q, names = _outside_the_ordinary(case, loop, clock, steady)
        raw, stamp = _message(q, np.zeros(6), stamp, names)
        before = _window(loop)
        if i == 1:
            assert _answer(loop, raw) is None
            assert _window(loop) == before
        result = state(loop, q, np.zeros(6), names, stamp)
        command = loop.cycle() if isinstance(result, Accepted) else None
        results.append((result, None if command is None else command.effort.tolist(), _window(loop)))
    assert results[0] == results[1]
    ordinary, _ = _message(Q0, np.zeros(6), clock.t + 0.002)   # the next one is answered again
    answered = _answer(loop, ordinary) is not None
    assert answered == (case not in ("disabled", "reference point", "measured torque",
                                     "other names"))


def test_a_law_derived_from_computed_torque_is_computed_its_own_way():
    """The loop's one-call path is computed_torque's own compute: a subclass that overrides
    compute is called through its compute."""
    commands = {}
    for law in ("computed_torque", "doubled_test"):
        loop, clock, steady = make_loop(control_law=law, effort_limits=[1e6] * 6)
        state(loop, q=Q0 + 0.01)    # away from the held start: the feedback acts as well
        state(loop)
        commands[law] = loop.cycle().effort.copy()
    assert np.all(commands["computed_torque"] != 0.0)
    np.testing.assert_allclose(commands["doubled_test"], 2.0 * commands["computed_torque"],
                               rtol=1e-12)


def test_a_law_computing_in_another_dtype_is_converted_not_refused():
    loop, clock, steady = make_loop(control_law="float32_test")
    state(loop)
    command = loop.cycle()
    assert isinstance(command, Command) and command.effort.dtype == np.float64
    assert loop.law_failures == 0
    loop, clock, steady = make_loop(control_law="string_test")   # no number: a law failure
    state(loop)
    assert isinstance(loop.cycle(), LawFailure) and loop.law_failures == 1


def test_per_joint_gains_in_message_order_reach_their_joints():
    kp = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]  # message order
    loop, clock, steady = make_loop(kp=kp)
    np.testing.assert_array_equal(loop.law.params["kp"], to_message(kp))


def test_reconfiguration_is_validated_whole_then_applied():
    loop, clock, steady = make_loop()
    law = loop.law
    with pytest.raises(ValueError, match="kp"):
        loop.prepare({"kp": -1.0})
    with pytest.raises(ValueError, match="effort_limits"):  # a good kp does not slip through
        loop.prepare({"kp": 50.0, "effort_limits": [1.0]})
    with pytest.raises(ValueError, match="on_timeout"):
        loop.prepare({"on_timeout": "brake"})
    with pytest.raises(ValueError, match="unknown control law"):
        loop.prepare({"control_law": "no_such_law"})
    with pytest.raises(ValueError, match="kp must be numbers"):
        loop.prepare({"kp": "100"})
    with pytest.raises(ValueError, match="kd must be numbers"):
        loop.prepare({"kd": True})
    assert loop.law is law and loop.config["kp"] == 100.0
    change = loop.prepare({"kp": 50.0, "on_timeout": "zero"})
    assert loop.law is law  # nothing happens before apply
    loop.apply(change)
    assert loop.law.params["kp"] == 50.0 and loop.config["on_timeout"] == "zero"


def test_bad_states_are_rejected_with_bounded_reasons_and_change_nothing():
    loop, clock, steady = make_loop()
    state(loop)
    bad = [(CHAIN[:5], "lacks joints"),
           (CHAIN + [CHAIN[0]], "more than once"),
           ([f"j{i}" for i in range(100_000)], "lacks joints")]
    for names, reason in bad:
        n = len(names)
        result = loop.set_state(names, np.zeros(n), np.zeros(n))
        assert isinstance(result, Rejection) and reason in result.reason
        assert len(result.reason) < 1000
    nan = Q0.copy()
    nan[2] = np.nan
    assert "NaN" in state(loop, q=nan).reason
    assert "6 names, 5 positions" in loop.set_state(CHAIN, Q0[:5], np.zeros(6)).reason
    np.testing.assert_array_equal(loop.q, Q0)
    assert loop.rejected.count == 5


def test_references_and_trajectories_beyond_the_position_limits_are_refused():
    loop, clock, steady = make_loop()
    state(loop)
    beyond = Q0.copy()
    beyond[2] = PUMA.upper[2] + 0.01
    assert "joint_3' at" in loop.set_reference(to_message(beyond)).reason
    far = JointTrajectory(CHAIN, [1.0, 2.0], [Q0, beyond])
    assert "point 1: joint 'joint_3'" in loop.set_trajectory(far).reason
    huge = JointTrajectory(CHAIN, [1.0], [Q0 * 0 + 1e308])
    assert "outside its limits" in loop.set_trajectory(huge).reason
    loop.cycle()
    np.testing.assert_allclose(loop.reference[0], Q0)  # still holding
    margin, *_ = make_loop(position_limit_margin=0.02)
    state(margin)
    assert margin.set_reference(to_message(beyond)) == Accepted()


def test_trajectories_are_bounded_in_points_and_queued_segments():
    loop, clock, steady = make_loop(max_trajectory_points=100)
    state(loop)
    times = np.arange(1, 101) * 0.01
    ok = JointTrajectory(CHAIN, times, np.tile(Q0, (100, 1)))
    assert isinstance(loop.set_trajectory(ok), Accepted)
    too_long = JointTrajectory(CHAIN, np.arange(1, 102) * 0.01, np.tile(Q0, (101, 1)))
    assert "101 points, more than max_trajectory_points 100" in loop.set_trajectory(too_long).reason
    # one queued in the future keeps what plays until its start: together they exceed the bound
    assert "more than 102" in loop.set_trajectory(ok, start=clock.t + 0.9).reason
    # a splice drops what it supersedes: the same trajectory from now replaces the old one
    for _ in range(10):
        assert isinstance(loop.set_trajectory(ok, start=clock.t), Accepted)


def test_references_before_a_state_or_non_finite_are_rejected():
    loop, clock, steady = make_loop()
    assert "before the first valid joint state" in loop.set_reference(Q0).reason
    assert isinstance(loop.hold(), Rejection)
    state(loop)
    assert "finite" in loop.set_reference([np.inf] * 6).reason
    assert "finite" in loop.set_reference(Q0, velocities=[1.0]).reason


def test_disable_compensates_gravity_and_enable_holds_the_measured_position():
    loop, clock, steady = make_loop()
    state(loop)
    loop.set_reference(to_message(Q0 + 0.5))
    assert "disabled" in loop.enable(False)
    np.testing.assert_allclose(loop.cycle().effort, to_message(PUMA.gravity_torques(Q0)),
                               atol=1e-12)
    state(loop, q=Q0 + 0.2)
    loop.enable(True)
    loop.cycle()
    np.testing.assert_allclose(loop.reference[0], Q0 + 0.2)


def test_joint_order_maps_both_ways_and_refuses_bad_lists():
    order = JointOrder(["a", "b", "c"], ["c", "a", "b"])
    chain = order.to_chain([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(chain, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(order.from_chain(chain), [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(order.find_in(["x", "b", "c", "a"]), [3, 1, 2])
    for bad in (["a", "b"], ["a", "b", "c", "d"], ["a", "a", "b", "c"]):
        with pytest.raises(ValueError, match="must name each joint"):
            JointOrder(["a", "b", "c"], bad)


def test_reasons_are_bounded_and_events_throttled():
    assert bounded(range(3)) == "[0, 1, 2]"
    assert bounded(range(100_000)).endswith("... 99995 more, 100000 in all]")
    assert len(bounded("x" * 10**6)) <= 1000
    clock, lines = FakeClock(0.0), []
    event = CountedEvent("rejected", lines.append, clock, period=2.0)
    for _ in range(5):
        event("bad")
    clock.t = 2.0
    event("worse")
    # four swallowed within the period, then one line that counts them with the fifth
    assert event.count == 6 and len(lines) == 2
    assert lines[1] == "rejected: worse (5 since the last report, 6 in total)"


def test_an_event_s_reason_built_on_demand_is_built_only_for_a_line_logged():
    """A saturation happens every cycle while the arm pushes on something: its reason (which
    joints) is built only when a line is logged, and every one is counted."""
    clock, lines, built = FakeClock(0.0), [], []

    def reason():
        built.append(clock.t)
        return f"joints at t={clock.t:g}"
    event = CountedEvent("saturated", lines.append, clock, period=2.0)
    for k in range(6):
        clock.t = 0.5 * k
        event(reason)
    assert event.count == 6 and built == [0.0, 2.0]
    assert lines == ["saturated: joints at t=0 (1 since the last report, 1 in total)",
                     "saturated: joints at t=2 (4 since the last report, 5 in total)"]
    assert event.last_reason == "joints at t=2"


def test_the_statistics_window_gives_means_and_peaks_of_its_last_cycles():
    """Compute and cycle times and the stamped states' latency (an unstamped state has none),
    over the last CAPACITY cycles of a longer window; a report starts the next window."""
    window = _Window(0.0)
    assert window.summary() == {f"{label} {kind}": 0.0 for label in (
        "compute time (us)", "cycle time (us)", "latency state stamp to command (ms)")
        for kind in ("mean", "max")}
    for k in range(CAPACITY + 10):   # the first 10 fall out of the ring
        window.add(1e-6 * k, 2e-6 * k, np.nan if k % 2 else 1e-3 * (k % 7))
    kept = np.arange(10, CAPACITY + 10)
    latency = 1e-3 * (kept[kept % 2 == 0] % 7)
    summary = window.summary()
    assert summary["compute time (us) mean"] == pytest.approx(kept.mean())
    assert summary["cycle time (us) max"] == pytest.approx(2.0 * kept.max())
    assert summary["latency state stamp to command (ms) mean"] == pytest.approx(latency.mean() * 1e3)
    assert summary["latency state stamp to command (ms) max"] == pytest.approx(6.0)
    loop, clock, steady = make_loop()
    state(loop, stamp=clock.t - 0.002)
    loop.cycle()
    steady.t += 1.0
    values = loop.report()[2]
    assert values["achieved rate (Hz)"] == 1.0
    assert values["latency state stamp to command (ms) max"] == pytest.approx(2.0)
    assert loop.report()[2]["latency state stamp to command (ms) max"] == 0.0   # a new window


def test_report_levels():
    loop, clock, steady = make_loop()
    assert loop.report()[:2] == (WARN, "waiting for the first valid joint state")
    state(loop)
    loop.cycle()
    steady.t += 1.0
    level, message, values = loop.report()
    assert (level, message) == (OK, "tracking") and values["achieved rate (Hz)"] == 1.0


# ---------------------------------------------------------------- the node's watchdog thread
# The thread runs and sleeps for real; its verdicts are the loop's, on the fake steady clock.
WAIT = 5.0  # s: the most any wait below may take on a loaded machine


def _until(condition):
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the watchdog thread did not act"
        time.sleep(0.002)


def test_the_thread_publishes_the_safe_command_once_the_state_is_stale_and_stops_when_told():
    loop, _, steady = make_loop(timeout=0.05)
    node, lock, sent = SimpleNamespace(active=True), threading.Lock(), []
    watchdog = WatchdogThread(node, loop, lock, sent.append, period=0.005)
    try:
        time.sleep(0.05)
        assert sent == []                       # no state yet: nothing to hold, nothing sent
        with lock:
            loop.set_state(ORDER, Q0[::-1], np.zeros(6))
        time.sleep(0.1)                         # real time passes, the loop's clock does not
        assert sent == []
        steady.t = 1.0                          # the state is stale now
        _until(lambda: len(sent) >= 2)          # the first, then one per period
        assert sent[0].first and not sent[1].first
        np.testing.assert_allclose(sent[0].effort[::-1], PUMA.gravity_torques(Q0))  # hold_gravity
        with lock:                              # as the node deactivates
            node.active = False
            count = len(sent)
        time.sleep(0.05)
        assert len(sent) == count               # inactive: nothing follows
    finally:
        watchdog.destroy()
    assert "robodyn-watchdog" not in {t.name for t in threading.enumerate()}


def test_a_fresh_state_moves_the_deadline():
    loop, _, steady = make_loop(timeout=0.05)
    node, lock, sent = SimpleNamespace(active=True), threading.Lock(), []
    watchdog = WatchdogThread(node, loop, lock, sent.append, period=0.005)
    try:
        for t in np.arange(0.0, 0.5, 0.02):     # states every 20 ms of the loop's clock
            with lock:
                steady.t = t
                loop.set_state(ORDER, Q0[::-1], np.zeros(6))
            time.sleep(0.01)
        assert sent == []
    finally:
        watchdog.destroy()


def test_a_state_stamped_longer_ago_than_state_timeout_is_not_used():
    """Issue 23 §1: a publisher paused (SIGSTOP) and resumed delivers its backlog: states older
    than state_timeout when they arrive would command from the past; they are refused with the
    reason, and the first one young enough is used."""
    loop, clock, steady = make_loop(timeout=0.1)
    rejection = state(loop, stamp=clock.t - 0.5)
    assert isinstance(rejection, Rejection) and "stamped 0.5 s before it arrived" in rejection.reason
    assert loop.received is None and not loop.active
    assert state(loop, Q0 + 0.1, stamp=clock.t - 0.09) == Accepted()   # within the timeout
    np.testing.assert_array_equal(loop.q, Q0 + 0.1)


def test_time_going_back_drops_the_trajectory_and_holds_the_measured_position():
    """Issue 23 §2: /clock going back (a simulation reset): the trajectory's times are the old
    clock's, so it is dropped and the loop holds where the arm is; nothing is sampled before
    its start and the command stays finite. A step back within state_timeout is no jump: a late
    state, dropped (issue 44)."""
    loop, clock, steady = make_loop(timeout=0.1)
    assert state(loop, stamp=clock.t) == Accepted()
    far = Q0 + np.radians([30.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert isinstance(loop.set_trajectory(JointTrajectory(CHAIN, [1.0], [far])), Accepted)
    clock.t += 0.5
    assert state(loop, stamp=clock.t) == Accepted() and loop.cycle() is not None
    assert loop.trajectory_span is not None
    assert isinstance(state(loop, stamp=clock.t - 0.05), Dropped)   # late, no jump
    assert loop.trajectory_span is not None
    clock.t = 2.0   # the simulation restarts
    moved = Q0 + 0.05
    result = state(loop, moved, stamp=clock.t)
    assert isinstance(result, Accepted) and "time went back from 100.5 to 2 s" in result.note
    assert loop.trajectory_span is None
    command = loop.cycle()
    np.testing.assert_allclose(loop.reference[0], moved, atol=1e-12)
    assert np.all(np.isfinite(command.effort))
