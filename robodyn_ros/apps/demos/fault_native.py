"""The fault matrix on the native path: a law's C entry point (``control/native.py``, built from
``config/franka_controller.yaml``'s law, gains, limits and drive) called by our C harness
(``robodyn_ros/native/harness.c``, ``harness_call``) the way a host's ``update()`` calls it, once
per drive cycle, against the same arm as the DDS path (MuJoCo's Panda with the payload nobody
models, behind a drive that adds MuJoCo's gravity and damping). No transport and nothing to wait
for: the host's clock is simulated; each call's own CPU time is measured in C.

The faults that apply to a host: a stall (its ``update()`` not called for a while: it resumes
with ``dt`` the time since its last call), a burst (after such a gap it steps every state it
missed at once, back to back, each ``dt`` the time since the call before: the last call's own
duration), a law switch (a new handle, ``pd_gravity``, then back to ``computed_torque``, at the
file's gains), effort limits lowered (a new handle of the same law). A host here does what
doc/native.md tells it: it builds the new handle, makes the swap and calls it.
"""
from __future__ import annotations

import numpy as np

from ...control.native import OK
from ..commands import RunFailed
from .fault_rows import CONTROLLER, LOW_LIMITS, PERIOD, Q_A, Q_B, Fault, Form, franka_file, outcome

SETTLE = 0.3    # s the arm holds before the goal (history for the judge)


class Host:
    """A host's loop around one handle at a time, against the plant (module docstring)."""

    def __init__(self, model, urdf: str):
        from ...control.law import load_law
        from ...control.native import native_law
        from ...control.drive import compensation_bits
        from ...control.trajectory import TrajectorySampler
        from ...sim import make_plant
        from ..benchmarks.native import harness
        from .fault_robot import PAYLOAD
        p = franka_file()[CONTROLLER]["ros__parameters"]
        self.model, self._harness = model, harness()
        self._bare, self._plant = make_plant("mujoco", model, PERIOD, urdf,
                                             payload_mass=PAYLOAD[0], payload_com=PAYLOAD[1])
        self._adds = compensation_bits(p["drive_compensates"])
        self.gains = {"kp": p["kp"], "kd": p["kd"], "friction": p["friction"]}
        self.limits = np.array(p["effort_limits"], dtype=float)
        self._build = lambda law, limits: native_law(law, limits, p["effort_rate_limit"][0],
                                                     p["drive_compensates"])
        self._load = load_law
        self.law = self._law("computed_torque")
        self.handle = self._build(self.law, self.limits)
        n = model.dof
        self.q, self.qd, self.held = np.array(Q_A, dtype=float), np.zeros(n), np.zeros(n)
        self.sampler = TrajectorySampler(model.joint_names, self.q, 0.0)
        self.k, self.last_call = 0, None   # the cycle; the host time of the last call
        self.commands, self.latencies = [], []
        self._row = np.zeros(5 * n + 1)
        self._out, self._ns = np.zeros(n), np.zeros(1, dtype=np.int64)

    def _law(self, name: str):
        """The law ``name`` with the file's gains (those it takes)."""
        cls = self._load(name)
        return cls(self.model, {k: v for k, v in self.gains.items() if k in cls.parameters})

    def switch(self, law_name: str | None = None, limits=None) -> None:
        """A new handle: of a new law ``law_name`` (None: the same law), with ``limits``."""
        if law_name is not None:
            self.law = self._law(law_name)
        old, self.handle = self.handle, self._build(self.law, self.limits if limits is None
                                                    else limits)
        # the swap a real-time host makes (robodyn_law_continue, doc/native.md): the new
        # handle's first command starts from what the drive holds
        if self._harness.harness_continue(self.handle.address, old.address) != OK:
            raise RunFailed("the native entry point refused the law swap (robodyn_law_continue)")

    def call(self, t: float, q, qd, when: float) -> None:
        """The host's update() at host time ``when`` on the state measured at ``t``."""
        n = self.model.dof
        dt = 0.0 if self.last_call is None else when - self.last_call
        row = self._row
        row[:n], row[n:2 * n] = q, qd
        row[2 * n:5 * n] = np.concatenate(self.sampler.sample(t))
        row[5 * n] = dt
        status = self._harness.harness_call(self.handle.address, row.ctypes.data,
                                            self._out.ctypes.data, self._ns.ctypes.data)
        self.last_call = when + self._ns[0] * 1e-9
        if status >= 0:
            self.held = self._out.copy()
            self.commands.append((when, self.held))
            self.latencies.append((t, self._ns[0] * 1e-9))

    def step(self) -> None:
        """One drive cycle of the plant under the held command."""
        command = self.held + self._bare.drive_adds(self.q, self.qd, self._adds)
        self.q, self.qd = self._plant.step(self.q, self.qd, command)
        self.k += 1

    def run(self, fault: Fault, form: Form):
        """The row of ``fault``: SETTLE s holding, then the goal to B with the fault in it."""
        from ...control import JointTrajectory
        n = self.model.dof
        start = SETTLE
        goal = JointTrajectory(self.model.joint_names, np.array([form.duration]),
                               np.array(Q_B)[None], np.zeros((1, n)), np.zeros((1, n)))
        fault_at = start + form.fault_at
        gap = fault.value * (1e-3 if fault.kind == "stall" else PERIOD) \
            if fault.kind in ("stall", "burst") else 0.0
        end = start + form.duration + form.after + gap
        missed = []
        while self.k * PERIOD < end - 1e-9:
            t = self.k * PERIOD
            if abs(t - start) < PERIOD / 2:
                self.sampler.set_trajectory(goal, t)
            if abs(t - fault_at) < PERIOD / 2:
                if fault.kind == "switch":
                    self.switch("pd_gravity")
                elif fault.kind == "limits":
                    self.switch(limits=np.array(LOW_LIMITS))
            if fault.kind == "switch" and abs(t - fault_at - form.episode) < PERIOD / 2:
                self.switch("computed_torque")
            if fault_at <= t < fault_at + gap - 1e-9:
                if fault.kind == "burst":
                    missed.append((t, self.q.copy(), self.qd.copy()))
            else:
                when = t
                for state in missed:   # back to back, each after the call before
                    self.call(*state, when)
                    when = self.last_call
                missed = []
                self.call(t, self.q, self.qd, when)
            self.step()
        times = np.array([w for w, _ in self.commands])
        return outcome(fault, times, np.array([c for _, c in self.commands]), start, fault_at, end,
                       self.latencies)


def row(fault: Fault, form: Form, model, urdf: str):
    """A native row's ``Outcome``, on a host and an arm of its own."""
    return Host(model, urdf).run(fault, form)
