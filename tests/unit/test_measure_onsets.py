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
