"""Input checks shared by every meter, and the dB conversions they use (:mod:`pytest_overdub.dsp.levels`).

Conventions (docs/meters.md): a signal is a float array shaped ``(channels, n)`` with one or two channels,
or ``(n,)`` for mono; samples are full-scale floats (1.0 = 0 dBFS). Every dB figure floors at
:data:`FLOOR_DB` (-120), so silence reads -120 and no report ever shows NaN or -inf.
"""

from __future__ import annotations

import numpy as np

from pytest_overdub.dsp.levels import CEILING_DB, FLOOR_DB, amplitude_db, power_db  # noqa: F401 - the meters' dB
from pytest_overdub.errors import MeasureError

#: Supported sample rates, inclusive (Hz).
MIN_SR = 8000
MAX_SR = 384000
MAX_CHANNELS = 2


def check_sr(sr: object) -> int:
    """Return ``sr`` as an int, or raise :class:`MeasureError` if it is not a whole rate in 8000..384000 Hz."""
    if isinstance(sr, bool) or not isinstance(sr, (int, float, np.integer, np.floating)):
        raise MeasureError(f"sample rate must be a number of Hz in {MIN_SR}..{MAX_SR}; got {sr!r}")
    if not np.isfinite(sr) or float(sr) != int(sr) or not MIN_SR <= int(sr) <= MAX_SR:
        raise MeasureError(f"sample rate must be a whole number of Hz in {MIN_SR}..{MAX_SR}; got {sr!r}")
    return int(sr)


def as_signal(x: object, sr: object) -> tuple[np.ndarray, int]:
    """Validate a signal and its rate; return it as a float64 ``(channels, n)`` array and the int rate.

    Raises :class:`MeasureError` naming what was passed for: a non-array, integer/complex/bool samples,
    more than two dimensions or channels (a ``(n, 2)`` array is recognised and the message says to
    transpose it), an empty signal, a non-finite sample, or an unsupported rate.
    """
    rate = check_sr(sr)
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - numpy raises many kinds here
        raise MeasureError(f"signal must be a float array; got {type(x).__name__} ({exc})") from None
    if arr.dtype.kind not in "f":
        hint = " (divide integer PCM by its full scale, e.g. 32768 for int16)" if arr.dtype.kind in "iu" else ""
        raise MeasureError(f"signal must hold float samples; got dtype {arr.dtype}{hint}")
    if arr.ndim == 1:
        arr = arr[np.newaxis, :]
    elif arr.ndim != 2:
        raise MeasureError(f"signal must be shaped (channels, n) or (n,); got shape {arr.shape}")
    if arr.shape[0] > MAX_CHANNELS:
        hint = "; it looks like (n, channels): pass x.T" if arr.shape[1] <= MAX_CHANNELS else ""
        raise MeasureError(
            f"signal must have 1 or 2 channels shaped (channels, n); got shape {arr.shape}{hint}"
        )
    if arr.shape[1] == 0:
        raise MeasureError(f"signal is empty: shape {arr.shape}; expected at least one sample")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr).all(axis=0))[0])
        raise MeasureError(f"signal has a non-finite sample (NaN or inf) at frame {bad}; every sample must be finite")
    return arr, rate


