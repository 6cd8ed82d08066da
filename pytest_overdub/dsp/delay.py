"""Delay lines with carried state: integer delay, feedback comb, Schroeder allpass, a modulated feedback
delay with filters in its loop, and a feedback delay network.

How these stay exact without a per-sample loop:

* A recursion ``v[n] = x[n] + g·v[n-D]`` with constant integer D is D independent first-order recursions
  (one per phase n mod D): the signal is folded into rows of D frames and :func:`scipy.signal.lfilter`
  runs down the columns. Same arithmetic as a sample loop, so it is exact.
* A loop whose delay is modulated or contains a filter is processed in chunks no longer than the
  shortest delay: every sample a chunk reads was written by an earlier chunk, so the chunked result
  equals the sample-by-sample one.

* The same recursions are also written as plain per-sample loops (``comb_samples``,
  ``feedback_delay_samples`` and its stereo form, ``fdn_samples``) in the subset of Python that numba
  compiles. This module never imports numba (the kernel sandbox imports it); a device module compiles a
  loop with ``numba.njit(cache=True)`` and hands it to a class as ``loop=``, which then runs it instead of the
  vectorised path on the same carried state. Both paths compute the same recursion; they differ only in
  rounding where a sum is ordered differently (the FDN's Hadamard product), ~1e-16 relative.

Every class keeps its history between ``process`` calls, so one call or many consecutive calls give the
same samples. Audio is shaped ``(channels, n)``; delays are in frames (fractional where stated; linear
interpolation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DeviceError
from .filters import SOSFilter

# The public API (and what the kernel stdlib re-exports). The ``*_samples`` loops are left out: they are
# plain Python until a device module compiles them with numba.
__all__ = ["IntegerDelay", "FeedbackComb", "SchroederAllpass", "read_fractional", "FeedbackDelay", "hadamard",
           "FeedbackDelayNetwork"]


def _scratch(owner, rows: int, cols: int) -> np.ndarray:
    """A ``(rows, cols)`` view of a work array kept on ``owner`` between calls (grown when too small), so a
    compiled loop's line buffer is not a fresh allocation (page faults) on every call. Not zeroed."""
    work = getattr(owner, "_work", None)
    if work is None or work.shape[0] != rows or work.shape[1] < cols:
        work = owner._work = np.empty((rows, cols))
    return work[:, :cols]


def _check_delay(frames: float, *, least: float = 1.0) -> None:
    if not (math.isfinite(frames) and frames >= least):
        raise DeviceError(f"delay of {frames!r} frames is not allowed; it must be >= {least:g} frames")


class IntegerDelay:
    """A pure delay of ``frames`` samples (``frames`` may change between calls).

    >>> d = IntegerDelay(3)
    >>> d.process(np.arange(5.0)[None]).tolist()
    [[0.0, 0.0, 0.0, 0.0, 1.0]]
    """

    def __init__(self, frames: int):
        self.frames = int(frames)
        self._hist: np.ndarray | None = None

    def process(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        d = self.frames
        if d <= 0:
            return x.copy()
        buf = np.concatenate([self.history(d, channels=x.shape[0]), x], axis=1)
        self.keep(buf[:, buf.shape[1] - d:])
        return buf[:, : x.shape[1]]

    def history(self, frames: int, *, channels: int = 1) -> np.ndarray:
        """The last ``frames`` frames the line holds, ``(channels, frames)``: zeros before anything was kept
        (or where the line held fewer, at the front). For a caller that writes its input after them."""
        if self._hist is None or self._hist.shape[0] != channels:
            self._hist = np.zeros((channels, frames))
        if self._hist.shape[1] < frames:
            self._hist = np.concatenate([np.zeros((channels, frames - self._hist.shape[1])), self._hist], 1)
        return self._hist[:, self._hist.shape[1] - frames:]

    def keep(self, tail: np.ndarray) -> None:
        """Keep ``tail`` (a copy) as the line's history: the last frames of what it has been fed."""
        self._hist = np.array(tail, dtype=np.float64)


class FeedbackComb:
    """Feedback comb ``y[n] = x[n] + g·y[n-D]`` (integer D), exact and vectorised.

    >>> c = FeedbackComb(delay_frames=2, gain=0.5)
    >>> c.process(np.array([[1.0, 0, 0, 0, 0]])).tolist()
    [[1.0, 0.0, 0.5, 0.0, 0.25]]
    """

    def __init__(self, *, delay_frames: int, gain: float, loop=None):
        _check_delay(delay_frames)
        self.delay_frames = int(delay_frames)
        self.gain = float(gain)
        self.loop = loop  # a compiled comb_samples, or None for the vectorised path
        self._hist: np.ndarray | None = None  # the last D outputs

    def _run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(v, v delayed by D) for this call; updates the history."""
        x = np.asarray(x, dtype=np.float64)
        c, n = x.shape
        d, g = self.delay_frames, self.gain
        if self._hist is None or self._hist.shape != (c, d):
            self._hist = np.zeros((c, d))
        k = -(-n // d)
        folded = np.zeros((c, k * d))
        folded[:, :n] = x
        # rows of D frames, transposed so each phase's recursion runs over contiguous memory
        cols = np.ascontiguousarray(folded.reshape(c, k, d).transpose(0, 2, 1))
        from scipy.signal import lfilter  # the uncompiled path: house devices pass loop=

        zi = (g * self._hist)[:, :, None]
        v, _ = lfilter([1.0], [1.0, -g], cols, axis=-1, zi=zi)
        v = v.transpose(0, 2, 1).reshape(c, k * d)[:, :n]
        both = np.concatenate([self._hist, v], axis=1)
        self._hist = both[:, n:].copy()
        return v, both[:, :n]

    def process(self, x: np.ndarray) -> np.ndarray:
        if self.loop is not None:
            return self._loop(x, late_w=0.0, now_w=1.0)
        return self._run(x)[0]

    def _loop(self, x: np.ndarray, *, late_w: float, now_w: float) -> np.ndarray:
        """``late_w·v[n - D] + now_w·v[n]`` by the compiled loop; updates the history."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        c, n = x.shape
        d = self.delay_frames
        buf = _scratch(self, c, d + n)
        buf[:, :d] = 0.0 if self._hist is None or self._hist.shape != (c, d) else self._hist
        y = np.empty((c, n))
        self.loop(buf, x, self.gain, late_w, now_w, y)
        self._hist = buf[:, n:].copy()
        return y


class SchroederAllpass(FeedbackComb):
    """Schroeder allpass ``H(z) = (z^-D - g) / (1 - g z^-D)``: flat magnitude, smeared phase (diffusion).

    >>> ap = SchroederAllpass(delay_frames=3, gain=0.5)
    >>> y = ap.process(np.eye(1, 4096))
    >>> round(float((y ** 2).sum()), 6)
    1.0
    """

    def process(self, x: np.ndarray) -> np.ndarray:
        if self.loop is not None:
            return self._loop(x, late_w=1.0, now_w=-self.gain)
        v, v_late = self._run(x)
        return v_late - self.gain * v


def comb_samples(buf, x, g, late_w, now_w, y):  # pragma: no cover - run compiled by numba
    """Per-sample comb: ``v[i] = buf[c, D + i] = x[c, i] + g·buf[c, i]`` where ``buf`` is
    ``(channels, D + n)`` holding the last D values of v in ``buf[:, :D]`` (the :class:`FeedbackComb`
    recursion, in place), and ``y[c, i] = late_w·v[i - D] + now_w·v[i]`` (comb: 0, 1; Schroeder
    allpass: 1, -g). Chunks of D frames read only what earlier chunks wrote, so the loop inside one
    vectorises."""
    n_ch, n = x.shape
    d = buf.shape[1] - n
    for c in range(n_ch):
        for s in range(0, n, d):
            m = min(d, n - s)
            late = buf[c, s:s + m]
            now = buf[c, d + s:d + s + m]
            src = x[c, s:s + m]
            dst = y[c, s:s + m]
            for i in range(m):
                v = src[i] + g * late[i]
                now[i] = v
                dst[i] = late_w * late[i] + now_w * v


def read_fractional(buf: np.ndarray, base: np.ndarray, delay_frames: np.ndarray) -> np.ndarray:
    """Read ``buf`` (channels, m) at positions ``base - delay_frames`` with linear interpolation.

    ``base`` holds integer positions (frames, one per output sample); ``delay_frames`` is broadcast to
    ``(channels, len(base))``. The fraction is computed from the delay alone, so the same delay gives the
    same weights wherever the read happens (exact across segmentations).

    >>> read_fractional(np.array([[0.0, 1.0, 2.0, 3.0]]), np.array([3]), np.array([[1.5]])).tolist()
    [[1.5]]
    """
    c, m = buf.shape
    d = np.broadcast_to(delay_frames, (c, base.shape[0]))
    whole = np.ceil(d)
    frac = whole - d
    idx = base[None, :] - whole.astype(np.intp) + (np.arange(c) * m)[:, None]
    flat = buf.ravel()
    a = flat[idx]
    return a + frac * (flat[idx + 1] - a)


class FeedbackDelay:
    """A (modulated) feedback delay with a filter in its loop.

    Per channel: ``tap[n] = w[n - d[n]]`` (linear interpolation), ``wet = F(tap)`` with the loop filter
    F (an :class:`SOSFilter`, or none), and the line is written ``w[n] = x[n] + feedback·wet'[n]`` where
    ``wet'`` is ``wet`` with its channels swapped when ``cross`` (ping-pong) and as is otherwise.
    :meth:`process` returns ``wet``: the first repeat arrives ``d`` frames after the input.

    >>> fd = FeedbackDelay(channels=1)
    >>> fd.process(np.eye(1, 8), delay_frames=3.0, feedback=0.5).tolist()
    [[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5, 0.0]]
    """

    def __init__(self, *, channels: int = 2, loop_filter: SOSFilter | None = None, cross: bool = False,
                 loop=None):
        self.channels = channels
        self.loop_filter = loop_filter
        self.cross = cross
        self.loop = loop  # a compiled feedback_delay_samples, or None for the chunked vectorised path
        self._hist = np.zeros((channels, 2))

    def _grow(self, need: int) -> None:
        have = self._hist.shape[1]
        if need > have:
            self._hist = np.concatenate([np.zeros((self.channels, need - have)), self._hist], axis=1)

    def process(self, x: np.ndarray, *, delay_frames, feedback: float) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        c, n = x.shape
        if c != self.channels:
            raise DeviceError(f"FeedbackDelay built for {self.channels} channels got {c}")
        d = np.broadcast_to(np.asarray(delay_frames, dtype=np.float64), (c, n))
        if n == 0:
            return np.zeros((c, 0))
        d_min, d_max = float(d.min()), float(d.max())
        _check_delay(d_min, least=2.0)
        self._grow(int(math.ceil(d_max)) + 2)
        h = self._hist.shape[1]
        wet = np.empty((c, n))
        if self.loop is not None:  # every frame past h is written before it is read: no zeroing
            buf = _scratch(self, c, h + n)
            buf[:, :h] = self._hist
            self._loop(buf, np.ascontiguousarray(x), delay_frames, float(feedback), wet)
            self._hist = buf[:, n:].copy()
            return wet
        buf = np.zeros((c, h + n))
        buf[:, :h] = self._hist
        base = h + np.arange(n)
        step = n if feedback == 0.0 else max(1, int(d_min) - 1)
        if feedback == 0.0:
            buf[:, h:] = x
        for s in range(0, n, step):
            e = min(n, s + step)
            tap = read_fractional(buf, base[s:e], d[:, s:e])
            out = self.loop_filter.process(tap) if self.loop_filter is not None else tap
            wet[:, s:e] = out
            if feedback != 0.0:
                back = out[::-1] if self.cross else out
                buf[:, h + s:h + e] = x[:, s:e] + feedback * back
        self._hist = buf[:, n:].copy()
        return wet

    def process_swept(self, x: np.ndarray, *, sweep: "SineSweep", feedback: float, dry: np.ndarray,
                      wet_gain: float, dry_gain: float, positions, loop, mono_in: bool = False) -> np.ndarray:
        """:meth:`process` with the delay a swept sine, mixed with ``dry`` in the same pass: returns
        ``wet·wet_gain + dry_gain·dry`` (``dry`` shaped like ``x``), where ``wet`` is what :meth:`process`
        returns for the delays ``max((s·scale + offset)·gain, 2)`` of :class:`SineSweep` ``sweep``.
        ``positions`` is a compiled :func:`swept_positions_samples` (the delays as read positions, in a
        loop that vectorises), ``loop`` a compiled :func:`stereo_swept_samples` (two channels; no loop
        filter, or one of two sections). The samples are those of :meth:`process` given
        the same delays, then the numpy mix, without the delay and wet arrays in between. With ``mono_in``
        the line is fed ``(x[0] + x[1])·√½`` on the left and nothing on the right (a ping-pong's input:
        :meth:`process` given ``[(x[0] + x[1])·√½, 0]``). ``x`` and ``dry`` are read row by row where they
        lie (a block cut from a longer array is not copied)."""
        x = np.asarray(x, dtype=np.float64)
        dry = np.asarray(dry, dtype=np.float64)
        c, n = x.shape
        if c != self.channels or c != 2 or dry.shape != x.shape:
            raise DeviceError(f"process_swept takes two channels and a dry of their shape: a FeedbackDelay "
                              f"built for {self.channels} got x {x.shape}, dry {dry.shape}")
        if n == 0:
            return np.zeros((c, 0))
        d_max = sweep.max_frames()
        _check_delay(d_max, least=2.0)
        self._grow(int(math.ceil(d_max)) + 2)
        h = self._hist.shape[1]
        buf = _scratch(self, c, h + n)
        buf[:, :h] = self._hist
        if self.loop_filter is None:
            sos, zi = np.zeros((0, 6)), np.zeros((0, c, 2))
        else:
            sos, zi = self.loop_filter.sos, self.loop_filter.state(c)
        out = np.empty((c, n))
        rows = sweep.sin_at.shape[0]
        frac_at, back_at = np.empty((rows, n)), np.empty((rows, n), np.int64)
        positions(sweep.sin_at, sweep.cos_at, sweep.cos_b, sweep.sin_b, sweep.first, sweep.scale, sweep.offset,
                  sweep.gain, frac_at, back_at)
        x0, x1, dry0, dry1 = (np.ascontiguousarray(row) for row in (x[0], x[1], dry[0], dry[1]))
        loop(buf, x0, x1, dry0, dry1, bool(mono_in), frac_at, back_at, float(feedback), self.cross, sos, zi,
             float(wet_gain), float(dry_gain), out)
        self._hist = buf[:, n:].copy()
        return out

    def _loop(self, buf: np.ndarray, x: np.ndarray, delay_frames, feedback: float, wet: np.ndarray) -> None:
        c, n = x.shape
        d = np.asarray(delay_frames, dtype=np.float64)
        d = np.ascontiguousarray(d.reshape((1,) * (2 - d.ndim) + d.shape))  # (1 or c, 1 or n)
        if self.loop_filter is None:
            sos, zi = np.zeros((0, 6)), np.zeros((0, c, 2))
        else:
            sos, zi = self.loop_filter.sos, self.loop_filter.state(c)
        self.loop(buf, x, d, feedback, self.cross, sos, zi, wet)


def feedback_delay_samples(buf, x, d, feedback, cross, sos, zi, wet):  # pragma: no cover - compiled
    """Per-sample :class:`FeedbackDelay`: ``buf`` ``(channels, h + n)`` holds the line's history in
    ``buf[:, :h]`` and receives the writes; ``d`` is ``(1 or channels, 1 or n)`` (broadcast); the loop
    filter's sections ``sos`` run in scipy's ``sosfilt`` form (transposed direct form II, state ``zi``
    ``(sections, channels, 2)`` updated in place); the taps go to ``wet`` ``(channels, n)``."""
    n_ch, n = x.shape
    h = buf.shape[1] - n
    row = 1 if d.shape[0] > 1 else 0
    col = 1 if d.shape[1] > 1 else 0
    for i in range(n):
        p = h + i
        for c in range(n_ch):
            di = d[c * row, i * col]
            whole = math.ceil(di)
            frac = whole - di
            q = p - int(whole)
            a = buf[c, q]
            y = a + frac * (buf[c, q + 1] - a)
            for s in range(sos.shape[0]):
                u = y
                y = sos[s, 0] * u + zi[s, c, 0]
                zi[s, c, 0] = sos[s, 1] * u - sos[s, 4] * y + zi[s, c, 1]
                zi[s, c, 1] = sos[s, 2] * u - sos[s, 5] * y
            wet[c, i] = y
        for c in range(n_ch):
            if feedback == 0.0:
                buf[c, p] = x[c, i]
            else:
                buf[c, p] = x[c, i] + feedback * wet[n_ch - 1 - c if cross else c, i]


def stereo_feedback_delay_samples(buf, x, d, feedback, cross, sos, zi, wet):  # pragma: no cover - compiled
    """:func:`feedback_delay_samples` for exactly two channels and two loop-filter sections (the house
    delay): the same arithmetic in the same order, with the filter state in local variables (registers)
    instead of memory, about twice as fast. Other shapes raise ValueError."""
    if x.shape[0] != 2 or sos.shape[0] != 2:
        raise ValueError("stereo_feedback_delay_samples needs 2 channels and 2 sections")
    h = buf.shape[1] - x.shape[1]
    row = 1 if d.shape[0] > 1 else 0
    col = 1 if d.shape[1] > 1 else 0
    b00, b01, b02, a01, a02 = sos[0, 0], sos[0, 1], sos[0, 2], sos[0, 4], sos[0, 5]
    b10, b11, b12, a11, a12 = sos[1, 0], sos[1, 1], sos[1, 2], sos[1, 4], sos[1, 5]
    l00, l01, l10, l11 = zi[0, 0, 0], zi[0, 0, 1], zi[1, 0, 0], zi[1, 0, 1]
    r00, r01, r10, r11 = zi[0, 1, 0], zi[0, 1, 1], zi[1, 1, 0], zi[1, 1, 1]
    for i in range(x.shape[1]):
        p = h + i
        di = d[0, i * col]
        whole = math.ceil(di)
        frac = whole - di
        q = p - int(whole)
        a = buf[0, q]
        u = a + frac * (buf[0, q + 1] - a)
        y = b00 * u + l00
        l00 = b01 * u - a01 * y + l01
        l01 = b02 * u - a02 * y
        u = y
        y = b10 * u + l10
        l10 = b11 * u - a11 * y + l11
        l11 = b12 * u - a12 * y
        left = y
        di = d[row, i * col]
        whole = math.ceil(di)
        frac = whole - di
        q = p - int(whole)
        a = buf[1, q]
        u = a + frac * (buf[1, q + 1] - a)
        y = b00 * u + r00
        r00 = b01 * u - a01 * y + r01
        r01 = b02 * u - a02 * y
        u = y
        y = b10 * u + r10
        r10 = b11 * u - a11 * y + r11
        r11 = b12 * u - a12 * y
        right = y
        wet[0, i] = left
        wet[1, i] = right
        if feedback == 0.0:
            buf[0, p] = x[0, i]
            buf[1, p] = x[1, i]
        elif cross:
            buf[0, p] = x[0, i] + feedback * right
            buf[1, p] = x[1, i] + feedback * left
        else:
            buf[0, p] = x[0, i] + feedback * left
            buf[1, p] = x[1, i] + feedback * right
    zi[0, 0, 0], zi[0, 0, 1], zi[1, 0, 0], zi[1, 0, 1] = l00, l01, l10, l11
    zi[0, 1, 0], zi[0, 1, 1], zi[1, 1, 0], zi[1, 1, 1] = r00, r01, r10, r11


@dataclass(frozen=True)
class SineSweep:
    """Delays that follow a sine: ``d[r, i] = max((s[r, i]·scale + offset)·gain, 2)`` frames, with the sine
    by angle addition ``s[r, i] = sin_at[r, j]·cos_b[k] + cos_at[r, j]·sin_b[k]``, ``(j, k) = divmod(first +
    i, len(cos_b))``: ``sin_at``/``cos_at`` ``(rows, grid points)`` hold sin and cos of each row's phase at
    the grid points, ``cos_b``/``sin_b`` those of the steps within a grid interval. One row serves every
    channel, or one row per channel. See :meth:`FeedbackDelay.process_swept`."""

    sin_at: np.ndarray
    cos_at: np.ndarray
    cos_b: np.ndarray
    sin_b: np.ndarray
    first: int
    scale: float
    offset: float
    gain: float

    def max_frames(self) -> float:
        """A bound on the longest delay (|s| <= 1 up to rounding, which the margin covers)."""
        return max((abs(self.scale) * (1.0 + 1e-9) + abs(self.offset)) * abs(self.gain), 2.0)


#: A ping-pong's mono input: ``(left + right)·√½``.
MONO_GAIN = math.sqrt(0.5)


def swept_positions_samples(sin_at, cos_at, cos_b, sin_b, first, scale, offset, gain, frac_at,
                            back_at):  # pragma: no cover - compiled by the device modules
    """The read positions of a :class:`SineSweep`'s delays for the swept loops: ``back_at[r, i] =
    ceil(d[r, i])`` frames back and ``frac_at[r, i] = ceil(d) - d``, the weight of the frame after that
    (linear interpolation), with ``d = max((s·scale + offset)·gain, 2)`` and ``s`` by angle addition,
    products and sums in numpy's order. A grid interval at a time, each a loop over plain views that
    vectorises (2.3 against 12 ns a frame for two rows as one loop with a running grid index)."""
    size = cos_b.shape[0]
    n = frac_at.shape[1]
    for r in range(frac_at.shape[0]):
        fr = frac_at[r]
        bk = back_at[r]
        i = 0
        j = first // size
        k0 = first - j * size
        while i < n:
            m = min(size - k0, n - i)
            s = sin_at[r, j]
            c = cos_at[r, j]
            cb = cos_b[k0:k0 + m]
            sb = sin_b[k0:k0 + m]
            f = fr[i:i + m]
            b = bk[i:i + m]
            for t in range(m):
                di = (s * cb[t] + c * sb[t]) * scale
                di = (di + offset) * gain
                if di < 2.0:
                    di = 2.0
                whole = math.ceil(di)
                f[t] = whole - di
                b[t] = whole
            i += m
            j += 1
            k0 = 0


def stereo_swept_samples(buf, x0, x1, dry0, dry1, mono_in, frac_at, back_at, feedback, cross, sos, zi,
                         wet_gain, dry_gain, out):  # pragma: no cover - compiled by the device modules
    """The swept line for two channels: the reads at the positions of :func:`swept_positions_samples`
    (one row for both channels, or one per channel), interpolated; the loop filter's two sections, if
    ``sos`` has them (the house delay; none for the chorus), in scipy's transposed form with the state in
    registers; the feedback write of :func:`feedback_delay_samples`; and ``out[c, i] = wet·wet_gain +
    dry_gain·dry[c, i]`` written instead of the wet tap. The channels come as rows ``x0, x1`` and
    ``dry0, dry1``; with ``mono_in`` the line's input is ``(x0 + x1)·√½`` on the left and 0 on the
    right. Another number of sections raises ValueError."""
    if sos.shape[0] != 0 and sos.shape[0] != 2:
        raise ValueError("stereo_swept_samples needs 2 channels and no loop filter or 2 sections")
    filtered = sos.shape[0] == 2
    n = x0.shape[0]
    h = buf.shape[1] - n
    right_row = 1 if frac_at.shape[0] > 1 else 0
    b00 = b01 = b02 = a01 = a02 = b10 = b11 = b12 = a11 = a12 = 0.0
    l00 = l01 = l10 = l11 = r00 = r01 = r10 = r11 = 0.0
    if filtered:
        b00, b01, b02, a01, a02 = sos[0, 0], sos[0, 1], sos[0, 2], sos[0, 4], sos[0, 5]
        b10, b11, b12, a11, a12 = sos[1, 0], sos[1, 1], sos[1, 2], sos[1, 4], sos[1, 5]
        l00, l01, l10, l11 = zi[0, 0, 0], zi[0, 0, 1], zi[1, 0, 0], zi[1, 0, 1]
        r00, r01, r10, r11 = zi[0, 1, 0], zi[0, 1, 1], zi[1, 1, 0], zi[1, 1, 1]
    for i in range(n):
        p = h + i
        q = p - back_at[0, i]
        a = buf[0, q]
        left = a + frac_at[0, i] * (buf[0, q + 1] - a)
        q = p - back_at[right_row, i]
        a = buf[1, q]
        right = a + frac_at[right_row, i] * (buf[1, q + 1] - a)
        if filtered:
            u = left
            y = b00 * u + l00
            l00 = b01 * u - a01 * y + l01
            l01 = b02 * u - a02 * y
            u = y
            y = b10 * u + l10
            l10 = b11 * u - a11 * y + l11
            l11 = b12 * u - a12 * y
            left = y
            u = right
            y = b00 * u + r00
            r00 = b01 * u - a01 * y + r01
            r01 = b02 * u - a02 * y
            u = y
            y = b10 * u + r10
            r10 = b11 * u - a11 * y + r11
            r11 = b12 * u - a12 * y
            right = y
        out[0, i] = left * wet_gain + dry_gain * dry0[i]
        out[1, i] = right * wet_gain + dry_gain * dry1[i]
        in0 = x0[i]
        in1 = x1[i]
        if mono_in:  # a ping-pong's input, as numpy's (x[0] + x[1])·√½ and a row of zeros
            in0 = (in0 + in1) * MONO_GAIN
            in1 = 0.0
        if feedback == 0.0:
            buf[0, p] = in0
            buf[1, p] = in1
        elif cross:
            buf[0, p] = in0 + feedback * right
            buf[1, p] = in1 + feedback * left
        else:
            buf[0, p] = in0 + feedback * left
            buf[1, p] = in1 + feedback * right
    if filtered:
        zi[0, 0, 0], zi[0, 0, 1], zi[1, 0, 0], zi[1, 0, 1] = l00, l01, l10, l11
        zi[0, 1, 0], zi[0, 1, 1], zi[1, 1, 0], zi[1, 1, 1] = r00, r01, r10, r11


def hadamard(order: int) -> np.ndarray:
    """The orthonormal Sylvester-Hadamard matrix of a power-of-two ``order`` (entries ±1/√order).

    >>> np.allclose(hadamard(4) @ hadamard(4).T, np.eye(4))
    True
    """
    if order < 1 or order & (order - 1):
        raise DeviceError(f"Hadamard order {order!r} must be a power of two")
    h = np.ones((1, 1))
    while h.shape[0] < order:
        h = np.block([[h, h], [h, -h]])
    return h / math.sqrt(order)


class FeedbackDelayNetwork:
    """An N-line feedback delay network (Jot & Chaigne 1991; Stautner & Puckette 1982).

    ``v_i[n] = b_i·in[n] + Σ_j A_ij g_j F(v_j)[n - D_j]`` with A an orthonormal Hadamard matrix, per-line
    gains ``g_j = 10^(-3 D_j / (rt60 · sr))`` (every line loses 60 dB in ``rt60`` seconds: the RT60 at DC),
    F the two-tap averaging low-pass ``(1 - c)·v[n - D] + c·v[n - D - 1]`` with ``c = damp`` in [0, 0.5]
    (unity at DC, ``1 - 2c`` at Nyquist; it reads the line directly, so it needs no state of its own),
    ``b`` the injection vector (default all 1/√N).
    :meth:`process` takes a mono ``(n,)`` input and returns ``out @ F(v)`` (``out``: (K, N), default the
    identity, so ``(N, n)``). Processed in chunks no longer than the shortest line (exact, vectorised per
    chunk) inside outer blocks that bound memory; or, given ``loop`` (a compiled :func:`fdn_samples`), the
    same chunks without Python overhead and the Hadamard product as a fast Walsh-Hadamard transform.

    >>> fdn = FeedbackDelayNetwork(delays_frames=[101, 143, 165, 177], rt60_s=1.0, sr=48000)
    >>> fdn.process(np.eye(1, 512)[0]).shape
    (4, 512)
    """

    block_frames = 1 << 15

    def __init__(self, *, delays_frames, rt60_s: float, sr: float, damp: float = 0.0,
                 inject=None, out=None, loop=None):
        self.sr = float(sr)
        self.loop = loop
        self._hist: np.ndarray | None = None
        self._fade_from: np.ndarray | None = None
        n_lines = len(delays_frames)
        self.inject = (np.full(n_lines, 1.0 / math.sqrt(n_lines)) if inject is None
                       else np.asarray(inject, dtype=np.float64))
        self.out = np.ascontiguousarray(np.eye(n_lines) if out is None else np.asarray(out, dtype=np.float64))
        self.set(delays_frames=delays_frames, rt60_s=rt60_s, damp=damp)

    def set(self, *, delays_frames, rt60_s: float, damp: float = 0.0) -> None:
        d = np.asarray(delays_frames, dtype=np.intp)
        if d.ndim != 1 or d.size < 2 or int(d.min()) < 2:
            raise DeviceError(f"FDN delays {list(delays_frames)!r} must be >= 2 frames, at least two lines")
        if not (rt60_s > 0 and 0.0 <= damp <= 0.5):
            raise DeviceError(f"FDN rt60 {rt60_s!r} s must be > 0 and damp {damp!r} in [0, 0.5]")
        key = (tuple(int(v) for v in d), float(rt60_s), float(damp))
        if key == getattr(self, "_key", None):
            return  # unchanged (a device re-sends its parameters every block)
        self._key = key
        old = getattr(self, "delays", None)
        if old is not None and not np.array_equal(old, d):
            self._fade_from = old  # the next chunk crossfades the old read positions into the new
        self.delays = d
        gains = 10.0 ** (-3.0 * d / (rt60_s * self.sr))
        self._gains = gains
        self._matrix = hadamard(d.size) * gains[None, :]
        self.damp = float(damp)

    def process(self, inp: np.ndarray) -> np.ndarray:
        inp = np.asarray(inp, dtype=np.float64)
        if inp.ndim != 1:
            raise DeviceError(f"FDN input must be mono (n,), got shape {inp.shape}")
        lines = self.delays.size
        h = int(max(self.delays.max(), 0 if self._fade_from is None else self._fade_from.max())) + 1
        if self._hist is None:
            self._hist = np.zeros((lines, h))
        elif self._hist.shape[1] < h:
            self._hist = np.concatenate([np.zeros((lines, h - self._hist.shape[1])), self._hist], axis=1)
        n = inp.shape[0]
        inp = np.ascontiguousarray(inp)
        if n <= self.block_frames:  # one block: its own result, no copy into another array
            return self._block(inp)
        res = np.empty((self.out.shape[0], n))
        for s in range(0, n, self.block_frames):
            e = min(n, s + self.block_frames)
            res[:, s:e] = self._block(inp[s:e])
        return res

    def _block(self, inp: np.ndarray) -> np.ndarray:
        lines, h = self._hist.shape
        n = inp.shape[0]
        d = self.delays
        step = int(d.min())
        fade = self._fade_from
        if fade is not None:
            step = min(step, int(fade.min()))
        if self.loop is not None:  # every frame past h is written before it is read: no zeroing
            buf = _scratch(self, lines, h + n)
            buf[:, :h] = self._hist
            res = np.empty((self.out.shape[0], n))
            fade_frames = 0 if fade is None else min(step, n)
            old = d if fade is None else fade
            self.loop(buf, inp, d, old, fade_frames, self._gains, self.inject, self.damp, self.out, res)
            self._fade_from = None
            self._hist = buf[:, n:].copy()
            return res
        buf = np.zeros((lines, h + n))
        buf[:, :h] = self._hist
        taps = np.empty((lines, n))
        row0 = (np.arange(lines) * (h + n) + h - d)[:, None] + np.arange(step)[None, :]
        flat = buf.ravel()
        inj = self.inject[:, None]
        c = self.damp
        for s in range(0, n, step):
            e = min(n, s + step)
            idx = row0[:, : e - s] + s
            tap = self._read(flat, idx, c)
            if fade is not None:  # a change of line lengths: crossfade over one chunk, no click
                old = self._read(flat, idx + (d - fade)[:, None], c)
                ramp = np.arange(1, e - s + 1) / (e - s)
                tap = old + ramp * (tap - old)
                fade = self._fade_from = None
            taps[:, s:e] = tap
            buf[:, h + s:h + e] = inj * inp[s:e] + self._matrix @ tap
        self._hist = buf[:, n:].copy()
        return self.out @ taps

    @staticmethod
    def _read(flat: np.ndarray, idx: np.ndarray, c: float) -> np.ndarray:
        tap = flat[idx]
        return tap + c * (flat[idx - 1] - tap) if c else tap


def fdn_samples(buf, inp, delays, fade_from, fade_frames, gains, inject, damp, out, res):  # pragma: no cover
    """The :class:`FeedbackDelayNetwork` recursion for one block (run compiled by numba).

    ``delays`` and ``fade_from`` are integer arrays. ``buf`` ``(N, h + n)`` holds the lines' history in
    ``buf[:, :h]`` and receives the writes. Each frame reads every line at ``D_j`` (and ``D_j + 1`` for
    the damping taps), crossfading from the reads at ``fade_from`` over the first ``fade_frames`` frames;
    ``res[:, i] = out @ taps``; the line is written
    ``inject·in + H·(gains·taps)`` with the orthonormal Hadamard product done as a fast Walsh-Hadamard
    transform (Sylvester order, the same matrix as :func:`hadamard`) scaled by 1/√N.

    Runs in chunks no longer than the shortest read distance, so every read in a chunk was written by an
    earlier one, and each step is a loop over the chunk's frames (which vectorises); every frame's value
    is computed by the same operations in the same order as a frame-by-frame loop would. With eight lines
    (the reverb's) the gains, the transform and the write are one pass over the chunk, the transform's
    butterflies in registers, and two output taps are one more pass, each in the same order as the general
    path's passes.
    """
    lines = len(delays)
    n = inp.shape[0]
    h = buf.shape[1] - n
    scale = 1.0 / math.sqrt(lines)
    step = n
    for j in range(lines):
        step = min(step, delays[j])
        if fade_frames > 0:
            step = min(step, fade_from[j])
    t = np.empty((lines, max(step, 1)))
    for s in range(0, n, step):
        m = min(step, n - s)
        for j in range(lines):
            row = t[j]
            # src[i + 1] is frame i's tap, src[i] the frame before it (the damping tap)
            src = buf[j, h + s - delays[j] - 1:h + s - delays[j] + m]
            if damp != 0.0:
                for i in range(m):
                    a = src[i + 1]
                    row[i] = a + damp * (src[i] - a)
            else:
                for i in range(m):  # (a loop: a slice assignment here costs seconds of compile)
                    row[i] = src[i + 1]
            if s < fade_frames:  # a change of line lengths: crossfade from the old read positions
                old = buf[j, h + s - fade_from[j] - 1:h + s - fade_from[j] + m]
                for i in range(min(m, fade_frames - s)):
                    b = old[i + 1]
                    if damp != 0.0:
                        b = b + damp * (old[i] - b)
                    row[i] = b + ((s + i + 1) / fade_frames) * (row[i] - b)
        if lines == 8 and out.shape[0] == 2:  # both taps in one pass, each summed in line order from 0.0
            r0, r1, r2, r3, r4, r5, r6, r7 = t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]
            o0, o1 = res[0, s:s + m], res[1, s:s + m]
            u00, u01, u02, u03, u04, u05, u06, u07 = (out[0, 0], out[0, 1], out[0, 2], out[0, 3], out[0, 4],
                                                      out[0, 5], out[0, 6], out[0, 7])
            u10, u11, u12, u13, u14, u15, u16, u17 = (out[1, 0], out[1, 1], out[1, 2], out[1, 3], out[1, 4],
                                                      out[1, 5], out[1, 6], out[1, 7])
            for i in range(m):
                v0, v1, v2, v3, v4, v5, v6, v7 = r0[i], r1[i], r2[i], r3[i], r4[i], r5[i], r6[i], r7[i]
                o0[i] = (((((((0.0 + u00 * v0) + u01 * v1) + u02 * v2) + u03 * v3) + u04 * v4) + u05 * v5)
                         + u06 * v6) + u07 * v7
                o1[i] = (((((((0.0 + u10 * v0) + u11 * v1) + u12 * v2) + u13 * v3) + u14 * v4) + u15 * v5)
                         + u16 * v6) + u17 * v7
        else:
            for k in range(out.shape[0]):
                dst = res[k, s:s + m]
                for i in range(m):
                    dst[i] = 0.0
                for j in range(lines):
                    w = out[k, j]
                    row = t[j]
                    for i in range(m):
                        dst[i] += w * row[i]
        chunk = inp[s:s + m]
        if lines == 8:  # gains, the 8-point transform and the write in one pass (registers, no row passes)
            r0, r1, r2, r3, r4, r5, r6, r7 = t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]
            w0, w1, w2, w3 = buf[0, h + s:h + s + m], buf[1, h + s:h + s + m], buf[2, h + s:h + s + m], \
                buf[3, h + s:h + s + m]
            w4, w5, w6, w7 = buf[4, h + s:h + s + m], buf[5, h + s:h + s + m], buf[6, h + s:h + s + m], \
                buf[7, h + s:h + s + m]
            g0, g1, g2, g3, g4, g5, g6, g7 = (gains[0], gains[1], gains[2], gains[3], gains[4], gains[5],
                                              gains[6], gains[7])
            i0, i1, i2, i3, i4, i5, i6, i7 = (inject[0], inject[1], inject[2], inject[3], inject[4], inject[5],
                                              inject[6], inject[7])
            for i in range(m):
                a0, a1, a2, a3 = r0[i] * g0, r1[i] * g1, r2[i] * g2, r3[i] * g3
                a4, a5, a6, a7 = r4[i] * g4, r5[i] * g5, r6[i] * g6, r7[i] * g7
                b0, b1, b2, b3, b4, b5, b6, b7 = a0 + a1, a0 - a1, a2 + a3, a2 - a3, a4 + a5, a4 - a5, a6 + a7, a6 - a7
                c0, c2, c1, c3, c4, c6, c5, c7 = b0 + b2, b0 - b2, b1 + b3, b1 - b3, b4 + b6, b4 - b6, b5 + b7, b5 - b7
                x = chunk[i]
                w0[i] = i0 * x + scale * (c0 + c4)
                w1[i] = i1 * x + scale * (c1 + c5)
                w2[i] = i2 * x + scale * (c2 + c6)
                w3[i] = i3 * x + scale * (c3 + c7)
                w4[i] = i4 * x + scale * (c0 - c4)
                w5[i] = i5 * x + scale * (c1 - c5)
                w6[i] = i6 * x + scale * (c2 - c6)
                w7[i] = i7 * x + scale * (c3 - c7)
            continue
        for j in range(lines):
            g = gains[j]
            row = t[j]
            for i in range(m):
                row[i] *= g
        span = 1
        while span < lines:
            for start in range(0, lines, 2 * span):
                for j in range(start, start + span):
                    lo = t[j]
                    hi = t[j + span]
                    for i in range(m):
                        a = lo[i]
                        b = hi[i]
                        lo[i] = a + b
                        hi[i] = a - b
            span *= 2
        for j in range(lines):
            g = inject[j]
            row = t[j]
            dst = buf[j, h + s:h + s + m]
            for i in range(m):
                dst[i] = g * chunk[i] + scale * row[i]
