"""The dsp layer's loops compiled with numba: ``sosfilt`` and ``lfilter`` without scipy.signal, a
vectorised ``sin``, the ``sine`` oscillator, a fast all-finite check and a fast ``rng_for``.

Why: importing :mod:`scipy.signal` costs about a second of a cold start (it pulls in scipy.stats), and the
scorer needs only two of its recursions. :func:`sosfilt` and :func:`lfilter` run
:func:`~pytest_overdub.dsp.filters.sos_samples` and :func:`~pytest_overdub.dsp.filters.lfilter_samples`,
which do scipy's products and sums in scipy's order, so the samples are identical to
``scipy.signal.sosfilt`` / ``lfilter`` along the last axis (the tests compare them bit for bit).

Only this module and :mod:`.jit` import numba: the kernel sandbox imports the other dsp modules (through
:mod:`.stdlib`, which does not list this module) and runs their uncompiled paths. House devices and meters import this module;
each loop has one dispatcher for the whole process, so numba loads its cached machine code once.
"""

from __future__ import annotations

import math

import numpy as np
from .jit import njit

from ..errors import DeviceError
from . import signals
from .filters import lfilter_samples, sos_samples
from .signals import seed_for

__all__ = ["SOS", "LFILTER", "sosfilt", "lfilter", "sin", "sine", "all_finite", "copy_scaled", "over_indices",
           "rng_for"]

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


# --- sin -----------------------------------------------------------------------------------------
# Cody-Waite reduction by pi/2 in three 33-bit parts, then fdlibm's kernels (Sun Microsystems, k_sin.c and
# k_cos.c: minimax polynomials on [-pi/4, pi/4], error under 1 ulp there).
_INVPIO2 = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e+00
_PIO2_2 = 6.07710050630396597660e-11
_PIO2_3 = 2.02226624871116645580e-21
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11
#: Largest |x| :func:`sin` reduces itself: a quadrant count q below 2**20 keeps q * _PIO2_1 exact.
SIN_MAX_ARG = 1.0e6


@njit(cache=True)
def _within(x, limit):  # pragma: no cover - compiled
    """Whether every |x| <= limit (False for a NaN)."""
    outside = 0
    for i in range(x.shape[0]):
        outside |= not abs(x[i]) <= limit
    return outside == 0


@njit(cache=True, inline="always")
def _sin_one(v):  # pragma: no cover - compiled
    q = math.floor(v * _INVPIO2 + 0.5)
    r = ((v - q * _PIO2_1) - q * _PIO2_2) - q * _PIO2_3
    z = r * r
    sr = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    cr = 1.0 - 0.5 * z + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    k = int(q) & 3
    w = sr if (k & 1) == 0 else cr
    return w if k < 2 else -w


@njit(cache=True)
def _sin_loop(x, out):  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        out[i] = _sin_one(x[i])


@njit(cache=True)
def _sin_loop_in_place(x):  # pragma: no cover - compiled
    """:func:`_sin_loop` with ``out`` = ``x``: given as two arrays, LLVM's overlap check at run time
    sends the same buffer down its scalar path (about four times slower); one array vectorises."""
    for i in range(x.shape[0]):
        x[i] = _sin_one(x[i])


def sin(x: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """``np.sin(x)`` for a 1-D float64 array, within 2.2e-16 of it (tested for |x| up to 1e5) and about
    seven times faster here (3.8 against 26 ns per sample: numpy's float64 ``sin`` is the C library's,
    one sample at a time; this loop vectorises). ``out`` may be ``x``. Arrays holding any |x| above
    :data:`SIN_MAX_ARG`, or a NaN, go to ``np.sin``.

    >>> float(sin(np.array([np.pi / 2]))[0])
    1.0
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise DeviceError(f"sin takes a 1-D array, got shape {x.shape}")
    if out is None:
        out = np.empty_like(x)
    if _within(x, SIN_MAX_ARG):
        if out is x or (out.shape == x.shape and out.ctypes.data == x.ctypes.data and out.strides == x.strides):
            _sin_loop_in_place(out)
        else:
            _sin_loop(x, out)
    else:  # an |x| above SIN_MAX_ARG, or a NaN: numpy's own, for the whole array
        np.sin(x, out=out)
    return out


@njit(cache=True, fastmath={"reassoc"})
def _zero_if_finite(row):  # pragma: no cover - compiled
    """``sum(row · 0)``: exactly 0.0 when every value is finite, NaN when any is NaN or ±inf (0·inf is NaN
    and a NaN survives every sum); no finite term can overflow it. ``reassoc`` alone lets the sum
    vectorise; without ``nnan``/``ninf`` LLVM may not assume the NaNs away or fold ``x·0`` to 0."""
    s = 0.0
    for i in range(row.shape[0]):
        s += row[i] * 0.0
    return s


@njit(cache=True, fastmath={"reassoc"})
def _scale_row(src, gain, dst):  # pragma: no cover - compiled
    """``dst[i] = src[i]·gain``; returns :func:`_zero_if_finite` of ``src`` from the same pass."""
    s = 0.0
    for i in range(src.shape[0]):
        v = src[i]
        dst[i] = v * gain
        s += v * 0.0
    return s


def copy_scaled(x: np.ndarray, gains, out: np.ndarray) -> bool:
    """``out[c] = x[c]·gains[c]`` for the rows of a float64 ``(channels, n)`` ``x`` (``np.multiply(x,
    gains[:, None], out=out)``, the same products), and whether every value of ``x`` was finite, in one
    pass. ``out`` may be ``x``. Rows must be contiguous (a block cut from a longer array is).

    >>> out = np.empty((2, 2))
    >>> copy_scaled(np.array([[1.0, 2.0], [3.0, np.nan]]), [2.0, 1.0], out), out[0].tolist()
    (False, [2.0, 4.0])
    """
    finite = True
    for c in range(x.shape[0]):
        if _scale_row(x[c], float(gains[c]), out[c]) != 0.0:
            finite = False
    return finite


def all_finite(x: np.ndarray) -> bool:
    """``np.isfinite(x).all()``, about four times faster for float64 arrays whose rows (last axis) are
    contiguous, such as a (2, n) block or its slice in time: no boolean array, one vectorised pass.
    Any other array goes to numpy.

    >>> all_finite(np.array([[0.0, 1e308], [-1e308, 2.0]])), all_finite(np.array([1.0, np.nan]))
    (True, False)
    """
    x = np.asarray(x)
    if x.dtype != np.float64 or x.ndim not in (1, 2) or (x.ndim and x.strides[-1] != 8):
        return bool(np.isfinite(x).all())
    for row in (x,) if x.ndim == 1 else x:
        if _zero_if_finite(row) != 0.0:
            return False
    return True


@njit(cache=True)
def _count_over(row, limit):  # pragma: no cover - compiled
    """How many ``|row[i]| > limit`` (a NaN is not): a sum of comparisons, which vectorises."""
    k = 0
    for i in range(row.shape[0]):
        k += abs(row[i]) > limit
    return k


@njit(cache=True)
def _collect_over(row, limit, out):  # pragma: no cover - compiled
    """The indices of :func:`_count_over`'s samples into ``out``: a chunk with none (counted by the
    vectorised loop) is not scanned again."""
    k = 0
    n = row.shape[0]
    for a in range(0, n, 1024):
        chunk = row[a:min(n, a + 1024)]
        if _count_over(chunk, limit) == 0:
            continue
        for i in range(chunk.shape[0]):
            if abs(chunk[i]) > limit:
                out[k] = a + i
                k += 1


def over_indices(row: np.ndarray, limit: float) -> np.ndarray:
    """``np.flatnonzero(np.abs(row) > limit)`` for a 1-D float64 ``row``: the indices, in order, of the
    samples whose magnitude is above ``limit`` (a NaN is not), without the magnitude and mask arrays;
    a row with none costs one vectorised pass.

    >>> over_indices(np.array([0.5, -2.0, np.nan, 1.5]), 1.0).tolist()
    [1, 3]
    """
    row = np.asarray(row)
    if row.dtype != np.float64 or row.ndim != 1:
        raise DeviceError(f"over_indices takes a 1-D float64 array, got {row.dtype} of shape {row.shape}")
    limit = float(limit)
    k = _count_over(row, limit)
    if k > row.shape[0] // 4:  # dense: numpy's mask beats a scan whose branch mispredicts
        return np.flatnonzero(np.abs(row) > limit)
    out = np.empty(k, np.int64)
    if k:
        _collect_over(row, limit, out)
    return out


# numpy's SeedSequence (O'Neill's seed_seq hash; numpy/random/bit_generator.pyx), pool of 4 32-bit words
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _M32 = 0xCA01F9DD, 0x4973F715, 0xFFFFFFFF


@njit(cache=True)
def _pcg64_seed_words(seed, out):  # pragma: no cover - compiled
    """``np.random.SeedSequence(seed).generate_state(4, np.uint64)`` into ``out`` for a 64-bit ``seed``:
    the entropy is its little-endian 32-bit words (one word below 2**32), hashed into a pool of four,
    mixed every word into every other, then drawn out as eight 32-bit words. All products wrap: uint64
    arithmetic masked to 32 bits."""
    m32 = np.uint64(_M32)
    ent = np.zeros(2, np.uint64)
    ent[0] = seed & m32
    ent[1] = seed >> np.uint64(32)
    n_ent = 2 if ent[1] != 0 else 1
    h = np.uint64(_INIT_A)
    pool = np.zeros(4, np.uint64)
    for i in range(4):
        v = ent[i] if i < n_ent else np.uint64(0)
        v = v ^ h
        h = (h * np.uint64(_MULT_A)) & m32
        v = (v * h) & m32
        pool[i] = v ^ (v >> np.uint64(16))
    for src in range(4):
        for dst in range(4):
            if src != dst:
                v = pool[src] ^ h
                h = (h * np.uint64(_MULT_A)) & m32
                v = (v * h) & m32
                v = v ^ (v >> np.uint64(16))
                r = (np.uint64(_MIX_L) * pool[dst] - np.uint64(_MIX_R) * v) & m32
                pool[dst] = r ^ (r >> np.uint64(16))
    h = np.uint64(_INIT_B)
    for i in range(8):
        v = pool[i % 4] ^ h
        h = (h * np.uint64(_MULT_B)) & m32
        v = (v * h) & m32
        v = v ^ (v >> np.uint64(16))
        if i % 2 == 0:
            out[i // 2] = v
        else:
            out[i // 2] = out[i // 2] | (v << np.uint64(32))


class _SeedWords(np.random.bit_generator.ISeedSequence):
    """A seed sequence whose state is already drawn (numpy's ``ISeedSequence`` interface)."""

    def __init__(self, words: np.ndarray):
        self._words = words

    def generate_state(self, n_words, dtype=np.uint32):
        if n_words != 4 or np.dtype(dtype) != np.uint64:
            raise DeviceError(f"seed words: drawn for PCG64 (4 uint64), asked for {n_words} {np.dtype(dtype)}")
        return self._words


def rng_for(*ids) -> np.random.Generator:
    """:func:`pytest_overdub.dsp.signals.rng_for` (the same Generator: state and stream, tested against
    numpy's own seeding) at about a fifth of the cost: numpy's ``SeedSequence`` takes most of the 30-50 us
    of ``default_rng``, and the house synths draw one Generator per note (5 277 on the 3-minute bench song).

    >>> from pytest_overdub.dsp import signals
    >>> float(rng_for("t_bass", 3).uniform()) == float(signals.rng_for("t_bass", 3).uniform())
    True
    """
    words = np.empty(4, np.uint64)
    _pcg64_seed_words(np.uint64(seed_for(*ids)), words)
    return np.random.Generator(np.random.PCG64(_SeedWords(words)))


@njit(cache=True)
def _angle_sum(sin_a, cos_a, cos_b, sin_b, out):  # pragma: no cover - compiled
    """``out[size·j + k] = sin_a[j]·cos_b[k] + cos_a[j]·sin_b[k]`` (``size = len(cos_b)``), the last block
    cut at ``len(out)``: einsum's products and sum, written once."""
    size = cos_b.shape[0]
    n = out.shape[0]
    for j in range(sin_a.shape[0]):
        a = size * j
        m = min(size, n - a)
        dst = out[a:a + m]  # a view, indexed from 0: the loop vectorises
        s = sin_a[j]
        c = cos_a[j]
        for k in range(m):
            dst[k] = s * cos_b[k] + c * sin_b[k]


def sine(freq_hz, *, sr: int, n_frames: int | None = None, phase0: float = 0.0) -> np.ndarray:
    """:func:`pytest_overdub.dsp.signals.sine`, the same samples (tested), with the angle-addition product
    for a constant frequency in a compiled loop instead of einsum and its stacked operands: 2.6 -> 2.0 ns
    a sample for a 100 000-frame note. A per-sample frequency, or a short one, goes to signals.sine.

    >>> bool(np.array_equal(sine(440.0, sr=48000, n_frames=3000), signals.sine(440.0, sr=48000, n_frames=3000)))
    True
    """
    f, n = signals._freq_and_n(freq_hz, n_frames, sr)
    if not isinstance(f, float) or n < 4 * signals._BLOCK:
        return signals.sine(freq_hz, sr=sr, n_frames=n_frames, phase0=phase0)
    out = np.empty(n)
    _angle_sum(*signals._sine_tables(f, n, sr=sr, phase0=phase0), out)
    return out
