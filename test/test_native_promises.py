"""What the native entry points promise at the edges (control/native.py, robodyn_law.h), called
through our C harness (robodyn_ros/native/harness.c, gcc): a law swap continues from the command
the drive holds, the observer keeps nothing of a step it refuses and can be reset from C, a handle
refuses an owner changed under it, and what the header marks const is never written."""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from robodyn_ros.apps.benchmarks import native as harness
from robodyn_ros.apps.benchmarks.dynamics import puma
from robodyn_ros.control import native
from robodyn_ros.control.law import load_law
from robodyn_ros.control.momentum_observer import MomentumObserver

DT = 1e-3
RATE = 1000.0   # N m/s: Franka's kMaxTorqueRate
# stateful settings, as test_native.py's
LAWS = {"computed_torque": {"kp": 100.0, "kd": 20.0, "ki": 50.0},
        "pd_gravity": {"kp": 200.0, "kd": 20.0, "ki": 20.0},
        "adaptive_computed_torque": {}, "operational_space": {}, "cartesian_impedance": {}}
POSE = np.array([0.3, -0.8, 0.6, 0.2, 0.5, 0.1])   # the PUMA's shoulder holds 28.7 N m there


@pytest.fixture(scope="module")
def lib():
    try:
        return harness.harness()
    except harness.Unavailable as why:
        pytest.skip(str(why))


@pytest.fixture(scope="module")
def model():
    return puma()[1]


def at_rest(n, calls, q=POSE):
    """Harness rows holding ``q`` at rest, the reference there: q, q̇, q_d, q̇_d, q̈_d, dt."""
    zero = np.zeros(n)
    return np.ascontiguousarray(np.tile(np.hstack([q, zero, q, zero, zero, [DT]]), (calls, 1)))


def test_a_law_swap_continues_from_the_command_the_drive_holds(lib, model):
    n = model.dof
    old = native.native_law(load_law("pd_gravity")(model, {"kp": 200.0, "kd": 20.0}),
                            rate_limit=RATE)
    out, status, _, finished, _ = harness.threaded(old, at_rest(n, 300))
    assert finished and np.all(status >= 0)
    holds = old.last_command.copy()
    assert np.array_equal(holds, out[-1]) and np.abs(holds).max() > 20.0   # risen to g(q)

    def new(**seed):
        return native.native_law(load_law("computed_torque")(model, {"kp": 100.0, "kd": 20.0}),
                                 rate_limit=RATE, **seed)
    first = {}
    seeded, unseeded, swapped = new(last_command=holds), new(), new()
    assert lib.harness_continue(swapped.address, old.address) == native.OK   # the C swap
    for name, handle in (("seeded", seeded), ("unseeded", unseeded), ("swapped", swapped)):
        out, status, _, finished, _ = harness.threaded(handle, at_rest(n, 1))
        assert finished and status[0] >= 0
        first[name] = out[0]
    # seeded, from Python or by the C swap: within rate x dt of what the drive holds
    assert np.all(np.abs(first["seeded"] - holds) <= RATE * DT + 1e-9)
    assert np.array_equal(first["swapped"], first["seeded"])
    # a handle started at zero pulls the torque down to about 0 in one cycle: what a swap did
    assert np.abs(first["unseeded"] - holds).max() > 20.0


def test_calls_within_one_drive_cycle_share_its_step(model):
    """A host that calls twice in one drive cycle (catching up after an overrun: dt the time
    since the call before) gets one cycle's change over both: the drive may apply the command of
    the cycle before and the last of them one cycle apart. A period later, one step more."""
    n = model.dof
    handle = native.native_law(load_law("pd_gravity")(model, {"kp": 200.0, "kd": 20.0}),
                               rate_limit=RATE)
    zero, effort = np.zeros(n), np.zeros(n)
    step = RATE * DT
    commands = []
    for dt in (DT, 1e-5, 1e-5, 3e-4, DT, 2e-4):   # g(q) ~ 29 N m away: every call rate-limited
        assert handle(POSE, zero, POSE, zero, zero, dt, effort) >= 0
        commands.append(effort.copy())
    commands = np.array(commands)
    # the first four within one period of each other: together within one step of 0
    np.testing.assert_array_less(np.abs(commands[:4]).max(axis=0), step * (1 + 1e-12))
    assert np.abs(commands[0]).max() == pytest.approx(step)
    # a period after the first: a step more, and the last one, 0.2 ms later, none further
    assert np.abs(commands[4]).max() == pytest.approx(2 * step)
    np.testing.assert_array_less(np.abs(commands[5] - commands[:5]).max(axis=0),
                                 step * (1 + 1e-12))


def test_a_seed_or_a_swap_that_cannot_hold_is_refused(lib, model):
    law = load_law("computed_torque")(model, {"kp": 100.0, "kd": 20.0})
    for bad in (np.zeros(model.dof - 1), np.full(model.dof, np.inf)):
        with pytest.raises(ValueError, match="last_command must be 6 values"):
            native.native_law(law, last_command=bad)
    nan = native.native_law(law, rate_limit=RATE, last_command=np.full(model.dof, np.nan))
    effort = np.zeros(model.dof)
    zero = np.zeros(model.dof)
    assert nan(POSE, zero, POSE, zero, zero, DT, effort) >= 0   # NaN: no limit on the first one
    assert np.abs(effort).max() > 20.0
    two = load_law("computed_torque")(two_joints(), {"kp": 1.0, "kd": 1.0})
    other = native.native_law(two)
    handle = native.native_law(law)
    before = handle.last_command.copy()
    assert lib.harness_continue(handle.address, other.address) == native.BAD_INPUT
    observer = MomentumObserver(model, 30.0)
    observer.reset(POSE, zero)
    assert lib.harness_continue(handle.address, native.native_observer(observer).address) \
        == native.BAD_INPUT
    assert np.array_equal(handle.last_command, before)


def two_joints():
    from robodyn_ros.dynamics.link import Link
    from robodyn_ros.dynamics.model import RobotModel
    return RobotModel([Link("a", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3)),
                       Link("b", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3))])


def _state(observer):
    return observer._state[[0, 1, 4, 5]].copy(), observer.residual.copy()


def test_the_observer_keeps_nothing_of_a_step_it_refuses_and_is_reset_from_c(lib, model):
    n = model.dof
    rows = harness.inputs(n, 400, observer=True)
    mine, peer = MomentumObserver(model, 30.0), MomentumObserver(model, 30.0)
    for observer in (mine, peer):
        observer.reset(rows[0, :n], rows[0, n:2 * n])
    handle = native.native_observer(mine)
    residual = np.zeros(n)
    for r in rows[1:200]:
        assert handle(*(np.ascontiguousarray(r[k * n:(k + 1) * n]) for k in range(3)), r[3 * n],
                      residual) == native.OK
    kept = _state(mine)
    q, qd, tau = (np.ascontiguousarray(rows[200, k * n:(k + 1) * n]) for k in range(3))
    residual[:] = 7.0
    # finite inputs whose momentum overflows, and a NaN: nothing written, nothing kept
    assert handle(q, 1e200 * np.ones(n), tau, DT, residual) == native.NONFINITE_EFFORT
    assert handle(q, qd, np.full(n, np.nan), DT, residual) == native.BAD_INPUT
    assert np.all(residual == 7.0)
    for now, then in zip(_state(mine), kept):
        assert np.array_equal(now, then)
    with pytest.raises(ValueError, match="not finite"):   # Python's step alike
        mine.step(q, 1e200 * np.ones(n), tau, DT)
    for now, then in zip(_state(mine), kept):
        assert np.array_equal(now, then)
    # reset from C at the next good state: from there, the Python observer reset there, bit for bit
    assert lib.harness_reset(handle.address, q.ctypes.data, qd.ctypes.data) == native.OK
    peer.reset(q, qd)
    assert not mine.residual.any()
    for r in rows[201:]:
        x = [np.ascontiguousarray(r[k * n:(k + 1) * n]) for k in range(3)]
        assert handle(*x, r[3 * n], residual) == native.OK
        assert np.array_equal(residual, peer.step(*x, r[3 * n]))
    bad = np.full(n, np.nan)
    assert lib.harness_reset(handle.address, bad.ctypes.data, qd.ctypes.data) == native.BAD_INPUT
    assert np.array_equal(residual, mine.residual)


def test_a_handle_refuses_an_owner_changed_under_it(lib, model):
    """The observer's follow() gives it other parameters (and arrays) than the handle was built
    on; a task-space law's set_target changes what its step tracks: the old handle says STALE and
    writes nothing, a new one steps."""
    n, zero = model.dof, np.zeros(model.dof)
    observer = MomentumObserver(model, 30.0)
    observer.reset(POSE, zero)
    old = native.native_observer(observer)
    residual = np.full(n, 7.0)
    assert old(POSE, zero, zero, DT, residual) == native.OK
    law = load_law("adaptive_computed_torque")(model)
    observer.follow(law)
    observer.reset(POSE, zero)
    residual[:] = 7.0
    assert old(POSE, zero, zero, DT, residual) == native.STALE
    assert old.reset(POSE, zero) == native.STALE and np.all(residual == 7.0)
    assert native.native_observer(observer)(POSE, zero, zero, DT, residual) == native.OK

    impedance = load_law("cartesian_impedance")(model)
    effort = np.full(n, 7.0)
    before = native.native_law(impedance)
    assert before(POSE, zero, POSE, zero, zero, DT, effort) >= 0
    impedance.set_target([0.4, 0.1, 0.5], np.eye(3))
    effort[:] = 7.0
    assert before(POSE, zero, POSE, zero, zero, DT, effort) == native.STALE and np.all(effort == 7.0)
    after = native.native_law(impedance)
    assert after(POSE, zero, POSE, zero, zero, DT, effort) >= 0
    impedance.set_target([0.4, 0.1, 0.6], np.eye(3))   # a new target of the same kind: shared
    assert after(POSE, zero, POSE, zero, zero, DT, effort) >= 0
    impedance.clear_target()
    assert after(POSE, zero, POSE, zero, zero, DT, effort) == native.STALE


def _const_bytes(handle):
    """What robodyn_law.h marks const, read as a C caller would through the struct: its own
    words, the model, the limits and the table."""
    words = handle.struct
    n = words[native.DOF]
    regions = [(handle.address, native.WORDS * 8), (words[native.MODEL], words[native.MODEL_SIZE] * 8),
               (words[native.TABLE], native.TABLE_WORDS * 8)]
    regions += [(words[k], n * 8) for k in (native.EFFORT_LIMIT, native.RATE_LIMIT) if words[k]]
    return [ctypes.string_at(int(address), int(size)) for address, size in regions]


def test_what_the_header_marks_const_is_never_written(lib, model):
    n = model.dof
    rows = harness.inputs(n, 500)
    for name, params in LAWS.items():
        handle = native.native_law(load_law(name)(model, params), 0.5 * model.effort_limit, RATE)
        before = _const_bytes(handle)
        _, status, _, finished, _ = harness.threaded(handle, rows)
        assert finished and np.all(status >= 0)
        assert _const_bytes(handle) == before, name
    # the observer following the adaptive law as it learns: the estimate moves every step
    law, observer = load_law("adaptive_computed_torque")(model), MomentumObserver(model, 30.0)
    observer.follow(law)
    observer.reset(rows[0, :n], rows[0, n:2 * n])
    step, observe = native.native_law(law), native.native_observer(observer)
    before = _const_bytes(observe)
    effort, residual = np.zeros(n), np.zeros(n)
    for row in rows[1:]:
        q, qd, q_ref, qd_ref, qdd_ref = (np.ascontiguousarray(row[i * n:(i + 1) * n]) for i in range(5))
        assert step(q, qd, q_ref, qd_ref, qdd_ref, DT, effort) >= 0
        assert observe(q, qd, law.torque.copy(), DT, residual) == native.OK
    assert not np.array_equal(law.estimates, law.initial_estimates)
    assert _const_bytes(observe) == before


CALLER = """#include "robodyn_law.h"
int32_t call(%s robodyn_law *law, const double *x, double *out)
{
    return robodyn_law_step(law, x, x, x, x, x, 0.001, out);
}
"""


def test_the_header_says_a_call_writes_the_law(tmp_path):
    """A caller holding the law as const cannot step it: the step writes the law's state."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed")
    results = {}
    for qualifier in ("", "const"):
        source = tmp_path / f"caller{qualifier}.c"
        source.write_text(CALLER % qualifier)
        results[qualifier] = subprocess.run(
            [gcc, "-std=c11", "-Wall", "-Werror", "-c", f"-I{native.header_path().parent}",
             str(source), "-o", str(tmp_path / "caller.o")], capture_output=True, text=True)
    assert results[""].returncode == 0, results[""].stderr
    assert results["const"].returncode != 0 and "const" in results["const"].stderr
