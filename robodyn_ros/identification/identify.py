"""From a recorded run to an identified model: filter, regress, estimate, check on held-out data.

``identify(model, recording)`` takes the nominal model and a ``bag.Recording`` (positions, and
velocities and torques where recorded) and returns an ``Identification``: what became of the
samples (``samples.SampleAccount``: a logger's repeats merged, split only at real gaps, resampled
onto a uniform grid, filtered), the base parameters by ordinary (or weighted) least squares with
their standard deviations, the physically consistent estimate of the whole parameter set (every
body a rigid body, friction magnitudes non-negative, each joint's friction of the form asked,
``layout``, pulled lightly toward the nominal model where the data say nothing) and the model and
friction file it makes, and how well each predicts the torques of the training data and of data
it never saw (a second recording, or the last part of this one). The regressor is never held
whole: its per-joint Gram matrices are (``gram``).

Torques that are held commands (a controller's output, applied from one state until the next)
act, on average, half a period after the state they answer: ``effort_delay`` shifts them by that
before they are compared with the state's dynamics.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from .cutoff import WINDOW, choose_cutoff
from .estimate import consistent_from_gram, least_squares_from_gram, payload_from_gram, wls_weights
from .gram import accumulate, predictions
from ..dynamics.friction import REST_BAND
from ..dynamics.inertial_parameters import with_parameters
from .layout import Layout
from .processing import choose, rule
from .rest import check_band, rest_rows
from .samples import filtered_states
from .signals import absolute_response

MIN_SAMPLES_PER_PARAMETER = 10
EXCITATION_FLOOR = 1e-6  # smallest |R_kk| / |R_00| of the column-normalised base regressor
METHODS = ("ols", "wls")


class IdentificationError(ValueError):
    """A recording that cannot identify the model; the message says what is missing."""


@dataclasses.dataclass(frozen=True)
class Fit:
    """How well a parameter set predicts the torques: per joint RMS(τ − τ̂) / RMS(τ) (``relative``),
    RMS(τ − τ̂) in N·m or N (``rms``), and ‖τ − τ̂‖ / ‖τ‖ over all joints stacked (``stacked``, the
    figure papers quote; heavy joints dominate it)."""
    relative: np.ndarray
    rms: np.ndarray
    stacked: float

    @classmethod
    def from_gram(cls, grams, pi):
        """The fit of parameters ``pi`` to the data of ``grams`` (gram.JointGrams)."""
        residual, torque = grams.residual_squares(pi), grams.torque_squares()
        rms, scale = np.sqrt(residual / grams.rows), np.sqrt(torque / grams.rows)
        total = float(np.sum(torque))
        return cls(rms / np.where(scale > 0.0, scale, 1.0), rms,
                   float(np.sqrt(np.sum(residual) / (total if total > 0.0 else 1.0))))

    @classmethod
    def of(cls, tau, predicted):
        rms = np.sqrt(np.mean((tau - predicted) ** 2, axis=0))
        scale = np.sqrt(np.mean(tau ** 2, axis=0))
        total = float(np.linalg.norm(tau))
        return cls(rms / np.where(scale > 0.0, scale, 1.0), rms,
                   float(np.linalg.norm(tau - predicted)) / (total if total > 0.0 else 1.0))


@dataclasses.dataclass(frozen=True)
class Identification:
    """The result of ``identify`` (module docstring)."""
    nominal: object          # RobotModel
    model: object            # RobotModel with the consistent parameters (sign-law friction)
    friction: object         # dynamics.friction.FrictionModel of the consistent estimate
    layout: object           # layout.Layout: the parameters' names and friction forms
    parameters: np.ndarray   # the consistent parameters, the layout's order
    names: list
    base: object             # base.BaseParameters (in the layout)
    least_squares: object    # estimate.LeastSquaresEstimate of the base parameters
    consistent: object       # estimate.ConsistentEstimate
    condition: float         # cond(W_base) of the training data
    fits: dict               # (set, estimate) -> Fit: sets "training", "held-out"; "base", "consistent"
    samples: dict            # set -> states regressed
    accounts: dict           # recording ("run", "held-out run") -> samples.SampleAccount
    processing: dict         # what was done to the samples, in words and numbers
    cutoff_hz: float
    method: str
    held_out: tuple          # (t, measured tau, tau of the identified model) of the held-out data
    held_out_nominal: np.ndarray   # tau of the nominal model there
    held_out_states: tuple   # (q, qd, qdd) of the held-out data, filtered
    seconds: dict            # wall time of each stage: filtering, regressor, least squares, consistent

    def processed(self, recording, name, effort_delay=0.0, edge_trim=None):
        """((t, q, q̇, q̈, τ, Coulomb columns, rest), SampleAccount) of another recording, processed
        as this identification processed its own run (its cut-off and longest gap bridged)."""
        return processed_states(self.nominal, self.layout, recording, self.cutoff_hz, effort_delay,
                                self.processing["max_gap_s"], edge_trim, name, self.processing["rest_band"])

    @property
    def standard_parameters(self):
        """The consistent estimate as the model's standard parameters (for ``with_parameters``, a URDF)."""
        return self.layout.split(self.parameters)[0]

    def report(self):
        """A JSON-ready summary: samples, processing, fits, cond(W_base), parameters with σ."""
        joints = self.nominal.joint_names
        return {
            "joints": joints, "method": self.method, "cutoff_hz": self.cutoff_hz,
            "samples": self.samples, "accounts": {k: a.report() for k, a in self.accounts.items()},
            "processing": self.processing, "cond_W_base": self.condition,
            "friction": dict(zip(joints, (form.spec() for form in self.layout.forms))),
            "fit": {f"{data}/{estimate}": dict(zip(joints, fit.relative.tolist()))
                    for (data, estimate), fit in self.fits.items()},
            "relative_error_stacked": {f"{data}/{estimate}": fit.stacked
                                       for (data, estimate), fit in self.fits.items()},
            "residual_rms": dict(zip(joints, self.least_squares.residual_rms.tolist())),
            "base_parameters": [
                {"expression": name, "value": float(v), "std": float(s), "relative_std_percent": float(r)}
                for name, v, s, r in zip(self.base.expressions(), self.least_squares.parameters,
                                         self.least_squares.std, self.least_squares.relative_std)],
            "consistent_parameters": dict(zip(self.names, self.parameters.tolist())),
            "nominal_parameters": dict(zip(self.names, self.layout.nominal().tolist())),
            "min_pseudo_inertia_eigenvalue": float(np.min(self.consistent.min_eigenvalues)),
            "solver": {"iterations": self.consistent.iterations, "converged": self.consistent.converged},
            "seconds": self.seconds,
        }


def identify(model, recording, *, holdout=None, holdout_fraction=0.25, cutoff_hz="auto",
             effort_delay=0.0, method="ols", prior_weight=1e-6, payload_only=False, friction=None,
             max_gap=None, edge_trim=None, rest_band=REST_BAND, progress=print):
    """Identify ``model``'s parameters from ``recording`` (module docstring). ``holdout``: a second
    recording to check the result on; without one, the run is filtered whole and its last
    ``holdout_fraction`` (in time) held out. ``method``: "ols" or "wls" for the base parameters.
    ``payload_only``: the arm is known, only a rigid body added to the last link is estimated.
    ``friction``: the friction form of every joint or per joint (``layout.Layout.of``; a form that
    names no Coulomb shape takes the laws' ramp through ``REST_BAND``). ``rest_band`` (rad/s or
    m/s): a joint's rows where its measured velocity lies inside it are left out of its fit
    (``rest``; 0: every row fitted). ``cutoff_hz``: Hz, "auto" (the one that predicts the end of the training
    data best, ``cutoff.choose_cutoff``, among cut-offs that follow the run's sample rate and
    bandwidth) or None (ten times the bandwidth, ``processing.choose``); ``max_gap`` (s: a longer
    interval between stamps splits the run) follows the bandwidth when None; ``edge_trim`` (s):
    what the filter's edge transient takes off each end of a stretch (``samples.filtered_states``)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    check_band(rest_band)
    if holdout is None and not 0.0 < holdout_fraction < 1.0:
        raise ValueError(f"holdout_fraction must lie in (0, 1), got {holdout_fraction}")
    started = time.monotonic()
    seconds, lap = {}, [started]

    def say(text, stage=None):
        now = time.monotonic()
        if stage:
            seconds[stage] = now - lap[0]
        lap[0] = now
        progress(f"[{now - started:6.1f} s] {text}")

    layout = Layout.of(model, friction, band=REST_BAND)
    base = layout.base
    say(f"{model.dof} joints, {len(layout.names)} parameters, {base.count} base ones; friction "
        + ", ".join(sorted(set(form.spec() for form in layout.forms))))
    order = _order(model, recording, f"{recording.source} (run)")
    try:
        settings = choose(recording.t, recording.position[:, order],
                          None if recording.velocity is None else recording.velocity[:, order], cutoff_hz, max_gap)
    except ValueError as exc:
        raise IdentificationError(f"{recording.source}: {exc}") from None
    split = (np.inf if holdout is not None else
             recording.t[0] + (1.0 - holdout_fraction) * (recording.t[-1] - recording.t[0]))
    if settings.cutoff_hz is None:
        keep = recording.t >= min(split, recording.t[-1]) - WINDOW     # a long run: its last minutes
        window = recording if keep.all() else recording.rows(keep)
        say(f"cut-off: {len(settings.candidates())} tried on the training data"
            + ("" if keep.all() else f" (its last {WINDOW:g} s)"))
        chosen, _ = choose_cutoff(layout, lambda fc: processed_states(model, layout, window, fc, effort_delay,
                                                                      settings.max_gap, edge_trim, "run",
                                                                      rest_band)[0],
                                  settings.candidates(), split - (recording.t[keep][0] - window.t[0]), progress)
        if chosen is None:    # no candidate could be fitted: the checks below say why
            fallback, how = rule(settings.rate_hz, settings.bandwidth_hz)
            settings = settings.with_cutoff(fallback, how + " (--cutoff auto could fit no candidate)")
        else:
            settings = settings.with_cutoff(chosen, f"{chosen:.3g} Hz: the least error on the last quarter "
                                            "of the training data (--cutoff auto)")
    cutoff_hz, max_gap = settings.cutoff_hz, settings.max_gap
    options = (cutoff_hz, effort_delay, max_gap, edge_trim)
    accounts = {}
    states, accounts["run"] = processed_states(model, layout, recording, *options, "run", rest_band)
    if holdout is None:
        later = states[0] >= split
        data = {"training": tuple(x[~later] for x in states), "held-out": tuple(x[later] for x in states)}
    else:
        data = {"training": states}
        data["held-out"], accounts["held-out run"] = processed_states(model, layout, holdout, *options,
                                                                      "held-out run", rest_band)
    say(f"filtered at {cutoff_hz:g} Hz: {len(data['training'][0])} training, {len(data['held-out'][0])} "
        "held-out states", "filter")
    for name, account in accounts.items():
        progress(f"{'':10s}{name}: {account.summary()}")
        if account.warning():
            progress(f"{'':10s}warning: {name}: {account.warning()}")
    t, q, qd, qdd, tau, coulomb, rest = data["training"]
    needed = MIN_SAMPLES_PER_PARAMETER * base.count // model.dof
    for name, part in data.items():
        if len(part[0]) < (needed if name == "training" else 1):
            raise IdentificationError(f"{recording.source}: {len(part[0])} {name} states after filtering, "
                                      f"fewer than the {needed} that {base.count} base parameters need "
                                      "(record longer)" if name == "training" else
                                      f"{recording.source}: no held-out states after filtering")
    grams = accumulate(layout, q, qd, qdd, tau, rest=rest, coulomb=coulomb)
    _check_excitation(grams.matrix(base.columns)[:-1, :-1], base, recording.source)
    say(f"regressor {len(t) * model.dof} rows x {len(layout.names)} columns, as per-joint Gram matrices",
        "regressor")
    least_squares = _correlated(_least_squares(grams, base, method), float(np.median(np.diff(t))), cutoff_hz)
    say(f"{method.upper()}: cond(W_base) = {least_squares.condition:.3g}", "least squares")
    nominal = layout.nominal()
    rows = int(np.sum(grams.rows))
    if payload_only:
        consistent = payload_from_gram(grams.matrix(np.arange(len(layout.names))), rows, nominal, model.dof,
                                       prior_weight=prior_weight)
    else:
        consistent = consistent_from_gram(grams.matrix(np.arange(len(layout.names))), rows, nominal, model.dof,
                                          layout.drive_layout, prior_weight=prior_weight)
    say(f"consistent estimate: {consistent.iterations} iterations, smallest pseudo-inertia "
        f"eigenvalue {np.min(consistent.min_eigenvalues):.3g}", "consistent")
    standard, friction_model = layout.split(consistent.parameters)
    identified = with_parameters(model, standard)
    estimates = {"base": _in_layout(least_squares.parameters, base, len(layout.names)),
                 "consistent": consistent.parameters, "nominal": nominal}
    fits = {("training", name): Fit.from_gram(grams, pi) for name, pi in estimates.items()}
    t_, q_, qd_, qdd_, tau_, coulomb_, _ = data["held-out"]
    held = dict(zip(estimates, predictions(layout, q_, qd_, qdd_, list(estimates.values()), coulomb=coulomb_)))
    fits.update({("held-out", name): Fit.of(tau_, value) for name, value in held.items()})
    predicted, before = held["consistent"], held["nominal"]
    samples = {name: len(part[0]) for name, part in data.items()}
    processing = {
        "repeats": "rows equal to the one before in every field dropped (merged into it)",
        "grid": "each stretch resampled by linear interpolation onto a uniform grid at its median interval",
        "filter": f"zero-phase Butterworth (order 4, forward-backward) at {cutoff_hz:g} Hz; q̈ by five-point "
                  "differences of the filtered q̇ (or q)",
        "rate_hz": settings.rate_hz, "bandwidth_hz": settings.bandwidth_hz,
        "chosen": settings.chosen, "max_gap_s": float(max_gap), "edge_trim_s": round(accounts["run"].edge_s, 6),
        "rest_band": float(rest_band),
        "at_rest": {joint: int(k) for joint, k in zip(model.joint_names, np.count_nonzero(rest, axis=0))},
        "held_out": (f"the last {100 * holdout_fraction:g} % of the run in time (filtered with the rest)"
                     if holdout is None else f"a second recording, {holdout.source}"),
    }
    say("done", "fits")
    return Identification(model, identified, friction_model, layout, consistent.parameters, list(layout.names),
                          base, least_squares, consistent, least_squares.condition, fits, samples, accounts,
                          processing, float(cutoff_hz), method, (t_, tau_, predicted), before, (q_, qd_, qdd_),
                          seconds)


def _least_squares(grams, base, method):
    """OLS, or Gautier & Khalil's WLS (``estimate.weighted_least_squares``), of the base parameters
    from the per-joint Gram matrices; the residual RMS per joint kept."""
    rows = int(np.sum(grams.rows))

    def estimate(weights=None):
        result = least_squares_from_gram(grams.matrix(base.columns, weights), rows, weights)
        residual = grams.residual_squares(_in_layout(result.parameters, base, grams.p))
        return dataclasses.replace(result, rms=np.sqrt(residual / grams.rows)), residual

    first, residual = estimate()
    if method == "ols":
        return dataclasses.replace(first, weights=np.ones(len(grams.blocks)))
    return estimate(wls_weights(residual, grams.rows, base.count))[0]


def _in_layout(values, base, p):
    """The base estimate as a vector of Y's layout: W_base π_base = Y π with the dependent columns at 0."""
    pi = np.zeros(p)
    pi[base.columns] = values
    return pi


def _correlated(estimate, dt, cutoff_hz):
    """The standard deviations of ``estimate`` for residuals low-passed at ``cutoff_hz``: the
    textbook σ²(WᵀW)⁻¹ assumes independent samples, and samples dt apart of noise of bandwidth
    f_c are worth 2 f_c dt independent ones each (all of them are kept: fewer would fit worse)."""
    factor = np.sqrt(1.0 / max(2.0 * cutoff_hz * dt, 1e-12)) if 2.0 * cutoff_hz * dt < 1.0 else 1.0
    return dataclasses.replace(estimate, std=estimate.std * factor,
                               relative_std=estimate.relative_std * factor)


def processed_states(model, layout, recording, cutoff_hz, effort_delay, max_gap, edge_trim, name,
                     rest_band=REST_BAND):
    """((t, q, qd, qdd, tau, Coulomb columns, rest) of a recording in the model's joint order,
    filtered alike, its SampleAccount): what every fit of a run regresses (``identify``,
    ``drive_gains``, ``validation``). samples.filtered_states says what is dropped, split and left
    out; ``rest`` (N, n) which joint's friction is unknown where (``rest.rest_rows`` with
    ``rest_band``), and how the Coulomb columns of ``layout`` are filtered."""
    where = f"{recording.source} ({name})"
    order = _order(model, recording, where)
    if recording.effort is None:
        raise IdentificationError(f"{where}: no joint torques: the joint states carry no effort; "
                                  "name the controller's effort command topic")
    if len(recording.t) < 2:
        raise IdentificationError(f"{where}: {len(recording.t)} states")
    velocity = None if recording.velocity is None else recording.velocity[:, order]
    effort = recording.effort[:, order]
    if velocity is not None:   # the Coulomb columns of the measured velocity, filtered as the torque (rest.py)
        effort = np.hstack((effort, layout.coulomb_columns(velocity)))
    try:
        filtered, account = filtered_states(recording.t, recording.position[:, order], velocity,
                                            effort, cutoff_hz, max_gap=max_gap,
                                            edge=edge_trim, dropped_by_reader=recording.dropped - recording.repeated,
                                            repeated_stamps=recording.repeated)
    except ValueError as exc:
        raise IdentificationError(f"{where}: {exc}") from None
    stretches = []
    n = model.dof
    for f in filtered:
        tau, keep = f.tau[:, :n], slice(None)
        coulomb = layout.coulomb_columns(f.qd) if velocity is None else f.tau[:, n:]
        rest = rest_rows(rest_band, *((f.t, f.qd) if velocity is None else (recording.t, velocity)), f.t,
                         absolute_response(cutoff_hz, f.fs))
        if effort_delay:
            # a torque that acts effort_delay after its stamp, read at the state's time
            tau = np.column_stack([np.interp(f.t, f.t + effort_delay, column) for column in tau.T])
            keep = slice(1, -1)
        stretches.append(tuple(x[keep] for x in (f.t, f.q, f.qd, f.qdd, tau, coulomb, rest)))
    return tuple(np.concatenate(parts) for parts in zip(*stretches)), account


def _order(model, recording, where):
    """The recording's column of each of the model's joints; IdentificationError naming the missing."""
    missing = [j for j in model.joint_names if j not in recording.joint_names]
    if missing:
        raise IdentificationError(f"{where}: no positions of the model's joints {missing} "
                                  f"(the recording has {list(recording.joint_names)})")
    return [list(recording.joint_names).index(j) for j in model.joint_names]


def _check_excitation(G, base, source):
    """Refuse data in which some base parameter barely shows: pivoted QR of the unit columns of W,
    done on a square root of WᵀW = ``G`` (R = Λ^½ Vᵀ of G = V Λ Vᵀ: W = QR for an orthonormal Q,
    so RD's pivoted factor is WD's), p × p whatever the recording's length."""
    from scipy.linalg import qr

    values, vectors = np.linalg.eigh(G)
    R = np.sqrt(np.maximum(values, 0.0))[:, None] * vectors.T
    norms = np.sqrt(np.maximum(np.diag(G), 0.0))
    silent = [base.expressions()[k] for k in np.flatnonzero(norms <= 1e-300)]
    if not silent:
        R, pivots = qr(R / norms, mode="r", pivoting=True)
        diagonal = np.abs(np.diag(R))
        silent = [base.expressions()[pivots[k]]
                  for k in np.flatnonzero(diagonal < EXCITATION_FLOOR * diagonal[0])]
    if silent:
        raise IdentificationError(
            f"{source}: the motion does not excite every base parameter: {len(silent)} barely show "
            f"({'; '.join(silent[:5])}{' ...' if len(silent) > 5 else ''}); record an excitation "
            "trajectory (robodyn-ros excite) that moves every joint")


__all__ = ["Fit", "Identification", "IdentificationError", "identify", "processed_states"]
