"""The latency benchmark pairs each command with the state it answered through ``~/state``'s
content, so a message dropped on either topic (KEEP_LAST queues) costs only its own pair; and its
driver, raw subscriptions and serialized states included, pairs the answers of two nodes it
drives at once (the echo, as the controller and as its peer beside it) over real DDS."""
import os

import numpy as np

from robodyn_ros.apps.benchmarks import latency
from robodyn_ros.apps.benchmarks.latency import _pair
from robodyn_ros.nodes.controller import NAME
from robodyn_ros.apps.processes import NodeProcesses


def _command(k):
    return np.full(6, float(k)).tobytes()


def test_a_dropped_command_or_state_does_not_shift_the_later_pairs():
    stamps = [1000 + k for k in range(6)]
    answered = [(_command(k), 50 + k) for k in range(6) if k != 2]  # command 2 dropped
    outputs = [(stamps[k], _command(k)) for k in range(6) if k != 4]  # ~/state 4 dropped
    arrival, unpaired_commands, unpaired_states = _pair(answered, outputs)
    assert arrival == {stamps[k]: 50 + k for k in (0, 1, 3, 5)}
    assert unpaired_commands == 1  # command 4: its ~/state was dropped
    assert unpaired_states == 1  # ~/state 2: its command was dropped


def test_identical_commands_pair_in_arrival_order():
    answered = [(_command(0), 10), (_command(0), 11), (_command(0), 12)]
    outputs = [(1, _command(0)), (2, _command(0))]
    assert _pair(answered, outputs) == ({1: 10, 2: 11}, 1, 0)


def test_the_driver_pairs_the_answers_of_the_echo_peer_over_dds(tmp_path, monkeypatch):
    # a DDS domain of its own (the driver's rclpy.init and the echo process read it): on the
    # domain that a demo's nodes had used in this run, the driver paired none of the echo's
    # answers (seen in every full run since the demos changed; not understood yet)
    monkeypatch.setenv("ROS_DOMAIN_ID", str(1 + (int(os.environ["ROS_DOMAIN_ID"]) + 25) % 100))
    with NodeProcesses(tmp_path) as echo:   # as the controller, and beside it as the peer
        for name in (NAME, latency.PEER):
            latency.start(echo, name, "robodyn_ros.apps.benchmarks.echo", {})
        runs = latency._drive(echo, 1.0)
    assert echo.exit_codes == {NAME: 0, latency.PEER: 0}   # SIGINT, as Ctrl-C: a clean exit
    assert set(runs) == {NAME, latency.PEER}
    for run in runs.values():                   # each node's commands paired with its own states
        answered = np.isfinite(run["latency_ms"])
        assert run["latency_ms"].size > 500         # a state every millisecond for 1 s
        assert answered.mean() > 0.5                # most pairs found (none are timed here)
        assert run["unpaired_states"] == 0          # every ~/state carried a command that arrived
        assert run["controller_cpu_percent"] > 0


def test_the_bytecode_count_is_of_the_controllers_1khz_path_and_counts_what_runs():
    """benchmarks/bytecodes.py counts the ordinary path (ControlLoop.answer, not the fallback
    through take_state and cycle) of the real nodes, in a process of its own; and its counter
    counts each bytecode run: a loop run twice as often counts about twice as many."""
    from robodyn_ros.apps.benchmarks.bytecodes import _counted

    def spin(raw):
        for _ in raw:
            pass
    assert 2 * sum(_counted(spin, b"x" * 10).values()) - sum(_counted(spin, b"x" * 20).values()) \
        < 10
    counts = latency._bytecodes()
    assert "answer (loop.py)" in counts["functions"]
    assert "cycle (loop.py)" not in counts["functions"]
    assert counts["controller"] == sum(counts["functions"].values())
    assert 0 < counts["echo"] < counts["controller"]
    cold = counts["cold_us"]   # timed too: the controller's callback does more than the echo's
    assert 0 < cold["echo"] < cold["controller"] < 1000
