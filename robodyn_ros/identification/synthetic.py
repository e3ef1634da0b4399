"""A recorded run whose truth is known: an arm moving along a random band-limited Fourier series
(from rest at a given pose), its torques its own inverse dynamics, sampled like a driver's joint
states. For the tests and benchmarks of the identification, and to try its tools without a robot."""
from __future__ import annotations

import numpy as np

from .bag import Recording
from .excitation import FourierSeries

PERIOD, HARMONICS = 10.0, 5


def fourier_motion(model, start, seconds, rate=1000.0, seed=1, amplitude=0.12, joints=slice(None)):
    """t and q, q̇, q̈ at ``rate`` of a random Fourier series (PERIOD, HARMONICS) at rest at
    ``start`` at t = 0; ``amplitude``: the spread of its free coefficients (rad/s); ``joints``:
    which joints move (the others stay at ``start``)."""
    rng = np.random.default_rng(seed)
    free = np.zeros((model.dof, 2 * (HARMONICS - 1)))
    free[joints] = rng.normal(0.0, amplitude, free[joints].shape)
    series = FourierSeries.from_free(model.joint_names, start, PERIOD, free)
    t = np.arange(0.0, seconds, 1.0 / rate)
    return (t, *series.evaluate(t))


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
