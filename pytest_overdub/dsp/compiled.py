"""The dsp layer's filter loops compiled with numba: ``sosfilt`` and ``lfilter`` without scipy.signal.

Why: importing :mod:`scipy.signal` costs about a second of a cold start (it pulls in scipy.stats), and the
scorer needs only two of its recursions. :func:`sosfilt` and :func:`lfilter` run
:func:`~pytest_overdub.dsp.filters.sos_samples` and :func:`~pytest_overdub.dsp.filters.lfilter_samples`,
which do scipy's products and sums in scipy's order, so the samples are identical to
``scipy.signal.sosfilt`` / ``lfilter`` along the last axis (the tests compare them bit for bit).

The other dsp modules never import numba: the kernel sandbox imports them (through :mod:`.stdlib`, which
does not list this module) and runs their uncompiled paths. House devices and meters import this module;
each loop has one dispatcher for the whole process, so numba loads its cached machine code once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import DeviceError
from .filters import lfilter_samples, sos_samples

__all__ = ["SOS", "LFILTER", "sosfilt", "lfilter"]

#: The compiled cascade, for ``SOSFilter(..., loop=SOS)`` and :func:`sosfilt`.
SOS = njit(cache=True)(sos_samples)
#: The compiled direct form II transposed, for :func:`lfilter`.
LFILTER = njit(cache=True)(lfilter_samples)


def _rows(x: np.ndarray) -> np.ndarray:
    """``x`` as a C-contiguous float64 ``(rows, n)`` array (one signature per loop for numba)."""
    x = np.asarray(x, dtype=np.float64)
    return np.ascontiguousarray(x.reshape(1, -1) if x.ndim == 1 else x.reshape(-1, x.shape[-1]))


def sosfilt(sos: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``scipy.signal.sosfilt(sos, x, axis=-1)`` from rest: the same samples, ``x`` shaped ``(n,)`` or ``(…, n)``.

    >>> from pytest_overdub.dsp.filters import one_pole
    >>> sosfilt(one_pole("lp", freq_hz=12000, sr=48000), np.ones(3)).round(4).tolist()
    [0.5, 1.0, 1.0]
    """
    sos = np.ascontiguousarray(np.atleast_2d(sos), dtype=np.float64)
    if sos.ndim != 2 or sos.shape[1] != 6:
        raise DeviceError(f"sos of shape {sos.shape}: want (sections, 6) rows [b0, b1, b2, 1, a1, a2]")
    rows = _rows(x)
    y = np.empty(rows.shape)
    SOS(sos, rows, np.zeros((sos.shape[0], rows.shape[0], 2)), y)
    return y.reshape(np.shape(x))


def lfilter(b, a, x: np.ndarray, *, zi: np.ndarray | None = None):
    """``scipy.signal.lfilter(b, a, x, axis=-1[, zi=zi])``: the same samples (and final state with ``zi``).

    ``a`` needs at least two coefficients (a recursive filter) and ``a[0] != 0``; ``b`` and ``a`` are padded
    with zeros to one length and divided by ``a[0]`` as scipy does. ``zi`` is shaped like scipy's:
    ``x.shape[:-1] + (max(len(a), len(b)) - 1,)``. Returns ``y``, or ``(y, zf)`` when ``zi`` is given.

    >>> lfilter([0.5], [1.0, -0.5], np.ones(3)).tolist()
    [0.5, 0.75, 0.875]
    """
    b = np.atleast_1d(np.asarray(b, dtype=np.float64))
    a = np.atleast_1d(np.asarray(a, dtype=np.float64))
    if a.ndim != 1 or b.ndim != 1 or a.size < 2 or b.size < 1 or a[0] == 0.0:
        raise DeviceError(f"lfilter needs 1-D b and a with len(a) >= 2 and a[0] != 0; got b={b.tolist()}, "
                          f"a={a.tolist()}")
    m = max(a.size, b.size)
    b = np.concatenate([b, np.zeros(m - b.size)])
    a = np.concatenate([a, np.zeros(m - a.size)])
    if a[0] != 1.0:
        b, a = b / a[0], a / a[0]
    rows = _rows(x)
    shape = np.shape(x)
    if zi is None:
        z = np.zeros((rows.shape[0], m - 1))
    else:
        zi = np.asarray(zi, dtype=np.float64)
        if zi.shape != shape[:-1] + (m - 1,):
            raise DeviceError(f"lfilter zi of shape {zi.shape}: want {shape[:-1] + (m - 1,)}")
        z = np.array(zi.reshape(rows.shape[0], m - 1), dtype=np.float64, order="C")
    y = np.empty(rows.shape)
    LFILTER(b, a, rows, z, y)
    y = y.reshape(shape)
    return y if zi is None else (y, z.reshape(shape[:-1] + (m - 1,)))
