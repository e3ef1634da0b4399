"""The fault matrix over DDS: ``computed_torque_controller`` in a process of its own, driven with
``config/franka_controller.yaml`` (``computed_torque`` at the file's gains, the momentum
observer on the measured torque, reaction ``stop``), against this process's ``Robot``
(``fault_robot.py``) with one fault per row (``fault_rows.py``).

Before each row the arm is brought back to a known footing outside the row's window: a
collision reset, the parameters a row changed set back, active, holding where it is. The row: a
FollowJointTrajectory goal to the other of A and B, the fault ``fault_at`` s into it.
"""
from __future__ import annotations

import dataclasses
import gc
import time
from pathlib import Path

import numpy as np

from ..commands import RunFailed
from .fault_robot import Operator, PERIOD_NS, Robot
from .fault_rows import (CONTROLLER, LOW_LIMITS, Q_A, Q_B, Q_C, Fault, Form, franka_file,
                         outcome, panda)

START_TIMEOUT = 300.0   # s (wall): the controller up and commanding (its start may compile kernels:
                        # 2.5 min on the loaded 2-core machine when numba's cache was stale)
ANSWER_TIMEOUT = 10.0   # s (wall): a request's answer
SETTLE = 0.3            # s the arm holds before a row
HISTORY = 0.2           # s recorded before a row that its judge sees (the drive's last command)
GAIN = 50.0             # 1/s: the observer's (demo drive's)
# N m: above what the payload nobody models and the motion leave in the residual of the measured
# torque (up to 18 on joint 2 and 1.9 on the wrist in the rows without a push, on main), below
# what the push gives (45 on joint 2 already for 85 N)
THRESHOLDS = [25.0, 30.0, 25.0, 25.0, 6.0, 6.0, 6.0]
PUSH = [0.0, 100.0, -100.0, 0.0, 0.0, 0.0]   # N (base frame) at the hand: the collision
CHECK_EVERY = 100       # cycles between looks at the controller's process
# s this process may lose at once in a row: a longer stall of the states than the row's own fault
# (in a goal's motion the law's torque moves up to some 0.1 N m a ms: 20 ms of it, a 2 N m step on
# main); and the runs of a row at most. (Under SCHED_FIFO this process slipped less, and the
# controller, starved, fell 300 ms behind: both run under the default policy.)
MAX_SLIP, ATTEMPTS = 0.02, 3


def controller_file(logs: Path, model_urdf: Path) -> tuple[Path, dict]:
    """config/franka_controller.yaml with the matrix's overrides, written into ``logs``: its path
    and the parameters."""
    import yaml
    config = franka_file()
    params = config[CONTROLLER]["ros__parameters"]
    params.update(urdf_file=str(model_urdf), control_law="computed_torque",
                  collision_observer_gain=[GAIN], collision_thresholds=THRESHOLDS,
                  collision_reaction="stop", diagnostic_period=0.5)
    path = logs / "faults_controller.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, params


class Matrix:
    """The running loop of the module docstring: ``row(fault)`` runs one row and returns its
    ``Outcome``."""

    def __init__(self, procs, logs: Path, form: Form):
        from rclpy.node import Node
        self.model, urdf = panda()
        self.file, params = controller_file(logs, urdf)
        # what a row may change, as the file sets it
        self.defaults = {name: params[name] for name in ("control_law", "on_deactivate",
                                                         "effort_limits", "command_topic")}
        self.procs, self.form = procs, form
        procs.start(CONTROLLER, "robodyn_ros.nodes.controller", {}, params_file=self.file)
        self._drive_node = Node("fault_drive", enable_rosout=False)
        self._operator_node = Node("fault_operator", enable_rosout=False)
        self.robot = Robot(self._drive_node, self.model, urdf.read_text(), Q_A,
                           self.defaults["command_topic"])
        self.op = Operator(self._operator_node)
        self._pose = 0   # the goal of the last row: Q_A (0) or Q_B (1)
        self._changed: dict = {}
        try:
            self.bring_up()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ running the arm
    def run(self, seconds: float, plan=()) -> None:
        """``seconds`` of drive cycles, ``plan`` (s from now, action) carried out on time."""
        robot = self.robot
        start = robot.now
        plan = sorted(((start + round(s * 1e9), i, action) for i, (s, action) in enumerate(plan)),
                      key=lambda p: p[:2])
        end = start + round(seconds * 1e9)
        while robot.now < end:
            while plan and plan[0][0] <= robot.now:
                plan.pop(0)[2]()
            robot.cycle()
            if robot.k % CHECK_EVERY == 0:
                self.procs.check()

    def until(self, done, what: str, timeout: float = ANSWER_TIMEOUT) -> None:
        """Drive cycles until ``done()`` (RunFailed after ``timeout`` s of wall time)."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise RunFailed(f"{what}: nothing after {timeout:g} s (the controller's log: "
                                f"{self.procs.log(CONTROLLER)})")
            self.run(10 * PERIOD_NS * 1e-9)

    def answer(self, future, what: str, timeout: float = ANSWER_TIMEOUT):
        self.until(future.done, what, timeout)
        return future.result()

    def bring_up(self) -> None:
        """The controller up, active and commanding, its state heard (it publishes it to a
        listener it has seen)."""
        self.until(lambda: self.op.ready(False), "the controller's lifecycle", START_TIMEOUT)
        self._activate()   # configured first where it waits for a person (autostart false)
        self.until(lambda: self.op.ready(True), "the controller's services", START_TIMEOUT)
        self.configure(control_law="computed_torque")   # whatever a first activation chose
        count = len(self.robot.answers)
        self.until(lambda: len(self.robot.answers) > count + 100, "the controller's answers",
                   START_TIMEOUT)

    def _activate(self) -> None:
        # at bring-up the node may still be configuring itself (autostart: compiling kernels)
        label = self.answer(self.op.call("get_state"), "get_state", START_TIMEOUT).current_state.label
        for transition, before in (("configure", "unconfigured"), ("activate", "inactive")):
            if label == before:
                # configure loads the model and the compiled kernels (or compiles them)
                if not self.answer(self.op.transition(transition), transition,
                                   START_TIMEOUT).success:
                    raise RunFailed(f"the controller refused to {transition} (its log: "
                                       f"{self.procs.log(CONTROLLER)})")
                label = "inactive" if transition == "configure" else "active"

    def recover(self) -> None:
        """The known footing of the module docstring, then SETTLE s of holding."""
        self._activate()
        self.answer(self.op.call("reset_collision"), "reset_collision")   # none: refused, fine
        if self._changed:
            self.configure(**{k: self.defaults[k] for k in self._changed})
            self._changed = {}
        self.answer(self.op.call("hold"), "hold")
        self.run(SETTLE)

    def configure(self, **values) -> None:
        """Set parameters, waiting for the answer: RunFailed with the reason if refused."""
        for result in self.answer(self.op.set(**values), "parameters").results:
            if not result.successful:
                raise RunFailed(f"the controller refused {values}: {result.reason}")

    def set(self, **values) -> None:
        """Change parameters now (the answer is not waited for: the row goes on)."""
        self._changed.update(values)
        self.op.set(**values)

    # ------------------------------------------------------------------ a row
    def row(self, fault: Fault):
        """The row of ``fault``: run again (up to ATTEMPTS times) when this process lost more
        than MAX_SLIP s at once in it, a stall nobody asked for."""
        for attempt in range(1, ATTEMPTS + 1):
            # what earlier rows recorded is left out of the collector's passes: a full one over
            # it stopped this process for tens of ms
            gc.collect()
            gc.freeze()
            result = self._row(fault)
            if self.robot.largest_slip <= MAX_SLIP * 1e9:
                break
        return dataclasses.replace(result, attempts=attempt)

    def _row(self, fault: Fault):
        form, robot = self.form, self.robot
        self.recover()
        if fault.kind == "reactivate":
            self._changed["on_deactivate"] = fault.value
            self.configure(on_deactivate=fault.value)
        self._pose = 1 - self._pose
        target = (Q_A, Q_B)[self._pose]
        robot.forget(robot.now - round(HISTORY * 1e9))
        start, slipped, robot.largest_slip = robot.now, robot.slipped, 0
        self.op.goal(self.model.joint_names, target, form.duration)
        plan, extent = self._plan(fault)
        self.run(form.duration + form.after + extent, [(form.fault_at + s, a) for s, a in plan])
        return self._outcome(fault, start, start + round(form.fault_at * 1e9),
                             (robot.slipped - slipped) * 1e-9)

    def _plan(self, fault: Fault):
        """(s after the fault's onset, action) of ``fault``, and how long it lasts beyond the
        row's ordinary length."""
        robot, form, episode = self.robot, self.form, self.form.episode
        kind, value = fault.kind, fault.value

        def keep():
            robot.withheld = []

        def offset(seconds):
            robot.offset_ns = round(seconds * 1e9)


        if kind in ("stall", "burst"):
            seconds = value * (1e-3 if kind == "stall" else PERIOD_NS * 1e-9)
            return [(0.0, keep), (seconds, lambda: robot.release(burst=kind == "burst"))], seconds
        if kind == "offset":
            return [(0.0, lambda: offset(value)), (episode, lambda: offset(0.0))], 0.0
        if kind == "reactivate":
            return [(0.0, lambda: self.op.transition("deactivate")),
                    (episode, lambda: self.op.transition("activate"))], episode
        if kind == "switch":
            return [(0.0, lambda: self.set(control_law="gravity_compensation")),
                    (episode, lambda: self.set(control_law="computed_torque"))], 0.0
        if kind == "preempt":
            return [(0.0, lambda: self.op.goal(self.model.joint_names, Q_C,
                                               form.duration - form.fault_at))], 0.0
        if kind == "limits":
            return [(0.0, lambda: self.set(effort_limits=LOW_LIMITS))], 0.0
        if kind == "collision":
            return [(0.0, lambda: robot.push(PUSH, episode))], 0.0
        return [], 0.0

    def _outcome(self, fault: Fault, start: int, fault_at: int, slipped: int):
        robot = self.robot
        end = robot.now
        sent = np.array([t for t, _ in robot.commands], dtype=np.int64)
        order = np.argsort(sent, kind="stable")   # two threads of the controller may publish
        sent, values = sent[order], np.array([v for _, v in robot.commands])[order]
        seconds = lambda ns: (np.asarray(ns) - robot.t0) * 1e-9   # noqa: E731
        latencies, future = [], 0
        for at, stamp, _ in robot.answers:
            published = [t for t in robot.published.get(stamp, ()) if t <= at]
            if not published or not start <= published[-1] < end:
                continue
            future += at < stamp   # answered before its stamp's time: a future-stamped state used
            i = np.searchsorted(sent, at, side="right") - 1   # the command of this cycle
            if i >= 0:
                latencies.append((seconds(published[-1]), (sent[i] - published[-1]) * 1e-9))
        detection = self._detection(start, end, sent)
        return outcome(fault, seconds(sent), values, seconds(start), seconds(fault_at),
                       seconds(end), latencies, future, slipped, detection)

    def _detection(self, start: int, end: int, sent) -> dict:
        """The collision's report and the cycle that detected it: whether the answer to the
        detecting state held the measured position (the reaction ``stop`` in the detection
        cycle), and whether its command left before the report (the rest after it)."""
        from control_msgs.msg import JointTrajectoryControllerState
        from rclpy.serialization import deserialize_message
        reports = [(at, status) for at, status in self.robot.events if start <= at < end]
        if not reports:
            return {"detected": False}
        reported, status = reports[0]
        values = {kv.key: kv.value for kv in status.values}
        stamp = round(float(values["time (s)"]) * 1e9)
        answer = next(((at, raw) for at, s, raw in self.robot.answers if abs(s - stamp) < 1000),
                      None)
        if answer is None:
            return {"detected": True, "answered": False}
        state = deserialize_message(answer[1], JointTrajectoryControllerState)
        held = np.allclose(state.reference.positions, state.feedback.positions, atol=1e-9)
        command = sent[np.searchsorted(sent, answer[0], side="right") - 1]
        return {"detected": True, "answered": True, "reaction_in_cycle": bool(held),
                "command_before_report": bool(command <= reported),
                "report_after_command_us": (reported - command) * 1e-3,
                "link": values.get("isolated link", "")}

    def close(self) -> None:
        self.op.close()
        self._drive_node.destroy_node()
        self._operator_node.destroy_node()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
