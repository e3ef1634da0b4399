"""An identified model scored on runs it was not fitted to, beside the maker's own prediction (no
rclpy here).

The held-out quarter of the identification run is motion of the same kind as the rest; a robot is
judged on what it does next: other runs (a pick-and-place, a slow sweep, a payload). ``validate``
takes an ``identify.Identification`` and recordings of such runs and processes each exactly as the
identification processed its own (the same cut-off and longest gap bridged,
``Identification.processed``), then predicts their efforts with the identified model and with the
nominal one, and interpolates the predictions (smooth) to the recorded stamps: the efforts are
scored as recorded, unfiltered, so a perfect model scores the sensor's noise (the noise floor).
The score is the figure identification papers quote, ε = ‖τ − τ̂‖ / ‖τ‖ over all joints stacked
(the heavy joints dominate it), per run and pooled over the runs, and per joint
RMS(τ_j − τ̂_j) / RMS(τ_j), over the samples inside the processed stretches (not in a gap or an
edge trimmed) — in the efforts' own unit (``scale``: a current-measured joint's in A).

A controller often logs its own model's prediction of the same efforts (a UR's RTDE target current
or target moment, a Franka's model torques): ``read_prediction`` takes it from a topic of the bag
(a JointState's efforts, by stamp; an effort command or a controller state, as ``bag.
read_joint_states`` pairs them), and it is scored as ours is, so the maker's model and ours stand
in one table.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .bag import JOINT_STATE, BagError, read_joint_states, read_messages, topic_type
from .gram import predictions
from .identify import Fit, IdentificationError


@dataclasses.dataclass(frozen=True)
class ValidationRun:
    """One run: its ``source``, the ``account`` of its samples, the recorded stamps ``t`` (s) scored
    and their measured efforts ``measured`` (N, n), each predictor's efforts there (``predicted``:
    name -> (N, n)) and ``fits`` (name -> identify.Fit)."""
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
                "runs": [{"source": run.source, "samples scored": len(run.t), "samples": run.account.report(),
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
        stamps, efforts = _joint_state_efforts(bag, prediction_topic, measured.joint_names)
        inside = (measured.time_ns >= stamps[0]) & (measured.time_ns <= stamps[-1])
        measured = measured.rows(inside)
        effort = np.column_stack([np.interp(measured.time_ns, stamps, column) for column in efforts.T])
        return measured, dataclasses.replace(measured, effort=effort, effort_source=prediction_topic)
    paired = read_joint_states(bag, joints, topic=topic, effort_topic=prediction_topic)
    measured = measured.rows(np.isin(measured.time_ns, paired.time_ns))
    return measured, dataclasses.replace(measured, effort=paired.effort, effort_source=prediction_topic)


def _joint_state_efforts(bag, topic, joints):
    """(stamps ns, efforts (N, n) in ``joints`` order) of a JointState topic that may carry efforts
    alone (a controller's target current); BagError naming the message that lacks a joint."""
    stamps, rows = [], []
    for k, (receive_ns, msg) in enumerate(read_messages(bag, topic, JOINT_STATE)):
        names = list(msg.name)
        missing = [j for j in joints if j not in names]
        if missing or len(msg.effort) != len(names):
            raise BagError(f"{bag}: {topic} message {k}: " + (f"no joint {missing}" if missing else
                                                              f"{len(msg.effort)} efforts for {len(names)} names"))
        stamps.append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec or receive_ns)
        rows.append(np.asarray(msg.effort, dtype=float)[[names.index(j) for j in joints]])
    if not stamps:
        raise BagError(f"{bag}: no messages on {topic}")
    order = np.argsort(stamps, kind="stable")
    return np.asarray(stamps, dtype=np.int64)[order], np.array(rows)[order]


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
    order = None
    for k, (recording, prediction, delay) in enumerate(zip(recordings, makers, delays)):
        (grid, q, qd, qdd, _, coulomb, _), account = result.processed(recording, f"validation run {k + 1}",
                                                                       float(delay), edge_trim)
        on_grid = predictions(result.layout, q, qd, qdd, list(parameters.values()), coulomb=coulomb)
        # the recorded samples inside the processed stretches, each acting ``delay`` after its stamp
        t = recording.t + delay
        right = np.clip(np.searchsorted(grid, t), 1, len(grid) - 1)
        step = float(np.median(np.diff(grid)))
        inside = (t >= grid[0]) & (t <= grid[-1]) & (grid[right] - grid[right - 1] < 1.5 * step)
        if not inside.any():
            raise IdentificationError(f"{recording.source}: no sample inside the processed stretches to score")
        order = [list(recording.joint_names).index(j) for j in result.nominal.joint_names]
        measured = recording.effort[inside][:, order] / scale
        predicted = {key: np.column_stack([np.interp(t[inside], grid, column) for column in value.T]) / scale
                     for key, value in zip(parameters, on_grid)}
        if prediction is not None:
            predicted[maker] = prediction.effort[inside][:, order] / scale
        runs.append(ValidationRun(recording.source, account, recording.t[inside], measured, predicted,
                                  {key: Fit.of(measured, value) for key, value in predicted.items()}))
    names = [key for key in runs[0].predicted if all(key in run.predicted for run in runs)]
    measured = np.vstack([run.measured for run in runs])
    pooled = {key: Fit.of(measured, np.vstack([run.predicted[key] for run in runs])) for key in names}
    return Validation(list(result.nominal.joint_names), tuple(runs), pooled)


__all__ = ["Validation", "ValidationRun", "read_prediction", "validate"]
