"""Meter properties (hypothesis, bounded): gain, channel swap, band membership, silence padding, short signals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pytest_overdub.measure import BANDS, band_rel_db, correlation, integrated_lufs, measure, true_peak_db

SR = 48000
FEW = settings(max_examples=12, deadline=None, derandomize=True)


def ridden_noise(seed: int, seconds: float, level_db: float, silent_edges_s: float = 0.0) -> np.ndarray:
    """Seeded stereo noise, low-passed a little, with a slow level ride; optional silent edges."""
    from scipy.signal import butter, sosfilt

    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    x = sosfilt(butter(2, rng.uniform(500, 8000), fs=SR, output="sos"), rng.standard_normal((2, n)), axis=-1)
    x[1] = 0.6 * x[1] + 0.4 * x[0]
    ride = 10 ** (-6 * (1 + np.sin(2 * np.pi * np.arange(n) / n * rng.uniform(0.5, 2))) / 40)
    x *= ride * 10 ** (level_db / 20) / np.sqrt(np.mean(x**2))
    if silent_edges_s:
        k = int(silent_edges_s * SR)
        x[:, :k] = 0.0
        x[:, -k:] = 0.0
    return x


@FEW
@given(seed=st.integers(0, 2**16), level_db=st.floats(-45, -15))
def test_plus_6_db_reads_plus_6_lu(seed, level_db):
    x = ridden_noise(seed, 2.0, level_db)
    gained = x * 10 ** (6 / 20)
    assert integrated_lufs(gained, sr=SR) - integrated_lufs(x, sr=SR) == pytest.approx(6.0, abs=0.01)


@FEW
@given(seed=st.integers(0, 2**16), level_db=st.floats(-50, -6))
def test_swapping_channels_changes_nothing(seed, level_db):
    x = ridden_noise(seed, 1.0, level_db)
    swapped = x[::-1]
    assert integrated_lufs(swapped, sr=SR) == pytest.approx(integrated_lufs(x, sr=SR), abs=1e-9)
    assert true_peak_db(swapped, sr=SR) == pytest.approx(true_peak_db(x, sr=SR), abs=1e-9)
    assert correlation(swapped, sr=SR) == pytest.approx(correlation(x, sr=SR), abs=1e-12)


_MARGIN_HZ = 50.0  # four STFT bins at 48 kHz: Hann leakage beyond that is far below 1%


@settings(max_examples=25, deadline=None, derandomize=True)
@given(band=st.sampled_from(sorted(BANDS)), where=st.floats(0, 1), amp=st.floats(0.01, 1.0))
def test_a_sine_puts_99_percent_in_its_band(band, where, amp):
    lo, hi = BANDS[band]
    lo_f = 5.0 if lo == 0 else lo + _MARGIN_HZ
    hi_f = min(hi, 0.45 * SR) - (_MARGIN_HZ if band != "sub" else 48.0)
    freq_hz = lo_f + where * (hi_f - lo_f)
    n = np.arange(SR // 2)
    fade = np.minimum(1.0, np.minimum(n, n[::-1]) / 960)
    x = amp * np.sin(2 * np.pi * freq_hz * n / SR) * fade
    assert band_rel_db(x, sr=SR)[band] >= 10 * np.log10(0.99), freq_hz


@FEW
@given(seed=st.integers(0, 2**16), before=st.integers(0, 2 * SR), after=st.integers(0, 2 * SR))
def test_silence_around_does_not_change_integrated_loudness(seed, before, after):
    # Silent edges of 0.5 s make every block that straddles the padding silent. Padding by whole 100 ms
    # segments keeps every block, so nothing changes; any other padding moves the block grid, which can
    # move one partial block at each end of the sound across the gates: under 0.05 LU at 12 s (115 blocks).
    x = ridden_noise(seed, 12.0, -20, silent_edges_s=0.5)
    base = integrated_lufs(x, sr=SR)
    padded = np.pad(x, ((0, 0), (before, after)))
    assert integrated_lufs(padded, sr=SR) == pytest.approx(base, abs=0.05)
    aligned = np.pad(x, ((0, 0), (4800 * (before // 4800), 4800 * (after // 4800))))
    assert integrated_lufs(aligned, sr=SR) == pytest.approx(base, abs=1e-6)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    x=arrays(np.float64, st.tuples(st.integers(1, 2), st.integers(1, 5000)), elements=st.floats(-1, 1)),
    sr=st.sampled_from([8000, 44100, 48000, 96000]),
)
def test_short_signals_give_bounded_figures_or_say_why_not(x, sr):
    from pytest_overdub.measure.minimums import MINIMUMS, figure_of

    m = measure(x, sr=sr)
    figures = m.as_dict()
    refused = figures.pop("refused")
    # a figure is refused exactly when the signal is shorter than its minimum, and then it is None
    for name in ("lufs", "lufsShortMax", "lra", "truePeak", "centroid", "correlation", "onsetsPerSec", "bandRel.mid"):
        short = x.shape[1] < MINIMUMS[figure_of(name)].samples_at(sr)
        assert (name in refused) == short and (figures[name] is None) == short, name
        assert name not in refused or refused[name].startswith("too short for "), refused[name]
    values = {k: v for k, v in figures.items() if isinstance(v, float)}
    assert all(np.isfinite(v) for v in values.values()), values
    # rms equals peak for a constant signal; allow the last bits of float rounding between them
    assert -120.0 <= m.rms <= m.peak + 1e-9
    if m.true_peak is not None:
        assert m.peak <= m.true_peak + 1e-9 and m.true_peak <= 20 * np.log10(2.0)
    if m.lufs is not None:
        assert -120.0 <= m.lufs <= 10.0
    if m.correlation is not None:
        assert -1.0 <= m.correlation <= 1.0 and -120.0 <= m.side_db <= 120.0
    if m.centroid is not None:
        assert 0.0 <= m.centroid <= sr / 2 and all(-120.0 <= v <= 0.0 for v in m.band_rel.values())
    if m.onsets_per_sec is not None:
        assert m.onsets_per_sec >= 0.0
