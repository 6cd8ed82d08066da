"""Metric names (docs/meters.md) and ``measure_metric``: one figure, computing only what it needs.

Names: ``lufs``, ``lufsShortMax``, ``lra``, ``truePeak``, ``peak``, ``rms``, ``crest``, ``centroid``,
``correlation``, ``sideDb``, ``onsetsPerSec``, the gated ``rmsGated``, ``peakGated`` and ``crestGated``
(:mod:`pytest_overdub.measure.gated`), ``bandRel.<band>``, ``band.<a+b+...>`` and ``side.<lo>-<hi>`` (Hz,
e.g. ``side.20-120``). A signal too short for the figure is a
:class:`~pytest_overdub.errors.TooShortError` (see :mod:`pytest_overdub.measure.minimums`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pytest_overdub.errors import MeasureError
from pytest_overdub.measure._input import amplitude_db, as_signal, power_db

#: Metric name (docs/meters.md) -> Measurement attribute, for the single-number figures.
SCALAR_METRICS: dict[str, str] = {
    "lufs": "lufs",
    "lufsShortMax": "lufs_short_max",
    "lra": "lra",
    "truePeak": "true_peak",
    "peak": "peak",
    "rms": "rms",
    "crest": "crest",
    "centroid": "centroid",
    "correlation": "correlation",
    "sideDb": "side_db",
    "onsetsPerSec": "onsets_per_sec",
}
#: Gated metric name -> GatedLevels attribute (computed on request, not part of ``measure()``'s figures).
GATED_METRICS: dict[str, str] = {"rmsGated": "rms_db", "peakGated": "peak_db", "crestGated": "crest_db"}
#: Loudness figures read on request only (not part of ``measure()``'s figures): ``lufsMono``, the integrated
#: loudness of the mono fold-down ``(L+R)/2`` played on both channels (a centred part reads its ``lufs``, a
#: part out of phase between the channels cancels); ``lufsShare``, the share of the 400 ms blocks that the
#: integrated loudness reads (those above its absolute and relative gates), 0 to 1: what ``lufs`` skips.
MORE_LOUDNESS: tuple[str, ...] = ("lufsMono", "lufsShare")
_SIDE = re.compile(r"^side\.(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$")


@dataclass(frozen=True)
class MetricName:
    """A parsed metric name: ``kind`` is "scalar", "gated", "loudness", "bandRel", "band" or "side"."""

    kind: str
    attr: str = ""
    bands: tuple[str, ...] = ()
    lo_hz: float = 0.0
    hi_hz: float = 0.0


def known_metrics() -> str:
    """The accepted metric names, for error messages."""
    from pytest_overdub.measure.spectrum import BANDS

    bands = "|".join(BANDS)
    return ", ".join([*SCALAR_METRICS, *GATED_METRICS, *MORE_LOUDNESS]) + f", bandRel.<{bands}>, band.<a+b+...>, side.<lo>-<hi>"


def parse_metric(name: object) -> MetricName:
    """Parse a metric name (docs/meters.md); anything else is a :class:`MeasureError` listing the known names."""
    from pytest_overdub.measure.spectrum import BANDS

    if not isinstance(name, str):
        raise MeasureError(f"metric name must be a string; got {name!r}. Known metrics: {known_metrics()}")
    if name in SCALAR_METRICS:
        return MetricName("scalar", attr=SCALAR_METRICS[name])
    if name in GATED_METRICS:
        return MetricName("gated", attr=GATED_METRICS[name])
    if name in MORE_LOUDNESS:
        return MetricName("loudness", attr=name)
    if name.startswith("bandRel.") and name[len("bandRel.") :] in BANDS:
        return MetricName("bandRel", bands=(name[len("bandRel.") :],))
    if name.startswith("band."):
        bands = tuple(name[len("band.") :].split("+"))
        if all(b in BANDS for b in bands):
            return MetricName("band", bands=bands)
    match = _SIDE.match(name)
    if match and float(match.group(1)) < float(match.group(2)):
        return MetricName("side", lo_hz=float(match.group(1)), hi_hz=float(match.group(2)))
    raise MeasureError(f"unknown metric {name!r}. Known metrics: {known_metrics()}")


def measure_metric(x: np.ndarray, *, sr: int, metric: str) -> float:
    """One metric of a signal, computing only what it needs (a ``lufs`` request runs no key or onsets)."""
    from pytest_overdub.measure.minimums import require

    parsed = parse_metric(metric)
    arr, rate = as_signal(x, sr)
    require(metric, arr.shape[1], rate)
    return _value(_Shared(arr, rate), parsed)


def measure_metrics(x: np.ndarray, *, sr: int, metrics: list[str]) -> tuple[dict[str, float | None], dict[str, str]]:
    """Several metrics of one signal, each exactly the value :func:`measure_metric` gives (the same code),
    with what they share computed once (one K-weighting for the loudness figures, one spectrum for the bands
    and the centroid). Returns ``(values, refused)``: a metric the signal is too short for is None in
    ``values`` and ``refused`` maps it to the reason."""
    from pytest_overdub.measure.minimums import shortfall

    parsed = {name: parse_metric(name) for name in metrics}
    arr, rate = as_signal(x, sr)
    shared = _Shared(arr, rate)
    values: dict[str, float | None] = {}
    refused: dict[str, str] = {}
    for name, p in parsed.items():
        reason = shortfall(name, arr.shape[1], rate)
        if reason is not None:
            values[name], refused[name] = None, reason
        else:
            values[name] = _value(shared, p)
    return values, refused


class _Shared:
    """A validated signal and the intermediates its metrics share, each computed on first use."""

    def __init__(self, arr: np.ndarray, rate: int):
        self.arr, self.rate = arr, rate
        self._seg = self._spectrum = self._mean_square = None

    @property
    def seg(self):
        if self._seg is None:
            from pytest_overdub.measure import loudness

            self._seg = loudness.KSegments.of(self.arr, sr=self.rate)
        return self._seg

    @property
    def spectrum(self):
        if self._spectrum is None:
            from pytest_overdub.measure.spectrum import spectrum_of

            self._spectrum = spectrum_of(self.arr, sr=self.rate)
        return self._spectrum

    @property
    def mean_square(self) -> float:
        if self._mean_square is None:
            self._mean_square = float(np.mean(self.arr * self.arr))
        return self._mean_square


def _value(shared: _Shared, parsed: MetricName) -> float:
    arr, rate = shared.arr, shared.rate
    if parsed.kind == "side":
        from pytest_overdub.measure.stereo import band_side_of

        return band_side_of(arr, sr=rate, lo_hz=parsed.lo_hz, hi_hz=parsed.hi_hz)
    if parsed.kind == "loudness":
        return _more_loudness(shared, parsed.attr)
    if parsed.kind == "gated":
        from pytest_overdub.measure.gated import gated_levels_of

        return float(getattr(gated_levels_of(arr, sr=rate), parsed.attr))
    if parsed.kind in ("bandRel", "band"):
        from pytest_overdub.measure.spectrum import band_abs_from

        if parsed.kind == "bandRel":
            return power_db(shared.spectrum.band_share(parsed.bands[0]))
        return band_abs_from(shared.spectrum, shared.mean_square, list(parsed.bands))
    return _scalar(shared, parsed.attr)


def _scalar(shared: _Shared, attr: str) -> float:
    arr, rate = shared.arr, shared.rate
    if attr in ("lufs", "lufs_short_max", "lra"):
        from pytest_overdub.measure import loudness

        seg = shared.seg
        if attr == "lufs":
            return loudness.integrated_from(seg)
        if attr == "lra":
            return loudness.lra_from(seg)
        return float(loudness.series_from(seg, loudness.SHORT_TERM_SEGMENTS).max())
    if attr == "true_peak":
        from pytest_overdub.measure.peak import true_peak_of

        return true_peak_of(arr, sr=rate)
    if attr in ("peak", "rms", "crest"):
        peak, rms = amplitude_db(float(np.abs(arr).max())), power_db(shared.mean_square)
        return {"peak": peak, "rms": rms, "crest": peak - rms}[attr]
    if attr == "centroid":
        return shared.spectrum.centroid_hz()
    if attr in ("correlation", "side_db"):
        from pytest_overdub.measure.stereo import correlation_of, side_db_of

        return correlation_of(arr) if attr == "correlation" else side_db_of(arr)
    from pytest_overdub.measure.onsets import onset_times_of

    return float(onset_times_of(arr, sr=rate).size / (arr.shape[1] / rate))


def _more_loudness(shared: _Shared, name: str) -> float:
    from pytest_overdub.measure import loudness

    if name == "lufsShare":
        return loudness.gated_share(shared.seg)
    mid = shared.arr.mean(axis=0, keepdims=True)
    return loudness.integrated_from(loudness.KSegments.of(np.vstack([mid, mid]), sr=shared.rate))
