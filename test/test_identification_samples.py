"""Samples at their own stamps (issue 38, items 1-2): a logger's irregular intervals, its repeated
rows and its short pauses are data; only a gap longer than ``max_gap`` seconds splits the run; the
account says how many samples came in, were used, and why any were not.

The arm is the PUMA 560 plant of the identification demo (no Coulomb friction: noiseless runs then
give its base parameters back to the accuracy of the filter and central differences), moving along
a band-limited Fourier series; its torques are its own inverse dynamics at the true instants.
"""
import dataclasses

import numpy as np
import pytest

from robodyn_ros.identification import standard_parameters
from robodyn_ros.identification.bag import Recording
from robodyn_ros.identification.excitation import FourierSeries
from robodyn_ros.identification.identify import IdentificationError, identify
from robodyn_ros.identification.samples import MAX_GAP, filtered_states
from robodyn_ros.identification.synthetic import HARMONICS, PERIOD


START = np.radians([90, 0, 90, 0, 0, 0])
QUIET = {"progress": lambda line: None}


def recording_at(truth, t, seed=1):
    """The plant's states and torques at the instants ``t``, exactly."""
    rng = np.random.default_rng(seed)
    free = rng.normal(0.0, 0.12, (truth.dof, 2 * (HARMONICS - 1)))
    q, qd, qdd = FourierSeries.from_free(truth.joint_names, START, PERIOD, free).evaluate(t)
    return Recording(t=t - t[0], time_ns=np.round(t * 1e9).astype(np.int64), joint_names=truth.joint_names,
                     position=q, velocity=qd, effort=truth.inverse_dynamics(q, qd, qdd),
                     source="synthetic run", time_source="header", effort_source="joint_states")


def logger_stamps(seconds, seed=3):
    """Stamps as the Panda's logger wrote them: intervals of 0.7 to 1.6 ms, a few up to 8.8 ms."""
    rng = np.random.default_rng(seed)
    steps = rng.uniform(0.7e-3, 1.3e-3, int(seconds * 1100))
    long = rng.random(steps.size) < 0.01
    steps[long] = rng.uniform(2e-3, 8.8e-3, long.sum())
    t = np.concatenate(([0.0], np.cumsum(steps)))
    return t[t <= seconds]


def base_error(result, plant):
    truth = result.base.from_standard(standard_parameters(plant))
    return np.abs(result.least_squares.parameters - truth).max() / np.abs(truth).max()


def test_irregular_stamps_are_all_used_and_give_the_base_parameters(plant, nominal):
    recording = recording_at(plant, logger_stamps(12.0))
    result = identify(nominal, recording, **QUIET)
    account = result.accounts["run"]
    assert account.gaps == 0 and account.used == account.recorded == len(recording.t)
    assert account.warning() is None
    # one stretch: only its two ends are trimmed, every other grid state is regressed
    assert account.regressed == account.grid - account.edge
    assert sum(result.samples.values()) == account.regressed > 0.95 * 12.0 / account.interval
    # the interpolation onto the grid costs accuracy against the uniform run, not its usefulness
    assert base_error(result, plant) < 2e-3
    assert result.fits[("held-out", "base")].stacked < 2e-3


def test_exact_repeats_are_merged_and_change_nothing(plant, nominal):
    """A logger that writes the state it already had under a later stamp: dropped, the run is the
    one without them, to the last bit; kept at their stamps they would bend the estimate."""
    t = np.arange(0.0, 12.0, 1e-3)
    clean = recording_at(plant, t)
    rows = np.sort(np.random.default_rng(5).choice(np.arange(1, len(t) - 1), 700, replace=False))
    order = np.sort(np.concatenate((np.arange(len(t)), rows)))
    stamps = t[order]
    again = np.flatnonzero(np.diff(order) == 0) + 1
    stamps[again] += 0.5e-3                                  # the repeat's own, later stamp
    repeated = dataclasses.replace(clean, t=stamps, time_ns=np.round(stamps * 1e9).astype(np.int64),
                                   **{f: getattr(clean, f)[order] for f in ("position", "velocity", "effort")})
    with_repeats, without = identify(nominal, repeated, **QUIET), identify(nominal, clean, **QUIET)
    assert with_repeats.accounts["run"].repeats == 700
    assert with_repeats.accounts["run"].used == len(stamps)
    np.testing.assert_array_equal(with_repeats.least_squares.parameters, without.least_squares.parameters)


def test_a_gap_longer_than_max_gap_splits_the_run_and_a_shorter_one_is_bridged(plant, nominal):
    t = np.arange(0.0, 14.0, 1e-3)
    recording = recording_at(plant, t)
    keep = (t < 6.0) | (t >= 6.4)                         # the recorder paused for 0.4 s
    paused = dataclasses.replace(recording, **{f: getattr(recording, f)[keep]
                                               for f in ("t", "time_ns", "position", "velocity", "effort")})
    result = identify(nominal, paused, **QUIET)
    account = result.accounts["run"]
    assert account.gaps == 1 and account.used == account.recorded == keep.sum()
    # two stretches, each trimmed at both ends
    assert account.edge == 4 * round(account.edge_s / account.interval)
    assert base_error(result, plant) < 1e-4
    # the same pause is bridged when max_gap allows: one stretch, resampled across
    bridged = identify(nominal, paused, max_gap=0.5, **QUIET).accounts["run"]
    assert bridged.gaps == 0 and bridged.edge == 2 * round(bridged.edge_s / bridged.interval)
    short = (t < 6.0) | ((t >= 6.4) & (t < 6.5)) | (t >= 7.0)   # a 0.1 s stretch between two pauses
    stub = dataclasses.replace(recording, **{f: getattr(recording, f)[short]
                                             for f in ("t", "time_ns", "position", "velocity", "effort")})
    account = identify(nominal, stub, **QUIET).accounts["run"]
    assert account.gaps == 2 and account.short == 100 and account.used == short.sum() - 100
    assert account.warning() is None                      # 100 of 13,500: under 1 %
    assert "--edge-trim" in account.reasons() and "--max-gap" in account.reasons()
    lossy = dataclasses.replace(account, short=200, used=account.recorded - 200)
    assert "200 of" in lossy.warning() and "--edge-trim" in lossy.warning()


def test_the_edge_trim_is_an_option_and_a_run_too_short_for_it_is_refused_naming_it(plant, nominal):
    recording = recording_at(plant, np.arange(0.0, 12.0, 1e-3))
    account = identify(nominal, recording, edge_trim=0.05, **QUIET).accounts["run"]
    assert account.edge_s == 0.05 and account.edge == 2 * 50
    q = recording.position[:300]
    with pytest.raises(ValueError, match="--edge-trim"):
        filtered_states(recording.t[:300], q, None, q, 20.0)
    stretches, account = filtered_states(recording.t[:300], q, None, q, 20.0, edge=0.02)
    assert len(stretches[0].t) == 300 - 2 * 20 and account.regressed == 260
    with pytest.raises(IdentificationError, match="--edge-trim"):
        identify(nominal, recording, edge_trim=7.0, **QUIET)


def test_max_gap_is_in_seconds_not_a_ratio_of_the_median():
    t = np.concatenate((np.arange(0.0, 1.0, 1e-3), 1.0 + 0.015 + np.arange(0.0, 1.0, 1e-3)))
    q = np.sin(t)[:, None]
    assert filtered_states(t, q, None, q, 20.0)[1].gaps == 0 < MAX_GAP - 0.015
    assert filtered_states(t, q, None, q, 20.0, max_gap=0.01)[1].gaps == 1


def test_a_state_the_bag_repeats_under_its_stamp_is_merged_not_lost(plant, nominal, tmp_path):
    """The bag reader keeps one of two states stamped alike (a simulator publishing a state
    again); the account counts it as a repeat, used, like a repeated row."""
    from robodyn_ros.identification.bag import read_joint_states, write_joint_states

    t = np.arange(0.0, 12.0, 1e-3)
    clean = recording_at(plant, t)
    rows = np.insert(np.arange(len(t)), 500, 500)
    bag = write_joint_states(tmp_path / "run", t[rows], clean.joint_names, clean.position[rows],
                             clean.velocity[rows], clean.effort[rows])
    account = identify(nominal, read_joint_states(bag), **QUIET).accounts["run"]
    assert account.recorded == len(t) + 1 and account.repeats == 1
    assert account.used == account.recorded and account.dropped_by_reader == 0


def test_states_without_their_command_warn_only_when_there_is_something_to_do():
    """issue 46: `demo identify` warned of 487 of 22987 states left out by the bag reader, which
    the resampling bridges; a warning now means a recording to fix."""
    t = np.arange(0.0, 10.0, 1e-3)
    q = np.sin(t)[:, None]
    lost = np.zeros(len(t), bool)
    lost[np.random.default_rng(0).choice(len(t), 200, replace=False)] = True   # 2 %, scattered
    _, account = filtered_states(t[~lost], q[~lost], None, q[~lost], 20.0, dropped_by_reader=200)
    assert account.gaps == 0 and account.dropped_by_reader == 200 and account.warning() is None
    assert "200 without an effort command (resampled across)" in account.summary()
    many = dataclasses.replace(account, dropped_by_reader=1500, used=account.recorded - 1500)
    assert "1500 of" in many.warning() and "stamped" in many.warning()
