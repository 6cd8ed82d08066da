"""Peak meters: BS.1770-4 true-peak cases, analytic rms/crest, and exactness of the pruned oversampler."""

import numpy as np
import pytest

from pytest_overdub.measure import crest_db, rms_db, sample_peak_db, true_peak_db
from pytest_overdub.measure.peak import _true_peak_linear, oversampling_fir

SR = 48000


def test_quarter_rate_sine_at_45_degrees_reads_its_true_peak():
    # Samples sit at +-0.5 (-6.02 dBFS); the waveform between them reaches 0.7071 (-3.01 dBTP).
    n = np.arange(SR)
    x = np.sqrt(0.5) * np.sin(np.pi / 2 * n + np.pi / 4)
    assert sample_peak_db(x, sr=SR) == pytest.approx(-6.02, abs=0.01)
    assert -3.01 - 0.5 <= true_peak_db(x, sr=SR) <= -3.01 + 0.2


def test_quarter_rate_sine_interior_is_exact():
    # With a 20 ms fade at each end there is no edge overshoot: phase 2 lands on the crest exactly.
    n = np.arange(SR)
    fade = np.minimum(1.0, np.minimum(n, n[::-1]) / 960)
    x = np.sqrt(0.5) * np.sin(np.pi / 2 * n + np.pi / 4) * fade
    assert true_peak_db(x, sr=SR) == pytest.approx(-3.01, abs=0.02)


def test_full_scale_997_hz_sine_reads_0_dbtp():
    x = np.sin(2 * np.pi * 997 * np.arange(SR) / SR)
    assert true_peak_db(np.stack([x, x]), sr=SR) == pytest.approx(0.0, abs=0.2)


def test_filter_has_at_least_48_taps_and_exact_phase_zero():
    h = oversampling_fir()
    assert h.size >= 48
    m = np.arange(h.size) - h.size // 2
    assert h[m == 0] == 1.0
    assert np.all(h[(m % 4 == 0) & (m != 0)] == 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pruned_true_peak_equals_full_oversampling(seed):
    from scipy.signal import upfirdn

    rng = np.random.default_rng(seed)
    x = np.tanh(2.0 * rng.standard_normal((2, 50_000)) * rng.uniform(0.05, 0.5, size=(2, 1)))
    full = np.abs(upfirdn(oversampling_fir(), x, up=4, axis=-1)).max()
    assert _true_peak_linear(x) == pytest.approx(full, rel=1e-12)


def test_true_peak_is_max_over_channels_and_never_below_sample_peak():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 20_000)) * np.array([[0.1], [0.3]])
    tp, peak = true_peak_db(x, sr=SR), sample_peak_db(x, sr=SR)
    assert tp >= peak
    assert tp == pytest.approx(true_peak_db(x[1], sr=SR))


def test_full_scale_sine_rms_and_crest():
    x = np.sin(2 * np.pi * 1000 * np.arange(SR) / SR)
    assert rms_db(x, sr=SR) == pytest.approx(-3.0103, abs=0.001)
    assert crest_db(x, sr=SR) == pytest.approx(3.0103, abs=0.001)


def test_silence_floors():
    z = np.zeros((2, 1000))
    assert true_peak_db(z, sr=SR) == -120.0
    assert sample_peak_db(z, sr=SR) == -120.0
    assert rms_db(z, sr=SR) == -120.0
    assert crest_db(z, sr=SR) == 0.0


@pytest.mark.parametrize("freq_hz", [997.0, 15_000.0, 21_000.0])
def test_the_meter_reads_what_the_limiters_interpolator_reads(freq_hz):
    """One true-peak interpolator: the meter's figure is the house limiter's detector's, near Nyquist too
    (where a shorter meter filter once read up to 1.7 dB less than the limiter held)."""
    from pytest_overdub.dsp.oversample import true_peak

    rng = np.random.default_rng(int(freq_hz))
    n = np.arange(4800)
    x = 0.5 * np.sin(2 * np.pi * freq_hz * n / SR + rng.uniform(0, 2 * np.pi, size=(2, 1)))
    x += 0.05 * rng.standard_normal((2, n.size))
    assert true_peak_db(x, sr=SR) == pytest.approx(20 * np.log10(true_peak(x)), abs=1e-9)
