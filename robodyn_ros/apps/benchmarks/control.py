"""Compute time of the control laws per control cycle: computed torque (004 eq. 4.1, one Newton–Euler
pass), the adaptive computed torque of Slotine & Li with ``adapt: payload`` (one compiled call:
the Slotine–Li pass with the last body's 10 regressor columns, the effort and the update), and the
task-space laws ``operational_space`` and ``cartesian_impedance`` (one compiled call each: two frame
passes, CRBA, Cholesky factorisations, one Newton–Euler pass), each at its defaults.

Issue 21's target for the task-space laws is relative: under twice ``computed_torque`` on the same
arm, the two timed with their rounds interleaved so that both see the same load on a shared machine.
They are timed on the PUMA and, when example-robot-data (a test extra) is installed, on the 7-joint
Panda as well."""
import importlib.metadata
import itertools
import warnings
from pathlib import Path

import numpy as np

from ...control.adaptive import AdaptiveComputedTorque
from ...control.law import load_law
from ...control.task_space import CartesianImpedance, OperationalSpace
from ...dynamics import RobotModel
from .dynamics import puma
from .timing import figure, paired, per_call

TASK_SPACE_RATIO = 2.0   # issue 21: each task-space law under twice computed_torque's cost
PANDA = "cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf"


def panda():
    """example-robot-data's Panda, base to flange (7 joints), or None without the package."""
    try:
        urdf = Path(importlib.metadata.distribution("example-robot-data").locate_file(PANDA))
    except importlib.metadata.PackageNotFoundError:
        return None
    if not urdf.is_file():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the fingers left out, rightly said
        return RobotModel.from_urdf(urdf, root_link="panda_link0", tip_link="panda_link8")


def _state(model):
    rng = np.random.default_rng(1)
    return rng.uniform(-1.0, 1.0, (5, model.dof))


def _moving(model, cycles=1000, dt=1e-3):
    """``_state`` moved along a smooth motion sampled every ``dt`` (1 s round, 0.2 rad each way),
    as (q, q̇, q_d, q̇_d, q̈_d) tuples cycled for ever: ``cartesian_impedance`` starts each cycle's
    eigendecomposition from the last one's, which the same state over and over would flatter."""
    q, qd, q_des, qd_des, qdd_des = _state(model)
    phase = 2.0 * np.pi * np.arange(cycles) / cycles
    shift = 0.2 * np.sin(phase)[:, None] * np.linspace(1.0, 0.5, model.dof)
    states = [tuple(np.ascontiguousarray(x) for x in (q + s, qd, q_des + s, qd_des, qdd_des))
              for s in shift]
    return itertools.cycle(states).__next__


def _computed_torque(model):
    return load_law("computed_torque")(model, {"kp": 100.0, "kd": 20.0})


def _task_space_rows(model, arm):
    """Each task-space law beside computed_torque on ``model``, rounds interleaved, both on the
    same moving state."""
    state = _moving(model)
    peer = _computed_torque(model)
    rows = []
    for name, law in (("operational-space law", OperationalSpace(model)),
                      ("Cartesian impedance law", CartesianImpedance(model))):
        (best, median), (p_best, _) = paired(lambda: law.compute(*state(), 1e-3),
                                             lambda: peer.compute(*state(), 1e-3))
        row = figure(f"{name} ({arm}), compute per cycle (us)", best * 1e6, median * 1e6,
                     peer=p_best * 1e6, target=f"<= {TASK_SPACE_RATIO:g}x computed_torque",
                     note=f"peer: computed_torque on the {arm}, same run")
        row["ratio"] = best / p_best
        row["met"] = bool(row["ratio"] <= TASK_SPACE_RATIO)
        rows.append(row)
    return rows


def _observer_row(model, q, qd, q_des, qd_des, qdd_des):
    """What the collision guard adds to a cycle (issue 28: at most 5 us on the PUMA): one observer
    step and one detector check, timed beside computed_torque's compute, rounds interleaved."""
    from ...control.collision import CollisionDetector, Thresholds
    from ...control.momentum_observer import MomentumObserver
    law = _computed_torque(model)
    observer = MomentumObserver(model, 50.0)
    observer.reset(q, qd)
    detector = CollisionDetector(Thresholds(model.joint_names, 1e9, 0.0, 50.0), model.joint_names)
    tau = law.compute(q, qd, q_des, qd_des, qdd_des, 1e-3)

    def guard():
        detector.check(0.0, observer.step(q, qd, tau, 1e-3), qd)
    (best, median), (p_best, _) = paired(guard, lambda: law.compute(q, qd, q_des, qd_des,
                                                                    qdd_des, 1e-3))
    row = figure("momentum observer + collision check, per cycle (us)", best * 1e6, median * 1e6,
                 peer=p_best * 1e6, target="<= 5 us", note="peer: computed_torque, same run")
    row["ratio"] = best / p_best
    row["met"] = bool(best * 1e6 <= 5.0)
    return row


NATIVE_LAWS = {"computed_torque": {"kp": 100.0, "kd": 20.0}, "pd_gravity": {"kp": 100.0, "kd": 20.0},
               "adaptive_computed_torque": {}, "operational_space": {}, "cartesian_impedance": {}}


def _native_rows(model, arm):
    """Each law's C entry point called from C (``native``: the harness, compiled with gcc): its
    cost per call beside ``compute``'s from Python and a Newton–Euler pass in plain C (the
    floor), medians of 3 interleaved rounds with their spread; and the worst of 10,000 calls from
    a SCHED_FIFO pthread while Python holds the GIL."""
    from ...control.native import native_law
    from . import native
    try:
        native.harness()
    except native.Unavailable as why:
        return [figure(f"native steps ({arm})", float("nan"), float("nan"), note=str(why))]
    rows, floors, rounds = [], [], native.inputs(model.dof, 10_000)
    for name, params in NATIVE_LAWS.items():
        law = load_law(name)
        handle = native_law(law(model, params))
        ours, python, c_floor = native.costs(handle, law(model, params), model)
        *_, nanoseconds, finished, realtime = native.threaded(handle, rounds, priority=80)
        alone, contended = (native.python_times(law(model, params), rounds[:2000], busy).max() / 1e3
                            for busy in (False, True))
        floors += c_floor
        (m, lo, hi), (p, p_lo, p_hi) = native.spread(ours), native.spread(python)
        row = figure(f"{name} native step ({arm}), per call (us)", lo * 1e6, m * 1e6, peer=p * 1e6,
                     note=f"spread {lo * 1e6:.3g}-{hi * 1e6:.3g}; peer: compute from Python, "
                          f"median {p * 1e6:.3g} ({p_lo * 1e6:.3g}-{p_hi * 1e6:.3g}); worst of "
                          f"10,000 from a {'SCHED_FIFO' if realtime else 'SCHED_OTHER'} pthread, "
                          f"GIL held{'' if finished else ' (it WAITED for the GIL)'}: "
                          f"{nanoseconds.max() / 1e3:.3g} us, 99.9th percentile "
                          f"{np.percentile(nanoseconds, 99.9) / 1e3:.3g} us; compute's worst of "
                          f"2,000 from a Python thread: {alone:.3g} us, {contended:.3g} us while "
                          "another holds the GIL")
        row["ratio"] = m / p
        row["worst"] = nanoseconds.max() / 1e3
        row["python worst"] = [alone, contended]
        rows.append(row)
    m, lo, hi = native.spread(floors)
    rows.append(figure(f"C Newton-Euler pass, the floor ({arm}), per call (us)", lo * 1e6, m * 1e6,
                       note=f"spread {lo * 1e6:.3g}-{hi * 1e6:.3g} over the laws' rounds; gravity "
                            "and friction, plain C (robodyn_ros/native/harness.c), gcc -O2"))
    return rows


def run():
    _, model = puma()
    # dt = 0 for the adaptive law: the update's whole work, the estimates left as they are (the
    # same state a million times over would otherwise drive them anywhere)
    laws = [("computed-torque law", _computed_torque(model), 1e-3),
            ("adaptive computed-torque law (adapt: payload)", AdaptiveComputedTorque(model), 0.0)]
    q, qd, q_des, qd_des, qdd_des = _state(model)
    rows = []
    for name, law, dt in laws:
        best, median = per_call(lambda: law.compute(q, qd, q_des, qd_des, qdd_des, dt))
        row = figure(f"{name}, compute per cycle (us)", best * 1e6, median * 1e6, target="<= 20 us")
        row["met"] = bool(best * 1e6 <= 20.0)
        rows.append(row)
    rows.append(_observer_row(model, q, qd, q_des, qd_des, qdd_des))
    rows += _task_space_rows(model, "PUMA")
    arm = panda()
    if arm is None:
        rows[-1]["note"] += "; the Panda's rows left out: example-robot-data is not installed"
    else:
        rows += _task_space_rows(arm, "Panda")
    rows += _native_rows(model, "PUMA")
    if arm is not None:
        rows += _native_rows(arm, "Panda")
    return {"robot": "PUMA 560; the task-space laws on the 7-joint Panda too", "rows": rows}
