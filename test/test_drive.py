"""The command stage (control/drive.py): what a drive adds is taken off the law's torque, then the
saturation, then the rate limit. Judged against Lagrange–Euler's g(q) and friction (a second
formulation of the dynamics) and a plain NumPy statement of the three steps, compiled and
interpreted alike."""
import numpy as np
import pytest

from robodyn_ros.control import drive
from robodyn_ros.dynamics.lagrange_euler import lagrange_euler
from robodyn_ros.plumbing import kernels

TWIN = kernels.interpreted(drive)


def stage(call, model, bits, q, qd, tau, limit, rate, dt, index, previous):
    effort = previous.copy()
    code = call(model.params, bits, q, qd, tau, limit, rate, dt, index, previous, effort)
    return code, effort


def numpy_stage(model, bits, q, qd, tau, limit, rate, dt, index, previous):
    zero = np.zeros(model.dof)
    adds = np.zeros(model.dof)
    if bits & drive.DRIVE_GRAVITY:
        adds += lagrange_euler(model, q, zero, zero, friction=False)
    if bits & drive.DRIVE_FRICTION:
        adds += lagrange_euler(model, q, qd, zero, friction=True) - lagrange_euler(
            model, q, qd, zero, friction=False)
    u = np.clip(tau - adds, -limit, limit)[index]
    step = (rate * dt)[index]
    return np.where(np.isnan(previous), u, np.clip(u, previous - step, previous + step))


@pytest.mark.parametrize("call", [drive.DRIVE_COMMAND.call, TWIN["drive_command_into"]],
                         ids=["compiled", "interpreted"])
@pytest.mark.parametrize("bits", [0, drive.DRIVE_GRAVITY, drive.DRIVE_FRICTION,
                                  drive.DRIVE_GRAVITY | drive.DRIVE_FRICTION])
def test_the_stage_is_the_three_steps(model, call, bits):
    rng = np.random.default_rng(bits)
    n = model.dof
    index = rng.permutation(n).astype(np.intp)
    for _ in range(20):
        q, qd = rng.uniform(-2.0, 2.0, n), rng.uniform(-1.0, 1.0, n)
        tau = rng.uniform(-80.0, 80.0, n)
        limit, rate = rng.uniform(5.0, 60.0, n), rng.uniform(100.0, 2000.0, n)
        rate[0] = np.inf
        previous = rng.uniform(-40.0, 40.0, n)
        previous[1] = np.nan   # no command sent to that joint yet: not limited
        dt = 1e-3
        code, effort = stage(call, model, bits, q, qd, tau, limit, rate, dt, index, previous)
        expected = numpy_stage(model, bits, q, qd, tau, limit, rate, dt, index, previous)
        np.testing.assert_allclose(effort, expected, rtol=1e-12, atol=1e-10)
        after_saturation = numpy_stage(model, bits, q, qd, tau, limit, np.full(n, np.inf), dt,
                                       index, previous)
        unsaturated = numpy_stage(model, bits, q, qd, tau, np.full(n, np.inf),
                                  np.full(n, np.inf), dt, index, previous)
        assert drive.saturated(code) == np.count_nonzero(after_saturation != unsaturated)
        assert drive.rate_limited(code) == np.count_nonzero(
            np.abs(expected - after_saturation) > 1e-12)
        held = ~np.isnan(previous)
        assert np.all(np.abs(effort - previous)[held] <= (rate * dt)[index][held] * (1 + 1e-12))


def test_gravity_counted_once_on_a_static_arm(model):
    """At rest a drive that adds gravity gets the law's torque minus g(q): a hold is zero."""
    n = model.dof
    q = np.radians([90.0, 10.0, 80.0, 5.0, 20.0, 0.0])
    g = lagrange_euler(model, q, np.zeros(n), np.zeros(n), friction=False)
    tau = g + np.linspace(-1.0, 1.0, n)   # a law's: gravity and a little feedback
    index = np.arange(n, dtype=np.intp)
    inf = np.full(n, np.inf)
    code, effort = stage(drive.DRIVE_COMMAND.call, model, drive.DRIVE_GRAVITY, q, np.zeros(n), tau,
                         inf, inf, 1e-3, index, np.full(n, np.nan))
    assert code == 0
    np.testing.assert_allclose(effort, np.linspace(-1.0, 1.0, n), atol=1e-9)


def test_nan_gives_no_command(model):
    n = model.dof
    tau = np.zeros(n)
    tau[2] = np.nan
    previous = np.arange(n, dtype=float)
    code, effort = stage(drive.DRIVE_COMMAND.call, model, 0, np.zeros(n), np.zeros(n), tau,
                         np.ones(n), np.ones(n), 1e-3, np.arange(n, dtype=np.intp), previous)
    assert code == -1
    np.testing.assert_array_equal(effort, previous)


def test_compensation_bits_name_the_option():
    assert drive.compensation_bits([]) == 0
    assert drive.compensation_bits(["gravity", "friction"]) == 3
    with pytest.raises(ValueError, match="drive_compensates.*'inertia'"):
        drive.compensation_bits(["inertia"])
