"""The single-state calls take their fast path (machine code called without numba's type
dispatch, ``kernels.Direct``) only for float64 vectors, and give the same numbers on it for every
layout a user may hand over as the general path gives for plain lists; anything else is converted
or refused with a ValueError, never read as the wrong type."""
import warnings

import numpy as np
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.plumbing.resources import find_share_file


@pytest.fixture(scope="module")
def puma():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the PUMA data's link 3 inertia warns, rightly
        return RobotModel.from_urdf(find_share_file("urdf/puma560.urdf"))


def _layouts(x):
    """``x`` as the fast path may see it: contiguous, a strided view, read-only, unaligned (a
    view into a message buffer at an odd offset)."""
    strided = np.zeros(2 * x.size)[::2]
    strided[:] = x
    read_only = x.copy()
    read_only.flags.writeable = False
    unaligned = np.frombuffer(bytearray(8 * x.size + 4), dtype=float, count=x.size, offset=4)
    unaligned[:] = x
    assert not unaligned.flags.aligned
    return {"contiguous": x.copy(), "strided": strided, "read-only": read_only,
            "unaligned": unaligned}


CALLS = {
    "inverse_dynamics": lambda m, a, b, c: m.inverse_dynamics(a, b, c),
    "mass_matrix": lambda m, a, b, c: m.mass_matrix(a),
    "forward_dynamics": lambda m, a, b, c: m.forward_dynamics(a, b, c),
}


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("layout", ["contiguous", "strided", "read-only", "unaligned"])
def test_every_layout_gives_the_numbers_of_plain_lists(puma, call, layout):
    rng = np.random.default_rng(7)
    q, qd, x = rng.uniform(-1.0, 1.0, (3, puma.dof))
    f = CALLS[call]
    expected = f(puma, q.tolist(), qd.tolist(), x.tolist())   # the general path converts lists
    got = f(puma, *(_layouts(v)[layout] for v in (q, qd, x)))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("call", CALLS)
def test_a_vector_of_the_wrong_size_is_a_value_error(puma, call):
    good = np.zeros(puma.dof)
    for short in range(3):
        args = [good, good, good]
        args[short] = np.zeros(puma.dof - 1)
        if call == "mass_matrix" and short:
            continue   # M reads q only
        with pytest.raises(ValueError, match="one value per joint"):
            CALLS[call](puma, *args)


@pytest.mark.parametrize("call", ["inverse_dynamics", "forward_dynamics"])
def test_a_column_among_vectors_is_a_value_error_not_a_misread(puma, call):
    good = np.zeros(puma.dof)
    with pytest.raises(ValueError, match="one state of three vectors"):
        CALLS[call](puma, good, good.reshape(-1, 1), good)


def test_other_dtypes_are_converted(puma):
    q = np.arange(puma.dof, dtype=np.float32) / 10
    expected = puma.inverse_dynamics(q.astype(float), np.zeros(puma.dof), np.zeros(puma.dof))
    got = puma.inverse_dynamics(q, np.zeros(puma.dof, dtype=int), np.zeros(puma.dof))
    np.testing.assert_array_equal(got, expected)
