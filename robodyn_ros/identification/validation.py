"""An identified model scored on runs it was not fitted to, beside the maker's own prediction (no
rclpy here).

The held-out quarter of the identification run is motion of the same kind as the rest; a robot is
judged on what it does next: other runs (a pick-and-place, a slow sweep, a payload). ``validate``
takes an ``identify.Identification`` and recordings of such runs and processes each exactly as the
identification processed its own (the same cut-off and longest gap bridged,
``Identification.processed``), then predicts their efforts with the identified model and with the
nominal one. The score is the figure identification papers quote, ε = ‖τ − τ̂‖ / ‖τ‖ over all joints
stacked (the heavy joints dominate it), per run and pooled over the runs, and per joint
RMS(τ_j − τ̂_j) / RMS(τ_j) — in the effort's own unit, N m or A: the ratio does not care.

A controller often logs its own model's prediction of the same efforts (a UR's RTDE target current
or target moment, a Franka's model torques): ``read_prediction`` takes it from a topic of the bag
(a JointState's effort, by stamp; an effort command or a controller state, as ``bag.
read_joint_states`` pairs them), and it is filtered and scored as the measured efforts are, so the
maker's model and ours stand in one table.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .bag import JOINT_STATE, BagError, read_joint_states, topic_type
from .gram import predictions
from .identify import Fit, IdentificationError


@dataclasses.dataclass(frozen=True)
class ValidationRun:
    """One run: its ``source``, the ``account`` of its samples, the filtered times ``t`` and
    measured efforts ``measured`` (N, n), each predictor's efforts (``predicted``: name -> (N, n))
    and ``fits`` (name -> identify.Fit)."""
    source: str
    account: object
    t: np.ndarray
    measured: np.ndarray
    predicted: dict
    fits: dict


@dataclasses.dataclass(frozen=True)
class Validation:
    """The scores of ``validate``: per run (``runs``) and ``pooled`` over them (name -> Fit)."""
    joints: list
    runs: tuple
    pooled: dict

    def report(self):
        """JSON-ready: ε in % per run, pooled, per joint, for every predictor."""
        def percent(fit):
            return {"stacked": 100.0 * fit.stacked, "joints": dict(zip(self.joints, (100.0 * fit.relative).tolist()))}
        return {"unit": "percent: ||tau - tau_hat|| / ||tau|| stacked, RMS ratio per joint",
                "runs": [{"source": run.source, "states": len(run.t), "samples": run.account.report(),
                          **{name: percent(fit) for name, fit in run.fits.items()}} for run in self.runs],
                "pooled": {name: percent(fit) for name, fit in self.pooled.items()}}


def read_prediction(bag, joints, topic, prediction_topic, **measured_effort):
    """(the measured Recording, the same states with the maker's prediction as their effort) of
    ``bag``: ``prediction_topic`` a JointState (its effort, interpolated at the measured states'
    stamps; states outside its span left out) or what ``read_joint_states`` pairs as an effort
    topic (a Float64MultiArray command, a controller state). ``measured_effort``: the
    ``effort_topic`` / ``effort_joints`` of the measured efforts, if not the joint states'.
    BagError naming what is missing."""
    measured = read_joint_states(bag, joints, topic=topic, **measured_effort)
    if topic_type(bag, prediction_topic) == JOINT_STATE:
        other = read_joint_states(bag, joints, topic=prediction_topic)
        if other.effort is None:
            raise BagError(f"{bag}: {prediction_topic} carries no effort to score")
        inside = (measured.time_ns >= other.time_ns[0]) & (measured.time_ns <= other.time_ns[-1])
        measured = measured.rows(inside)
        effort = np.column_stack([np.interp(measured.time_ns, other.time_ns, column) for column in other.effort.T])
        return measured, dataclasses.replace(measured, effort=effort, effort_source=prediction_topic)
    paired = read_joint_states(bag, joints, topic=topic, effort_topic=prediction_topic)
    measured = measured.rows(np.isin(measured.time_ns, paired.time_ns))
    return measured, dataclasses.replace(measured, effort=paired.effort, effort_source=prediction_topic)


def validate(result, recordings, predictions_by_maker=None, maker="maker", effort_delay=0.0, edge_trim=None,
             scale=None):
    """The ``Validation`` of ``result`` (identify.Identification) on ``recordings``;
    ``predictions_by_maker``: per recording None or the same states with the maker's prediction as
    effort (``read_prediction``), scored under the name ``maker``; ``effort_delay``: s, one for all
    or one per recording; ``scale`` (n,): each joint's efforts divided by it before they are scored
    (a current-measured joint's drive gain: its score in A, as the maker's target current is)."""
    scale = np.ones(result.nominal.dof) if scale is None else np.asarray(scale, dtype=float)
    makers = list(predictions_by_maker or [None] * len(recordings))
    delays = np.broadcast_to(np.asarray(effort_delay, dtype=float), (len(recordings),))
    parameters = {"identified": result.parameters, "nominal": result.layout.nominal()}
    runs = []
    for k, (recording, prediction, delay) in enumerate(zip(recordings, makers, delays)):
        name = f"validation run {k + 1}"
        (t, q, qd, qdd, tau, coulomb, _), account = result.processed(recording, name, float(delay), edge_trim)
        predicted = dict(zip(parameters, predictions(result.layout, q, qd, qdd, list(parameters.values()),
                                                     coulomb=coulomb)))
        if prediction is not None:
            (t_m, *_, tau_m, _, _), _ = result.processed(prediction, f"{name}, {maker}", float(delay), edge_trim)
            common, here, there = np.intersect1d(t, t_m, return_indices=True)
            if common.size == 0:
                raise IdentificationError(f"{recording.source}: the maker's prediction shares no state with the run")
            t, tau = t[here], tau[here]
            predicted = {key: value[here] for key, value in predicted.items()}
            predicted[maker] = tau_m[there]
        tau, predicted = tau / scale, {key: value / scale for key, value in predicted.items()}
        runs.append(ValidationRun(recording.source, account, t, tau, predicted,
                                  {key: Fit.of(tau, value) for key, value in predicted.items()}))
    names = [key for key in runs[0].predicted if all(key in run.predicted for run in runs)]
    measured = np.vstack([run.measured for run in runs])
    pooled = {key: Fit.of(measured, np.vstack([run.predicted[key] for run in runs])) for key in names}
    return Validation(list(result.nominal.joint_names), tuple(runs), pooled)


__all__ = ["Validation", "ValidationRun", "read_prediction", "validate"]
