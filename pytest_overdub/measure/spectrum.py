"""Long-term spectrum: band shares (``bandRel.*``), absolute band levels (``band.*``) and the centroid.

Conventions (docs/meters.md):

* One STFT: 4096-point frames, periodic Hann window, hop 2048, no padding at the start; the end is
  zero-padded so every sample is in a frame. A signal shorter than one frame (4096 samples) is refused
  (:class:`~pytest_overdub.errors.TooShortError`): its spectrum would be mostly the padding's.
  The FFT runs in float32 (sums over frames in float64): its rounding noise sits about 140 dB below each
  frame's loudest bin, under the -120 dB floor of every band figure.
  Power ``|X|^2`` and magnitude ``|X|`` are summed over frames and channels.
* A bin of frequency f belongs to a band when ``lo <= f < hi`` (:data:`BANDS`; ``air`` has no upper edge).
  ``bandRel.<name>`` = 10 log10(band power / total power); ``band.<a+b>`` = rms dB + 10 log10(sum of the
  named shares), an absolute level in dBFS. Both floor at -120 (silence, or a band with no power).
* ``centroid`` = sum f |X| / sum |X| in Hz over the summed magnitude spectrum; silence reads 0 Hz.

librosa's ``spectral_centroid`` averages a per-frame centroid; ours is the centroid of the long-term
magnitude spectrum, so loud frames weigh more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pytest_overdub.errors import MeasureError
from pytest_overdub.measure._input import FLOOR_DB, as_signal, power_db
from pytest_overdub.measure.minimums import require

N_FFT = 4096
HOP = 2048
#: Band edges in Hz, ``lo <= f < hi``.
BANDS: dict[str, tuple[float, float]] = {
    "sub": (0.0, 60.0),
    "low": (60.0, 250.0),
    "lowmid": (250.0, 500.0),
    "mid": (500.0, 2000.0),
    "highmid": (2000.0, 4000.0),
    "presence": (4000.0, 8000.0),
    "air": (8000.0, float("inf")),
}
_FRAMES_PER_BATCH = 128


def frames(x: np.ndarray, *, n_fft: int, hop: int) -> np.ndarray:
    """A read-only ``(..., n_frames, n_fft)`` view of ``x`` (last axis time), zero-padded at the end."""
    n = x.shape[-1]
    n_frames = 1 + max(0, -(-(n - n_fft) // hop))
    total = (n_frames - 1) * hop + n_fft
    if total > n:
        pad = [(0, 0)] * (x.ndim - 1) + [(0, total - n)]
        x = np.pad(x, pad)
    return sliding_window_view(x, n_fft, axis=-1)[..., ::hop, :]


@dataclass(frozen=True)
class Spectrum:
    """Long-term power and magnitude spectra (summed over frames and channels) with their bin frequencies."""

    freqs_hz: np.ndarray
    power: np.ndarray
    magnitude: np.ndarray

    def band_power(self, name: str) -> float:
        """Summed power of the bins in band ``name``."""
        if name not in BANDS:
            raise MeasureError(f"unknown band {name!r}; known bands: {', '.join(BANDS)}")
        lo, hi = BANDS[name]
        mask = (self.freqs_hz >= lo) & (self.freqs_hz < hi)
        return float(self.power[mask].sum())

    def band_share(self, name: str) -> float:
        """Band power as a fraction of the total (0 for silence)."""
        total = float(self.power.sum())
        return self.band_power(name) / total if total > 0 else 0.0

    def band_rel_db(self) -> dict[str, float]:
        """``bandRel.<name>`` for every band: its share of total power in dB, floored at -120."""
        return {name: power_db(self.band_share(name)) for name in BANDS}

    def centroid_hz(self) -> float:
        """Centroid of the summed magnitude spectrum in Hz (0 for silence)."""
        total = float(self.magnitude.sum())
        return float((self.freqs_hz * self.magnitude).sum() / total) if total > 0 else 0.0


def spectrum_of(x: np.ndarray, *, sr: int, figure: str = "bands") -> Spectrum:
    """The long-term spectrum of a validated ``(channels, n)`` signal (one STFT, batched over frames).

    Under one frame a TooShortError naming ``figure`` ("bands" or "centroid").
    """
    from scipy.fft import rfft

    require(figure, x.shape[-1], sr)

    window = np.hanning(N_FFT + 1)[:-1].astype(np.float32)  # periodic Hann
    view = frames(x.astype(np.float32), n_fft=N_FFT, hop=HOP)
    power = np.zeros(N_FFT // 2 + 1)
    magnitude = np.zeros(N_FFT // 2 + 1)
    for start in range(0, view.shape[1], _FRAMES_PER_BATCH):
        spec = rfft(view[:, start : start + _FRAMES_PER_BATCH] * window, axis=-1)
        p = spec.real**2 + spec.imag**2
        power += p.sum(axis=(0, 1), dtype=np.float64)
        magnitude += np.sqrt(p).sum(axis=(0, 1), dtype=np.float64)
    return Spectrum(freqs_hz=np.arange(N_FFT // 2 + 1) * (sr / N_FFT), power=power, magnitude=magnitude)


def band_rel_db(x: np.ndarray, *, sr: int) -> dict[str, float]:
    """Every band's share of the total power in dB (``bandRel.<name>``)."""
    arr, rate = as_signal(x, sr)
    return spectrum_of(arr, sr=rate).band_rel_db()


def band_abs_from(spectrum: Spectrum, rms_power: float, names: list[str]) -> float:
    """``band.<a+b>``: rms dB + 10 log10(sum of the named bands' shares), floored at -120."""
    if not names:
        raise MeasureError(f"band.<a+b> needs at least one band name; known bands: {', '.join(BANDS)}")
    share = sum(spectrum.band_share(name) for name in names)
    return power_db(rms_power * share) if share > 0 else FLOOR_DB


def band_abs_db(x: np.ndarray, *, sr: int, bands: list[str]) -> float:
    """Absolute level of the named bands together in dBFS (``band.<a+b+...>``)."""
    arr, rate = as_signal(x, sr)
    return band_abs_from(spectrum_of(arr, sr=rate), float(np.mean(arr * arr)), bands)


def centroid_hz(x: np.ndarray, *, sr: int) -> float:
    """Spectral centroid of the long-term magnitude spectrum in Hz."""
    arr, rate = as_signal(x, sr)
    return spectrum_of(arr, sr=rate, figure="centroid").centroid_hz()
