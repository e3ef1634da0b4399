"""The ROS 2 command line a user types, against running nodes. Every command is read from the
marked blocks of doc/computed_torque_controller.md ("From the command line") and run as written,
in a shell, against ``puma560_sim.launch.py`` started by that page's own launch command: the
lifecycle through every transition, ``ros2 param dump`` given back with ``--params-file``, a gain
of the wrong type refused with the reason, one controller state, a trajectory that moves the arm
and one refused, ``~/hold``, and the cycle timing on /diagnostics. One launched system serves the
module; the commands find the nodes through a ros2 daemon of the test's own domain, stopped at
the end, and Ctrl-C ends everything with exit 0.
"""
import os
import re
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from ros_cli import (ROOT, Launch, Probe, doc_commands, environment, require_tools,
                     ros2_executable, shell)

require_tools()

from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

PAGE = ROOT / "doc" / "computed_torque_controller.md"
COMMANDS = doc_commands(PAGE)
NODE = "/computed_torque_controller"
JOINTS = [f"joint_{i}" for i in range(1, 7)]
ACTIVE = "active: commanding from the measured position"


def daemon(verb: str, env) -> None:
    """``ros2 daemon start|stop`` in ``env``'s domain: the commands then find the graph through it
    instead of each discovering it anew in half a second (too short on a loaded machine)."""
    subprocess.run([ros2_executable(), "daemon", verb], env=env, check=False, capture_output=True,
                   timeout=120)


@pytest.fixture(scope="module")
def probe():
    p = Probe("cli_probe")
    yield p
    p.close()


@pytest.fixture(scope="module")
def system(tmp_path_factory, probe):
    """The page's launch command running, seen by the daemon; stopped (if a test did not) and
    the daemon with it at the end."""
    cwd = tmp_path_factory.mktemp("cli")
    env = environment()
    daemon("start", env)
    commands = probe.subscribe(Float64MultiArray, "/effort_controller/commands")
    states = probe.subscribe(JointState, "/joint_states", keep=10_000)  # 10 s at 1 kHz
    launch = Launch(shell("exec " + COMMANDS["launch"]), cwd / "launch.log", cwd=cwd)
    try:
        launch.wait_for_output(ACTIVE, spin=probe.spin_once)
        probe.spin_until(lambda: {NODE, "/arm_simulator"} <= set(
            probe.run(shell("ros2 node list"), cwd=cwd).stdout.split()), what="the daemon's view")
        yield SimpleNamespace(launch=launch, cwd=cwd, commands=commands, states=states)
    finally:
        if launch.process.poll() is None:
            launch.kill()
        daemon("stop", env)


def run(probe, system, name: str, label: str | None = None, **kwargs):
    """The page's command ``name`` (for lifecycle-set, with its transition ``label``)."""
    command = COMMANDS[name]
    if label is not None:
        command = re.sub(r"\bdeactivate$", label, command)
    return probe.run(shell(command), cwd=kwargs.pop("cwd", system.cwd), **kwargs)


def assert_holds_gravity(system, model):
    """The last command is on_deactivate's hold_gravity: g(q) at the state it followed."""
    last = system.commands[-1]
    q = np.array(system.states.before(last.time).msg.position)
    assert np.allclose(last.msg.data, model.gravity_torques(q), rtol=0.02, atol=0.2), \
        (last.msg.data, model.gravity_torques(q))


def test_the_page_gives_every_command():
    assert set(COMMANDS) == {"launch", "lifecycle-get", "lifecycle-set", "param-dump", "params-file",
                             "param-set-wrong-type", "controller-state", "send-goal",
                             "send-goal-rejected", "hold", "timing"}
    assert COMMANDS["lifecycle-set"].endswith(" deactivate")


def test_lifecycle_get_and_set_through_every_transition(probe, system, model):
    assert run(probe, system, "lifecycle-get").stdout.strip() == "active [3]"
    for label, state in [("deactivate", "inactive"), ("activate", "active"),
                         ("deactivate", "inactive"), ("cleanup", "unconfigured"),
                         # launch activated the node once; a configure by hand leaves it inactive
                         ("configure", "inactive"), ("activate", "active")]:
        assert "Transitioning successful" in run(probe, system, "lifecycle-set", label).stdout
        assert probe.lifecycle_state(NODE) == state, label
        if label == "configure":
            assert run(probe, system, "lifecycle-get").stdout.strip() == "inactive [2]"
        if label == "deactivate":  # one hold_gravity command, then none
            probe.spin_for(0.3)
            assert_holds_gravity(system, model)
            count = system.commands.total
            probe.spin_for(0.5)
            assert system.commands.total == count, "commands while inactive"
    count = system.commands.total
    probe.spin_until(lambda: system.commands.total > count + 100, what="commands again")


def test_param_dump_given_back_starts_an_identical_node(probe, system, tmp_path):
    run(probe, system, "param-dump")
    dumped = yaml.safe_load((system.cwd / "computed_torque_controller.yaml").read_text())
    parameters = dumped[NODE]["ros__parameters"]
    assert parameters["kp"] == 100.0 and parameters["autostart"] is False
    assert parameters["urdf_file"].endswith("urdf/puma560.urdf")
    # the same file started in a domain of its own, so that the two nodes do not meet
    other = environment(ROS_DOMAIN_ID=str(101 + int(os.environ["ROS_DOMAIN_ID"]) % 100))
    daemon("start", other)
    copy = Launch(shell("exec " + COMMANDS["params-file"]), tmp_path / "copy.log", env=other,
                  cwd=system.cwd)
    try:
        copy.wait_for_output("unconfigured: waiting for a lifecycle manager", spin=probe.spin_once)
        probe.spin_until(lambda: NODE in probe.run(shell("ros2 node list"), env=other).stdout.split(),
                         what="the copy")
        run(probe, system, "param-dump", cwd=tmp_path, env=other)
        assert yaml.safe_load((tmp_path / "computed_torque_controller.yaml").read_text()) == dumped
        assert copy.interrupt(spin=probe.spin_once) == 0, copy.tail()
    finally:
        if copy.process.poll() is None:
            copy.kill()
        daemon("stop", other)
    assert not copy.group_members(), "ros2 run left a process behind"


def test_param_set_of_a_wrong_type_is_refused_with_the_reason(probe, system):
    done = run(probe, system, "param-set-wrong-type")
    said = done.stdout + done.stderr
    assert "Setting parameter failed: parameter 'kp' must be a number or a list of numbers, " \
           "got 'fast'" in said, said
    assert probe.parameters(NODE, ["kp"]) == {"kp": 100.0}


def test_topic_echo_once_prints_one_controller_state(probe, system):
    # ros2 topic echo may print "A message was lost!!!" (a QoS event, on stdout) before the message
    out = run(probe, system, "controller-state").stdout
    state = yaml.safe_load(next(doc for doc in out.split("---") if "joint_names" in doc))
    assert state["joint_names"] == JOINTS
    for point in ("reference", "feedback", "error"):
        assert len(state[point]["positions"]) == 6, point
    assert len(state["output"]["effort"]) == 6


STALE = "no valid joint state for"


def test_send_goal_moves_the_arm_and_a_goal_beyond_the_limits_is_rejected(probe, system):
    start = np.array(system.states[-1].msg.position)
    for _ in range(3):
        stalls = system.launch.output().count(STALE)
        done = run(probe, system, "send-goal")
        if "Goal finished with status: SUCCEEDED" in done.stdout:
            break
        # a loaded machine stalled the simulator past state_timeout: the controller aborted the
        # goal (its client hears why) and resumed holding where the arm was; a user sends it again
        assert system.launch.output().count(STALE) > stalls, done.stdout
        assert "Goal finished with status: ABORTED" in done.stdout, done.stdout
        assert re.search(r"no valid joint state for|joint states valid again", done.stdout), \
            done.stdout
    else:
        pytest.fail(f"three goals aborted by stalls: {done.stdout}")
    target = np.array([1.2, 0.3, 1.3, 0.2, 0.3, 0.4])
    probe.spin_for(0.2)
    reached = np.array(system.states[-1].msg.position)
    assert np.abs(reached - start).max() > 0.2, "the arm did not move"
    if system.launch.output().count(STALE) == stalls:
        assert np.allclose(reached, target, atol=0.05), (start, reached)
    # else the machine stalled the simulator past state_timeout after the goal ended: the
    # controller resumed by holding where the arm was
    done = run(probe, system, "send-goal-rejected")
    assert "Goal was rejected." in done.stdout, done.stdout
    system.launch.wait_for_output(r"joint_2.*limit|limit.*joint_2", spin=probe.spin_once)


def test_service_call_hold(probe, system):
    done = run(probe, system, "hold")
    assert re.search(r"Trigger_Response\(success=True, message='holding \[", done.stdout), done.stdout


def _timing(stdout: str) -> dict:
    """key -> value of the controller's timing status in ``ros2 topic echo`` output."""
    status = next(s for s in yaml.safe_load(stdout.split("\n---")[0])["status"]
                  if s["name"] == "computed_torque_controller: Controllers Activity")
    return {kv["key"].removeprefix("computed_torque_controller."): kv["value"]
            for kv in status["values"]}


STATS = re.compile(r"Avg: ([\d.]+) \[([\d.]+) - ([\d.]+)\] (us|Hz), StdDev: ([\d.]+)$")


def test_cycle_timing_on_diagnostics_as_the_controller_manager_reports_it(probe, system):
    timing = _timing(run(probe, system, "timing").stdout)
    assert timing["state"] == "active"
    average, low, high, unit, _ = STATS.match(timing["execution_time"]).groups()
    assert unit == "us" and float(low) <= float(average) <= float(high)
    assert float(timing["execution_time.max"]) == pytest.approx(float(high), abs=0.01)
    average, low, high, unit, _ = STATS.match(timing["periodicity"]).groups()  # rate 0: no Desired
    assert unit == "Hz" and float(low) <= float(average) <= float(high)
    for what in ("execution_time", "period"):
        p50, p99, peak = (float(timing[f"{what}.{p}"]) for p in ("p50", "p99", "max"))
        assert 0 < p50 <= p99 <= peak, what
    # rate 0, one command per joint state: the budget is the median period the states came at
    assert timing["budget"] == timing["period.p50"]
    assert 0 <= int(timing["cycles_over_budget"]) <= int(timing["cycles"])


def test_shutdown_then_ctrl_c_ends_every_process_with_exit_0(probe, system, model):
    assert "Transitioning successful" in run(probe, system, "lifecycle-set", "shutdown").stdout
    probe.spin_for(0.3)
    assert_holds_gravity(system, model)  # on_deactivate: the shutdown of an active node
    count = system.commands.total
    assert run(probe, system, "lifecycle-get").stdout.strip() == "finalized [4]"
    assert system.commands.total == count, "commands after shutdown"
    system.launch.assert_clean_exit(system.launch.interrupt(spin=probe.spin_once))
