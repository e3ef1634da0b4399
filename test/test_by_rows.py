"""Batches shared among the cores (robodyn_ros.plumbing.kernels.by_rows): every row once, the same numbers as
one state at a time, errors raised, and a forked child that still completes its own batches."""
import dataclasses
import multiprocessing

import numpy as np
import pytest

from robodyn_ros.plumbing import kernels
from robodyn_ros.dynamics import Link, RobotModel
from stewart_cases import PAPER_PATHS, platform

N = 3 * kernels.PARALLEL_ROWS + 7   # above the threshold, not a multiple of the shares


def test_the_ranges_cover_every_row_once():
    seen = []
    kernels.by_rows(lambda a, b: seen.append((a, b)), N)
    rows = np.concatenate([np.arange(a, b) for a, b in seen])
    assert np.array_equal(np.sort(rows), np.arange(N))
    assert len(seen) == (kernels.SHARES_PER_CORE * kernels.CORES if kernels.CORES > 1 else 1)
    seen.clear()
    kernels.by_rows(lambda a, b: seen.append((a, b)), kernels.PARALLEL_ROWS - 1)
    assert seen == [(0, kernels.PARALLEL_ROWS - 1)]   # below the threshold: one call, this thread


def test_a_shared_batch_equals_one_state_at_a_time(model):
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, N, model.dof))
    wrench = rng.standard_normal(6)
    tau = model.inverse_dynamics(q, qd, qdd, tip_wrench=wrench)
    qdd_fd = model.forward_dynamics(q, qd, tau)
    M = model.mass_matrix(q)
    for k in range(0, N, 97):
        assert np.array_equal(tau[k], model.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=wrench))
        assert np.array_equal(qdd_fd[k], model.forward_dynamics(q[k], qd[k], tau[k]))
        assert np.array_equal(M[k], model.mass_matrix(q[k]))


@pytest.mark.parametrize("leg_model", ["no_spin", "universal"])
def test_a_shared_stewart_batch_equals_one_pose_at_a_time(leg_model):
    """Each core writes its rows straight into the one output: every row once, in its place."""
    sp = dataclasses.replace(platform(), leg_model=leg_model)
    path, _ = PAPER_PATHS["I"]
    args = path.sample(np.linspace(0.0, path.tau_f, N)).pose_args()
    r = sp.inverse_dynamics(*args)
    for k in range(0, N, 97):
        one = sp.inverse_dynamics(*(a[k] for a in args))
        assert np.array_equal(r.forces[k], one.forces)
        assert np.array_equal(r.leg_lengths[k], one.leg_lengths)
        assert r.condition_number[k] == one.condition_number


def test_an_error_in_one_share_is_raised():
    massless = RobotModel([Link("j", mass=0.0, com=np.zeros(3), inertia=np.zeros((3, 3)))])
    zero = np.zeros((N, 1))
    with pytest.raises(ValueError, match="not positive definite"):
        massless.forward_dynamics(zero, zero, zero)


def _batch_in_child(model, queue):
    q = np.zeros((N, model.dof))
    queue.put(model.inverse_dynamics(q, q, q).shape)


def test_a_forked_child_runs_its_own_shared_batches(model):
    q = np.zeros((N, model.dof))
    model.inverse_dynamics(q, q, q)   # the parent's helper threads exist: a child has none of them
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_batch_in_child, args=(model, queue))
    child.start()
    child.join(60)
    if child.exitcode is None:
        child.kill()
    assert child.exitcode == 0
    assert queue.get(timeout=5) == (N, model.dof)
