"""``BagRecorder``: topics of a running node recorded into a rosbag2, as ``ros2 bag record`` does
it, without the ros2 CLI: each message's serialized bytes as they arrive (a raw subscription,
nothing deserialized) with the wall-clock time of arrival in ns, through
:class:`robodyn_ros.identification.bag.BagWriter` (MCAP by default)."""
from __future__ import annotations

import importlib
import threading
import time
from functools import partial

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from ..identification.bag import BagWriter

# reliable, as the package's publishers are; a second of messages at 1 kHz
# may wait in the queue while the executor is busy before any is lost
QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                 reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def message_class(type_name: str):
    """The rclpy message class of "package/msg/Name"."""
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def type_name(message_class) -> str:
    """"package/msg/Name" of an rclpy message class."""
    return f"{message_class.__module__.split('.')[0]}/msg/{message_class.__name__}"


class BagRecorder:
    """Records ``topics`` ([(topic, "package/msg/Name")]) heard by ``node`` into a new bag at
    ``path`` until ``close()`` (or the end of a ``with`` block). ``counts``: messages written
    per topic (the fully qualified names the bag has)."""

    def __init__(self, node, path, topics, storage: str = "mcap"):
        self._node = node
        self._bag = BagWriter(path, storage)
        self.path = self._bag.path
        self._lock = threading.Lock()  # a multi-threaded executor may call back concurrently
        self._subscriptions = []
        self.counts: dict[str, int] = {}
        try:
            for topic, name in topics:
                topic = node.resolve_topic_name(topic)  # as the bag names it: fully qualified
                self._bag.add_topic(topic, name)
                self.counts[topic] = 0
                self._subscriptions.append(node.create_subscription(
                    message_class(name), topic, partial(self._write, topic), QOS, raw=True))
        except BaseException:
            self.close()
            raise

    def _write(self, topic: str, raw: bytes) -> None:
        # system time, as ros2 bag record's receive times; at the callback, not at the DDS
        # reception (rclpy's EventsExecutor cannot call back with the message info), so two
        # topics may be stamped out of their order of arrival (read_joint_states says how often)
        received = time.time_ns()
        with self._lock:
            if self._bag is not None:  # not closed
                self._bag.write(topic, received, raw)
                self.counts[topic] += 1

    def close(self) -> None:
        with self._lock:
            if self._bag is None:
                return
            for sub in self._subscriptions:
                self._node.destroy_subscription(sub)
            self._subscriptions = []
            self._bag.close()
            self._bag = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
