"""Peak meters: sample peak, true peak (ITU-R BS.1770-4 Annex 2), rms and crest factor.

Conventions:

* ``peak``: the largest ``|x|`` over all samples and channels, in dBFS.
* ``rms``: ``10 log10(mean(x^2))`` over all samples and channels, in dBFS; a full-scale sine reads -3.01
  (no +3 dB "AES" offset). ``crest`` = peak dB - rms dB (0 for silence).
* ``truePeak``: the largest magnitude of the 4x oversampled signal, max over channels, in dBTP. The
  interpolator is the one the house limiter holds its ceiling with (:mod:`pytest_overdub.dsp.oversample`:
  a 97-tap Kaiser-windowed sinc, 24 taps per phase, within 0.05 dB of ``scipy.signal.resample_poly`` per
  frame), so a mix the limiter holds under a ceiling reads under it here too. Phase 0 is the samples
  themselves, so the true peak is never below the sample peak. It is not the 48-tap example filter
  printed in BS.1770-4 Annex 2. The signal is taken as zero outside its ends, so the edges are
  interpolated too. A signal shorter than
  the interpolator's span (24 samples, its taps per phase) is refused
  (:class:`~pytest_overdub.errors.TooShortError`).
* Speed: the oversampled signal is never stored. It is evaluated chunk by chunk, loudest chunk first,
  and a chunk is skipped when ``G * max|x|`` over it (G = the largest absolute tap sum of any phase, a
  strict upper bound of what interpolation can reach there) cannot beat the best value found so far. The
  result equals the maximum over the whole oversampled signal (to rounding). Within a chunk, 16 input
  samples at a time go through one ``(39, 48)`` block matrix (16 shifted copies of the 24 x 3 phase taps), a
  product BLAS runs several times faster than 24 x 3 products on every sample.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pytest_overdub.dsp import oversample
from pytest_overdub.measure._input import amplitude_db, as_signal, power_db
from pytest_overdub.measure.minimums import require

OVERSAMPLING = oversample.FACTOR
TAPS_PER_PHASE = oversample.TAPS_PER_PHASE
_CHUNK = 8192
#: Input samples per row of the block matrix (divides ``_CHUNK``).
_BLOCK = 16


def oversampling_fir() -> np.ndarray:
    """The 4x interpolation FIR as one filter (:func:`pytest_overdub.dsp.oversample.interpolation_fir`)."""
    return oversample.interpolation_fir()


@lru_cache(maxsize=1)
def _phase_matrix() -> np.ndarray:
    """Taps of phases 1..3 as a ``(TAPS_PER_PHASE, 3)`` matrix acting on the window ``x[n-PAST .. n+FUTURE]``
    (the limiter's :data:`~pytest_overdub.dsp.oversample.PHASE_WEIGHTS`, transposed)."""
    return np.ascontiguousarray(oversample.PHASE_WEIGHTS.T)


@lru_cache(maxsize=1)
def _block_matrix() -> np.ndarray:
    """``(_BLOCK + TAPS_PER_PHASE - 1, 3 * _BLOCK)``: a row window -> phases 1..3 of its _BLOCK windows.

    Columns ``3r .. 3r + 2`` hold the phase taps of the window starting at offset r.
    """
    taps = _phase_matrix()
    m = np.zeros((_BLOCK + TAPS_PER_PHASE - 1, 3 * _BLOCK))
    for r in range(_BLOCK):
        m[r : r + TAPS_PER_PHASE, 3 * r : 3 * r + 3] = taps
    return m


def _true_peak_linear(x: np.ndarray) -> float:
    """Exact max |4x oversampled x| for a validated (channels, n) signal."""
    taps = _phase_matrix()
    block = _block_matrix()
    gain = float(np.abs(taps).sum(axis=0).max())
    n = x.shape[1]
    n_chunks = -(-(n + TAPS_PER_PHASE) // _CHUNK)
    total = n_chunks * _CHUNK + TAPS_PER_PHASE
    padded = np.zeros((x.shape[0], total))
    padded[:, TAPS_PER_PHASE : TAPS_PER_PHASE + n] = x
    mags = np.abs(padded)
    chunk_max = mags[:, : n_chunks * _CHUNK].reshape(x.shape[0], n_chunks, _CHUNK).max(axis=2)
    tail = mags[:, n_chunks * _CHUNK :].max(axis=1, keepdims=True)
    # A window starting in chunk j reaches TAPS_PER_PHASE - 1 samples into chunk j + 1 (or the tail).
    reach = np.maximum(chunk_max, np.concatenate([chunk_max[:, 1:], tail], axis=1))
    bounds = gain * reach
    best = float(max(chunk_max.max(), tail.max()))
    rows = [sliding_window_view(padded[ch], block.shape[0])[::_BLOCK] for ch in range(x.shape[0])]
    per_chunk = _CHUNK // _BLOCK
    for flat in np.argsort(-bounds, axis=None):
        ch, j = divmod(int(flat), n_chunks)
        if bounds[ch, j] <= best:
            break
        best = max(best, float(np.abs(rows[ch][j * per_chunk : (j + 1) * per_chunk] @ block).max()))
    return best


def true_peak_of(x: np.ndarray, *, sr: int) -> float:
    """:func:`true_peak_db` of a validated signal; under 24 samples (its taps per phase) a TooShortError."""
    require("truePeak", x.shape[1], sr)
    return amplitude_db(_true_peak_linear(x))


def true_peak_db(x: np.ndarray, *, sr: int) -> float:
    """True peak in dBTP (BS.1770-4 Annex 2, 4x oversampling), max over channels; -120 for silence."""
    arr, rate = as_signal(x, sr)
    return true_peak_of(arr, sr=rate)


def sample_peak_db(x: np.ndarray, *, sr: int) -> float:
    """Sample peak in dBFS over all samples and channels."""
    arr, _ = as_signal(x, sr)
    return amplitude_db(float(np.abs(arr).max()))


def rms_db(x: np.ndarray, *, sr: int) -> float:
    """RMS level in dBFS over all samples and channels (a full-scale sine reads -3.01)."""
    arr, _ = as_signal(x, sr)
    return power_db(float(np.mean(arr * arr)))


def crest_db(x: np.ndarray, *, sr: int) -> float:
    """Crest factor: sample peak dB minus rms dB (a sine reads 3.01 dB; silence 0)."""
    arr, _ = as_signal(x, sr)
    return amplitude_db(float(np.abs(arr).max())) - power_db(float(np.mean(arr * arr)))
