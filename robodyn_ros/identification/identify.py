"""From a recorded run to an identified model: filter, regress, estimate, check on held-out data.

``identify(model, recording)`` takes the nominal model and a ``bag.Recording`` (positions, and
velocities and torques where recorded) and returns an ``Identification``: the base parameters by
ordinary (or weighted) least squares with their standard deviations, the physically consistent
estimate of the whole standard set (every body a rigid body, friction non-negative, pulled lightly
toward the nominal model where the data say nothing) and the model it makes, and how well each
predicts the torques of the training data and of data it never saw (a second recording, or the last
part of this one).

Torques that are held commands (a controller's output, applied from one state until the next)
act, on average, half a period after the state they answer: ``effort_delay`` shifts them by that
before they are compared with the state's dynamics.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from .estimate import (consistent_estimate, ordinary_least_squares, payload_estimate,
                       weighted_least_squares)
from ..dynamics.base_parameters import base_parameters
from ..dynamics.inertial_parameters import (DRIVE_COLUMNS, parameter_names, standard_parameters,
                                            with_parameters)
from ..dynamics.regressor import regressor
from .signals import filter_and_differentiate

CUTOFF_HZ = 20.0        # default low-pass: above an excitation's harmonics, below encoder noise
MIN_SAMPLES_PER_PARAMETER = 10
EXCITATION_FLOOR = 1e-6  # smallest |R_kk| / |R_00| of the column-normalised base regressor
METHODS = ("ols", "wls")
GAP = 1.5                # sample intervals: a longer one splits a run into stretches


class IdentificationError(ValueError):
    """A recording that cannot identify the model; the message says what is missing."""


@dataclasses.dataclass(frozen=True)
class Fit:
    """How well a parameter set predicts the torques: per joint RMS(τ − τ̂) / RMS(τ) (``relative``)
    and RMS(τ − τ̂) in N·m or N (``rms``)."""
    relative: np.ndarray
    rms: np.ndarray

    @classmethod
    def of(cls, tau, predicted):
        rms = np.sqrt(np.mean((tau - predicted) ** 2, axis=0))
        scale = np.sqrt(np.mean(tau ** 2, axis=0))
        return cls(rms / np.where(scale > 0.0, scale, 1.0), rms)


@dataclasses.dataclass(frozen=True)
class Identification:
    """The result of ``identify`` (module docstring)."""
    nominal: object          # RobotModel
    model: object            # RobotModel with the consistent parameters
    parameters: np.ndarray   # the consistent standard parameters, regressor layout
    names: list
    base: object             # base.BaseParameters
    least_squares: object    # estimate.LeastSquaresEstimate of the base parameters
    consistent: object       # estimate.ConsistentEstimate
    condition: float         # cond(W_base) of the training data
    fits: dict               # (set, estimate) -> Fit: sets "training", "held-out"; "base", "consistent"
    samples: dict            # set -> states used
    cutoff_hz: float
    method: str
    held_out: tuple          # (t, measured tau, tau of the identified model) of the held-out data
    held_out_nominal: np.ndarray   # tau of the nominal model there
    seconds: dict            # wall time of each stage: filtering, regressor, least squares, consistent

    def report(self):
        """A JSON-ready summary: fits, cond(W_base), parameters with standard deviations."""
        joints = self.nominal.joint_names
        base_names = self.base.expressions()
        return {
            "joints": joints, "method": self.method, "cutoff_hz": self.cutoff_hz,
            "samples": self.samples, "cond_W_base": self.condition,
            "fit": {f"{data}/{estimate}": dict(zip(joints, fit.relative.tolist()))
                    for (data, estimate), fit in self.fits.items()},
            "base_parameters": [
                {"expression": name, "value": float(v), "std": float(s), "relative_std_percent": float(r)}
                for name, v, s, r in zip(base_names, self.least_squares.parameters,
                                         self.least_squares.std, self.least_squares.relative_std)],
            "consistent_parameters": dict(zip(self.names, self.parameters.tolist())),
            "nominal_parameters": dict(zip(self.names, standard_parameters(self.nominal).tolist())),
            "min_pseudo_inertia_eigenvalue": float(np.min(self.consistent.min_eigenvalues)),
            "solver": {"iterations": self.consistent.iterations, "converged": self.consistent.converged},
            "seconds": self.seconds,
        }


def identify(model, recording, *, holdout=None, holdout_fraction=0.25, cutoff_hz=CUTOFF_HZ,
             effort_delay=0.0, method="ols", prior_weight=1e-6, payload_only=False, progress=print):
    """Identify ``model``'s parameters from ``recording`` (module docstring). ``holdout``: a second
    recording to check the result on; without one, the last ``holdout_fraction`` of ``recording``
    is held out. ``method``: "ols" or "wls" for the base parameters. ``payload_only``: the arm is
    known, only a rigid body added to the last link is estimated."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    started = time.monotonic()
    seconds, lap = {}, [started]

    def say(text, stage=None):
        now = time.monotonic()
        if stage:
            seconds[stage] = now - lap[0]
        lap[0] = now
        progress(f"[{now - started:6.1f} s] {text}")

    if holdout is None:
        if not 0.0 < holdout_fraction < 1.0:
            raise ValueError(f"holdout_fraction must lie in (0, 1), got {holdout_fraction}")
        split = int(round(len(recording.t) * (1.0 - holdout_fraction)))
        training, held_out = _part(recording, slice(0, split)), _part(recording, slice(split, None))
    else:
        training, held_out = recording, holdout
    base = base_parameters(model)
    say(f"{model.dof} joints, {len(parameter_names(model))} standard parameters, {base.count} base ones")
    data = {}
    for name, part in (("training", training), ("held-out", held_out)):
        data[name] = _states(model, part, cutoff_hz, effort_delay, name)
        say(f"{name}: {len(data[name][0])} states filtered at {cutoff_hz:g} Hz", f"filter {name}")
    t, q, qd, qdd, tau = data["training"]
    needed = MIN_SAMPLES_PER_PARAMETER * base.count // model.dof
    if len(t) < needed:
        raise IdentificationError(f"{recording.source}: {len(t)} training states after filtering, "
                                  f"fewer than the {needed} that {base.count} base parameters need "
                                  "(record longer)")
    Y = regressor(model, q, qd, qdd)
    W = base.base_regressor(Y)
    _check_excitation(W.reshape(-1, base.count), base, recording.source)
    say(f"regressor {W.shape[0] * W.shape[1]} rows x {W.shape[2]} base columns", "regressor")
    estimator = ordinary_least_squares if method == "ols" else weighted_least_squares
    least_squares = _correlated(estimator(W, tau), float(np.median(np.diff(t))), cutoff_hz)
    say(f"{method.upper()}: cond(W_base) = {least_squares.condition:.3g}", "least squares")
    nominal = standard_parameters(model)
    if payload_only:
        consistent = payload_estimate(Y, tau, nominal, model.dof, prior_weight=prior_weight)
    else:
        consistent = consistent_estimate(Y, tau, nominal, model.dof, DRIVE_COLUMNS,
                                         prior_weight=prior_weight)
    say(f"consistent estimate: {consistent.iterations} iterations, smallest pseudo-inertia "
        f"eigenvalue {np.min(consistent.min_eigenvalues):.3g}", "consistent")
    identified = with_parameters(model, consistent.parameters)
    fits, samples = {}, {}
    for name, (t_, q_, qd_, qdd_, tau_) in data.items():
        Y_ = Y if name == "training" else regressor(model, q_, qd_, qdd_)
        predicted, before = Y_ @ consistent.parameters, Y_ @ nominal
        fits[(name, "base")] = Fit.of(tau_, base.base_regressor(Y_) @ least_squares.parameters)
        fits[(name, "consistent")] = Fit.of(tau_, predicted)
        fits[(name, "nominal")] = Fit.of(tau_, before)
        samples[name] = len(q_)
    say("done", "fits")
    return Identification(model, identified, consistent.parameters, parameter_names(model), base,
                          least_squares, consistent, least_squares.condition, fits, samples,
                          float(cutoff_hz), method, (t_, tau_, predicted), before, seconds)


def _correlated(estimate, dt, cutoff_hz):
    """The standard deviations of ``estimate`` for residuals low-passed at ``cutoff_hz``: the
    textbook σ²(WᵀW)⁻¹ assumes independent samples, and samples dt apart of noise of bandwidth
    f_c are worth 2 f_c dt independent ones each (all of them are kept: fewer would fit worse)."""
    factor = np.sqrt(1.0 / max(2.0 * cutoff_hz * dt, 1e-12)) if 2.0 * cutoff_hz * dt < 1.0 else 1.0
    return dataclasses.replace(estimate, std=estimate.std * factor,
                               relative_std=estimate.relative_std * factor)


def _part(recording, rows):
    return dataclasses.replace(recording, **{
        field: getattr(recording, field)[rows] for field in ("t", "position", "velocity", "effort")
        if getattr(recording, field) is not None})


def _states(model, recording, cutoff_hz, effort_delay, name):
    """(t, q, qd, qdd, tau) of a recording in the model's joint order, filtered alike. A gap (a
    message the recorder lost, a state without its command) splits the run: each stretch is
    filtered on its own and one too short for the filter's edges is left out."""
    where = f"{recording.source} ({name} part)"
    missing = [j for j in model.joint_names if j not in recording.joint_names]
    if missing:
        raise IdentificationError(f"{where}: no positions of the model's joints {missing} "
                                  f"(the recording has {list(recording.joint_names)})")
    if recording.effort is None:
        raise IdentificationError(f"{where}: no joint torques: the joint states carry no effort; "
                                  "name the controller's effort command topic")
    order = [list(recording.joint_names).index(j) for j in model.joint_names]
    t = recording.t
    if len(t) < 2:
        raise IdentificationError(f"{where}: {len(t)} states")
    dt = float(np.median(np.diff(t)))
    cuts = np.flatnonzero(np.diff(t) > GAP * dt) + 1
    stretches, errors = [], []
    for rows in np.split(np.arange(len(t)), cuts):
        velocity = None if recording.velocity is None else recording.velocity[rows][:, order]
        try:
            f = filter_and_differentiate(t[rows], recording.position[rows][:, order], cutoff_hz,
                                         qd=velocity, tau=recording.effort[rows][:, order])
        except ValueError as exc:
            errors.append(str(exc))
            continue
        tau = f.tau
        keep = slice(None)
        if effort_delay:
            # a torque that acts effort_delay after its stamp, read at the state's time
            tau = np.column_stack([np.interp(f.t, f.t + effort_delay, column) for column in tau.T])
            keep = slice(1, -1)
        stretches.append((f.t[keep], f.q[keep], f.qd[keep], f.qdd[keep], tau[keep]))
    if not stretches:
        raise IdentificationError(f"{where}: no stretch of the run can be filtered: {errors[0]}")
    return tuple(np.concatenate(parts) for parts in zip(*stretches))


def _check_excitation(W, base, source):
    """Refuse data in which some base parameter barely shows (unit columns, pivoted QR)."""
    from scipy.linalg import qr

    norms = np.linalg.norm(W, axis=0)
    silent = [base.expressions()[k] for k in np.flatnonzero(norms == 0.0)]
    if not silent:
        R, pivots = qr(W / norms, mode="r", pivoting=True)
        diagonal = np.abs(np.diag(R))
        silent = [base.expressions()[pivots[k]]
                  for k in np.flatnonzero(diagonal < EXCITATION_FLOOR * diagonal[0])]
    if silent:
        raise IdentificationError(
            f"{source}: the motion does not excite every base parameter: {len(silent)} barely show "
            f"({'; '.join(silent[:5])}{' ...' if len(silent) > 5 else ''}); record an excitation "
            "trajectory (robodyn-ros excite) that moves every joint")


__all__ = ["CUTOFF_HZ", "Fit", "Identification", "IdentificationError", "identify"]
