"""Gated levels (rmsGated, peakGated, crestGated): the music's statistics, whatever silence surrounds it."""

import numpy as np
import pytest

from pytest_overdub.errors import TooShortError
from pytest_overdub.measure import measure, measure_metric
from pytest_overdub.measure.gated import gated_levels

SR = 48000


def _sine(seconds: float, amp: float, f: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return np.stack([amp * np.sin(2 * np.pi * f * t)] * 2)


def _then(*parts: np.ndarray) -> np.ndarray:
    return np.concatenate(parts, axis=1)


def test_a_steady_sine_reads_like_the_plain_figures():
    x = _sine(3.0, 0.5)  # a full-scale sine reads -3.01 dB rms: at 0.5, -9.03; crest 3.01
    g = gated_levels(x, sr=SR)
    assert g.rms_db == pytest.approx(-9.031, abs=0.005) and g.crest_db == pytest.approx(3.010, abs=0.005)
    assert g.music == g.blocks == 27  # 30 segments, blocks of four on a one-segment hop
    assert measure_metric(x, sr=SR, metric="crestGated") == pytest.approx(measure_metric(x, sr=SR, metric="crest"),
                                                                          abs=0.005)


def test_appended_silence_changes_the_plain_crest_and_not_the_gated_one():
    music = _sine(3.0, 0.5)
    padded = _then(music, np.zeros((2, 60 * SR)))  # 20 times as long as the music
    assert measure_metric(padded, sr=SR, metric="crest") - measure_metric(music, sr=SR, metric="crest") > 13
    # only the three blocks that straddle the end (music for 300, 200, 100 of their 400 ms) differ
    assert measure_metric(padded, sr=SR, metric="rmsGated") == pytest.approx(-9.031, abs=0.3)
    assert measure_metric(padded, sr=SR, metric="crestGated") == pytest.approx(3.010, abs=0.3)


def test_a_near_silent_pad_and_a_click_in_it_do_not_count():
    music = _sine(3.0, 0.5)
    rng = np.random.default_rng(5)
    hiss = 10 ** (-45 / 20) * rng.standard_normal((2, 30 * SR))  # 36 dB under the music
    hiss[:, 15 * SR] = 0.99  # one full-scale sample
    g = gated_levels(_then(music, hiss), sr=SR)
    assert g.rms_db == pytest.approx(-9.031, abs=0.3)
    assert g.peak_db == pytest.approx(-6.02, abs=0.01)  # the sine's 0.5, not the click's 0.99


def test_silence_and_short_signals():
    g = gated_levels(np.zeros((2, SR)), sr=SR)
    assert (g.rms_db, g.peak_db, g.crest_db, g.music) == (-120.0, -120.0, 0.0, 0)
    with pytest.raises(TooShortError, match="gated levels: 300 ms, needs 400 ms"):
        measure_metric(_sine(0.3, 0.5), sr=SR, metric="crestGated")


def test_measure_object_and_single_metric_agree():
    x = _then(_sine(2.0, 0.3, 220.0), np.zeros((2, SR)), _sine(1.0, 0.6))
    m = measure(x, sr=SR)
    for name in ("rmsGated", "peakGated", "crestGated"):
        assert m.metric(name) == measure_metric(x, sr=SR, metric=name)
