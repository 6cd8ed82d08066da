"""Recursive filters with carried state: RBJ biquads, one-poles, Butterworth and Linkwitz-Riley.

Conventions:

* Coefficients are second-order sections in scipy's layout, one row ``[b0, b1, b2, 1, a1, a2]`` per
  section, so any cascade runs through :func:`scipy.signal.sosfilt`, which is bit-exact block to block
  when its state ``zi`` is carried (so processing in one call or in segments gives the same samples).
  The house devices and the meters run the same arithmetic compiled (:func:`sos_samples`,
  :func:`lfilter_samples`, via :mod:`.compiled`); scipy is imported only by the uncompiled fallbacks
  (song-defined kernels in the sandbox, where it is pre-imported).
* Biquad formulas are Robert Bristow-Johnson's "Cookbook formulae for audio EQ biquad filter
  coefficients" (bilinear transform with frequency pre-warping). ``q`` is the cookbook's Q; shelves use
  the cookbook's shelf slope S = 1 (their half-gain point, in dB, sits at ``freq_hz``).
* One-poles are the bilinear-transform first-order low/high-pass: -3 dB exactly at ``freq_hz``.
* Audio is shaped ``(channels, n)`` or ``(n,)``; filtering runs along the last axis.
* A frequency at or above Nyquist is clamped to 0.49·sr so a song at 22 kHz still renders at 44.1 kHz.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DeviceError

# What the kernel stdlib re-exports (unchanged when scipy.signal left the scoring path): ``butter2`` (the
# meters' design) and ``lfilter_samples`` (a loop for :mod:`.compiled`) are not part of the kernel API.
__all__ = ["rbj_biquad", "one_pole", "butterworth", "linkwitz_riley4", "SOSFilter", "sos_samples", "Biquad",
           "OnePole", "Crossover"]

SQRT1_2 = math.sqrt(0.5)
#: A filter section whose two state values both fall below this magnitude is set to rest (exact 0). A
#: recursion decaying in silence otherwise settles on subnormal numbers (its products round to 0 there,
#: so it never reaches 0), and subnormal arithmetic costs about a hundred times a normal operation, in the
#: filter and in every later pass over its output. 1e-300 is some 6000 dB below full scale.
TINY = 1e-300
BIQUAD_KINDS = ("lp", "hp", "bp", "notch", "peak", "lowshelf", "highshelf")


def _omega(freq_hz: float, sr: float) -> float:
    if not (freq_hz > 0 and math.isfinite(freq_hz)):
        raise DeviceError(f"filter frequency {freq_hz!r} Hz is not a positive number")
    f = min(float(freq_hz), 0.49 * float(sr))
    return 2.0 * math.pi * f / float(sr)


def rbj_biquad(kind: str, *, freq_hz: float, sr: float, q: float = SQRT1_2,
               gain_db: float = 0.0) -> np.ndarray:
    """One RBJ cookbook biquad as a second-order section ``[b0, b1, b2, 1, a1, a2]``.

    ``kind`` is one of lp, hp, bp (0 dB peak gain), notch, peak, lowshelf, highshelf; ``gain_db`` is
    used by peak and the shelves.

    >>> sos = rbj_biquad("peak", freq_hz=1000, sr=48000, q=1.0, gain_db=6.0)
    >>> sos.shape
    (6,)
    """
    if kind not in BIQUAD_KINDS:
        raise DeviceError(f"biquad kind {kind!r} is unknown; allowed: {', '.join(BIQUAD_KINDS)}")
    if not q > 0:
        raise DeviceError(f"biquad q {q!r} must be > 0")
    w0 = _omega(freq_hz, sr)
    cw, sw = math.cos(w0), math.sin(w0)
    amp = 10.0 ** (gain_db / 40.0)
    alpha = sw / (2.0 * q)
    if kind == "lp":
        b = ((1 - cw) / 2, 1 - cw, (1 - cw) / 2)
        a = (1 + alpha, -2 * cw, 1 - alpha)
    elif kind == "hp":
        b = ((1 + cw) / 2, -(1 + cw), (1 + cw) / 2)
        a = (1 + alpha, -2 * cw, 1 - alpha)
    elif kind == "bp":
        b = (alpha, 0.0, -alpha)
        a = (1 + alpha, -2 * cw, 1 - alpha)
    elif kind == "notch":
        b = (1.0, -2 * cw, 1.0)
        a = (1 + alpha, -2 * cw, 1 - alpha)
    elif kind == "peak":
        b = (1 + alpha * amp, -2 * cw, 1 - alpha * amp)
        a = (1 + alpha / amp, -2 * cw, 1 - alpha / amp)
    else:
        # Shelf slope S = 1: alpha = sin(w0)/2 * sqrt((A + 1/A)(1/S - 1) + 2) = sin(w0)/sqrt(2).
        alpha = sw * SQRT1_2
        k = 2.0 * math.sqrt(amp) * alpha
        if kind == "lowshelf":
            b = (amp * ((amp + 1) - (amp - 1) * cw + k), 2 * amp * ((amp - 1) - (amp + 1) * cw),
                 amp * ((amp + 1) - (amp - 1) * cw - k))
            a = ((amp + 1) + (amp - 1) * cw + k, -2 * ((amp - 1) + (amp + 1) * cw),
                 (amp + 1) + (amp - 1) * cw - k)
        else:
            b = (amp * ((amp + 1) + (amp - 1) * cw + k), -2 * amp * ((amp - 1) + (amp + 1) * cw),
                 amp * ((amp + 1) + (amp - 1) * cw - k))
            a = ((amp + 1) - (amp - 1) * cw + k, 2 * ((amp - 1) - (amp + 1) * cw),
                 (amp + 1) - (amp - 1) * cw - k)
    a0 = a[0]
    return np.array([b[0] / a0, b[1] / a0, b[2] / a0, 1.0, a[1] / a0, a[2] / a0])


def one_pole(kind: str, *, freq_hz: float, sr: float) -> np.ndarray:
    """A first-order low- or high-pass (bilinear transform, -3 dB at ``freq_hz``) as one section.

    >>> float(one_pole("lp", freq_hz=1000, sr=48000)[3])
    1.0
    """
    if kind not in ("lp", "hp"):
        raise DeviceError(f"one-pole kind {kind!r} is unknown; allowed: lp, hp")
    k = math.tan(_omega(freq_hz, sr) / 2.0)
    a1 = (k - 1.0) / (k + 1.0)
    if kind == "lp":
        g = k / (1.0 + k)
        return np.array([g, g, 0.0, 1.0, a1, 0.0])
    g = 1.0 / (1.0 + k)
    return np.array([g, -g, 0.0, 1.0, a1, 0.0])


def butterworth(kind: str, *, order: int, freq_hz: float, sr: float) -> np.ndarray:
    """An even-order Butterworth low/high-pass as ``order // 2`` RBJ sections (Q of each pole pair).

    Section k has Q = 1 / (2 cos((2k + 1) π / (2·order))), so the cascade is maximally flat and -3 dB
    at ``freq_hz``.

    >>> butterworth("hp", order=4, freq_hz=100, sr=48000).shape
    (2, 6)
    """
    if order < 2 or order % 2:
        raise DeviceError(f"Butterworth order {order!r} must be an even number >= 2")
    qs = [1.0 / (2.0 * math.cos((2 * k + 1) * math.pi / (2 * order))) for k in range(order // 2)]
    return np.stack([rbj_biquad(kind, freq_hz=freq_hz, sr=sr, q=q) for q in qs])


def linkwitz_riley4(*, freq_hz: float, sr: float) -> tuple[np.ndarray, np.ndarray]:
    """The two halves of a 4th-order Linkwitz-Riley crossover: ``(lo_sos, hi_sos)``.

    Each half is a 2nd-order Butterworth squared (two Q = 1/√2 sections). Both are -6 dB at
    ``freq_hz``, in phase with each other at every frequency, and lo + hi is an allpass (unit magnitude).

    >>> lo, hi = linkwitz_riley4(freq_hz=120, sr=48000)
    >>> lo.shape
    (2, 6)
    """
    lo = rbj_biquad("lp", freq_hz=freq_hz, sr=sr, q=SQRT1_2)
    hi = rbj_biquad("hp", freq_hz=freq_hz, sr=sr, q=SQRT1_2)
    return np.stack([lo, lo]), np.stack([hi, hi])


class SOSFilter:
    """A cascade of second-order sections that carries its state between calls.

    ``set_sos`` swaps coefficients (automation) and keeps the state, so a parameter change does not
    restart the filter. Processing ``x`` in one call or in consecutive pieces gives identical samples.

    >>> f = SOSFilter(rbj_biquad("lp", freq_hz=2000, sr=48000))
    >>> y = f.process(np.ones((2, 64)))
    >>> y.shape
    (2, 64)
    """

    def __init__(self, sos: np.ndarray, *, loop=None):
        self.sos = np.atleast_2d(np.asarray(sos, dtype=np.float64))
        self._zi: np.ndarray | None = None
        self.loop = loop  # a compiled :func:`sos_samples`, or None for scipy's sosfilt

    def set_sos(self, sos: np.ndarray) -> None:
        sos = np.atleast_2d(np.asarray(sos, dtype=np.float64))
        if self._zi is not None and sos.shape[0] != self._zi.shape[0]:
            self._zi = None  # a different cascade length has no meaningful old state
        self.sos = sos

    def reset(self) -> None:
        self._zi = None

    def state(self, channels: int) -> np.ndarray:
        """The carried state in ``sosfilt``'s layout ``(sections, channels, 2)``, created at rest if absent.

        A per-sample loop that runs these sections itself updates it in place (see
        :func:`~pytest_overdub.dsp.delay.feedback_delay_samples`).
        """
        shape = (self.sos.shape[0], channels, 2)
        if self._zi is None or self._zi.shape != shape:
            self._zi = np.zeros(shape)
        elif not self._zi.flags.c_contiguous:
            self._zi = np.ascontiguousarray(self._zi)
        return self._zi

    def process(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if self.loop is not None and x.ndim in (1, 2):
            rows = x[None, :] if x.ndim == 1 else x  # a mono signal is one channel of state
            y = np.empty(rows.shape)
            self.loop(self.sos, rows, self.state(rows.shape[0]), y)
            return y[0] if x.ndim == 1 else y
        from scipy.signal import sosfilt  # the uncompiled path (kernels, tests); house devices pass loop=

        if self._zi is None or self._zi.shape[1:-1] != x.shape[:-1]:
            self._zi = np.zeros((self.sos.shape[0],) + x.shape[:-1] + (2,))
        y, self._zi = sosfilt(self.sos, x, axis=-1, zi=self._zi)
        return y


def sos_samples(sos, x, zi, y):  # pragma: no cover - run compiled by numba
    """:class:`SOSFilter`'s cascade sample by sample: ``x`` and ``y`` ``(channels, n)``, state ``zi``
    ``(sections, channels, 2)`` updated in place. The arithmetic of scipy's ``sosfilt`` kernel
    (transposed direct form II, the same products and sums in the same order), so the samples are
    identical, except that a section whose state has decayed below :data:`TINY` is set to rest where
    scipy would carry subnormal numbers on. It saves sosfilt's per-call copies and reshapes. Two channels
    run two sections at a time (four recursions interleaved, each sample through the first section and
    straight on through the second; a recursion is bound by its latency, so four in
    flight do about twice the work of two in the same time), then a last odd section alone; a single
    section keeps its state in registers (in memory it costs a store-to-load round trip per sample: 7.0-7.7
    against 5.4-5.8 ns a sample). Each section's arithmetic on each sample is unchanged (a section's
    output is the same whether it is stored between sections or not). This module never imports numba: a
    device module compiles it and passes it as ``SOSFilter(..., loop=)``."""
    n_ch, n = x.shape
    if n_ch == 2:  # stereo: two sections at a time, both channels' recursions side by side, state in registers
        for s in range(0, sos.shape[0] - 1, 2):  # sections s (state l, r) and s + 1 (state p, q)
            src = x if s == 0 else y
            b0, b1, b2, a1, a2 = sos[s, 0], sos[s, 1], sos[s, 2], sos[s, 4], sos[s, 5]
            c0, c1, c2, d1, d2 = sos[s + 1, 0], sos[s + 1, 1], sos[s + 1, 2], sos[s + 1, 4], sos[s + 1, 5]
            l0, l1, r0, r1 = zi[s, 0, 0], zi[s, 0, 1], zi[s, 1, 0], zi[s, 1, 1]
            p0, p1, q0, q1 = zi[s + 1, 0, 0], zi[s + 1, 0, 1], zi[s + 1, 1, 0], zi[s + 1, 1, 1]
            for i in range(n):
                u = src[0, i]
                v = b0 * u + l0
                l0 = b1 * u - a1 * v + l1
                l1 = b2 * u - a2 * v
                if -TINY < l0 < TINY and -TINY < l1 < TINY:  # a decay in silence ends at rest (TINY)
                    l0 = 0.0
                    l1 = 0.0
                w = c0 * v + p0  # section s's output goes straight on through section s + 1
                p0 = c1 * v - d1 * w + p1
                p1 = c2 * v - d2 * w
                if -TINY < p0 < TINY and -TINY < p1 < TINY:
                    p0 = 0.0
                    p1 = 0.0
                y[0, i] = w
                u = src[1, i]
                v = b0 * u + r0
                r0 = b1 * u - a1 * v + r1
                r1 = b2 * u - a2 * v
                if -TINY < r0 < TINY and -TINY < r1 < TINY:
                    r0 = 0.0
                    r1 = 0.0
                w = c0 * v + q0
                q0 = c1 * v - d1 * w + q1
                q1 = c2 * v - d2 * w
                if -TINY < q0 < TINY and -TINY < q1 < TINY:
                    q0 = 0.0
                    q1 = 0.0
                y[1, i] = w
            zi[s, 0, 0], zi[s, 0, 1], zi[s, 1, 0], zi[s, 1, 1] = l0, l1, r0, r1
            zi[s + 1, 0, 0], zi[s + 1, 0, 1], zi[s + 1, 1, 0], zi[s + 1, 1, 1] = p0, p1, q0, q1
        if sos.shape[0] % 2:  # the last section of an odd count, alone
            s = sos.shape[0] - 1
            src = x if s == 0 else y
            b0, b1, b2, a1, a2 = sos[s, 0], sos[s, 1], sos[s, 2], sos[s, 4], sos[s, 5]
            l0, l1, r0, r1 = zi[s, 0, 0], zi[s, 0, 1], zi[s, 1, 0], zi[s, 1, 1]
            for i in range(n):
                u = src[0, i]
                v = b0 * u + l0
                l0 = b1 * u - a1 * v + l1
                l1 = b2 * u - a2 * v
                if -TINY < l0 < TINY and -TINY < l1 < TINY:
                    l0 = 0.0
                    l1 = 0.0
                y[0, i] = v
                u = src[1, i]
                v = b0 * u + r0
                r0 = b1 * u - a1 * v + r1
                r1 = b2 * u - a2 * v
                if -TINY < r0 < TINY and -TINY < r1 < TINY:
                    r0 = 0.0
                    r1 = 0.0
                y[1, i] = v
            zi[s, 0, 0], zi[s, 0, 1], zi[s, 1, 0], zi[s, 1, 1] = l0, l1, r0, r1
        return
    if sos.shape[0] == 1:  # one section, other channel counts: a channel at a time, the state in registers
        b0, b1, b2, a1, a2 = sos[0, 0], sos[0, 1], sos[0, 2], sos[0, 4], sos[0, 5]
        for c in range(n_ch):
            z0, z1 = zi[0, c, 0], zi[0, c, 1]
            for i in range(n):
                u = x[c, i]
                v = b0 * u + z0
                z0 = b1 * u - a1 * v + z1
                z1 = b2 * u - a2 * v
                if -TINY < z0 < TINY and -TINY < z1 < TINY:
                    z0 = 0.0
                    z1 = 0.0
                y[c, i] = v
            zi[0, c, 0], zi[0, c, 1] = z0, z1
        return
    for c in range(n_ch):  # sample by sample, the sections' recursions overlapping
        for i in range(n):
            u = x[c, i]
            for s in range(sos.shape[0]):
                v = sos[s, 0] * u + zi[s, c, 0]
                zi[s, c, 0] = sos[s, 1] * u - sos[s, 4] * v + zi[s, c, 1]
                zi[s, c, 1] = sos[s, 2] * u - sos[s, 5] * v
                if -TINY < zi[s, c, 0] < TINY and -TINY < zi[s, c, 1] < TINY:
                    zi[s, c, 0] = 0.0
                    zi[s, c, 1] = 0.0
                u = v
            y[c, i] = u


class Biquad(SOSFilter):
    """One RBJ biquad with state; ``set(...)`` recomputes coefficients and keeps the state.

    >>> bq = Biquad("highshelf", freq_hz=4000, sr=48000, gain_db=-6.0)
    >>> bq.process(np.zeros(8)).tolist() == [0.0] * 8
    True
    """

    def __init__(self, kind: str, *, freq_hz: float, sr: float, q: float = SQRT1_2, gain_db: float = 0.0):
        self.kind = kind
        super().__init__(rbj_biquad(kind, freq_hz=freq_hz, sr=sr, q=q, gain_db=gain_db))

    def set(self, *, freq_hz: float, sr: float, q: float = SQRT1_2, gain_db: float = 0.0) -> None:
        self.set_sos(rbj_biquad(self.kind, freq_hz=freq_hz, sr=sr, q=q, gain_db=gain_db))


class OnePole(SOSFilter):
    """A first-order low/high-pass with state (see :func:`one_pole`).

    >>> lp = OnePole("lp", freq_hz=100, sr=48000)
    >>> float(lp.process(np.ones(48000))[-1]) > 0.999
    True
    """

    def __init__(self, kind: str, *, freq_hz: float, sr: float):
        self.kind = kind
        super().__init__(one_pole(kind, freq_hz=freq_hz, sr=sr))

    def set(self, *, freq_hz: float, sr: float) -> None:
        self.set_sos(one_pole(self.kind, freq_hz=freq_hz, sr=sr))


class Crossover:
    """A 4th-order Linkwitz-Riley two-way split with state: ``lo, hi = xo.split(x)``.

    ``lo + hi`` is ``x`` through an allpass (flat magnitude), so bands can be processed apart and summed.
    :meth:`allpass` runs the same phase response alone (for a path that is not split but must stay
    aligned with one that is).

    >>> xo = Crossover(freq_hz=120, sr=48000)
    >>> lo, hi = xo.split(np.zeros((2, 16)))

    ``loop``: a compiled :func:`sos_samples` for the three filters (see :class:`SOSFilter`).
    """

    def __init__(self, *, freq_hz: float, sr: float, loop=None):
        lo, hi = linkwitz_riley4(freq_hz=freq_hz, sr=sr)
        self._lo, self._hi = SOSFilter(lo, loop=loop), SOSFilter(hi, loop=loop)
        self._ap = SOSFilter(_lr4_allpass(freq_hz=freq_hz, sr=sr), loop=loop)

    def set_freq(self, *, freq_hz: float, sr: float) -> None:
        lo, hi = linkwitz_riley4(freq_hz=freq_hz, sr=sr)
        self._lo.set_sos(lo)
        self._hi.set_sos(hi)
        self._ap.set_sos(_lr4_allpass(freq_hz=freq_hz, sr=sr))

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._lo.process(x), self._hi.process(x)

    def low(self, x: np.ndarray) -> np.ndarray:
        """The low band alone (advances only the low-band state)."""
        return self._lo.process(x)

    def high(self, x: np.ndarray) -> np.ndarray:
        """The high band alone (advances only the high-band state)."""
        return self._hi.process(x)

    def allpass(self, x: np.ndarray) -> np.ndarray:
        """``x`` through the crossover's summed response (equal to lo + hi, in one cheap section)."""
        return self._ap.process(x)


def _lr4_allpass(*, freq_hz: float, sr: float) -> np.ndarray:
    """lo + hi of an LR4 pair equals the 2nd-order allpass with the Butterworth poles (Q = 1/√2).

    Proof sketch: with D = s² + √2 s + 1, LP² + HP² = (1 + s⁴)/D² = (s² - √2 s + 1)(s² + √2 s + 1)/D²
    = (s² - √2 s + 1)/D, which is the allpass; the bilinear transform preserves the identity.
    """
    w0 = _omega(freq_hz, sr)
    alpha = math.sin(w0) / (2.0 * SQRT1_2)
    cw = math.cos(w0)
    a0 = 1 + alpha
    return np.array([[(1 - alpha) / a0, -2 * cw / a0, 1.0, 1.0, -2 * cw / a0, (1 - alpha) / a0]])


def butter2(kind: str, *, freq_hz: float, sr: float) -> np.ndarray:
    """A 2nd-order Butterworth low- or high-pass as one section ``[b0, b1, b2, 1, a1, a2]``.

    The analog prototype ``1 / (s² + √2 s + 1)`` through the bilinear transform with the cutoff pre-warped
    (``K = tan(π f / sr)``), so the gain is exactly 1/√2 (-3.01 dB) at ``freq_hz``: the design of
    ``scipy.signal.butter(2, freq_hz, btype, fs=sr, output="sos")``, equal to its coefficients to rounding.
    Unlike :func:`rbj_biquad` the frequency is not clamped: it must lie strictly between 0 and sr/2.

    >>> s = butter2("lp", freq_hz=1000, sr=48000)
    >>> round(float(s[:3].sum() / s[3:].sum()), 12)  # unit gain at DC
    1.0
    """
    if kind not in ("lp", "hp"):
        raise DeviceError(f"Butterworth kind {kind!r} is unknown; allowed: lp, hp")
    if not 0.0 < freq_hz < sr / 2.0:
        raise DeviceError(f"Butterworth cutoff {freq_hz!r} Hz must lie strictly between 0 and {sr / 2.0:g} Hz")
    k = math.tan(math.pi * float(freq_hz) / float(sr))
    kk = k * k
    a0 = 1.0 + math.sqrt(2.0) * k + kk
    g = (kk if kind == "lp" else 1.0) / a0
    b1 = 2.0 * g if kind == "lp" else -2.0 * g
    return np.array([g, b1, g, 1.0, 2.0 * (kk - 1.0) / a0, (1.0 - math.sqrt(2.0) * k + kk) / a0])


def lfilter_samples(b, a, x, z, y):  # pragma: no cover - run compiled by numba
    """``scipy.signal.lfilter``'s direct form II transposed, row by row: ``x`` and ``y`` ``(rows, n)``, the
    state ``z`` ``(rows, m - 1)`` updated in place, ``b`` and ``a`` of one length ``m >= 2`` with
    ``a[0] == 1`` (see :func:`~pytest_overdub.dsp.compiled.lfilter`, which pads and normalises). The
    products and sums are lfilter's, in its order, so the samples are identical:
    ``y = z0 + b0·x``; ``z_k = (z_{k+1} + x·b_{k+1}) - y·a_{k+1}``; the last ``z = x·b_m - y·a_m``."""
    rows, n = x.shape
    m = b.shape[0]
    for r in range(rows):
        for i in range(n):
            u = x[r, i]
            v = z[r, 0] + b[0] * u
            for k in range(m - 2):
                z[r, k] = z[r, k + 1] + u * b[k + 1] - v * a[k + 1]
            z[r, m - 2] = u * b[m - 1] - v * a[m - 1]
            y[r, i] = v
