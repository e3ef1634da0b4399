"""A recorded run as a real logger writes it, made into filtered states (no rclpy here).

A logger's stamps are irregular (the Panda run of Gaz et al. 2019: 0.7-8.8 ms apart at ~1 kHz),
some rows repeat the one before (the logger wrote the state it already had, under a new stamp:
6 % of that run), and a real interruption (a lost connection, a paused recorder) leaves a gap.
Only the last is a break. ``filtered_states``:

* drops the exact repeats: a row whose positions, velocities and torques all equal the row
  before's carries nothing new, and its stamp is not the instant of its values (they are the
  earlier row's); the values stay in the run once, so a repeat is merged, not lost;
* splits the run only where two stamps lie more than ``max_gap`` seconds apart (default
  ``MAX_GAP``: a straight line over 20 ms departs from a 2 Hz motion by under 1 % of its
  amplitude, and an excitation trajectory moves slower than that);
* resamples each stretch by linear interpolation onto a uniform grid at its median interval and
  filters it zero-phase there (``signals.filter_and_differentiate``), the edges trimmed by
  ``edge`` seconds (default: the filter's transient); a stretch too short for that is left out,
  its samples counted and the option to change named.

``SampleAccount`` says how many samples came in, how many the estimate used and why any were not.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .signals import edge_seconds, filter_and_differentiate

MAX_GAP = 0.02      # s: a longer interval between two stamps splits the run (module docstring)
LOSS_WARNING = 0.01  # fraction of the samples lost in short stretches beyond which the account warns
READER_LOSS_WARNING = 0.1  # ... and of the states without an effort command (SampleAccount.warning)


@dataclasses.dataclass(frozen=True)
class SampleAccount:
    """What became of a recording's samples: ``recorded`` rows in; ``dropped_by_reader`` of them
    the bag reader left out (a state without its effort command); ``repeats`` rows equal to the
    one before, or stamped as it (the reader keeps one), merged into it; ``gaps`` intervals longer
    than ``max_gap`` (s), each a split; ``short`` samples in stretches too short to filter (lost);
    ``used`` the samples the filter read (recorded − dropped − short; repeats count as used, their
    values are there once); ``grid`` states on the uniform grids, ``edge`` of them trimmed as the
    filter's transient and ``regressed`` the rest; ``interval`` the grid's step (s); ``edge_s`` the
    trim per end (s)."""
    recorded: int
    dropped_by_reader: int
    repeats: int
    gaps: int
    max_gap: float
    short: int
    used: int
    grid: int
    edge: int
    regressed: int
    interval: float
    edge_s: float

    @property
    def lost(self):
        return self.recorded - self.used

    def warning(self):
        """A sentence when the loss is one to act on, else None: more than LOSS_WARNING of the
        samples in stretches too short to filter (the options that keep them named), or more than
        READER_LOSS_WARNING without their effort command (a recording that lost them, or stamps
        that do not pair). A state without its command is otherwise no loss to act on: the run is
        resampled across it, as across a logger's jitter, and a longer hole splits the run like
        any gap (counted, and lost only as a short stretch)."""
        parts = []
        if self.short > LOSS_WARNING * self.recorded:
            parts.append(f"{self.short} of {self.recorded} samples "
                         f"({100.0 * self.short / self.recorded:.1f} %) were not used: "
                         + self._short_reason())
        if self.dropped_by_reader > READER_LOSS_WARNING * self.recorded:
            parts.append(f"{self.dropped_by_reader} of {self.recorded} states "
                         f"({100.0 * self.dropped_by_reader / self.recorded:.1f} %) have no effort "
                         "command: the recording lost them, or the controller's state is not "
                         "stamped as its joint state; the estimate uses the others")
        return "; ".join(parts) or None

    def reasons(self):
        parts = []
        if self.dropped_by_reader:
            parts.append(f"{self.dropped_by_reader} without an effort command (resampled across)")
        if self.short:
            parts.append(self._short_reason())
        return "; ".join(parts) or "none lost"

    def _short_reason(self):
        return (f"{self.short} in stretches between gaps longer than max_gap = {self.max_gap:g} s "
                f"too short to filter with an edge of {self.edge_s:g} s (--max-gap / --edge-trim)")

    def summary(self):
        return (f"samples: {self.recorded} in, {self.used} used ({100.0 * self.used / self.recorded:.2f} %), "
                f"{self.repeats} exact repeats merged, {self.gaps} gap(s) > {self.max_gap:g} s; "
                f"resampled onto a {1e3 * self.interval:.3g} ms grid: {self.grid} states, "
                f"{self.edge} trimmed as the filter's edges ({self.edge_s:.3g} s per end), "
                f"{self.regressed} regressed; lost: {self.reasons()}")

    def report(self):
        return {**dataclasses.asdict(self), "lost": self.lost, "reasons": self.reasons()}


def repeats(fields):
    """Rows (N,) bool: True where every given (N, n) array (None ones skipped) equals the row before."""
    arrays = [a for a in fields if a is not None]
    same = np.ones(len(arrays[0]), dtype=bool)
    same[0] = False
    for a in arrays:
        same[1:] &= np.all(a[1:] == a[:-1], axis=1)
    return same


def filtered_states(t, position, velocity, effort, cutoff_hz, *, max_gap=MAX_GAP, edge=None,
                    dropped_by_reader=0, repeated_stamps=0):
    """(stretches, account): per stretch a ``signals.FilteredSignals``, and the ``SampleAccount``.
    ``t`` (N,) s increasing; ``position``, ``effort`` (N, n); ``velocity`` (N, n) or None.
    ``dropped_by_reader``: states the bag reader left out (lost); ``repeated_stamps``: states it
    read once for a repeated stamp (merged). ValueError naming the options when no stretch can be
    filtered."""
    if not max_gap > 0.0:
        raise ValueError(f"max_gap must be a positive time in s, got {max_gap}")
    t = np.asarray(t, dtype=float)
    keep = ~repeats((position, velocity, effort))
    t, position, effort = t[keep], position[keep], effort[keep]
    velocity = None if velocity is None else velocity[keep]
    cuts = np.flatnonzero(np.diff(t) > max_gap) + 1
    stretches, short, errors = [], 0, []
    for rows in np.split(np.arange(len(t)), cuts):
        if len(rows) < 2:
            short += len(rows)
            continue
        dt = float(np.median(np.diff(t[rows])))
        trim = None if edge is None else math.ceil(float(edge) / dt - 1e-9)
        try:
            stretches.append(filter_and_differentiate(
                t[rows], position[rows], cutoff_hz, qd=None if velocity is None else velocity[rows],
                tau=effort[rows], trim=trim, max_gap=max_gap))
        except ValueError as exc:
            if "too few" not in str(exc):
                raise
            errors.append(str(exc))
            short += len(rows)
    recorded = len(keep) + dropped_by_reader + repeated_stamps
    regressed = sum(len(s.t) for s in stretches)
    trimmed = sum(2 * s.trimmed for s in stretches)
    interval = float(np.median([1.0 / s.fs for s in stretches])) if stretches else float("nan")
    edge_s = edge if edge is not None else (edge_seconds(cutoff_hz) if not stretches
                                            else stretches[0].trimmed / stretches[0].fs)
    account = SampleAccount(recorded=recorded, dropped_by_reader=dropped_by_reader,
                            repeats=int(keep.size - keep.sum()) + repeated_stamps, gaps=len(cuts),
                            max_gap=float(max_gap),
                            short=short, used=recorded - dropped_by_reader - short, grid=regressed + trimmed,
                            edge=trimmed, regressed=regressed, interval=interval, edge_s=float(edge_s))
    if not stretches:
        raise ValueError(f"no stretch of the run can be filtered ({len(cuts) + 1} between gaps longer than "
                         f"max_gap = {max_gap:g} s): {errors[0] if errors else 'each has fewer than 2 samples'}; "
                         "pass a shorter edge trim (--edge-trim) or a longer max_gap (--max-gap)")
    return stretches, account
