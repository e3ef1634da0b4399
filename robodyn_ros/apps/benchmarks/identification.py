"""The identification regressor and a whole identification, on the PUMA 560, beside Pinocchio.

The regressor per state is timed through the public API against ``pinocchio.
computeJointTorqueRegressor`` on the same URDF (its rigid-body columns only; ours has the drive
columns too); the batch as a user gets it (every core). Identification: 60 s of 1 kHz joint
states of the demo's plant (``identify_demo.plant_model``) along a random Fourier series, from the
recording to the consistent estimate (filtering, decimation, regressor, OLS, log-Cholesky fit, the
fits on held-out data); Pinocchio has no estimator to compare with. Targets: issue 19. And an hour
of 1 kHz states of a 7-joint arm (the Panda, synthetic), which the per-joint Gram matrices
(identification/gram.py) regress without ever holding the regressor: issue 38, one run (it takes a
minute), with the process's peak memory."""
import time

import numpy as np

from ...plumbing import kernels
from .dynamics import _pinocchio, puma
from .timing import figure, paired, per_call

REGRESSOR_TARGET = 1.5      # x computeJointTorqueRegressor, one state
IDENTIFY_TARGET = 30.0      # s for 60 s of 1 kHz data, consistent estimate included
HOUR_TARGET = 60.0          # s for an hour of 1 kHz 7-joint data


def run(batch=20_000, seconds=60.0, hour=3600.0):
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
    rows.append(_long_run(hour))
    return {"robot": "PUMA 560 (urdf/puma560.urdf); the long run: Franka Panda (urdf/panda.urdf)", "rows": rows}


def _long_run(seconds):
    """``seconds`` of 1 kHz states of the Panda along a random Fourier series, with torque noise,
    identified once: wall time and the process's peak resident memory."""
    import resource
    import warnings

    from ...dynamics import RobotModel
    from ...identification.identify import identify
    from ...identification.synthetic import synthetic_run
    from ...plumbing.resources import find_share_file

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        panda = RobotModel.from_urdf(find_share_file("urdf/panda.urdf"))
    recording = synthetic_run(panda, 0.5 * (panda.lower + panda.upper), seconds, noise=0.05, amplitude=0.05)
    began = time.perf_counter()
    result = identify(panda, recording, progress=lambda line: None)
    wall = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20     # kB -> GB
    row = figure(f"identify {seconds / 60:g} min of 1 kHz 7-joint states (Panda), one run (s)", wall, wall,
                 unit="s", target=f"< {HOUR_TARGET:g} s",
                 note=f"{result.samples['training'] + result.samples['held-out']} states; process peak "
                      f"memory {peak:.2f} GB (the run's arrays included); filter "
                      f"{result.seconds['filter']:.1f} s, regressor {result.seconds['regressor']:.1f} s")
    row["met"] = bool(wall < HOUR_TARGET)
    return row
