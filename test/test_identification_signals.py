"""Zero-phase filtering and differentiation (robodyn_ros.identification.signals) against closed forms:
sums of sines with their analytic derivatives, the digital Butterworth's magnitude at and above the
cut-off, and the noise a white input leaves in q̈ (the filter's and the five-point differences'
frequency responses integrated)."""
import numpy as np
import pytest

from robodyn_ros.identification.signals import filter_and_differentiate

FS, CUTOFF, ORDER = 1000.0, 10.0, 4


def sines(t, frequencies, amplitudes, phases, derivative=0):
    """Σ a sin(ωt + φ) (columns: joints) or its ``derivative``-th time derivative."""
    omega = 2.0 * np.pi * np.asarray(frequencies)
    arg = omega * t[:, None, None] + phases + derivative * np.pi / 2.0
    return np.sum(amplitudes * omega ** derivative * np.sin(arg), axis=1)


def in_band(rng, joints, count=4, top=3.0):
    """Random frequencies (0.2 Hz to ``top``), amplitudes and phases: ``count`` sines per joint."""
    shape = (count, joints)
    return rng.uniform(0.2, top, shape), rng.uniform(0.1, 1.0, shape), rng.uniform(0.0, 2 * np.pi, shape)


def at(t, times):
    """Indices of ``times`` in ``t`` (the returned grid is a subset of the samples)."""
    index = np.searchsorted(t, times)
    assert np.allclose(t[index], times, rtol=0, atol=1e-12)
    return index


def relative_error(x, reference):
    return np.max(np.abs(x - reference), axis=0) / np.max(np.abs(reference), axis=0)


def test_in_band_signals_pass_with_their_derivatives():
    # Sines up to 3 Hz under a 10 Hz cut-off, 1 kHz: the zero-phase filter passes them within
    # 1/(1 + 0.3^8) = 7e-5, five-point differences err by (ωΔt)⁴/30 = 4e-9 per derivative, and the edge
    # transient is trimmed: q, q̇, q̈ match their closed forms away from the edges.
    rng = np.random.default_rng(1)
    t = np.arange(0.0, 6.0, 1.0 / FS)
    parts = in_band(rng, 3)
    s = filter_and_differentiate(t, sines(t, *parts), CUTOFF, order=ORDER)
    k = at(t, s.t)
    assert relative_error(s.q, sines(t, *parts)[k]).max() < 2e-4
    assert relative_error(s.qd, sines(t, *parts, derivative=1)[k]).max() < 5e-4
    assert relative_error(s.qdd, sines(t, *parts, derivative=2)[k]).max() < 2e-3
    assert s.fs == pytest.approx(FS) and not s.resampled


def test_a_logger_at_100_hz_still_gives_the_acceleration_of_a_2_hz_motion():
    # At 100 Hz, 2 Hz is ωΔt = 0.126: three-point differences would lose (ωΔt)²/6 = 2.6e-3 per
    # derivative (5e-3 of q̈, a bias the inertias would carry); five-point ones (ωΔt)⁴/30 = 8e-6
    t = np.arange(0.0, 6.0, 0.01)
    parts = ([[2.0], [1.3]], [[0.5], [0.2]], [[0.3], [1.1]])
    s = filter_and_differentiate(t, sines(t, *parts), 10.0)
    k = at(t, s.t)
    assert relative_error(s.qdd, sines(t, *parts, derivative=2)[k]).max() < 1e-4


def test_measured_velocities_are_filtered_and_differentiated_instead_of_q():
    rng = np.random.default_rng(2)
    t = np.arange(0.0, 5.0, 1.0 / FS)
    parts = in_band(rng, 2)
    # q̇ measured; q given as something else entirely shows that q̇ and q̈ come from the velocities
    s = filter_and_differentiate(t, np.zeros((t.size, 2)), CUTOFF, qd=sines(t, *parts, derivative=1))
    k = at(t, s.t)
    assert relative_error(s.qd, sines(t, *parts, derivative=1)[k]).max() < 2e-4
    assert relative_error(s.qdd, sines(t, *parts, derivative=2)[k]).max() < 1e-3
    assert np.all(s.q == 0.0)


def test_the_cut_off_is_where_it_is_asked():
    # Butterworth digital (bilinear, pre-warped): |H|² = 1/2 at the cut-off, so the forward-backward
    # filter halves a sine there, in phase (a cut-off normalised by fs instead of fs/2 would put it
    # at 5 Hz and leave 1/(1 + 2^8)); four times above, 1/(1 + 4^8) = 1.5e-5 remains.
    t = np.arange(0.0, 20.0, 1.0 / FS)
    s = filter_and_differentiate(t, np.sin(2 * np.pi * CUTOFF * t), CUTOFF, order=ORDER)
    reference = np.sin(2 * np.pi * CUTOFF * s.t)
    amplitude = s.q[:, 0] @ reference / (reference @ reference)      # least squares, in phase
    assert amplitude == pytest.approx(0.5, abs=0.005)
    assert np.max(np.abs(s.q[:, 0] - amplitude * reference)) < 1e-3
    above = filter_and_differentiate(t, np.sin(2 * np.pi * 4 * CUTOFF * t), CUTOFF, order=ORDER)
    assert np.max(np.abs(above.q)) < 4e-5


def test_every_joint_is_filtered_the_last_one_included():
    # each of four joints carries its own in-band motion and 60 Hz of hum; all four come out clean
    rng = np.random.default_rng(3)
    t = np.arange(0.0, 5.0, 1.0 / FS)
    parts = in_band(rng, 4)
    hum = 0.05 * np.sin(2 * np.pi * 60.0 * t)[:, None] * np.arange(1, 5)
    s = filter_and_differentiate(t, sines(t, *parts) + hum, CUTOFF)
    k = at(t, s.t)
    error = relative_error(s.q, sines(t, *parts)[k])
    assert error.shape == (4,) and np.all(error < 2e-4), error
    assert np.all(relative_error(s.qdd, sines(t, *parts, derivative=2)[k]) < 2e-3)


def test_channels_stay_aligned_in_time():
    # τ filtered with the same filter and trimmed alike: it matches its own closed form at the
    # returned times (a one-sample delay of a 2 Hz cosine would be a 1.3 % error), and every channel
    # has the returned length, trimmed by the same count at both ends
    rng = np.random.default_rng(4)
    t = np.arange(0.0, 5.0, 1.0 / FS)
    parts = in_band(rng, 2)
    tau = np.column_stack((np.cos(2 * np.pi * 2.0 * t), 3.0 * np.sin(2 * np.pi * 0.7 * t + 1.0)))
    s = filter_and_differentiate(t, sines(t, *parts), CUTOFF, tau=tau)
    k = at(t, s.t)
    assert s.q.shape == s.qd.shape == s.qdd.shape == s.tau.shape == (t.size - 2 * s.trimmed, 2)
    assert s.t[0] == t[s.trimmed] and s.t[-1] == t[-1 - s.trimmed]
    assert relative_error(s.tau, tau[k]).max() < 2e-4
    assert relative_error(s.q, sines(t, *parts)[k]).max() < 2e-4


def test_white_noise_on_q_leaves_the_predicted_error_in_qdd():
    # σ² of the output = σ²/π ∫₀^π |G(ω)|² dω for white input of variance σ²: here G = H_fb · D²
    # with the forward-backward Butterworth |H_fb|² = |H|⁴, |H|² = 1/(1 + (tan(ω/2)/tan(ω_c/2))^(2N)),
    # and the two five-point differences D = i (8 sin ω − sin 2ω) / (6 Δt)
    sigma, dt = 1e-3, 1.0 / FS
    t = np.arange(0.0, 120.0, dt)
    rng = np.random.default_rng(5)
    s = filter_and_differentiate(t, sigma * rng.standard_normal((t.size, 2)), CUTOFF, order=ORDER)
    omega = np.linspace(0.0, np.pi, 200001)
    H2 = 1.0 / (1.0 + (np.tan(omega / 2) / np.tan(np.pi * CUTOFF / FS)) ** (2 * ORDER))
    predicted_q = sigma * np.sqrt(np.trapezoid(H2 ** 2, omega) / np.pi)
    D = (8.0 * np.sin(omega) - np.sin(2.0 * omega)) / 6.0
    predicted_qdd = sigma * np.sqrt(np.trapezoid(H2 ** 2 * D ** 4, omega) / np.pi) / dt ** 2
    # 120 s at a 10 Hz bandwidth: ~2,400 independent samples, a 1.5 % spread on a standard deviation
    assert np.std(s.q, axis=0) == pytest.approx([predicted_q] * 2, rel=0.08)
    assert np.std(s.qdd, axis=0) == pytest.approx([predicted_qdd] * 2, rel=0.08)


def test_irregular_stamps_are_resampled_onto_the_median_grid():
    rng = np.random.default_rng(6)
    dt = 1.0 / FS
    t = np.arange(0.0, 5.0, dt) + rng.uniform(-0.3, 0.3, 5000) * dt        # ±30 % jitter
    parts = in_band(rng, 2)
    s = filter_and_differentiate(t, sines(t, *parts), CUTOFF)
    assert s.resampled
    assert np.allclose(np.diff(s.t), np.median(np.diff(t)), rtol=1e-9)
    # linear interpolation of a 3 Hz sine between 1 ms samples errs by (ωΔt)²/8 = 4e-5 of its amplitude
    assert relative_error(s.q, sines(s.t, *parts)).max() < 5e-4
    assert relative_error(s.qdd, sines(s.t, *parts, derivative=2)).max() < 5e-3


def test_decimation_keeps_every_channel_in_step_and_refuses_aliasing():
    t = np.arange(0.0, 3.0, 1.0 / FS)
    s = filter_and_differentiate(t, np.sin(2 * np.pi * t), CUTOFF, tau=np.cos(2 * np.pi * t))
    d = s.decimated(10)
    assert d.fs == pytest.approx(100.0)
    for name in ("t", "q", "qd", "qdd", "tau"):
        assert np.array_equal(getattr(d, name), getattr(s, name)[::10])
    with pytest.raises(ValueError, match="alias"):
        s.decimated(30)          # Nyquist 16.7 Hz < 2 × 10 Hz


@pytest.mark.parametrize("cutoff", [500.0, 800.0, 0.0])
def test_a_cut_off_outside_zero_to_nyquist_is_refused(cutoff):
    t = np.arange(0.0, 1.0, 1.0 / FS)
    with pytest.raises(ValueError, match="Nyquist frequency 500 Hz"):
        filter_and_differentiate(t, np.sin(t), cutoff)


def test_bad_samples_are_refused_with_what_is_wrong():
    t = np.arange(0.0, 2.0, 1.0 / FS)
    q = np.sin(t)[:, None] * np.ones(3)
    gap = np.concatenate((t[:500], t[600:]))                                    # 0.1 s missing
    with pytest.raises(ValueError, match="gap of 0.101 s"):
        filter_and_differentiate(gap, np.sin(gap), CUTOFF)
    back = t.copy()
    back[700] = back[699]
    with pytest.raises(ValueError, match=r"t must increase strictly: t\[700\]"):
        filter_and_differentiate(back, q, CUTOFF)
    bad = q.copy()
    bad[321, 2] = np.nan
    with pytest.raises(ValueError, match="q has a non-finite value at sample 321"):
        filter_and_differentiate(t, bad, CUTOFF)
    with pytest.raises(ValueError, match="tau has 2 joints where q has 3"):
        filter_and_differentiate(t, q, CUTOFF, tau=q[:, :2])
    with pytest.raises(ValueError, match="too few to trim"):
        filter_and_differentiate(t[:400], q[:400], CUTOFF)
