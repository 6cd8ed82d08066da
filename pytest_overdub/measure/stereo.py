"""Stereo image: correlation, side level, and side level within a frequency band.

Conventions (docs/meters.md), for a ``(2, n)`` signal with channels L, R:

* ``correlation`` = sum LR / sqrt(sum L^2 sum R^2). A mono ``(1, n)`` signal reads 1. When a channel is
  silent the ratio is undefined: two silent channels read 1 (they are identical), one silent channel 0.
* ``sideDb`` = 10 log10(sum (L-R)^2 / sum (L+R)^2), floored at -120 and capped at +120 (opposite
  channels); identical channels and silence read -120.
* ``side.<lo>-<hi>``: the same ratio after band-limiting mid (L+R) and side (L-R) with two cascaded
  2nd-order Butterworth high-passes at ``lo`` (when lo > 0) and two cascaded 2nd-order Butterworth
  low-passes at ``hi`` (when hi is below Nyquist): 4th-order Linkwitz-Riley slopes, zero initial state.
* Every figure here needs 50 ms (one period of 20 Hz); shorter signals are refused
  (:class:`~pytest_overdub.errors.TooShortError`).
"""

from __future__ import annotations

import math

import numpy as np

from pytest_overdub.dsp.sums import dot
from pytest_overdub.errors import MeasureError
from pytest_overdub.measure._input import FLOOR_DB, as_signal, power_db
from pytest_overdub.measure.minimums import require


def _channels(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (x[0], x[0]) if x.shape[0] == 1 else (x[0], x[1])


def channel_dots(x: np.ndarray) -> tuple[float, float, float]:
    """``(sum L^2, sum R^2, sum LR)`` of a validated signal (a mono signal is its own right channel)."""
    left, right = _channels(x)
    ll = dot(left, left)
    if x.shape[0] == 1:
        return ll, ll, ll
    return ll, dot(right, right), dot(left, right)


def correlation_of(x: np.ndarray, *, dots: tuple[float, float, float] | None = None) -> float:
    """Correlation of a validated signal (see module conventions); ``dots`` from :func:`channel_dots`."""
    ll, rr, lr = channel_dots(x) if dots is None else dots
    if ll == 0.0 or rr == 0.0:
        return 1.0 if ll == rr else 0.0
    norm = math.sqrt(ll * rr)
    if norm == 0.0 or norm == math.inf:  # the product under- or overflowed (a very quiet or loud signal)
        norm = math.sqrt(ll) * math.sqrt(rr)
    return float(np.clip(lr / norm, -1.0, 1.0))


def side_db_from_dots(ll: float, rr: float, lr: float) -> float:
    """sideDb from :func:`channel_dots`: ``sum (L+R)^2 = ll + rr + 2 lr``, ``sum (L-R)^2 = ll + rr - 2 lr``.

    Identical channels give exactly ``ll == rr == lr`` and so a side power of exactly 0 (-120 dB).
    """
    return _side_ratio_from(ll + rr + 2.0 * lr, max(ll + rr - 2.0 * lr, 0.0))


def _side_ratio_db(mid: np.ndarray, side: np.ndarray) -> float:
    return _side_ratio_from(dot(mid, mid), dot(side, side))


def _side_ratio_from(mm: float, ss: float) -> float:
    if ss == 0.0:
        return FLOOR_DB
    return power_db(ss / mm) if mm > 0.0 else -FLOOR_DB


def side_db_of(x: np.ndarray) -> float:
    """sideDb of a validated signal."""
    left, right = _channels(x)
    return _side_ratio_db(left + right, left - right)


def correlation(x: np.ndarray, *, sr: int) -> float:
    """Inter-channel correlation in -1..1."""
    arr, rate = as_signal(x, sr)
    require("correlation", arr.shape[1], rate)
    return correlation_of(arr)


def side_db(x: np.ndarray, *, sr: int) -> float:
    """Side-to-mid power ratio in dB."""
    arr, rate = as_signal(x, sr)
    require("sideDb", arr.shape[1], rate)
    return side_db_of(arr)


def band_side_of(x: np.ndarray, *, sr: int, lo_hz: float, hi_hz: float) -> float:
    """``side.<lo>-<hi>`` of a validated signal."""
    from pytest_overdub.dsp.compiled import sosfilt
    from pytest_overdub.dsp.filters import butter2

    nyquist = sr / 2.0
    if not (np.isfinite(lo_hz) and np.isfinite(hi_hz) and 0.0 <= lo_hz < hi_hz):
        raise MeasureError(f"side band needs 0 <= lo_hz < hi_hz (finite); got lo_hz={lo_hz!r}, hi_hz={hi_hz!r}")
    if lo_hz >= nyquist:
        raise MeasureError(f"side band lo_hz={lo_hz!r} must be below Nyquist ({nyquist:g} Hz at sr={sr})")
    left, right = _channels(x)
    ms = np.stack([left + right, left - right])
    sections = []
    if lo_hz > 0.0:
        sections += [butter2("hp", freq_hz=lo_hz, sr=sr)] * 2
    if hi_hz < nyquist:
        sections += [butter2("lp", freq_hz=hi_hz, sr=sr)] * 2
    if sections:
        ms = sosfilt(np.stack(sections), ms)
    return _side_ratio_db(ms[0], ms[1])


def measure_band_side(x: np.ndarray, *, sr: int, lo_hz: float, hi_hz: float) -> float:
    """Side-to-mid ratio in dB within ``lo_hz``..``hi_hz`` (``side.<lo>-<hi>``)."""
    arr, rate = as_signal(x, sr)
    require("side.", arr.shape[1], rate)
    return band_side_of(arr, sr=rate, lo_hz=float(lo_hz), hi_hz=float(hi_hz))
