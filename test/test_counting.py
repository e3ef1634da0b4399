"""Operation counting: the counted runs compute the same torques as the compiled kernel and the
Lagrange–Euler code, Newton–Euler grows linearly and Lagrange–Euler much faster, and
``robodyn-ros complexity`` prints our counts beside every published source.
"""
import numpy as np
import pytest

from robodyn_ros.apps.cli import main
from robodyn_ros.dynamics.counting import (PUBLISHED, Counted, Tally, count_lagrange_euler, count_newton_euler,
                                           generic_arm)
from robodyn_ros.dynamics.lagrange_euler import lagrange_euler

NS = range(1, 7)
NE = {n: count_newton_euler(generic_arm(n)) for n in NS}
LE = {n: count_lagrange_euler(generic_arm(n)) for n in NS}


def inputs(n):
    # count_*(model) draws q, qd, qdd in this order from default_rng(0)
    rng = np.random.default_rng(0)
    return [rng.standard_normal(n) for _ in range(3)]


@pytest.mark.parametrize("n", NS)
def test_counted_runs_give_the_compiled_torques(n):
    model = generic_arm(n)
    q, qd, qdd = inputs(n)
    compiled = model.inverse_dynamics(q, qd, qdd, friction=False)
    scale = max(1.0, np.max(np.abs(compiled)))
    # the same Python function, once compiled and once on counting scalars: same operations in the
    # same order, so equal up to the compiler's freedom with libm's cos/sin (none expected)
    np.testing.assert_allclose(NE[n][1], compiled, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(LE[n][1], lagrange_euler(model, q, qd, qdd, friction=False), rtol=0,
                               atol=1e-13 * scale)
    # and Lagrange–Euler's count ran the other formulation: it agrees to rounding only
    np.testing.assert_allclose(LE[n][1], compiled, rtol=0, atol=1e-10 * scale)


def test_newton_euler_is_linear_with_constant_increments():
    mul = np.array([NE[n][0].mul for n in NS])
    add = np.array([NE[n][0].add for n in NS])
    assert np.all(mul > 0) and np.all(add > 0)
    # every further joint costs exactly the same (the first one is cheaper: the base is at rest)
    assert len(set(np.diff(mul)[1:])) == 1, mul
    assert len(set(np.diff(add)[1:])) == 1, add
    assert mul[1] - mul[0] >= mul[2] - mul[1]


def test_lagrange_euler_grows_faster_than_linearly():
    mul = np.array([LE[n][0].mul for n in NS], dtype=float)
    add = np.array([LE[n][0].add for n in NS], dtype=float)
    for counts in (mul, add):
        assert np.all(np.diff(counts, 2) > 0), counts          # convex: increments grow
        assert np.all(np.diff(counts / np.arange(1, 7)) > 0)    # per joint, it grows too
    # at least cubic: counts(6) / counts(3) >= 2^3
    assert mul[5] / mul[2] >= 8.0 and add[5] / add[2] >= 8.0
    # and at six joints Newton–Euler is over 100 times cheaper (004's point)
    ne6, le6 = NE[6][0], LE[6][0]
    assert (le6.mul + le6.add) / (ne6.mul + ne6.add) > 100.0


def test_counted_scalar_tallies():
    tally = Tally()
    a, b = Counted(2.0, tally), Counted(3.0, tally)
    c = a * b + a - b / a
    assert c.value == pytest.approx(2 * 3 + 2 - 1.5)
    assert (tally.mul, tally.add) == (2, 2)
    d = a * 1.0 + 0.0 - (-a) * -1.0
    assert d.value == pytest.approx(0.0)
    # multiplications by +-1 and additions of 0 are trivial; sign flips are free
    assert (tally.mul, tally.add, tally.trivial_mul, tally.trivial_add) == (2, 3, 2, 1)
    _ = 0.5 * a + 2.0 - a
    assert (tally.mul, tally.add) == (3, 5)


def test_complexity_command_lists_the_published_sources(capsys):
    assert main(["complexity", "--dof", "3"]) == 0
    out = capsys.readouterr().out
    for source, method, mul, add in PUBLISHED:
        assert source in out, source
        # the published figures at n = 3, as the table prints them
        assert f"{round(mul(3))}/{round(add(3))}" in out, (source, method)
    # our counts, the same ones the functions return
    for n in (1, 2, 3):
        assert f"{NE[n][0].mul}/{NE[n][0].add}" in out
        assert f"{LE[n][0].mul}/{LE[n][0].add}" in out
    assert "Why the figures differ" in out
