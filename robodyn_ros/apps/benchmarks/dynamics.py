"""Serial-arm dynamics of the PUMA 560 against Pinocchio, in the same process.

Single-state calls go through the public API exactly as a user calls them; Pinocchio's figures are
taken on the same URDF (its rnea/crba/aba have no friction or armature terms, so ours are run with
the model as shipped: the extra terms cost a handful of operations). The batch is timed as a user
gets it (every core, ``robodyn_ros.plumbing.kernels.by_rows``) and on the calling thread alone, which is what
a batch below ``kernels.PARALLEL_ROWS`` gets. Targets: issue 13's, but inverse dynamics and the mass
matrix at most Pinocchio's time (issue 29)."""
import warnings

import numpy as np

from ...plumbing import kernels
from ...dynamics import RobotModel
from ...plumbing.resources import find_share_file
from .timing import figure, paired, per_call


def _pinocchio(urdf):
    try:
        import pinocchio as pin
    except ImportError:
        return None
    model = pin.buildModelFromUrdf(str(urdf))
    return pin, model, model.createData()


BATCH_TARGET = 4_000_000   # states/s, every core of a 2-core machine


def one_core(func):
    """``func`` with every batch on the calling thread, as below the threshold."""
    def call():
        threshold, kernels.PARALLEL_ROWS = kernels.PARALLEL_ROWS, float("inf")
        try:
            return func()
        finally:
            kernels.PARALLEL_ROWS = threshold
    return call


def puma():
    """The shipped PUMA 560: its URDF's path and its model."""
    urdf = find_share_file("urdf/puma560.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the PUMA data's link 3 inertia warns, rightly
        return urdf, RobotModel.from_urdf(urdf)


def run(batch=100_000):
    urdf, model = puma()
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, model.dof))
    tau = model.inverse_dynamics(q, qd, qdd)
    peer = _pinocchio(urdf)
    rows = []

    def pair(name, ours, theirs, ratio_target):
        if theirs is None:
            best, median = per_call(ours)
            rows.append(figure(name, best * 1e6, median * 1e6))
            return
        (best, median), (p_best, _) = paired(ours, theirs)
        row = figure(name, best * 1e6, median * 1e6, peer=p_best * 1e6,
                     target=f"<= {ratio_target}x peer")
        row["ratio"] = best / p_best
        row["met"] = bool(row["ratio"] <= ratio_target)
        rows.append(row)

    pin = peer[0] if peer else None
    pm, pd = (peer[1], peer[2]) if peer else (None, None)
    pair("inverse dynamics, single state (us)", lambda: model.inverse_dynamics(q, qd, qdd),
         (lambda: pin.rnea(pm, pd, q, qd, qdd)) if peer else None, 1.0)
    pair("mass matrix, single state (us)", lambda: model.mass_matrix(q),
         (lambda: pin.crba(pm, pd, q)) if peer else None, 1.0)
    pair("forward dynamics, single state (us)", lambda: model.forward_dynamics(q, qd, tau),
         (lambda: pin.aba(pm, pd, q, qd, tau)) if peer else None, 1.2)

    Q, QD, QDD = rng.uniform(-1.0, 1.0, (3, batch, model.dof))
    best, median = per_call(lambda: model.inverse_dynamics(Q, QD, QDD), number=1, repeat=5)
    row = figure(f"inverse dynamics, batched (states/s, {kernels.CORES} cores)", batch / best,
                 batch / median, unit="states/s", target=f">= {BATCH_TARGET:,} states/s")
    row["met"] = bool(batch / best >= BATCH_TARGET)
    if peer:
        loop = Q[:2000], QD[:2000], QDD[:2000]
        p_best, _ = per_call(lambda: [pin.rnea(pm, pd, a, b, c) for a, b, c in zip(*loop)],
                             number=1, repeat=5)
        row["peer"] = 2000 / p_best
        row["note"] = "peer: pinocchio.rnea in a Python loop (it has no batched call)"
    rows.append(row)
    best, median = per_call(one_core(lambda: model.inverse_dynamics(Q, QD, QDD)), number=1, repeat=5)
    rows.append(figure("  the same batch on one core (states/s)", batch / best, batch / median,
                       unit="states/s", note=f"as every batch of fewer than {kernels.PARALLEL_ROWS} "
                                             "states runs"))
    return {"robot": "PUMA 560 (urdf/puma560.urdf)", "rows": rows}
