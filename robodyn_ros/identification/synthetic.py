"""A recorded run whose truth is known: an arm moving along a random band-limited Fourier series
(from rest at a given pose), its torques its own inverse dynamics, sampled like a driver's joint
states. For the tests and benchmarks of the identification, and to try its tools without a robot."""
from __future__ import annotations

import numpy as np

from .bag import Recording
from .excitation import FourierSeries

PERIOD, HARMONICS = 10.0, 5


def fourier_motion(model, start, seconds, rate=1000.0, seed=1, amplitude=0.12, joints=slice(None), period=PERIOD):
    """t and q, q̇, q̈ at ``rate`` of a random Fourier series (``period``, HARMONICS) at rest at
    ``start`` at t = 0; ``amplitude``: the spread of its free coefficients (rad/s); ``joints``:
    which joints move (the others stay at ``start``)."""
    rng = np.random.default_rng(seed)
    free = np.zeros((model.dof, 2 * (HARMONICS - 1)))
    free[joints] = rng.normal(0.0, amplitude, free[joints].shape)
    series = FourierSeries.from_free(model.joint_names, start, period, free)
    t = np.arange(0.0, seconds, 1.0 / rate)
    return (t, *series.evaluate(t))


def logged_run(truth, start, seconds, rate, noise=0.0, seed=1, resolution=1e-3, jitter=2e-3,
               gaps=(0.02, 0.034), gap_every=2.0, **motion):
    """A ``Recording`` of ``truth`` along ``fourier_motion`` as a slow logger writes it: the arm
    sampled every 1 / ``rate`` s, each sample stamped when it arrives — up to ``jitter`` s late
    (at most a period), in order — on a clock of ``resolution`` s, and about every
    ``gap_every`` s a few samples lost, leaving an interval of ``gaps`` (s, low and high); a stamp
    the one before already had is dropped, as the bag reader drops it (``repeated``). Values are
    exact at the true instants, torques plus Gaussian ``noise``. So a 94 Hz UR log: rate 94,
    steps of 10 and 12 ms, gaps up to 34 ms."""
    rng = np.random.default_rng(seed + 300)
    t, q, qd, qdd = fourier_motion(truth, start, seconds, rate, seed, **motion)
    tau = truth.inverse_dynamics(q, qd, qdd) + rng.normal(0.0, noise, q.shape)
    keep = np.ones(len(t), dtype=bool)
    for at in np.arange(gap_every, seconds - gap_every, gap_every):
        lost = max(int(rng.uniform(*gaps) * rate) - 1, 1)
        k = int(at * rate)
        keep[k:k + lost] = False
    late = rng.uniform(0.0, min(jitter, 1.0 / rate), len(t))
    arrival = np.maximum.accumulate(t + rng.uniform(0.0, resolution) + late)   # the clocks out of phase
    stamps = np.floor(arrival / resolution + 1e-9) * resolution
    first = np.flatnonzero(keep)
    unique = np.concatenate(([True], stamps[first][1:] > stamps[first][:-1]))
    rows = first[unique]
    return Recording(t=stamps[rows] - stamps[rows[0]], time_ns=np.round(stamps[rows] * 1e9).astype(np.int64),
                     joint_names=truth.joint_names, position=q[rows], velocity=qd[rows], effort=tau[rows],
                     source=f"synthetic {rate:g} Hz log", time_source="header", effort_source="joint_states",
                     dropped=int(np.count_nonzero(~unique)), repeated=int(np.count_nonzero(~unique)))


def resting_run(truth, start, cycles, rest=4.0, rate=1000.0, noise=0.0, velocity_noise=1e-4, seed=1,
                holding=1.0, **motion):
    """A ``Recording`` of ``truth`` alternating one period of ``fourier_motion`` (from rest at
    ``start`` back to it) with ``rest`` seconds held still there, ``cycles`` times. While still,
    the measured velocity is Gaussian noise of ``velocity_noise`` (rad/s, a driver's at rest) and
    the torque is gravity plus a holding friction drawn per rest from ±``holding`` × the joint's
    Coulomb magnitude (at rest friction takes whatever value holds the joint, Karnopp 1985); moving, the
    torque is the truth's inverse dynamics, its sign-law friction included; plus ``noise``."""
    rng = np.random.default_rng(seed + 200)
    step = 1.0 / rate
    t = np.arange(0.0, cycles * (PERIOD + rest), step)
    cycle, within = np.divmod(t, PERIOD + rest)
    moving = within < PERIOD
    _, q, qd, qdd = fourier_motion(truth, start, PERIOD, rate, seed, **motion)
    k = np.minimum(np.round(within / step).astype(int), len(q) - 1)
    q, qd, qdd = q[k], np.where(moving[:, None], qd[k], 0.0), np.where(moving[:, None], qdd[k], 0.0)
    q[~moving] = start
    tau = truth.inverse_dynamics(q, qd, qdd)
    holding = holding * rng.uniform(-1.0, 1.0, (cycles, truth.dof)) * np.minimum(truth.coulomb_positive,
                                                                                truth.coulomb_negative)
    tau[~moving] += holding[cycle[~moving].astype(int)]
    tau += rng.normal(0.0, noise, tau.shape)
    qd = qd + np.where(moving[:, None], 0.0, rng.normal(0.0, velocity_noise, qd.shape))
    return Recording(t=t, time_ns=np.round(t * 1e9).astype(np.int64), joint_names=truth.joint_names,
                     position=q, velocity=qd, effort=tau, source="synthetic run with rests",
                     time_source="header", effort_source="joint_states")


def synthetic_run(truth, start, seconds, rate=1000.0, noise=0.0, seed=1, **motion):
    """A ``Recording`` of ``truth`` (a RobotModel) moving along ``fourier_motion``: positions and
    velocities exact, torques its inverse dynamics plus Gaussian noise of standard deviation
    ``noise`` (N·m or N)."""
    t, q, qd, qdd = fourier_motion(truth, start, seconds, rate, seed, **motion)
    tau = truth.inverse_dynamics(q, qd, qdd)
    tau += np.random.default_rng(seed + 100).normal(0.0, noise, tau.shape)
    return Recording(t=t, time_ns=np.round(t * 1e9).astype(np.int64), joint_names=truth.joint_names,
                     position=q, velocity=qd, effort=tau, source="synthetic run",
                     time_source="header", effort_source="joint_states")
