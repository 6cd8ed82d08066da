"""Onset rate: spectral-flux onsets on the mono sum, per second (``onsetsPerSec``).

Conventions (docs/meters.md), at 48 kHz (sizes scale with the rate to the nearest power of two):

* STFT of the mono sum (channels added), 1024-point periodic Hann frames (about 21 ms) on a 512 hop,
  computed in float32 (the detector only compares relative levels); the signal is padded with half a frame
  of zeros in front so a note at t = 0 counts.
* Log compression ``log(1 + 1000 |X| / max|X|)`` (relative to the loudest bin of the whole signal, so a gain
  change does not change the count), flux = sum over bins of the positive frame-to-frame differences,
  normalised to a maximum of 1.
* A frame is an onset where the flux is a local maximum above its adaptive threshold, the running median
  over 0.5 s (zeros beyond the ends) plus 0.1, and onsets are at least 50 ms apart (the larger peak wins).
* ``onsetsPerSec`` = number of onsets / duration in seconds. Under 500 ms (the threshold's median window)
  the signal is refused (:class:`~pytest_overdub.errors.TooShortError`), for the times as for the rate.

librosa's ``onset_detect`` uses a mel spectrogram and a moving-mean threshold; this uses a running-median
threshold and needs no mel filterbank.
"""

from __future__ import annotations

import numpy as np

from pytest_overdub.measure._input import as_signal
from pytest_overdub.measure.minimums import require

_COMPRESSION = 1000.0
_MEDIAN_S = 0.5
_DELTA = 0.1
_MIN_GAP_S = 0.05


def _fft_size(sr: int) -> int:
    return int(2 ** round(np.log2(1024 * sr / 48000)))


def onset_flux(x: np.ndarray, *, sr: int) -> tuple[np.ndarray, float]:
    """Normalised spectral flux of a validated signal and its frame hop in seconds."""
    from pytest_overdub.measure.key import mono_f32

    return onset_flux_of_mono(mono_f32(x), sr=sr)


def onset_flux_of_mono(mono: np.ndarray, *, sr: int) -> tuple[np.ndarray, float]:
    """:func:`onset_flux` of an already summed float32 mono signal."""
    from scipy.fft import rfft

    from pytest_overdub.measure.spectrum import frames

    n_fft = _fft_size(sr)
    hop = n_fft // 2
    padded = np.zeros(n_fft // 2 + mono.shape[0], dtype=np.float32)
    padded[n_fft // 2 :] = mono
    window = np.hanning(n_fft + 1)[:-1].astype(np.float32)
    mag = np.abs(rfft(frames(padded, n_fft=n_fft, hop=hop) * window, axis=-1))
    peak = float(mag.max())
    if peak == 0.0:
        return np.zeros(mag.shape[0]), hop / sr
    comp = np.log1p(mag * np.float32(_COMPRESSION / peak), out=mag)
    flux = np.empty(comp.shape[0])
    flux[0] = comp[0].sum()  # the frame before the first is silence
    rise = np.subtract(comp[1:], comp[:-1])
    flux[1:] = np.maximum(rise, 0.0, out=rise).sum(axis=1)
    top = flux.max()
    return (flux / top if top > 0 else flux), hop / sr


def onset_times(x: np.ndarray, *, sr: int) -> np.ndarray:
    """Onset times in seconds: the centre of each onset frame (the first frame is centred on t = 0)."""
    arr, rate = as_signal(x, sr)
    return onset_times_of(arr, sr=rate)


def onset_times_of(arr: np.ndarray, *, sr: int, mono: np.ndarray | None = None) -> np.ndarray:
    """:func:`onset_times` of an already validated ``(channels, n)`` signal (``mono``: its float32 mono sum)."""
    from pytest_overdub.measure.peaks import pick_peaks, running_median

    require("onsetsPerSec", arr.shape[1], sr)
    flux, hop_s = onset_flux(arr, sr=sr) if mono is None else onset_flux_of_mono(mono, sr=sr)
    if not flux.any():
        return np.zeros(0)
    size = max(3, int(round(_MEDIAN_S / hop_s)) | 1)
    threshold = running_median(flux, size=size) + _DELTA
    distance = max(1, int(np.ceil(_MIN_GAP_S / hop_s)))
    # A leading zero lets a peak in the first frame (a note at t = 0) count: pick_peaks skips the edges.
    peaks = pick_peaks(np.concatenate([[0.0], flux]), height=np.concatenate([[1.0], threshold]), distance=distance)
    return (peaks - 1) * hop_s


def onsets_per_sec(x: np.ndarray, *, sr: int) -> float:
    """Spectral-flux onsets per second of audio."""
    arr, rate = as_signal(x, sr)
    return float(onset_times_of(arr, sr=rate).size / (arr.shape[1] / rate))
