"""Zero-phase low-pass filtering and differentiation of recorded joint signals (no rclpy here).

The identification regresses τ = Y(q, q̇, q̈) π on samples of a recorded run, so q, q̇, q̈ and τ
must be smooth, free of delay, and treated alike:

* one Butterworth low-pass of order ``order`` applied forward and backward (``sosfiltfilt``:
  zero phase, so no channel is delayed; the magnitude is squared, −6 dB at the cut-off) to
  q (or the measured q̇) and to τ, so that q̈ and τ carry the same attenuation;
* derivatives by the five-point central stencil (``derivative``, fourth order) of the filtered
  signal, whose gain at frequency f departs from 2πf by (2πf Δt)⁴ / 30: 1e-5 at 2 Hz sampled at
  100 Hz, where the three-point one's (2πf Δt)² / 6 is 3e-3 — a bias on q̈ that a logger's
  100 Hz would leave in the inertias. Not filtered again as FloBaRoID and BIRDy do: a second
  pass would attenuate q̈ by |H|² where q and τ carry |H|, and it is not needed, since the
  forward-backward filter falls by 2·order·20 dB per decade (160 dB for order 4) where two
  differentiations rise by 40 (white noise on q leaves in q̈ what the tests predict from these
  two responses);
* the filter's edge transient trimmed off: the same number of samples from both ends of every
  channel, so that all stay aligned with the returned times.

The sampling must be uniform: the filter's cut-off is relative to one sample rate, taken from the
median sample interval. Stamps that jitter by more than ``jitter`` of that interval are resampled
onto the uniform grid by linear interpolation (``resampled`` says so); a gap longer than
``max_gap`` cannot be bridged by a straight line and is an error.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.signal import butter, sosfiltfilt

# the edge transient decays with the slowest pole (time constant τ_s = 1/(2π f_c sin(π/(2·order)))):
# after 8 τ_s, counting the two passes, q̈'s error is ~1e-3 of its value at the edge
_EDGE_TIME_CONSTANTS = 8.0


@dataclasses.dataclass(frozen=True)
class FilteredSignals:
    """Filtered, differentiated and trimmed signals on a uniform grid: ``t`` (M,); ``q``, ``qd``,
    ``qdd`` and ``tau`` (None if not given) (M, n); the sample rate ``fs`` in Hz, the ``cutoff_hz``,
    ``trimmed`` samples dropped at each end, ``resampled`` if the stamps were not uniform."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray | None
    fs: float
    cutoff_hz: float
    trimmed: int
    resampled: bool

    def decimated(self, factor):
        """Every ``factor``-th sample of every channel. Without aliasing only while the new Nyquist
        frequency is at least twice the cut-off, where the forward-backward filter has already
        attenuated by 1/(1 + 2^(2·order)) (0.4 % for order 4); a larger factor is refused."""
        factor = int(factor)
        if factor < 1:
            raise ValueError(f"decimation factor must be a positive integer, got {factor}")
        if self.fs / factor / 2.0 < 2.0 * self.cutoff_hz:
            raise ValueError(f"decimation by {factor} leaves a Nyquist frequency of {self.fs / factor / 2.0:g} Hz, "
                             f"below twice the cut-off {self.cutoff_hz:g} Hz: the filtered signals would alias "
                             f"(largest factor {int(self.fs / (4.0 * self.cutoff_hz))})")
        step = slice(None, None, factor)
        return dataclasses.replace(
            self, t=self.t[step], q=self.q[step], qd=self.qd[step], qdd=self.qdd[step],
            tau=None if self.tau is None else self.tau[step], fs=self.fs / factor)


def filter_and_differentiate(t, q, cutoff_hz, *, qd=None, tau=None, order=4, trim=None, jitter=0.01,
                             max_gap=None):
    """q, q̇, q̈ (and τ) from samples ``q`` (N, n) (or (N,) for one joint) at times ``t`` (N,) in s.

    ``qd``: measured velocities (N, n), filtered and used instead of differentiating q (q̈ is then
    their derivative). ``tau``: measured joint forces (N, n), filtered alike, with any further
    channels to filter as they are (N, n + m). ``cutoff_hz``: the
    low-pass cut-off; ``order``: the Butterworth order of one pass. ``trim``: samples dropped at each
    end (default: eight time constants of the filter's slowest pole, ~3.3/``cutoff_hz`` s for
    order 4). ``jitter``: the relative deviation of a sample interval from the median beyond which
    the run is resampled; ``max_gap``: the longest interval in s resampling may bridge (default a
    tenth of the cut-off period, where a straight line departs from a sine at the cut-off by 5 %).
    """
    t = np.asarray(t, dtype=float)
    if t.ndim != 1 or t.size < 2 or not np.all(np.isfinite(t)):
        raise ValueError(f"t must be a 1-D array of at least 2 finite times, got shape {t.shape}")
    intervals = np.diff(t)
    if not np.all(intervals > 0.0):
        k = int(np.argmax(intervals <= 0.0))
        raise ValueError(f"t must increase strictly: t[{k + 1}] = {t[k + 1]!r} follows t[{k}] = {t[k]!r}")
    channels = {"q": q, "qd": qd, "tau": tau}
    n = None
    for name, value in channels.items():
        if value is None:
            continue
        array = np.asarray(value, dtype=float)
        array = array[:, None] if array.ndim == 1 else array
        if array.ndim != 2 or array.shape[0] != t.size:
            raise ValueError(f"{name} must be (N,) or (N, n) with N = len(t) = {t.size}, got shape "
                             f"{np.shape(value)}")
        n = array.shape[1] if n is None else n
        if array.shape[1] < n or (array.shape[1] > n and name != "tau"):   # τ: more channels to filter alike
            raise ValueError(f"{name} has {array.shape[1]} joints where q has {n}")
        if not np.all(np.isfinite(array)):
            row = int(np.argmax(~np.all(np.isfinite(array), axis=1)))
            raise ValueError(f"{name} has a non-finite value at sample {row} (t = {t[row]!r})")
        channels[name] = array

    dt = float(np.median(intervals))
    fs = 1.0 / dt
    cutoff_hz = float(cutoff_hz)
    if not 0.0 < cutoff_hz < fs / 2.0:
        raise ValueError(f"cut-off {cutoff_hz:g} Hz must lie between 0 and the Nyquist frequency {fs / 2.0:g} Hz "
                         f"(the sample rate, {fs:g} Hz, is 1 / the median sample interval)")
    resampled = bool(np.max(np.abs(intervals - dt)) > jitter * dt)
    if resampled:
        max_gap = 0.1 / cutoff_hz if max_gap is None else float(max_gap)
        k = int(np.argmax(intervals))
        if intervals[k] > max_gap:
            raise ValueError(f"gap of {intervals[k]:g} s between t = {t[k]!r} and {t[k + 1]!r} is longer than "
                             f"max_gap = {max_gap:g} s: linear interpolation cannot bridge it")
        t, channels = _resample(t, dt, channels)

    # butter's cut-off is normalised to the Nyquist frequency: Wn = f_c / (fs / 2)
    sos = butter(order, cutoff_hz / (fs / 2.0), output="sos")
    trim = _edge_samples(fs, cutoff_hz, order) if trim is None else int(trim)
    if t.size - 2 * trim < 2:
        raise ValueError(f"{t.size} samples are too few to trim {trim} from each end (the filter's edge "
                         f"transient at {cutoff_hz:g} Hz): record longer or pass a smaller trim (edge trim)")

    def smooth(x):
        # along the transpose's contiguous axis: the same numbers, a fifth faster than along axis 0
        return sosfiltfilt(sos, x.T, axis=1).T

    q_f = smooth(channels["q"])
    qd_f = derivative(q_f, dt) if channels["qd"] is None else smooth(channels["qd"])
    qdd_f = derivative(qd_f, dt)
    tau_f = None if channels["tau"] is None else smooth(channels["tau"])
    keep = slice(trim, t.size - trim)
    return FilteredSignals(t=t[keep], q=q_f[keep], qd=qd_f[keep], qdd=qdd_f[keep],
                           tau=None if tau_f is None else tau_f[keep], fs=fs, cutoff_hz=cutoff_hz,
                           trimmed=trim, resampled=resampled)


def derivative(x, dt):
    """dx/dt of samples ``x`` (N, ...) ``dt`` apart: (x[k−2] − 8 x[k−1] + 8 x[k+1] − x[k+2]) / (12 dt)
    inside, central (then one-sided) differences on the two samples at each end, which the edge
    trim drops."""
    d = np.gradient(x, dt, axis=0, edge_order=2) if len(x) > 2 else np.gradient(x, dt, axis=0)
    if len(x) > 4:
        d[2:-2] = (x[:-4] - 8.0 * x[1:-3] + 8.0 * x[3:-1] - x[4:]) / (12.0 * dt)
    return d


def absolute_response(cutoff_hz, fs, order=4):
    """|h|, the forward-backward filter's impulse response in absolute value, over ± the edge
    trim at sample rate ``fs``, summing to 1: how much of a filtered value one sample k steps
    away can make at most (its side lobes ring, so the filtered indicator of a set of samples
    would understate their share)."""
    sos = butter(order, cutoff_hz / (fs / 2.0), output="sos")
    half = _edge_samples(fs, cutoff_hz, order)
    impulse = np.zeros(2 * half + 1)
    impulse[half] = 1.0
    mass = np.abs(sosfiltfilt(sos, impulse))
    return mass / mass.sum()


def edge_seconds(cutoff_hz, order=4):
    """The default edge trim in s: ``_EDGE_TIME_CONSTANTS`` of the filter's slowest pole."""
    return _EDGE_TIME_CONSTANTS / (2.0 * math.pi * cutoff_hz * math.sin(math.pi / (2.0 * order)))


def _edge_samples(fs, cutoff_hz, order):
    return math.ceil(edge_seconds(cutoff_hz, order) * fs)


def _resample(t, dt, channels):
    """Every channel linearly interpolated onto t[0] + k dt, k = 0 … while within the run."""
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt * (1.0 + 1e-12))) + 1)
    right = np.clip(np.searchsorted(t, grid, side="right"), 1, t.size - 1)
    weight = ((grid - t[right - 1]) / (t[right] - t[right - 1]))[:, None]
    return grid, {name: None if x is None else (1.0 - weight) * x[right - 1] + weight * x[right]
                  for name, x in channels.items()}
