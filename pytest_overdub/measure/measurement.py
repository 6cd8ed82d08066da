"""``measure()``: every figure of SPEC section 7 in one pass over shared intermediates.

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


@dataclass(frozen=True)
class Measurement:
    """Every figure of SPEC section 7 for one signal. dB figures floor at -120.

    ``band_rel`` maps band name -> share of total power in dB. Key fields: ``key_root`` (sharps, e.g. "A"),
    ``key_scale`` ("major"/"minor"), ``key_confidence`` (Pearson r, 0 for silence) and ``key_runner_up``
    (e.g. "C major"). ``momentary`` / ``short_term`` are the 100 ms loudness series in LUFS.
    """

    lufs: float
    lufs_short_max: float
    lra: float
    true_peak: float
    peak: float
    rms: float
    crest: float
    centroid: float
    correlation: float
    side_db: float
    onsets_per_sec: float
    band_rel: dict[str, float]
    key_root: str
    key_scale: str
    key_confidence: float
    key_runner_up: str
    sr: int
    duration_s: float
    channels: int
    momentary: np.ndarray = field(repr=False, compare=False)
    short_term: np.ndarray = field(repr=False, compare=False)
    _audio: np.ndarray = field(repr=False, compare=False)
    _band_shares: dict[str, float] = field(repr=False, compare=False)
    _rms_power: float = field(repr=False, compare=False)

    def band_abs(self, names: list[str]) -> float:
        """``band.<a+b>``: rms dB + 10 log10(sum of the named bands' shares), floored at -120."""
        from pytest_overdub.errors import MeasureError

        unknown = [n for n in names if n not in self._band_shares]
        if unknown or not names:
            raise MeasureError(f"unknown band(s) {unknown or names!r}; known bands: {', '.join(self._band_shares)}")
        share = sum(self._band_shares[n] for n in names)
        return power_db(self._rms_power * share) if share > 0 else FLOOR_DB

    def metric(self, name: str) -> float:
        """A figure by its SPEC name (see :mod:`pytest_overdub.measure.metrics`)."""
        from pytest_overdub.measure.metrics import parse_metric
        from pytest_overdub.measure.stereo import band_side_of

        parsed = parse_metric(name)
        if parsed.kind == "scalar":
            return float(getattr(self, parsed.attr))
        if parsed.kind == "bandRel":
            return self.band_rel[parsed.bands[0]]
        if parsed.kind == "band":
            return self.band_abs(list(parsed.bands))
        return band_side_of(self._audio, sr=self.sr, lo_hz=parsed.lo_hz, hi_hz=parsed.hi_hz)

    def as_dict(self) -> dict[str, object]:
        """Every figure under its SPEC name (``bandRel.<name>`` flattened), plus the key and the signal facts."""
        from pytest_overdub.measure.metrics import SCALAR_METRICS

        out: dict[str, object] = {name: float(getattr(self, attr)) for name, attr in SCALAR_METRICS.items()}
        out.update({f"bandRel.{b}": v for b, v in self.band_rel.items()})
        out.update(
            key=f"{self.key_root} {self.key_scale}",
            keyConfidence=self.key_confidence,
            keyRunnerUp=self.key_runner_up,
            sr=self.sr,
            durationS=self.duration_s,
            channels=self.channels,
        )
        return out


def measure(x: np.ndarray, *, sr: int) -> Measurement:
    """Measure a ``(channels, n)`` or ``(n,)`` float signal: every figure of SPEC section 7."""
    from pytest_overdub.measure import loudness
    from pytest_overdub.measure.key import key_of_mono, mono_f32
    from pytest_overdub.measure.onsets import onset_times_of
    from pytest_overdub.measure.peak import _true_peak_linear
    from pytest_overdub.measure.spectrum import BANDS, spectrum_of
    from pytest_overdub.measure.stereo import channel_dots, correlation_of, side_db_from_dots

    arr, rate = as_signal(x, sr)
    seg = loudness.KSegments.of(arr, sr=rate)
    short_term = loudness.series_from(seg, loudness.SHORT_TERM_SEGMENTS)
    peak = amplitude_db(float(max(arr.max(), -arr.min())))
    dots = channel_dots(arr)
    # sum of squares over all channels: the diagonal dots (a mono signal's is counted once)
    rms_power = (dots[0] + (dots[1] if arr.shape[0] == 2 else 0.0)) / arr.size
    spectrum = spectrum_of(arr, sr=rate)
    mono = mono_f32(arr)
    key = key_of_mono(mono, sr=rate)
    duration_s = arr.shape[1] / rate
    return Measurement(
        lufs=loudness.integrated_from(seg),
        lufs_short_max=float(short_term.max()),
        lra=loudness.lra_from(seg),
        true_peak=amplitude_db(_true_peak_linear(arr)),
        peak=peak,
        rms=power_db(rms_power),
        crest=peak - power_db(rms_power),
        centroid=spectrum.centroid_hz(),
        correlation=correlation_of(arr, dots=dots),
        side_db=side_db_from_dots(*dots),
        onsets_per_sec=float(onset_times_of(arr, sr=rate, mono=mono).size / duration_s),
        band_rel=spectrum.band_rel_db(),
        key_root=key.root,
        key_scale=key.scale,
        key_confidence=key.confidence,
        key_runner_up=key.runner_up,
        sr=rate,
        duration_s=duration_s,
        channels=arr.shape[0],
        momentary=loudness.series_from(seg, loudness.MOMENTARY_SEGMENTS),
        short_term=short_term,
        _audio=arr,
        _band_shares={b: spectrum.band_share(b) for b in BANDS},
        _rms_power=rms_power,
    )
