"""Loudness: ITU-R BS.1770-4 K-weighting, gating and integrated loudness; EBU Tech 3342 loudness range.

Conventions:

* K-weighting is the BS.1770-4 pre-filter (high shelf) followed by the RLB high-pass, each derived for the
  sample rate from its analogue prototype (f0, Q, gain) so that at 48 kHz the coefficients equal the table
  in BS.1770-4 Annex 1 (checked by a unit test).
* Mean squares are taken per 100 ms segment (segment k spans samples ``round(k sr/10)`` up to
  ``round((k+1) sr/10)``); a 400 ms gating block is four consecutive segments (100 ms hop) and a 3 s
  short-term window is thirty. Only windows that lie wholly inside the audio are used: no partial window at
  either end. Channels are summed with weight 1 (BS.1770-4 eq. 2, L/R weights).
* ``L = -0.691 + 10 log10(P)`` (BS.1770-4 eq. 2). Integrated loudness gates at -70 LUFS absolute and -10 LU
  relative (BS.1770-4 eqs. 4-7, strict ">" as in the standard). Anything without a block above the gates
  reads -120.
* Audio shorter than one window is refused (:class:`~pytest_overdub.errors.TooShortError`, see
  :mod:`pytest_overdub.measure.minimums`): integrated and momentary loudness need 400 ms; short-term
  loudness, its maximum and the loudness range need 3 s. No figure is made from a partial window.
* Loudness range (EBU Tech 3342): 3 s short-term windows on a 100 ms hop, absolute gate -70 LUFS, relative
  gate -20 LU below the power mean of the absolutely gated windows, then the 95th minus the 10th percentile
  (linear interpolation between order statistics, numpy's default). Nothing above the gates: the range
  is 0.

Differences from pyloudnorm (which the tests use as a reference): pyloudnorm designs its K-weighting from
rounded parameters (shelf +4 dB, Q 1/sqrt 2, 1500 Hz; high-pass 38 Hz, Q 0.5) rather than the standard's
coefficients, counts blocks with a rounded ``(T - 0.4)/0.1 + 1`` (so it can include one partial block at the
end), and appends 1.5 s of silence before its loudness range. The differences are hundredths of an LU on
music.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pytest_overdub.measure._input import FLOOR_DB, as_signal
from pytest_overdub.measure.minimums import require

#: Segment length (s), blocks per momentary window and per short-term window (BS.1770-4, Tech 3341/3342).
SEGMENT_S = 0.1
MOMENTARY_SEGMENTS = 4
SHORT_TERM_SEGMENTS = 30
ABSOLUTE_GATE_LUFS = -70.0
RELATIVE_GATE_LU = -10.0
LRA_RELATIVE_GATE_LU = -20.0
LRA_PERCENTILES = (10.0, 95.0)
_OFFSET_DB = -0.691  # BS.1770-4 eq. 2


def k_weighting_sos(*, sr: int) -> np.ndarray:
    """The K-weighting filter as second-order sections ``[pre-filter, RLB]`` for sample rate ``sr``.

    Analogue prototypes (BS.1770-4 Annex 1, re-derived for any rate with the bilinear transform):
    pre-filter high shelf f0 = 1681.974 Hz, gain 3.999844 dB, Q = 0.7071752; RLB high-pass f0 = 38.13547 Hz,
    Q = 0.5003270.
    """
    k = np.tan(np.pi * 1681.974450955533 / sr)
    q = 0.7071752369554196
    vh = 10.0 ** (3.999843853973347 / 20.0)
    vb = vh**0.4996667741545416
    a0 = 1.0 + k / q + k * k
    shelf = [
        (vh + vb * k / q + k * k) / a0,
        2.0 * (k * k - vh) / a0,
        (vh - vb * k / q + k * k) / a0,
        1.0,
        2.0 * (k * k - 1.0) / a0,
        (1.0 - k / q + k * k) / a0,
    ]
    k = np.tan(np.pi * 38.13547087602444 / sr)
    q = 0.5003270373238773
    a0 = 1.0 + k / q + k * k
    highpass = [1.0, -2.0, 1.0, 1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / q + k * k) / a0]
    return np.array([shelf, highpass])


def k_weight(x: np.ndarray, *, sr: int) -> np.ndarray:
    """K-weight a validated ``(channels, n)`` signal (zero initial state)."""
    from pytest_overdub.dsp.compiled import sosfilt  # scipy's sosfilt arithmetic, compiled

    return sosfilt(k_weighting_sos(sr=sr), x)


@dataclass(frozen=True)
class KSegments:
    """K-weighted energy per channel and 100 ms segment: the one intermediate all loudness figures share."""

    sums: np.ndarray  # (channels, n_segments): sum of squared K-weighted samples per segment
    bounds: np.ndarray  # (n_segments + 1,): sample index where each segment starts, then the last end
    n: int  # samples per channel
    sr: int

    @classmethod
    def of(cls, x: np.ndarray, *, sr: int) -> "KSegments":
        """Compute from a validated ``(channels, n)`` signal."""
        y = k_weight(x, sr=sr)
        n = y.shape[1]
        seg = sr * SEGMENT_S
        n_seg = int(np.floor(n / seg + 1e-9))
        bounds = np.round(np.arange(n_seg + 1) * seg).astype(np.int64)
        if sr % 10 == 0:  # equal segments: sums of squares of a reshaped view, no squared copy
            seg_view = y[:, : bounds[-1]].reshape(y.shape[0], n_seg, sr // 10)
            sums = np.einsum("csk,csk->cs", seg_view, seg_view)
            return cls(sums=sums, bounds=bounds, n=n, sr=sr)
        sq = y * y
        if n_seg == 0:
            sums = np.zeros((y.shape[0], 0))
        else:
            sums = np.stack([np.add.reduceat(row[: bounds[-1]], bounds[:-1]) for row in sq])
        return cls(sums=sums, bounds=bounds, n=n, sr=sr)

    def window_powers(self, n_segments: int) -> np.ndarray:
        """Channel-summed mean square of every window of ``n_segments`` segments on a one-segment hop."""
        if self.sums.shape[1] < n_segments:
            return np.zeros(0)
        energy = sliding_window_view(self.sums.sum(axis=0), n_segments).sum(axis=-1)
        lengths = self.bounds[n_segments:] - self.bounds[:-n_segments]
        return energy / lengths


def power_to_lufs(power: np.ndarray | float) -> np.ndarray:
    """``-0.691 + 10 log10(P)`` floored at -120 (BS.1770-4 eq. 2)."""
    p = np.asarray(power, dtype=np.float64)
    with np.errstate(divide="ignore"):
        lufs = _OFFSET_DB + 10.0 * np.log10(p)
    return np.maximum(np.nan_to_num(lufs, nan=FLOOR_DB, neginf=FLOOR_DB), FLOOR_DB)


def _lufs_to_power(lufs: float) -> float:
    return 10.0 ** ((lufs - _OFFSET_DB) / 10.0)


def _gated(block_powers: np.ndarray) -> np.ndarray:
    """The 400 ms block powers above the BS.1770-4 absolute gate and then its relative gate."""
    kept = block_powers[block_powers > _lufs_to_power(ABSOLUTE_GATE_LUFS)]
    if kept.size == 0:
        return kept
    relative = float(power_to_lufs(kept.mean())) + RELATIVE_GATE_LU
    return kept[kept > _lufs_to_power(relative)]


def gated_integrated(block_powers: np.ndarray) -> float:
    """Integrated loudness of 400 ms block powers with the BS.1770-4 absolute and relative gates."""
    kept = _gated(block_powers)
    return float(power_to_lufs(kept.mean())) if kept.size else FLOOR_DB


def integrated_from(seg: KSegments) -> float:
    """Integrated loudness (LUFS) from shared K-weighted segments; under 400 ms a TooShortError."""
    require("lufs", seg.n, seg.sr)
    return gated_integrated(seg.window_powers(MOMENTARY_SEGMENTS))


def gated_share(seg: KSegments) -> float:
    """The share (0 to 1) of the 400 ms blocks that integrated loudness reads: those above both of its gates
    (:func:`gated_integrated`); 0 when there is no block. A part silenced or ducked 10 LU in some of its
    blocks and pushed up in the rest reads loud in ``lufs``, which skips those blocks; here they count."""
    require("lufs", seg.n, seg.sr)
    powers = seg.window_powers(MOMENTARY_SEGMENTS)
    return _gated(powers).size / powers.size if powers.size else 0.0


def series_from(seg: KSegments, n_segments: int) -> np.ndarray:
    """Loudness of every window of ``n_segments`` (100 ms hop); shorter audio is a TooShortError."""
    require("shortTerm" if n_segments == SHORT_TERM_SEGMENTS else "momentary", seg.n, seg.sr)
    return power_to_lufs(seg.window_powers(n_segments))


def lra_from(seg: KSegments) -> float:
    """EBU Tech 3342 loudness range (LU) from shared K-weighted segments; under 3 s a TooShortError."""
    require("lra", seg.n, seg.sr)
    powers = seg.window_powers(SHORT_TERM_SEGMENTS)
    kept = powers[powers > _lufs_to_power(ABSOLUTE_GATE_LUFS)]
    if kept.size == 0:
        return 0.0
    relative = float(power_to_lufs(kept.mean())) + LRA_RELATIVE_GATE_LU
    kept = kept[kept > _lufs_to_power(relative)]
    if kept.size == 0:
        return 0.0
    lo, hi = np.percentile(power_to_lufs(kept), LRA_PERCENTILES)
    return float(hi - lo)


def integrated_lufs(x: np.ndarray, *, sr: int) -> float:
    """BS.1770-4 integrated loudness in LUFS (gated; -120 when nothing is above the gates)."""
    arr, rate = as_signal(x, sr)
    return integrated_from(KSegments.of(arr, sr=rate))


def momentary_lufs(x: np.ndarray, *, sr: int) -> np.ndarray:
    """Momentary loudness (400 ms windows) every 100 ms; value i covers 0.1 i .. 0.1 i + 0.4 s."""
    arr, rate = as_signal(x, sr)
    return series_from(KSegments.of(arr, sr=rate), MOMENTARY_SEGMENTS)


def short_term_lufs(x: np.ndarray, *, sr: int) -> np.ndarray:
    """Short-term loudness (3 s windows) every 100 ms; value i covers 0.1 i .. 0.1 i + 3 s."""
    arr, rate = as_signal(x, sr)
    return series_from(KSegments.of(arr, sr=rate), SHORT_TERM_SEGMENTS)


def short_term_max_lufs(x: np.ndarray, *, sr: int) -> float:
    """The loudest 3 s short-term loudness (``lufsShortMax``); under 3 s of audio a TooShortError."""
    return float(short_term_lufs(x, sr=sr).max())


def loudness_range(x: np.ndarray, *, sr: int) -> float:
    """EBU Tech 3342 loudness range (LRA) in LU."""
    arr, rate = as_signal(x, sr)
    return lra_from(KSegments.of(arr, sr=rate))
