"""A node with a 1 kHz timer that prints, every 1000 ticks, how many memory blocks Python has
allocated; spun by ``process.spin`` as every node process is (test_processes.py)."""
import sys

from rclpy.node import Node

from robodyn_ros.nodes.process import spin


class AllocatedBlocks(Node):
    def __init__(self):
        super().__init__("allocated_blocks")
        self.ticks = 0
        self.create_timer(0.001, self.tick)

    def tick(self):
        self.ticks += 1
        if self.ticks % 1000 == 0:
            print(sys.getallocatedblocks(), flush=True)


if __name__ == "__main__":
    raise SystemExit(spin(AllocatedBlocks))
