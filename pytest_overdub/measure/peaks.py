"""Peak picking for the onset detector: a running median and local maxima, in numpy.

These reproduce, for the arguments :mod:`pytest_overdub.measure.onsets` passes, what
``scipy.ndimage.median_filter(x, size, mode="constant")`` and ``scipy.signal.find_peaks(x, height=h,
distance=d)`` return (the tests compare them on random and tie-heavy inputs), so a cold process need not
import scipy.signal and scipy.ndimage (about a second) for them:

* :func:`running_median`: odd ``size``, zeros beyond both ends; the median of an odd count is one of the
  window's values, so selecting it (``np.partition``) gives scipy's value exactly.
* :func:`local_maxima`: a sample, or a flat run of equal samples, higher than its neighbours on both sides;
  the first and last samples never count. A run reports its middle sample (the left one of two).
* :func:`pick_peaks`: local maxima with ``x >= height`` (per sample), then, highest first, every peak
  closer than ``distance`` samples to a kept higher one is dropped; equal heights are ranked by
  ``np.argsort`` of the heights, as scipy ranks them.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pytest_overdub.errors import MeasureError


def running_median(x: np.ndarray, *, size: int) -> np.ndarray:
    """Median of ``x[i - size//2 .. i + size//2]`` for every i, zeros beyond the ends; ``size`` odd.

    >>> running_median(np.array([3.0, 1.0, 2.0, 5.0]), size=3).tolist()
    [1.0, 2.0, 2.0, 2.0]
    """
    if size < 1 or size % 2 == 0:
        raise MeasureError(f"running median size {size!r}: want an odd number >= 1")
    x = np.asarray(x, dtype=np.float64)
    half = size // 2
    padded = np.zeros(x.shape[0] + 2 * half)
    padded[half:half + x.shape[0]] = x
    windows = np.partition(sliding_window_view(padded, size), half, axis=1)
    return windows[:, half].copy()


def local_maxima(x: np.ndarray) -> np.ndarray:
    """Indices of the local maxima of 1-D ``x`` (flat runs give their middle sample; ends never count).

    >>> local_maxima(np.array([0.0, 2.0, 2.0, 2.0, 1.0, 3.0, 3.0])).tolist()
    [2]
    """
    x = np.asarray(x, dtype=np.float64)
    if x.shape[0] < 3:
        return np.zeros(0, dtype=np.intp)
    # runs of equal values: a run is a peak when both neighbouring runs are lower
    starts = np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]]))
    ends = np.concatenate([starts[1:], [x.shape[0]]]) - 1
    v = x[starts]
    inner = np.arange(1, starts.shape[0] - 1)
    peak = (v[inner - 1] < v[inner]) & (v[inner + 1] < v[inner])
    chosen = inner[peak]
    return ((starts[chosen] + ends[chosen]) // 2).astype(np.intp)


def pick_peaks(x: np.ndarray, *, height: np.ndarray, distance: float) -> np.ndarray:
    """Local maxima of ``x`` with ``x >= height`` there, thinned so no two are closer than ``distance``.

    >>> pick_peaks(np.array([0.0, 1.0, 0.0, 3.0, 0.0, 2.0, 0.0]), height=np.zeros(7), distance=3).tolist()
    [3]
    """
    if not distance >= 1:
        raise MeasureError(f"peak distance {distance!r}: want a number of samples >= 1")
    x = np.asarray(x, dtype=np.float64)
    peaks = local_maxima(x)
    peaks = peaks[np.asarray(height, dtype=np.float64)[peaks] <= x[peaks]]
    if peaks.shape[0] < 2:
        return peaks
    gap = math.ceil(distance)
    keep = np.ones(peaks.shape[0], dtype=bool)
    for j in np.argsort(x[peaks])[::-1].tolist():  # one step per peak, not per sample
        if not keep[j]:
            continue
        lo = int(np.searchsorted(peaks, peaks[j] - gap, side="right"))
        hi = int(np.searchsorted(peaks, peaks[j] + gap, side="left"))
        keep[lo:j] = False
        keep[j + 1:hi] = False
    return peaks[keep]
