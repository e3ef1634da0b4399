"""The laws' C entry points (control/native.py, robodyn_ros/native/robodyn_law.h), called from our
own C harness (robodyn_ros/native/harness.c, compiled with the system's gcc): 10,000 calls from a
pthread while Python's main thread holds the GIL, every command equal bit for bit to the Python
law's compute followed by the node's command stage (drive.drive_command_into), no numba
allocation, and the harness shown to notice a step that does take the GIL."""
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

from robodyn_ros.apps.benchmarks import native as harness
from robodyn_ros.apps.benchmarks.control import panda
from robodyn_ros.apps.benchmarks.dynamics import puma
from robodyn_ros.control import native
from robodyn_ros.control.drive import DRIVE_COMMAND, compensation_bits
from robodyn_ros.control.law import load_law
from robodyn_ros.control.momentum_observer import MomentumObserver
from robodyn_ros.dynamics.link import Link
from robodyn_ros.dynamics.model import RobotModel

CALLS = 10_000
# stateful settings: an integral, the adaptation, the impedance's filters and rate limit
LAWS = {"computed_torque": {"kp": 100.0, "kd": 20.0, "ki": 50.0},
        "pd_gravity": {"kp": 200.0, "kd": 20.0, "ki": 20.0},
        "adaptive_computed_torque": {},
        "operational_space": {},
        "cartesian_impedance": {}}
COMPENSATES = ["gravity", "friction"]


@pytest.fixture(scope="module")
def built():
    try:
        harness.harness()
    except harness.Unavailable as why:
        pytest.skip(str(why))


@pytest.fixture(scope="module", params=["PUMA", "Panda"])
def arm(request):
    if request.param == "PUMA":
        return puma()[1]
    model = panda()
    if model is None:
        pytest.skip("example-robot-data (the Panda) is not installed")
    return model


def expected_commands(law, model, rows, limit, rate):
    """What the node would publish, call after call: compute, then the command stage."""
    n = model.dof
    index = np.arange(n, dtype=np.intp)
    bits = compensation_bits(COMPENSATES)
    last, out, codes = np.zeros(n), np.zeros((len(rows), n)), []   # the node's starts at 0
    for k, row in enumerate(rows):
        q, qd, q_ref, qd_ref, qdd_ref = (np.ascontiguousarray(row[i * n:(i + 1) * n]) for i in range(5))
        dt = row[5 * n]
        tau = law.compute(q, qd, q_ref, qd_ref, qdd_ref, dt)
        codes.append(DRIVE_COMMAND.call(model.params, bits, q, qd, tau, limit, rate, dt, index, last,
                                        out[k]))
        last = out[k]
    return out, np.array(codes)


def test_every_law_from_a_pthread_while_python_holds_the_gil(built, arm, record_property):
    n = arm.dof
    rows = harness.inputs(n, CALLS)
    # limits that the motion reaches now and then: the stage's every branch runs
    limit, rate = 0.5 * arm.effort_limit, np.full(n, 2000.0)
    _nrt_python.memsys_enable_stats()
    worst, acted = {}, 0
    for name, params in LAWS.items():
        cls = load_law(name)
        handle = native.native_law(cls(arm, params), limit, rate, COMPENSATES)
        allocated = rtsys.get_allocation_stats()
        outputs, status, nanoseconds, finished, _ = harness.threaded(handle, rows, priority=80)
        assert finished, f"{name}: the native calls waited for the GIL"
        assert rtsys.get_allocation_stats() == allocated, f"{name}: the step allocated"
        want, codes = expected_commands(cls(arm, params), arm, rows, limit, rate)
        assert np.all(codes >= 0) and np.all(status >= 0)
        assert np.array_equal(outputs, want), f"{name}: not the Python law's command"
        assert np.array_equal(status & native.SATURATED != 0, codes % (1 << 16) > 0)
        assert np.array_equal(status & native.RATE_LIMITED != 0, codes >= 1 << 16)
        worst[name] = nanoseconds.max() / 1e3
        acted |= np.bitwise_or.reduce(status)
    assert acted == native.SATURATED | native.RATE_LIMITED
    record_property("worst call (us)", worst)
    print(f"{arm.name}: worst of {CALLS} native calls (us): {worst}")


def test_the_observer_from_a_pthread_while_python_holds_the_gil(built, arm):
    n = arm.dof
    rows = harness.inputs(n, CALLS, observer=True)
    mine, peer = MomentumObserver(arm, 30.0), MomentumObserver(arm, 30.0)
    for observer in (mine, peer):
        observer.reset(rows[0, :n], rows[0, n:2 * n])
    outputs, status, _, finished, _ = harness.threaded(native.native_observer(mine), rows[1:])
    assert finished and np.all(status == native.OK)
    want = [peer.step(r[:n].copy(), r[n:2 * n].copy(), r[2 * n:3 * n].copy(), r[3 * n]).copy()
            for r in rows[1:]]
    assert np.array_equal(outputs, want)


def test_an_observer_following_the_adaptive_law_reads_its_estimate_in_place(built):
    """The node's pairing (collision_guard.follow): the observer's model takes the adaptive law's
    estimate at every step; natively it reads the law's buffer, written by the law's own step."""
    model = puma()[1]
    n = model.dof
    rows = harness.inputs(n, 500)
    pairs = []
    for _ in range(2):
        law, observer = load_law("adaptive_computed_torque")(model), MomentumObserver(model, 30.0)
        observer.follow(law)
        observer.reset(rows[0, :n], rows[0, n:2 * n])
        pairs.append((law, observer))
    (law, observer), (peer_law, peer) = pairs
    step, observe = native.native_law(law), native.native_observer(observer)
    effort, residual = np.zeros(n), np.zeros(n)
    for row in rows[1:]:
        q, qd, q_ref, qd_ref, qdd_ref = (np.ascontiguousarray(row[i * n:(i + 1) * n]) for i in range(5))
        assert step(q, qd, q_ref, qd_ref, qdd_ref, row[5 * n], effort) >= 0
        assert observe(q, qd, law.torque.copy(), row[5 * n], residual) == native.OK
        peer_law.compute(q, qd, q_ref, qd_ref, qdd_ref, row[5 * n])
        assert np.array_equal(residual, peer.step(q, qd, peer_law.torque.copy(), row[5 * n]))
    assert not np.array_equal(law.estimates, law.initial_estimates)   # it did learn


def test_a_bad_input_writes_nothing_and_changes_nothing(built):
    model = puma()[1]
    n = model.dof
    law = load_law("computed_torque")(model, {"kp": 100.0, "kd": 20.0, "ki": 50.0})
    handle = native.native_law(law)
    ones, effort = np.ones(n), np.full(n, 7.0)
    assert handle(ones, ones, 0 * ones, ones, ones, 1e-3, effort) >= native.OK
    integral, effort[:] = law.integral, 7.0
    for bad in (np.nan, np.inf):
        q = ones.copy()
        q[2] = bad
        assert handle(q, ones, ones, ones, ones, 1e-3, effort) == native.BAD_INPUT
    assert handle(ones, ones, ones, ones, ones, -1e-3, effort) == native.BAD_INPUT
    assert handle(ones, ones, ones, ones, ones, np.nan, effort) == native.BAD_INPUT
    assert np.all(effort == 7.0) and np.array_equal(law.integral, integral)
    # finite inputs whose torque overflows: no command
    assert handle(ones, 1e200 * ones, ones, ones, ones, 1e-3, effort) == native.NONFINITE_EFFORT
    assert np.all(effort == 7.0)


def test_a_kernel_that_refuses_is_a_status_without_the_gil(built):
    """A massless last link: M is singular, the task-space kernel raises (as compute does), and
    the step returns ROBODYN_FAILED, caught in the compiled code, while Python holds the GIL."""
    model = RobotModel([Link("a", mass=1.0, com=np.array([0.1, 0.0, 0.0]), inertia=np.eye(3)),
                        Link("b", mass=0.0, com=np.zeros(3), inertia=np.zeros((3, 3)))])
    law = load_law("operational_space")(model)
    with pytest.raises(ValueError, match="not positive definite"):
        law.compute(*[np.zeros(2)] * 5, 1e-3)
    outputs, status, _, finished, _ = harness.threaded(native.native_law(law, np.full(2, 10.0)),
                                                       harness.inputs(2, 100))
    assert finished and np.all(status == native.FAILED) and not outputs.any()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")   # its print
def test_the_harness_notices_a_step_that_takes_the_gil(built):
    """The check above can fail: numba's cfunc wrapper takes the GIL to print an exception that
    nothing caught (which is why every step catches them), and the harness's thread then waits
    for it until the main thread's busy loop gives up."""
    @numba.cfunc(native.LAW_SIGNATURE)
    def raising(law, q, qd, q_ref, qd_ref, qdd_ref, dt, effort):
        raise ValueError("an uncaught failure in a step")

    model = puma()[1]
    handle = native.native_law(load_law("pd_gravity")(model, {"kp": 1.0, "kd": 1.0}))
    handle.struct[native.STEP] = raising.address
    _, _, _, finished, _ = harness.threaded(handle, harness.inputs(model.dof, 10), hold_for=1.0)
    assert not finished


def test_the_c_floor_is_newton_euler(built, arm):
    from robodyn_ros.dynamics.friction import FrictionForm, FrictionModel

    # and with an identified friction file's smooth Coulomb law and offset (issue 46)
    filed = arm.with_friction(FrictionModel(tuple(arm.joint_names), (FrictionForm.parse(
        "coulomb+tanh=0.3+offset"),) * arm.dof, tuple(np.array([0.2, 0.5, 0.1 * j - 0.3])
                                                      for j in range(arm.dof))))
    rng = np.random.default_rng(3)
    for model in (arm, filed):
        for q, qd, qdd in rng.uniform(-1.0, 1.0, (5, 3, arm.dof)):
            want = model.inverse_dynamics(q, qd, qdd)
            assert np.array_equal(harness.floor(model, q, qd, qdd), want)   # the same operations, in C


def test_the_header_is_shipped_with_the_package():
    header = native.header_path()
    assert header.is_file() and f"#define ROBODYN_LAW_ABI {native.ABI}" in header.read_text()
    assert header.with_name("harness.c").is_file()


HOST = Path(__file__).resolve().parent / "native"
SETUP = """
from robodyn_ros.apps.benchmarks.dynamics import puma
from robodyn_ros.control.law import load_law
from robodyn_ros.control.native import native_law
handle = native_law(load_law("computed_torque")(puma()[1], {"kp": 100.0, "kd": 20.0, "ki": 50.0}))
address = handle.address
"""


def _host(tmp_path):
    """plugin.c (a controller's library: it owns the interpreter) and loader.c (a host that
    knows no Python and dlopens the plugin RTLD_LOCAL, as class_loader does), compiled."""
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        pytest.skip("this Python has no shared libpython for a C host to load")
    libdir = sysconfig.get_config_var("LIBDIR")
    libpython = Path(libdir) / sysconfig.get_config_var("LDLIBRARY")
    plugin, loader = tmp_path / "libplugin.so", tmp_path / "loader"
    for command in (
            ["gcc", "-shared", "-fPIC", f"-I{native.header_path().parent}",
             f"-I{sysconfig.get_config_var('INCLUDEPY')}", str(HOST / "plugin.c"), "-o", str(plugin),
             f"-L{libdir}", f"-l{libpython.stem.removeprefix('lib')}", f"-Wl,-rpath,{libdir}", "-ldl"],
            ["gcc", str(HOST / "loader.c"), "-o", str(loader), "-ldl", "-pthread"]):
        subprocess.run(command, check=True, capture_output=True)
    (tmp_path / "setup.py").write_text(SETUP)
    return [str(loader), str(plugin), str(Path(sys.executable).absolute())], str(libpython)


def test_a_c_host_that_owns_the_interpreter_calls_the_law(built, tmp_path):
    """What doc/native.md tells a ros2_control controller to do, done by our own C: numpy's
    modules need libpython's symbols global (a plugin loaded RTLD_LOCAL does not make them so),
    the ROS wheels' start-up hook is kept from exec'ing the host, and the commands from the
    host's thread are the Python law's."""
    command, libpython = _host(tmp_path)
    model = puma()[1]
    rows = harness.inputs(model.dof, 200)
    text = "\n".join(" ".join(repr(float(x)) for x in row) for row in rows)
    env = {k: v for k, v in os.environ.items() if k != "_ROS_WHEELS_BOOTSTRAP_COMPLETE"}
    local = subprocess.run([*command, "-", str(tmp_path / "setup.py"), "200"], input=text,
                           capture_output=True, text=True, env=env, timeout=300)
    assert local.returncode != 0 and "undefined symbol" in local.stderr, local.stderr[-2000:]
    run = subprocess.run([*command, libpython, str(tmp_path / "setup.py"), "200"], input=text,
                         capture_output=True, text=True, env=env, timeout=300, check=True)
    got = np.array([[float(x) for x in line.split()] for line in run.stdout.splitlines()])
    law = load_law("computed_torque")(model, {"kp": 100.0, "kd": 20.0, "ki": 50.0})
    handle = native.native_law(law)
    want = np.zeros((len(rows), model.dof))
    statuses = [handle(*(np.ascontiguousarray(r[i * 6:(i + 1) * 6]) for i in range(5)), r[30], want[k])
                for k, r in enumerate(rows)]
    assert np.array_equal(got[:, 0], statuses) and np.array_equal(got[:, 1:], want)
