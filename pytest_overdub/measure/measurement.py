"""``measure()``: every figure of docs/meters.md in one pass over shared intermediates.

One K-weighting feeds lufs, lufsShortMax, lra and the loudness series; one 4096-point STFT feeds the bands
and the centroid; the onset and key detectors each run their own STFT resolution on one shared float32
mono sum; three channel dot products feed rms, correlation and sideDb. The
returned :class:`Measurement` keeps a reference to the (validated) audio so ``side.<lo>-<hi>`` can be
computed on request.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pytest_overdub.measure._input import FLOOR_DB, amplitude_db, as_signal, power_db
from pytest_overdub.measure.minimums import require, shortfall


@dataclass(frozen=True)
class Measurement:
    """Every figure of the bench's meters for one signal. dB figures floor at -120.

    A figure the signal is too short for (see :mod:`pytest_overdub.measure.minimums`) is None, and
    ``refused`` maps its name (as in :meth:`as_dict`) to the reason, e.g. ``{"lufs": "too short for
    integrated loudness: 50 ms, needs 400 ms"}``; :meth:`metric` raises
    :class:`~pytest_overdub.errors.TooShortError` with that reason.

    ``band_rel`` maps band name -> share of total power in dB (empty when refused). Key fields: ``key_root``
    (sharps, e.g. "A"), ``key_scale`` ("major"/"minor"), ``key_confidence`` (Pearson r, 0 for silence) and
    ``key_runner_up`` (e.g. "C major"). ``momentary`` / ``short_term`` are the 100 ms loudness series in
    LUFS (empty under 400 ms / 3 s).
    """

    lufs: float | None
    lufs_short_max: float | None
    lra: float | None
    true_peak: float | None
    peak: float
    rms: float
    crest: float
    centroid: float | None
    correlation: float | None
    side_db: float | None
    onsets_per_sec: float | None
    band_rel: dict[str, float]
    key_root: str | None
    key_scale: str | None
    key_confidence: float | None
    key_runner_up: str | None
    sr: int
    duration_s: float
    channels: int
    refused: dict[str, str] = field(compare=False)
    momentary: np.ndarray = field(repr=False, compare=False)
    short_term: np.ndarray = field(repr=False, compare=False)
    _audio: np.ndarray = field(repr=False, compare=False)
    _band_shares: dict[str, float] = field(repr=False, compare=False)
    _rms_power: float = field(repr=False, compare=False)

    def band_abs(self, names: list[str]) -> float:
        """``band.<a+b>``: rms dB + 10 log10(sum of the named bands' shares), floored at -120."""
        from pytest_overdub.errors import MeasureError
        from pytest_overdub.measure.spectrum import BANDS

        unknown = [n for n in names if n not in BANDS]
        if unknown or not names:
            raise MeasureError(f"unknown band(s) {unknown or names!r}; known bands: {', '.join(BANDS)}")
        require("bands", self._audio.shape[1], self.sr)
        share = sum(self._band_shares[n] for n in names)
        return power_db(self._rms_power * share) if share > 0 else FLOOR_DB

    def metric(self, name: str) -> float:
        """A figure by its metric name (see :mod:`pytest_overdub.measure.metrics`)."""
        from pytest_overdub.measure.metrics import parse_metric
        from pytest_overdub.measure.stereo import band_side_of

        parsed = parse_metric(name)
        require(name, self._audio.shape[1], self.sr)
        if parsed.kind == "scalar":
            return float(getattr(self, parsed.attr))
        if parsed.kind == "gated":
            from pytest_overdub.measure.gated import gated_levels_of

            return float(getattr(gated_levels_of(self._audio, sr=self.sr), parsed.attr))
        if parsed.kind == "bandRel":
            return self.band_rel[parsed.bands[0]]
        if parsed.kind == "band":
            return self.band_abs(list(parsed.bands))
        return band_side_of(self._audio, sr=self.sr, lo_hz=parsed.lo_hz, hi_hz=parsed.hi_hz)

    def as_dict(self) -> dict[str, object]:
        """Every figure under its metric name (``bandRel.<name>`` flattened), the key and the signal facts.

        A refused figure is None, and the last entry, ``refused``, maps each such name to its reason.
        """
        from pytest_overdub.measure.metrics import SCALAR_METRICS
        from pytest_overdub.measure.spectrum import BANDS

        out: dict[str, object] = {name: getattr(self, attr) for name, attr in SCALAR_METRICS.items()}
        out.update({f"bandRel.{b}": self.band_rel.get(b) for b in BANDS})
        key = None if self.key_root is None else f"{self.key_root} {self.key_scale}"
        out.update(key=key, keyConfidence=self.key_confidence, keyRunnerUp=self.key_runner_up,
                   sr=self.sr, durationS=self.duration_s, channels=self.channels, refused=dict(self.refused))
        return out


def _refusals(n: int, sr: int) -> dict[str, str]:
    """Name (as in :meth:`Measurement.as_dict`) -> reason, for every figure an ``n``-sample signal is too short for."""
    from pytest_overdub.measure.metrics import SCALAR_METRICS
    from pytest_overdub.measure.spectrum import BANDS

    names = {name: name for name in SCALAR_METRICS}
    names.update({f"bandRel.{b}": "bands" for b in BANDS})
    names.update(key="key", keyConfidence="key", keyRunnerUp="key")
    reasons = {name: shortfall(figure, n, sr) for name, figure in names.items()}
    return {name: reason for name, reason in reasons.items() if reason is not None}


def measure(x: np.ndarray, *, sr: int) -> Measurement:
    """Measure a ``(channels, n)`` or ``(n,)`` float signal: every figure, or the reason it is refused."""
    from pytest_overdub.measure import loudness
    from pytest_overdub.measure.key import key_of_mono, mono_f32
    from pytest_overdub.measure.onsets import onset_times_of
    from pytest_overdub.measure.peak import true_peak_of
    from pytest_overdub.measure.spectrum import BANDS, spectrum_of
    from pytest_overdub.measure.stereo import channel_dots, correlation_of, side_db_from_dots

    arr, rate = as_signal(x, sr)
    n = arr.shape[1]
    refused = _refusals(n, rate)

    def unless(name: str, compute):
        return None if name in refused else compute()

    seg = loudness.KSegments.of(arr, sr=rate)
    short_term = unless("lufsShortMax", lambda: loudness.series_from(seg, loudness.SHORT_TERM_SEGMENTS))
    peak = amplitude_db(float(max(arr.max(), -arr.min())))
    dots = channel_dots(arr)
    # sum of squares over all channels: the diagonal dots (a mono signal's is counted once)
    rms_power = (dots[0] + (dots[1] if arr.shape[0] == 2 else 0.0)) / arr.size
    spectrum = unless("centroid", lambda: spectrum_of(arr, sr=rate, figure="centroid"))
    mono = mono_f32(arr)
    key = unless("key", lambda: key_of_mono(mono, sr=rate))
    duration_s = n / rate
    return Measurement(
        lufs=unless("lufs", lambda: loudness.integrated_from(seg)),
        lufs_short_max=None if short_term is None else float(short_term.max()),
        lra=unless("lra", lambda: loudness.lra_from(seg)),
        true_peak=unless("truePeak", lambda: true_peak_of(arr, sr=rate)),
        peak=peak,
        rms=power_db(rms_power),
        crest=peak - power_db(rms_power),
        centroid=None if spectrum is None else spectrum.centroid_hz(),
        correlation=unless("correlation", lambda: correlation_of(arr, dots=dots)),
        side_db=unless("sideDb", lambda: side_db_from_dots(*dots)),
        onsets_per_sec=unless("onsetsPerSec", lambda: onset_times_of(arr, sr=rate, mono=mono).size / duration_s),
        band_rel={} if spectrum is None else spectrum.band_rel_db(),
        key_root=None if key is None else key.root,
        key_scale=None if key is None else key.scale,
        key_confidence=None if key is None else key.confidence,
        key_runner_up=None if key is None else key.runner_up,
        sr=rate,
        duration_s=duration_s,
        channels=arr.shape[0],
        refused=refused,
        momentary=np.zeros(0) if "lufs" in refused else loudness.series_from(seg, loudness.MOMENTARY_SEGMENTS),
        short_term=np.zeros(0) if short_term is None else short_term,
        _audio=arr,
        _band_shares={} if spectrum is None else {b: spectrum.band_share(b) for b in BANDS},
        _rms_power=rms_power,
    )
