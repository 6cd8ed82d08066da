"""Figures refuse signals shorter than they are defined on: one sample short is refused with the reason,
exactly long enough is measured, in every entry point (single meters, measure_metric, measure(), checks)."""

import math

import numpy as np
import pytest

from pytest_overdub.errors import MeasureError, OverdubError, TooShortError
from pytest_overdub.measure import measure, measure_metric
from pytest_overdub.measure.minimums import MINIMUMS, figure_of

#: metric name -> (figure label in the message, minimum in seconds or None, in samples or None)
METRICS = {
    "lufs": ("integrated loudness", 0.4, None),
    "lufsShortMax": ("short-term loudness", 3.0, None),
    "lra": ("loudness range", 3.0, None),
    "truePeak": ("true peak", None, 24),
    "centroid": ("the spectral centroid", None, 4096),
    "bandRel.mid": ("band levels", None, 4096),
    "band.sub+low": ("band levels", None, 4096),
    "correlation": ("stereo correlation and side level", 0.05, None),
    "sideDb": ("stereo correlation and side level", 0.05, None),
    "side.20-120": ("stereo correlation and side level", 0.05, None),
    "onsetsPerSec": ("the onset rate", 0.5, None),
    "rmsGated": ("gated levels", 0.4, None),
    "peakGated": ("gated levels", 0.4, None),
    "crestGated": ("gated levels", 0.4, None),
}


def noise(n: int, seed: int = 0) -> np.ndarray:
    return 0.1 * np.random.default_rng(seed).standard_normal((2, n))


def minimum_samples(seconds, samples, sr):
    return samples if samples is not None else math.ceil(seconds * sr - 1e-6)


@pytest.mark.parametrize("sr", [48000, 44100, 8000])
@pytest.mark.parametrize("metric", sorted(METRICS))
def test_one_sample_short_is_refused_and_the_minimum_is_measured(metric, sr):
    label, seconds, samples = METRICS[metric]
    need = minimum_samples(seconds, samples, sr)
    with pytest.raises(TooShortError, match=f"^too short for {label}: .*, needs "):
        measure_metric(noise(need - 1), sr=sr, metric=metric)
    assert np.isfinite(measure_metric(noise(need), sr=sr, metric=metric))


def test_the_issues_examples():
    sr = 48000
    t = np.arange(int(0.05 * sr)) / sr
    sine_50ms = 0.5 * np.sin(2 * np.pi * 1000 * t)
    with pytest.raises(TooShortError) as err:
        measure_metric(sine_50ms, sr=sr, metric="lufs")
    assert str(err.value) == "too short for integrated loudness: 50 ms, needs 400 ms"
    one = measure(np.array([[0.5], [0.5]]), sr=sr)  # a 1-sample WAV once read +0.02 LUFS over a -6 dBTP peak
    assert one.lufs is None and one.true_peak is None
    assert one.refused["truePeak"] == "too short for true peak: 1 sample (0.0208 ms), needs 24 samples"
    assert one.peak == pytest.approx(-6.02, abs=0.01)  # defined on any signal


def test_peak_rms_and_crest_need_one_sample():
    for metric in ("peak", "rms", "crest"):
        assert figure_of(metric) is None
        assert np.isfinite(measure_metric(noise(1), sr=48000, metric=metric))


def test_every_minimum_is_a_measure_error_so_checks_catch_it():
    assert issubclass(TooShortError, MeasureError) and issubclass(TooShortError, OverdubError)
    assert {figure_of(m) for m in METRICS} | {"momentary", "shortTerm", "key"} == set(MINIMUMS)


def test_measure_refuses_each_figure_on_its_own():
    """At 1 s: loudness and the rest are measured; short-term, range and key are refused with reasons."""
    m = measure(noise(48000), sr=48000)
    assert m.lufs_short_max is None and m.lra is None and m.key_root is None
    assert m.lufs is not None and m.onsets_per_sec is not None and m.band_rel
    assert m.refused == {
        "lufsShortMax": "too short for short-term loudness: 1 s, needs 3 s",
        "lra": "too short for loudness range: 1 s, needs 3 s",
        "key": "too short for the key: 1 s, needs 2 s",
        "keyConfidence": "too short for the key: 1 s, needs 2 s",
        "keyRunnerUp": "too short for the key: 1 s, needs 2 s",
    }
    assert m.momentary.size == 7 and m.short_term.size == 0
    with pytest.raises(TooShortError, match="short-term loudness: 1 s, needs 3 s"):
        m.metric("lufsShortMax")


def test_as_dict_nulls_exactly_the_refused_figures():
    d = measure(noise(3000), sr=48000).as_dict()
    refused = d.pop("refused")
    assert {k for k, v in d.items() if v is None} == set(refused)
    assert "bandRel.air" in refused and "truePeak" not in refused and d["truePeak"] is not None


def test_a_check_on_a_too_short_span_reads_nan_with_the_reason():
    from pytest_overdub.bench.checks import Context, evaluate
    from pytest_overdub.bench.model import MeasureCheck
    from pytest_overdub.song.model import song_from_data

    notes = [{"p": 60, "t": 0.0, "d": 4.0, "v": 0.8}]
    clip = {"id": "c", "kind": "notes", "start": 0.0, "length": 4.0, "notes": notes}
    track = {"id": "t", "name": "Keys", "kind": "instrument", "instrument": {"device": "core.keys"}, "clips": [clip]}
    song = song_from_data({"format": "overdub/0", "id": "s", "title": "s", "tempo": 120.0, "tracks": [track]})
    check = MeasureCheck.model_validate({"id": "loud", "label": "loud", "kind": "measure", "metric": "lufs",
                                         "target": [-40, 0], "weight": 1, "from": 0, "to": 0.5})
    result = evaluate(check, Context(start=song, song=song))
    assert math.isnan(result.value) and result.score == 0.0
    assert result.error == "too short for integrated loudness: 250 ms, needs 400 ms"
