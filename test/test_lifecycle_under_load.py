"""Issue 23 §3: the controller's lifecycle cycled while it works, as an operator or a lifecycle
manager may while the drive streams states and MoveIt sends goals. The controller runs in a
process of its own (its threads, descriptors and memory are read from /proc); this test stands
where the drive and MoveIt stand: a thread publishes joint states at 1 kHz, goals go out every
0.2 s, and the lifecycle services take it through 100 deactivate/activate cycles, 20 of them with
cleanup and configure in between. No crash; exactly one on_deactivate command (zero effort) per
deactivation and nothing while inactive; no growth of threads, file descriptors or memory from
cycle to cycle. It found the controller crashing (SIGSEGV) in cleanup/configure cycles on a loaded
machine while its subscriptions, services and action were destroyed and created again; they now
live as long as the node (ManagedNode._keep and TrajectoryAction say why)."""
import os
import signal
import threading
import time

import numpy as np
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robodyn_ros.apps.processes import NodeProcesses, status_kb
from robodyn_ros.plumbing.resources import find_share_file

from conftest import JOINTS, Q0
from ros_cli import Probe

import control_msgs.action as control_msgs  # noqa: E402

NODE, COMMANDS = "cycled_controller", "/cycled/commands"
CYCLES, RECONFIGURE_EVERY = 100, 5      # 100 deactivations, 20 of them with cleanup + configure
WARM_UP = 10                            # cycles before the first /proc reading
#: RSS growth allowed over the 90 cycles after the warm-up: 10 kB a cycle (RSS moves by pages and
#: Python's allocator takes 256 kB arenas; the finished goals' results are kept a minute). Measured:
#: 300 kB, flat over the last 60 cycles; 1,200 kB when each reconfiguration's garbage was frozen
#: (lifecycle.freeze_heap), 60-110 kB at every cleanup + configure
RSS_GROWTH_KB = 900


def _publishing(probe, stop):
    """Joint states at 1 kHz (wall time, stamped now) until ``stop``, from a thread of its own."""
    publisher = probe.node.create_publisher(JointState, "/joint_states", 10)
    msg = JointState(name=JOINTS, position=Q0.tolist(), velocity=[0.0] * 6)
    clock = probe.node.get_clock()
    next_time = time.monotonic()
    while not stop.is_set():
        msg.header.stamp = clock.now().to_msg()
        publisher.publish(msg)
        next_time += 1e-3
        time.sleep(max(next_time - time.monotonic(), 0.0))


def _goal(k):
    target = Q0 + (0.02 if k % 2 else -0.02)
    point = JointTrajectoryPoint(positions=target.tolist(), velocities=[0.0] * 6)
    point.time_from_start.nanosec = 300_000_000
    return control_msgs.FollowJointTrajectory.Goal(
        trajectory=JointTrajectory(joint_names=JOINTS, points=[point]))


def _resources(pid):
    return (status_kb(pid, "Threads"), len(os.listdir(f"/proc/{pid}/fd")),
            status_kb(pid, "VmRSS"))


def test_100_lifecycle_cycles_while_states_flow_at_1khz_and_goals_arrive(tmp_path):
    from rclpy.action import ActionClient
    probe = Probe("cycler")
    stop = threading.Event()
    publisher = threading.Thread(target=_publishing, args=(probe, stop), daemon=True)
    try:
        with NodeProcesses(tmp_path) as nodes:
            nodes.start(NODE, "robodyn_ros.nodes.controller", {
                "urdf_file": find_share_file("urdf/puma560.urdf"), "autostart": "true",
                "command_topic": COMMANDS, "on_deactivate": "zero", "state_timeout": 0.5,
                "friction": "false"})
            pid = nodes.pids[NODE]
            commands = probe.subscribe(Float64MultiArray, COMMANDS, keep=200_000)
            change = probe.node.create_client(ChangeState, f"/{NODE}/change_state")
            goals = ActionClient(probe.node, control_msgs.FollowJointTrajectory,
                                 f"/{NODE}/follow_joint_trajectory")
            sent = [0, 0.0]   # goals sent, when the last went out

            def send_goals():
                if goals.server_is_ready() and time.monotonic() - sent[1] > 0.2:
                    goals.send_goal_async(_goal(sent[0]))
                    sent[0], sent[1] = sent[0] + 1, time.monotonic()
            probe.each_spin.append(send_goals)
            probe.spin_until(lambda: change.service_is_ready(), what="the lifecycle services")
            publisher.start()
            probe.spin_until(lambda: commands.total > 100, what="commands flowing")

            cycle = [0]   # the one under way, for a failure's message

            def transition(transition_id):
                future = change.call_async(ChangeState.Request(
                    transition=Transition(id=transition_id)))
                try:
                    probe.spin_until(future.done, what=f"transition {transition_id}")
                except AssertionError as exc:   # say whether the controller still runs, and where
                    seen = commands.total
                    os.kill(pid, signal.SIGUSR1)   # its threads' stacks, into its log
                    probe.spin_for(1.0)
                    raise AssertionError(
                        f"{exc} (cycle {cycle[0]}; {commands.total - seen} commands in the "
                        f"last second); the controller's log ends:\n"
                        + "".join(nodes.log(NODE).read_text().splitlines(True)[-80:])) from None
                assert future.result().success, f"transition {transition_id} failed"

            def is_zero(received):
                return not np.any(received.msg.data)

            def since(seen):
                new = commands.total - seen
                return list(commands)[-new:] if new else []

            readings = []
            for k in range(CYCLES):
                cycle[0] = k
                nodes.check()   # alive
                seen = commands.total
                transition(Transition.TRANSITION_DEACTIVATE)
                probe.spin_until(lambda: any(map(is_zero, since(seen))),
                                 what=f"cycle {k}: the on_deactivate command")
                probe.spin_for(0.05)   # nothing may follow it while inactive
                received = since(seen)
                first_zero = next(i for i, r in enumerate(received) if is_zero(r))
                assert len(received) - first_zero == 1, \
                    f"cycle {k}: {len(received) - first_zero - 1} commands after on_deactivate"
                assert sum(map(is_zero, received)) == 1, f"cycle {k}: on_deactivate more than once"
                if k % RECONFIGURE_EVERY == RECONFIGURE_EVERY - 1:
                    transition(Transition.TRANSITION_CLEANUP)
                    transition(Transition.TRANSITION_CONFIGURE)
                seen = commands.total
                transition(Transition.TRANSITION_ACTIVATE)
                probe.spin_until(lambda: commands.total > seen + 20, what=f"cycle {k}: commands")
                if k >= WARM_UP - 1:
                    readings.append(_resources(pid))
            assert sent[0] > 50, "goals went out while cycling"
            threads, fds, rss = zip(*readings)
            assert len(set(threads)) == 1 and len(set(fds)) == 1, (threads, fds)
            assert rss[-1] - min(rss) <= RSS_GROWTH_KB, rss
        assert nodes.exit_codes[NODE] == 0
    finally:
        stop.set()
        if publisher.is_alive():
            publisher.join()
        probe.close()
