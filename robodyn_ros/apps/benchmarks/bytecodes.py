"""How many Python bytecodes the controller's callback runs for one joint state, against the
echo peer's (``benchmarks/echo.py``): the part of a cycle's cost that the machine's noise does not
move. A native profile of the running nodes put what the controller costs above the echo in
Python's bytecode loop, not in its kernels (doc/performance.md), and a count is the same on every
run where a CPU ratio moves by 10 % from one run to the next.

    python -m robodyn_ros.apps.benchmarks.bytecodes    # JSON on stdout

Both nodes run in this process, undriven: states serialized here are handed to their callbacks
(200 to warm them up, then one counted, its stamp new), the controller at rate 0 holding its
start (the latency benchmark's setting), nobody listening but to its state. ``robodyn-ros bench
latency`` runs it in a process of its own.

Then the callbacks are timed as the running nodes meet them: each state after a millisecond in
which other work took the caches, here 8 MB written before every call (``COLD`` states for each
node, taken in turn; the median). Not DDS's, not the executor's: the callback's own cost above
the echo's, with a spread of some 5 % where the CPU ratios of the running nodes spread 10-20 %.
"""
from __future__ import annotations

import functools
import json
import sys
import time
import warnings
from collections import Counter

COLD = 1000   # states timed for each node, caches flushed before each


def _counted(callback, raw: bytes) -> Counter:
    """Bytecodes ``callback(raw)`` runs, per function ('name (file)')."""
    per: Counter = Counter()

    def trace(frame, event, arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            per[f"{code.co_name} ({code.co_filename.rsplit('/', 1)[-1]})"] += 1
        return trace

    sys.settrace(trace)
    try:
        callback(raw)
    finally:
        sys.settrace(None)
    return per


def _cold(callbacks, states) -> list[float]:
    """The median time (us) of each of ``callbacks`` on the ``states`` in turn, a cache flush
    before each call."""
    import numpy as np
    flush, clock = np.ones(1 << 20), time.perf_counter_ns   # 8 MB
    times = np.empty((len(states), len(callbacks)))
    for k, raw in enumerate(states):
        for i, callback in enumerate(callbacks):
            flush += 1.0
            start = clock()
            callback(raw)
            times[k, i] = clock() - start
    return (np.median(times, axis=0) * 1e-3).tolist()


def run() -> dict:
    """{"controller": n, "echo": n, "functions": {...}, "cold_us": {"controller": t, "echo":
    t}, "cold_states": COLD}: the counts of one state, the controller's per function (largest
    first), and the median time of a callback with cold caches."""
    from ..processes import loopback_dds
    loopback_dds()   # before rclpy is imported
    import rclpy
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from ...nodes.controller import ComputedTorqueController
    from ...plumbing.resources import find_share_file
    from .echo import Echo
    from .latency import JOINTS

    rclpy.init()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the PUMA data's link 3 inertia warns, rightly
            controller = ComputedTorqueController(parameter_overrides=[
                Parameter("urdf_file", value=str(find_share_file("urdf/puma560.urdf"))),
                Parameter("friction", value=False), Parameter("state_timeout", value=10.0)])
        echo = Echo()
        msg = JointState(name=JOINTS, position=[0.1] * len(JOINTS), velocity=[0.0] * len(JOINTS))
        states = []
        # 1 ms apart, the newest stamped now: ahead of the clock (beyond future_stamp_tolerance)
        # they would be refused, and the refusal counted and timed instead of the answer
        start = time.time() - (201 + COLD) * 1e-3
        for k in range(201 + COLD):
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(
                round((start + k * 1e-3) * 1e9), 1_000_000_000)
            states.append(serialize_message(msg))
        controller._cartesian.refresh()   # nobody listens to the task frame...
        controller._state.listened = True   # ...but to the state, as in the latency benchmark
        # what the cycle's thread calls with a state it took (its own wait and take aside)
        answer = functools.partial(controller._on_joint_state, start=time.perf_counter())
        for raw in states[:200]:
            answer(raw)
            echo._answer(raw)
        ours, peer = _counted(answer, states[200]), _counted(echo._answer, states[200])
        cold = _cold((answer, echo._answer), states[201:])
        controller.destroy_node()
        echo.destroy_node()
    finally:
        rclpy.shutdown()
    return {"controller": sum(ours.values()), "echo": sum(peer.values()),
            "functions": dict(ours.most_common()),
            "cold_us": {"controller": cold[0], "echo": cold[1]}, "cold_states": COLD}


if __name__ == "__main__":
    print(json.dumps(run()))
