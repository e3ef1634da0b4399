"""The identification regressor and a whole identification, on the PUMA 560, beside Pinocchio.

The regressor per state is timed through the public API against ``pinocchio.
computeJointTorqueRegressor`` on the same URDF (its rigid-body columns only; ours has the drive
columns too); the batch as a user gets it (every core). Identification: 60 s of 1 kHz joint
states of the demo's plant (``identify_demo.plant_model``) along a random Fourier series, from the
recording to the consistent estimate (filtering, decimation, regressor, OLS, log-Cholesky fit, the
fits on held-out data); Pinocchio has no estimator to compare with. Targets: issue 19."""
import time

import numpy as np

from ...plumbing import kernels
from .dynamics import _pinocchio, puma
from .timing import figure, paired, per_call

REGRESSOR_TARGET = 1.5      # x computeJointTorqueRegressor, one state
IDENTIFY_TARGET = 30.0      # s for 60 s of 1 kHz data, consistent estimate included


def run(batch=20_000, seconds=60.0):
    from ...identification import regressor
    from ...identification.identify import identify
    from ...identification.synthetic import synthetic_run
    from ..demos.identify import plant_model

    urdf, model = puma()
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, model.dof))
    peer = _pinocchio(urdf)
    rows = []
    if peer:
        pin, pm, pd = peer
        (best, median), (p_best, _) = paired(lambda: regressor(model, q, qd, qdd),
                                             lambda: pin.computeJointTorqueRegressor(pm, pd, q, qd, qdd))
        row = figure("regressor, single state (us)", best * 1e6, median * 1e6, peer=p_best * 1e6,
                     target=f"<= {REGRESSOR_TARGET}x peer")
        row["ratio"] = best / p_best
        row["met"] = bool(row["ratio"] <= REGRESSOR_TARGET)
    else:
        best, median = per_call(lambda: regressor(model, q, qd, qdd))
        row = figure("regressor, single state (us)", best * 1e6, median * 1e6)
    rows.append(row)
    Q, QD, QDD = rng.uniform(-1.0, 1.0, (3, batch, model.dof))
    best, median = per_call(lambda: regressor(model, Q, QD, QDD), number=1, repeat=5)
    row = figure(f"regressor, batched (states/s, {kernels.CORES} cores)", batch / best, batch / median,
                 unit="states/s")
    if peer:
        loop = Q[:2000], QD[:2000], QDD[:2000]
        p_best, _ = per_call(lambda: [pin.computeJointTorqueRegressor(pm, pd, a, b, c)
                                      for a, b, c in zip(*loop)], number=1, repeat=5)
        row["peer"] = 2000 / p_best
        row["note"] = "peer: computeJointTorqueRegressor in a Python loop (it has no batched call)"
    rows.append(row)

    recording = synthetic_run(plant_model(model), np.radians([90, 0, 90, 0, 0, 0]), seconds)
    walls, stages = [], []
    for _ in range(3):
        began = time.perf_counter()
        result = identify(model, recording, progress=lambda line: None)
        walls.append(time.perf_counter() - began)
        stages.append(result.seconds)
    best = int(np.argmin(walls))
    row = figure(f"identify {seconds:g} s of 1 kHz states, OLS and consistent (s)", walls[best],
                 float(np.median(walls)), unit="s", target=f"< {IDENTIFY_TARGET:g} s")
    row["met"] = bool(walls[best] < IDENTIFY_TARGET)
    rows.append(row)
    for stage in ("least squares", "consistent"):
        values = [s[stage] for s in stages]
        rows.append(figure(f"  of which {stage} (s)", values[best], float(np.median(values)), unit="s"))
    return {"robot": "PUMA 560 (urdf/puma560.urdf)", "rows": rows}
