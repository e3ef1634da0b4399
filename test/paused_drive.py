"""A drive in a process of its own, for the test of a paused publisher (issue 23 §1).

    python paused_drive.py TOPIC Q1 ... Q6

Joint states of an arm at rest at Q (rad), 200 a second, stamped with the wall clock when they
are sampled and published one period later, as a double-buffered driver does. On SIGUSR1 it
prints the stamp of the state it just sampled and stops itself (SIGSTOP) before publishing it:
after SIGCONT the first state it publishes is as old as the pause, as a paused driver's backlog
is. SIGTERM ends it.
"""
import os
import signal
import sys
import time

import rclpy
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState

PERIOD = 0.005
JOINTS = [f"joint_{i}" for i in range(1, 7)]


def main(topic: str, position: list[float]) -> None:
    pause = []
    signal.signal(signal.SIGUSR1, lambda *_: pause.append(True))
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = Node("paused_drive")
    publisher = node.create_publisher(JointState, topic, 10)
    clock, sampled, next_time = node.get_clock(), None, time.monotonic()
    while True:
        if sampled is not None:
            publisher.publish(sampled)
        sampled = JointState(name=JOINTS, position=position, velocity=[0.0] * len(position))
        sampled.header.stamp = clock.now().to_msg()
        if pause:
            pause.clear()
            print(f"sampled {sampled.header.stamp.sec} {sampled.header.stamp.nanosec}",
                  flush=True)
            os.kill(os.getpid(), signal.SIGSTOP)
            next_time = time.monotonic()  # a period after SIGCONT, not a burst of catch-up
        next_time += PERIOD
        time.sleep(max(next_time - time.monotonic(), 0.0))


if __name__ == "__main__":
    main(sys.argv[1], [float(v) for v in sys.argv[2:]])
