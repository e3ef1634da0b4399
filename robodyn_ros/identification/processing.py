"""How a run is processed, chosen from its sample rate and its motion's bandwidth (no rclpy here).

A log may come at 1 kHz (a Panda's) or at 94 Hz with stamps of 1 ms resolution (a UR's through
its driver), and its motion may be a 0.4 Hz excitation or a quick pick-and-place. What suits one
ruins the other, so ``choose`` derives each setting from two figures of the run:

* the **sample rate** f_s, one over the median interval between stamps;
* the motion's **bandwidth** f_b (``bandwidth``): the frequency below which ``BANDWIDTH_POWER``
  (99 %) of the joint velocities' power lies, pooled over the joints so that a joint that barely
  moves (its noise) does not decide it.

From them:

* the **cut-off** of the zero-phase filter (``rule``): ten times the bandwidth, as Gautier's
  school filters positions before differentiating them (Khalil & Dombre 2002; Janot, Vandanjon &
  Gautier 2014: the filter's cut-off at least ten times the motion's bandwidth, so that it
  distorts nothing the dynamics carry), and no higher than a fifth of the sample rate, beyond
  which the five-point derivative's own error (``signals.derivative``) passes 8 % in the filter's
  pass band. The torques may carry more of the dynamics than the motion's bandwidth says (a
  controller's corrections), or less (a sensor's own content): "auto", ``identify``'s default,
  tries ``Processing.candidates`` from twice to forty times the bandwidth (within a fifth of the
  sample rate) and keeps the one that predicts data the fit did not see best
  (``identification.cutoff``);
* the **longest gap** resampling bridges: the interval over which a straight line departs from a
  sine at the bandwidth by at most ``INTERPOLATION_ERROR`` (1 %) of its amplitude, (π f_b h)² / 2
  ≤ 1 %, and never less than ``GAP_INTERVALS`` (4) median intervals, so that a logger that skips
  three samples in a row does not split the run;
* the **edge trim** follows the cut-off (``signals.edge_seconds``, eight time constants of the
  filter's slowest pole).

Anything given explicitly is kept; ``Processing.chosen`` says how each value came about.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

BANDWIDTH_POWER = 0.99     # share of the velocities' power below the bandwidth
CUTOFF_PER_BANDWIDTH = 10.0
MAX_CUTOFF_PER_RATE = 0.2  # of the sample rate
MIN_CUTOFF_PER_BANDWIDTH = 2.0   # below, the filter bites into the motion (|H|² at f_b: 0.996)
INTERPOLATION_ERROR = 0.01
GAP_INTERVALS = 4


@dataclasses.dataclass(frozen=True)
class Processing:
    """The settings a run is processed with: ``rate_hz`` (1 / median interval), ``bandwidth_hz``,
    ``cutoff_hz`` (None while "auto" has not chosen yet), ``max_gap`` (s), and ``chosen``, a
    sentence per setting saying where it came from."""
    rate_hz: float
    bandwidth_hz: float
    cutoff_hz: float | None
    max_gap: float
    chosen: dict

    def candidates(self, step=math.sqrt(2.0)):
        """Cut-offs "auto" tries: from twice the bandwidth up to the highest one allowed
        (``highest_cutoff``), a factor ``step`` apart."""
        low, high = MIN_CUTOFF_PER_BANDWIDTH * self.bandwidth_hz, highest_cutoff(self.rate_hz, self.bandwidth_hz)
        if low >= high:
            return [high]
        count = math.ceil(math.log(high / low) / math.log(step))
        return [float(f) for f in np.geomspace(low, high, count + 1)]

    def with_cutoff(self, cutoff_hz, how):
        return dataclasses.replace(self, cutoff_hz=float(cutoff_hz), chosen={**self.chosen, "cutoff": how})


def rule(rate_hz, bandwidth_hz):
    """(the cut-off ten times the bandwidth within a fifth of the sample rate, how it came about)."""
    cutoff = min(CUTOFF_PER_BANDWIDTH * bandwidth_hz, MAX_CUTOFF_PER_RATE * rate_hz)
    if cutoff < MAX_CUTOFF_PER_RATE * rate_hz:
        return cutoff, f"{cutoff:.3g} Hz: {CUTOFF_PER_BANDWIDTH:g} × the bandwidth"
    return cutoff, f"{cutoff:.3g} Hz: a fifth of the sample rate (10 × the bandwidth is above it)"


def highest_cutoff(rate_hz, bandwidth_hz):
    """The largest cut-off worth trying: 4× the default rule, within a fifth of the sample rate."""
    return min(MAX_CUTOFF_PER_RATE * rate_hz, 4.0 * CUTOFF_PER_BANDWIDTH * bandwidth_hz)


def sample_rate(t):
    """1 / the median interval between distinct stamps ``t`` (s)."""
    intervals = np.diff(np.asarray(t, dtype=float))
    intervals = intervals[intervals > 0.0]
    if intervals.size == 0:
        raise ValueError("the stamps do not advance: no sample rate")
    return 1.0 / float(np.median(intervals))


def bandwidth(t, position, velocity=None, power=BANDWIDTH_POWER):
    """The motion's bandwidth in Hz: the frequency below which ``power`` of the velocities' power
    lies (their means removed, a Hann window against leakage), pooled over the joints. The run is
    put on a uniform grid at its median interval by linear interpolation first (gaps included: a
    straight line adds only low frequencies); without ``velocity`` it is the derivative of
    ``position``. Never below the spectrum's resolution, 1 / the run's length."""
    t = np.asarray(t, dtype=float)
    keep = np.concatenate(([True], np.diff(t) > 0.0))
    t = t[keep]
    signal = np.asarray(position if velocity is None else velocity, dtype=float)[keep]
    signal = signal.reshape(len(t), -1)
    dt = 1.0 / sample_rate(t)
    grid = t[0] + dt * np.arange(int((t[-1] - t[0]) / dt) + 1)
    x = np.column_stack([np.interp(grid, t, column) for column in signal.T])
    if velocity is None:
        x = np.gradient(x, dt, axis=0)
    x = (x - x.mean(axis=0)) * np.hanning(len(grid))[:, None]
    spectrum = np.sum(np.abs(np.fft.rfft(x, axis=0)) ** 2, axis=1)
    frequencies = np.fft.rfftfreq(len(grid), dt)
    total = float(spectrum.sum())
    if not total > 0.0:
        raise ValueError("the joints do not move: no bandwidth to process the run by")
    k = int(np.searchsorted(np.cumsum(spectrum) / total, power))
    return max(float(frequencies[min(k, len(frequencies) - 1)]), 1.0 / (grid[-1] - grid[0]))


def choose(t, position, velocity=None, cutoff_hz=None, max_gap=None):
    """The ``Processing`` of a run at stamps ``t`` (s) with ``position`` (and ``velocity``) (N, n):
    ``cutoff_hz`` a number (kept), "auto" (left to ``identification.cutoff``: None here) or None
    (ten times the bandwidth, within a fifth of the sample rate); ``max_gap`` (s) kept if given."""
    rate, f_b = sample_rate(t), bandwidth(t, position, velocity)
    chosen = {"bandwidth": f"{BANDWIDTH_POWER:.0%} of the joint velocities' power below {f_b:.3g} Hz",
              "rate": f"{rate:.4g} Hz (1 / the median interval)"}
    if cutoff_hz is None:
        cutoff, chosen["cutoff"] = rule(rate, f_b)
    elif cutoff_hz == "auto":
        cutoff = None
    else:
        cutoff = float(cutoff_hz)
        chosen["cutoff"] = f"{cutoff:g} Hz, as given"
    if max_gap is None:
        bridged = math.sqrt(2.0 * INTERPOLATION_ERROR) / (math.pi * f_b)
        max_gap = max(bridged, GAP_INTERVALS / rate)
        chosen["max_gap"] = (f"{max_gap:.3g} s: a straight line within {INTERPOLATION_ERROR:.0%} of a "
                             "sine at the bandwidth" if max_gap == bridged else
                             f"{max_gap:.3g} s: {GAP_INTERVALS} median intervals")
    else:
        chosen["max_gap"] = f"{max_gap:g} s, as given"
    return Processing(rate, f_b, cutoff, float(max_gap), chosen)


__all__ = ["Processing", "bandwidth", "choose", "highest_cutoff", "rule", "sample_rate"]
