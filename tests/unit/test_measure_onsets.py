"""Onset rate against signals with a known number of onsets."""

import numpy as np
import pytest

from pytest_overdub.measure import onset_times, onsets_per_sec

SR = 48000


def clicks(times_s, seconds=8.0):
    x = np.zeros(int(seconds * SR))
    for t in times_s:
        i = int(t * SR)
        x[i : i + 200] += np.hanning(200)
    return x


def test_four_clicks_per_second():
    x = clicks(np.arange(32) * 0.25)
    assert onsets_per_sec(x, sr=SR) == pytest.approx(4.0)
    np.testing.assert_allclose(onset_times(x, sr=SR), np.arange(32) * 0.25, atol=0.015)


def test_onsets_closer_than_50_ms_merge():
    # Pairs 30 ms apart count once each; pairs 80 ms apart count twice.
    close = clicks([t + d for t in (1, 2, 3) for d in (0, 0.03)])
    apart = clicks([t + d for t in (1, 2, 3) for d in (0, 0.08)])
    assert onset_times(close, sr=SR).size == 3
    assert onset_times(apart, sr=SR).size == 6


def test_tone_bursts_count_note_starts():
    t = np.arange(SR // 4) / SR
    note = np.sin(2 * np.pi * 330 * t) * np.exp(-t * 12)
    x = np.concatenate([note * a for a in (1.0, 0.6, 0.8, 0.5) * 3])  # 12 notes in 3 s
    assert onset_times(x, sr=SR).size == 12


def test_steady_tone_has_one_onset_and_silence_none():
    x = np.sin(2 * np.pi * 440 * np.arange(4 * SR) / SR)
    assert onset_times(x, sr=SR).size == 1
    assert onsets_per_sec(np.zeros((2, SR)), sr=SR) == 0.0


def test_gain_does_not_change_the_count():
    x = clicks(np.arange(12) * 0.5 + 0.1, seconds=6.5)
    assert onset_times(x * 0.01, sr=SR).size == onset_times(x, sr=SR).size == 12


# ------------------------------------------------- peak picking against scipy (the reference)

@pytest.mark.parametrize("seed", range(6))
def test_running_median_and_pick_peaks_equal_scipy(seed):
    from scipy.ndimage import median_filter
    from scipy.signal import find_peaks

    from pytest_overdub.measure.peaks import pick_peaks, running_median

    rng = np.random.default_rng(seed)
    # coarse values make plateaus and equal heights; seed 0 is smooth noise with plain peaks
    x = rng.random(3000) if seed == 0 else np.round(rng.random(3000) * (3 + seed), 0) / (3 + seed)
    size = (5, 47, 3, 9, 101, 1)[seed]
    assert np.array_equal(running_median(x, size=size), median_filter(x, size=size, mode="constant"))
    height = running_median(x, size=max(size, 3) | 1) * 0.5
    for distance in (1, 2, 5, 40):
        want, _ = find_peaks(x, height=height, distance=distance)
        assert np.array_equal(pick_peaks(x, height=height, distance=distance), want)


def test_peak_helpers_refuse_bad_sizes():
    from pytest_overdub.errors import MeasureError
    from pytest_overdub.measure.peaks import pick_peaks, running_median

    with pytest.raises(MeasureError, match="4"):
        running_median(np.zeros(8), size=4)
    with pytest.raises(MeasureError, match="0.5"):
        pick_peaks(np.zeros(8), height=np.zeros(8), distance=0.5)
