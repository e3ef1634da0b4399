"""The command stage (control/drive.py): what a drive adds is taken off the law's torque, then the
saturation, then the rate limit of the drive's cycle. Judged against Lagrange–Euler's g(q) (a
second formulation of the dynamics), a plain NumPy statement of the steps, and a drive that holds
the last command at its period (test/drive_cycles.py), compiled and interpreted alike."""
import numpy as np
import pytest

from robodyn_ros.control import drive
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.dynamics.lagrange_euler import lagrange_euler
from robodyn_ros.plumbing import kernels

from drive_cycles import drive_cycle_steps, worst_steps

TWIN = kernels.interpreted(drive)
PERIOD = 1e-3
STAGES = pytest.mark.parametrize("interpreted", [False, True], ids=["compiled", "interpreted"])


def stage(call, model, bits, q, tau, limit, step, index, previous):
    effort = previous.copy()
    code = call(model.params, bits, q, tau, limit, step, index, previous, effort)
    return code, effort


def numpy_stage(model, bits, q, tau, limit, step, index, previous):
    zero = np.zeros(model.dof)
    adds = lagrange_euler(model, q, zero, zero, friction=False) if bits & drive.DRIVE_GRAVITY \
        else zero
    u = np.clip(tau - adds, -limit, limit)[index]
    step = step[index]
    return np.where(np.isnan(previous), u, np.clip(u, previous - step, previous + step))


@pytest.mark.parametrize("call", [drive.DRIVE_COMMAND.call, TWIN["drive_command_into"]],
                         ids=["compiled", "interpreted"])
@pytest.mark.parametrize("bits", [0, drive.DRIVE_GRAVITY, drive.DRIVE_FRICTION,
                                  drive.DRIVE_GRAVITY | drive.DRIVE_FRICTION])
def test_the_stage_is_the_three_steps(model, call, bits):
    """Gravity taken off (the friction a drive adds never: nothing of ours carries it), the
    saturation, then at most one drive cycle's step from the last command."""
    rng = np.random.default_rng(bits)
    n = model.dof
    index = rng.permutation(n).astype(np.intp)
    for _ in range(20):
        q = rng.uniform(-2.0, 2.0, n)
        tau = rng.uniform(-80.0, 80.0, n)
        limit, rate = rng.uniform(5.0, 60.0, n), rng.uniform(100.0, 2000.0, n)
        rate[0] = np.inf
        step = rate * PERIOD
        previous = rng.uniform(-40.0, 40.0, n)
        previous[1] = np.nan   # no command sent to that joint yet: not limited
        code, effort = stage(call, model, bits, q, tau, limit, step, index, previous)
        expected = numpy_stage(model, bits, q, tau, limit, step, index, previous)
        np.testing.assert_allclose(effort, expected, rtol=1e-12, atol=1e-10)
        after_saturation = numpy_stage(model, bits, q, tau, limit, np.full(n, np.inf), index,
                                       previous)
        unsaturated = numpy_stage(model, bits, q, tau, np.full(n, np.inf), np.full(n, np.inf),
                                  index, previous)
        assert drive.saturated(code) == np.count_nonzero(after_saturation != unsaturated)
        assert drive.rate_limited(code) == np.count_nonzero(
            np.abs(expected - after_saturation) > 1e-12)
        held = ~np.isnan(previous)
        assert np.all(np.abs(effort - previous)[held] <= step[index][held] * (1 + 1e-12))


def history_bound(history, t, period, step):
    """The drive's rule from the whole history [(time, command)]: every command whose hold
    interval meets [t - period, t) bounds the next one to within ``step``: (low, high)."""
    candidates = [c for k, (s, c) in enumerate(history)
                  if k == len(history) - 1 or history[k + 1][0] > t - period + 1e-3 * period]
    values = np.array(candidates)
    return values.max(axis=0) - step, values.min(axis=0) + step


@STAGES
def test_a_command_is_bounded_by_every_one_the_drive_may_hold_in_the_cycle_before(model,
                                                                                  interpreted):
    """stage_command_into against the rule stated on the whole history: commands at random times,
    bursts within a period and gaps of many; the window's rows reproduce it exactly while they
    suffice (here: fewer commands within a period than rows)."""
    rng = np.random.default_rng(4)
    n = model.dof
    call = TWIN["stage_command_into"] if interpreted else drive.STAGE_COMMAND.call
    index = np.arange(n, dtype=np.intp)
    rate = np.full(n, 1000.0)
    step = rate * PERIOD
    window = np.full((drive.WINDOW_ROWS, 1 + 2 * n), -np.inf)
    effort, target, history, t = np.zeros(n), np.zeros(n), [(-1.0, np.zeros(n))], 0.0
    inf = np.full(n, np.inf)
    for _ in range(300):
        t += rng.choice([PERIOD / 6.5, PERIOD * 0.4, PERIOD, 0.3])
        tau = rng.uniform(-30.0, 30.0, n)
        low, high = history_bound(history, t, PERIOD, step)
        code = call(model.params, 0, np.zeros(n), tau, inf, step, t, PERIOD, index, window,
                    target, effort)
        np.testing.assert_array_equal(target, tau)
        np.testing.assert_allclose(effort, np.clip(tau, low, high), rtol=0, atol=1e-12)
        assert drive.rate_limited(code) == np.count_nonzero((tau < low) | (tau > high))
        history.append((t, effort.copy()))
    times, commands = zip(*history[1:])
    assert np.all(worst_steps(times, commands, PERIOD)[0] <= step * (1 + 1e-12))


@STAGES
def test_a_burst_beyond_the_window_s_rows_still_keeps_the_bound(model, interpreted):
    """Forty commands within a period, then a ramp: more commands than rows are merged into a
    tighter bound, never a looser one."""
    n = model.dof
    call = TWIN["stage_command_into"] if interpreted else drive.STAGE_COMMAND.call
    index, step = np.arange(n, dtype=np.intp), np.full(n, 1.0)
    window = np.full((drive.WINDOW_ROWS, 1 + 2 * n), -np.inf)
    effort, target, inf = np.zeros(n), np.zeros(n), np.full(n, np.inf)
    times, commands, t = [], [], 0.0
    for k in range(200):
        t += PERIOD / 40 if k < 40 else PERIOD / 3
        call(model.params, 0, np.zeros(n), np.full(n, 50.0 * (-1) ** k), inf, step, t, PERIOD,
             index, window, target, effort)
        times.append(t)
        commands.append(effort.copy())
    assert np.all(worst_steps(times, commands, PERIOD)[0] <= 1.0 + 1e-12)
    assert np.max(np.abs(commands)) > 0.5   # it did move


def test_the_drive_s_view_of_the_commands_is_what_its_cycles_apply():
    """worst_steps (every phase at once) against a drive whose cycles fall at a phase: never
    less than what any phase applies, and reached by some phase."""
    rng = np.random.default_rng(9)
    times = np.cumsum(rng.choice([1e-4, 4e-4, 1e-3, 5e-3], 400))
    commands = np.cumsum(rng.normal(0.0, 1.0, (400, 3)), axis=0)
    cycle, consecutive = worst_steps(times, commands, PERIOD)
    applied = np.max([np.max(np.abs(drive_cycle_steps(times, commands, PERIOD, phase)), axis=0)
                      for phase in np.linspace(0.0, PERIOD, 200, endpoint=False)], axis=0)
    assert np.all(applied <= cycle + 1e-12) and np.all(applied >= 0.95 * cycle)
    assert np.all(consecutive <= cycle) and np.all(consecutive == np.max(
        np.abs(np.diff(commands, axis=0)), axis=0))


@STAGES
def test_a_ramp_goes_on_one_step_a_period_to_its_target(model, interpreted):
    """ramp_into: from 0 to a target 10 steps away, one step a period, then held."""
    n = model.dof
    call = TWIN["ramp_into"] if interpreted else drive.RAMP.call
    index, step = np.arange(n, dtype=np.intp), np.full(n, 1.0)
    window = np.full((drive.WINDOW_ROWS, 1 + 2 * n), -np.inf)
    effort, target = np.zeros(n), np.linspace(-10.0, 10.0, n)
    for k in range(1, 12):
        left = call(target, step, k * PERIOD, PERIOD, index, window, effort)
        np.testing.assert_allclose(effort, np.clip(target, -k, k))
        assert left == np.count_nonzero(np.abs(target) > k)
    # a second command in the same cycle moves no further
    call(-target, step, 11.5 * PERIOD, PERIOD, index, window, effort)
    np.testing.assert_allclose(effort, target - np.sign(target))


def test_commands_keep_the_bound_in_the_time_they_left(model):
    """Cycles' commands and a ramp's steps, each published some time after it was computed (a
    thread waiting for the GIL meanwhile): told when each left (CommandStage.left), the stage
    keeps every drive cycle's change within one step on the time they left, the drive's."""
    rng = np.random.default_rng(7)
    n = model.dof
    now, effort = [0.0], np.zeros(n)
    stage = drive.CommandStage(model, np.arange(n, dtype=np.intp), effort,
                               drive.Drive(0, PERIOD, np.full(n, 1000.0)), lambda: now[0])
    q, inf = np.zeros(n), np.full(n, np.inf)
    times, commands = [], []
    for k in range(400):
        now[0] += rng.uniform(0.05, 1.0) * PERIOD
        if k % 25 == 0:   # a cycle's command, far from the last: a ramp follows
            sent = stage.send(q, np.full(n, 30.0 * (-1) ** (k // 25)), inf) >= 0
        else:
            sent = stage.resend()
        if sent:
            now[0] += rng.uniform(0.0, 0.9) * PERIOD   # computed; published now
            stage.left()
            times.append(now[0])
            commands.append(effort.copy())
    assert np.all(worst_steps(times, commands, PERIOD)[0] <= 1.0 + 1e-9)
    assert len(times) > 100 and np.ptp(commands) > 10.0   # it ramped both ways


@STAGES
def test_a_lowered_rate_limit_takes_the_middle_of_what_it_cannot_both_keep(model, interpreted):
    """Two commands 2 N m apart within a period, then a rate limit of 0.5 N m a cycle: no value is
    within 0.5 of both; the middle is, within 1, the least it can be."""
    n = model.dof
    call = TWIN["ramp_into"] if interpreted else drive.RAMP.call
    index = np.arange(n, dtype=np.intp)
    window = np.full((drive.WINDOW_ROWS, 1 + 2 * n), -np.inf)
    effort = np.zeros(n)
    call(np.full(n, 2.0), np.full(n, np.inf), 0.0, PERIOD, index, window, effort)
    assert call(np.full(n, 9.0), np.full(n, 0.5), 0.5 * PERIOD, PERIOD, index, window, effort) == n
    np.testing.assert_allclose(effort, 1.0)


def test_gravity_counted_once_on_a_static_arm(model):
    """At rest a drive that adds gravity gets the law's torque minus g(q): a hold is zero."""
    n = model.dof
    q = np.radians([90.0, 10.0, 80.0, 5.0, 20.0, 0.0])
    g = lagrange_euler(model, q, np.zeros(n), np.zeros(n), friction=False)
    tau = g + np.linspace(-1.0, 1.0, n)   # a law's: gravity and a little feedback
    index = np.arange(n, dtype=np.intp)
    inf = np.full(n, np.inf)
    code, effort = stage(drive.DRIVE_COMMAND.call, model, drive.DRIVE_GRAVITY, q, tau, inf, inf,
                         index, np.full(n, np.nan))
    assert code == 0
    np.testing.assert_allclose(effort, np.linspace(-1.0, 1.0, n), atol=1e-9)


def test_nan_gives_no_command(model):
    n = model.dof
    tau = np.zeros(n)
    tau[2] = np.nan
    previous = np.arange(n, dtype=float)
    code, effort = stage(drive.DRIVE_COMMAND.call, model, 0, np.zeros(n), tau, np.ones(n),
                         np.ones(n), np.arange(n, dtype=np.intp), previous)
    assert code == -1
    np.testing.assert_array_equal(effort, previous)


def test_compensation_bits_name_the_option():
    assert drive.compensation_bits([]) == 0
    assert drive.compensation_bits(["gravity", "friction"]) == 3
    with pytest.raises(ValueError, match="drive_compensates.*'inertia'"):
        drive.compensation_bits(["inertia"])


def test_a_drive_from_its_parameters(model):
    order = JointOrder(model.joint_names, list(model.joint_names)[::-1])
    d = drive.Drive.of(order, ["gravity"], 0.002, [100.0, 200.0, 300.0, 400.0, 500.0, 600.0])
    np.testing.assert_allclose(d.step(6), [1.2, 1.0, 0.8, 0.6, 0.4, 0.2])   # chain order
    assert d.compensates == drive.DRIVE_GRAVITY and d.limits_rate
    assert not drive.Drive.of(order).limits_rate and np.all(np.isinf(drive.Drive().step(6)))
    for bad, reason in (({"rate": [1.0, 2.0]}, "effort_rate_limit must be one value or 6"),
                        ({"rate": [-1.0]}, "effort_rate_limit"),
                        ({"period": 0.0}, "drive_period must be a positive"),
                        ({"compensates": ["inertia"]}, "drive_compensates")):
        with pytest.raises(ValueError, match=reason):
            drive.Drive.of(order, **bad)
