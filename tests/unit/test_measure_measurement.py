"""measure(): every figure in one object, metric names, and agreement with the single-figure path."""

import numpy as np
import pytest

from pytest_overdub.errors import MeasureError
from pytest_overdub.measure import Measurement, measure, measure_metric

SR = 48000


@pytest.fixture(scope="module")
def song():
    """5 s of seeded music-like stereo audio: decaying notes, a bass, noise hats, different pans."""
    rng = np.random.default_rng(3)
    n = 5 * SR
    t = np.arange(n) / SR
    left, right = np.zeros(n), np.zeros(n)
    for start in np.arange(0, 5, 0.25):
        i = int(start * SR)
        seg = t[: n - i]
        f = 220 * 2 ** (rng.integers(0, 12) / 12)
        note = 0.2 * np.sin(2 * np.pi * f * seg) * np.exp(-seg * 6)
        hat = 0.05 * rng.standard_normal(seg.size) * np.exp(-seg * 60)
        pan = rng.uniform(0.2, 0.8)
        left[i:] += pan * note + 0.5 * hat
        right[i:] += (1 - pan) * note + hat
    bass = 0.2 * np.sin(2 * np.pi * 55 * t)
    return np.stack([left + bass, right + bass])


@pytest.fixture(scope="module")
def m(song):
    return measure(song, sr=SR)


NAMES = [
    "lufs", "lufsShortMax", "lra", "truePeak", "peak", "rms", "crest", "centroid", "correlation", "sideDb",
    "onsetsPerSec", "bandRel.sub", "bandRel.air", "band.sub+low", "band.presence", "side.20-120", "side.1000-8000",
]


@pytest.mark.parametrize("name", NAMES)
def test_metric_matches_the_single_figure_path(song, m, name):
    assert m.metric(name) == pytest.approx(measure_metric(song, sr=SR, metric=name), abs=1e-9)
    assert np.isfinite(m.metric(name))


def test_several_metrics_at_once_are_bit_for_bit_the_single_figure_path(song):
    from pytest_overdub.measure.metrics import measure_metrics

    values, refused = measure_metrics(song, sr=SR, metrics=NAMES + ["rmsGated"])
    assert refused == {}
    assert values == {name: measure_metric(song, sr=SR, metric=name) for name in NAMES + ["rmsGated"]}
    values, refused = measure_metrics(song[:, : SR // 4], sr=SR, metrics=["lufs", "lra", "peak"])
    assert values["lufs"] is None and values["lra"] is None
    assert values["peak"] == measure_metric(song[:, : SR // 4], sr=SR, metric="peak")
    assert refused == {"lufs": "too short for integrated loudness: 250 ms, needs 400 ms",
                       "lra": "too short for loudness range: 250 ms, needs 3 s"}


def test_figures_are_consistent(m):
    assert isinstance(m, Measurement)
    assert m.true_peak >= m.peak
    assert m.crest == pytest.approx(m.peak - m.rms)
    assert m.lufs_short_max >= m.lufs - 0.5
    assert m.metric("band.sub+low+lowmid+mid+highmid+presence+air") == pytest.approx(m.rms, abs=1e-9)
    assert sum(10 ** (v / 10) for v in m.band_rel.values()) == pytest.approx(1.0)
    assert m.onsets_per_sec == pytest.approx(4.0, abs=0.6)  # a note every 0.25 s
    assert m.momentary.size == 47 and m.short_term.size == 21


def test_silence_reads_floors_never_nan():
    m = measure(np.zeros((2, 3 * SR)), sr=SR)
    for name in ("lufs", "lufsShortMax", "truePeak", "peak", "rms", "sideDb", "bandRel.mid", "band.low", "side.20-120"):
        assert m.metric(name) == -120.0, name
    assert all(np.isfinite(v) for v in m.as_dict().values() if isinstance(v, float))


def test_unknown_metric_lists_the_known_ones(m):
    for bad in ("lufz", "bandRel.bass", "band.sub+bass", "side.120-20", "side.x-y"):
        with pytest.raises(MeasureError, match=r"Known metrics: lufs, lufsShortMax"):
            m.metric(bad)
    with pytest.raises(MeasureError, match="unknown metric"):
        measure_metric(np.zeros(100), sr=SR, metric="loudness")


def test_as_dict_uses_spec_names(m):
    d = m.as_dict()
    assert {"lufs", "truePeak", "bandRel.presence", "key", "keyConfidence", "keyRunnerUp"} <= set(d)
    assert d["key"] == f"{m.key_root} {m.key_scale}"
