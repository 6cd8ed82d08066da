"""The pitched house instruments: core.bass, core.keys, core.pluck, core.pad, core.poly.

Conventions shared by all five (see :mod:`.base` for the device contract):

* Each note is synthesised vectorised over its own frame range, from ``round(start_s * sr)`` to its end
  plus release tail, clipped to ``n_frames``, and added into a ``(2, n_frames)`` float64 buffer.
* Per-note values come from ``note.params`` (the params in force at note-on), falling back to the
  device's params and then the spec defaults.
* Randomness (oscillator start phases, excitation noise) comes from ``rng_for(self.seed, note.index)``.
* Levels: one note at velocity 0.8 peaks around -12..-6 dBFS.
* Three loops that are inherently per-sample -- a time-varying state-variable filter, the Karplus-Strong
  string and a four-line feedback delay network -- are compiled with numba (``cache=True``); everything
  else is numpy. The SVF is the topology-preserving (trapezoidal) form of Zavalishin, "The Art of VA
  Filter Design" (2012), ch. 4, whose coefficients may change every sample without blowing up.
* Filter envelopes: ``cutoff * 2 ** (octaves * envamt * exp(-t / fdecay))`` -- ``fdecay`` is a time
  constant (the sweep falls by a factor e of its octave span every ``fdecay`` seconds).
* Amplitude decays and releases follow :mod:`pytest_overdub.dsp.envelopes` (T60 times).
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
from ..dsp.jit import njit

from ..dsp import compiled
from ..dsp.compiled import rng_for, sine
from ..dsp.envelopes import adsr
from ..dsp.filters import TINY
from ..dsp.signals import mtof
from .base import Instrument, NoteEvent
from .params import HOUSE_SPECS

# --------------------------------------------------------------------------------------------- kernels


@njit(cache=True)
def svf_lowpass(x, g, k):  # pragma: no cover - compiled
    """Trapezoidal SVF low-pass over ``x`` shaped ``(channels, n)``; ``g[i] = tan(pi * fc[i] / sr)`` per
    sample (shared by the channels), damping ``k = 1 / Q``.

    One and two channels keep their state in scalars (registers), so the per-sample recursions of the two
    sides run interleaved; the arithmetic is the same for any channel count.
    """
    y = np.empty(x.shape)
    svf_lowpass_into(x, g, k, y)
    return y


@njit(cache=True, inline="always")
def _svf_coeffs(gi, k):  # pragma: no cover - compiled
    """The trapezoidal SVF's per-sample coefficients ``a1, a2, a3`` for ``g = tan(pi fc / sr)`` and ``k``."""
    a1 = 1.0 / (1.0 + gi * (gi + k))
    a2 = gi * a1
    return a1, a2, gi * a2


@njit(cache=True, inline="always")
def _svf_step(u, s1, s2, a1, a2, a3):  # pragma: no cover - compiled
    """One sample of the SVF low-pass: its output and the two new states."""
    v3 = u - s2
    v1 = a1 * s1 + a2 * v3
    v2 = s2 + a2 * s1 + a3 * v3
    return v2, 2.0 * v1 - s1, 2.0 * v2 - s2


@njit(cache=True)
def svf_lowpass_into(x, g, k, y):  # pragma: no cover - compiled
    """:func:`svf_lowpass` written into ``y`` (same shape); ``y`` may be ``x`` itself (each sample is
    read before it is written)."""
    n_ch, n = x.shape
    if n_ch == 2:
        l1 = l2 = r1 = r2 = 0.0
        for i in range(n):
            a1, a2, a3 = _svf_coeffs(g[i], k)
            y[0, i], l1, l2 = _svf_step(x[0, i], l1, l2, a1, a2, a3)
            y[1, i], r1, r2 = _svf_step(x[1, i], r1, r2, a1, a2, a3)
        return
    for c in range(n_ch):
        s1 = s2 = 0.0
        for i in range(n):
            a1, a2, a3 = _svf_coeffs(g[i], k)
            y[c, i], s1, s2 = _svf_step(x[c, i], s1, s2, a1, a2, a3)


@njit(cache=True)
def svf_lowpass_scaled_into(x, g, k, scale, y):  # pragma: no cover - compiled
    """:func:`svf_lowpass_into` of a two-channel ``x`` with each output sample times ``scale[i]`` as it is
    written (``y *= scale`` after the filter, without its pass); ``y`` may be ``x``. Other channel counts
    raise ValueError."""
    n_ch, n = x.shape
    if n_ch != 2:
        raise ValueError("svf_lowpass_scaled_into takes two channels")
    l1 = l2 = r1 = r2 = 0.0
    for i in range(n):
        a1, a2, a3 = _svf_coeffs(g[i], k)
        v, l1, l2 = _svf_step(x[0, i], l1, l2, a1, a2, a3)
        y[0, i] = v * scale[i]
        v, r1, r2 = _svf_step(x[1, i], r1, r2, a1, a2, a3)
        y[1, i] = v * scale[i]


@njit(cache=True)
def svf_lowpass_add(x, g, k, level, env, out, s):  # pragma: no cover - compiled
    """``out[:, s:s + n] += (level·env) · svf_lowpass(x, g, k)`` for a two-channel ``x`` ``(2, n)``, in
    one pass: the filter of :func:`svf_lowpass_into`, then each sample scaled by ``level·env[i]`` and
    added, the numpy steps ``amp = level * env``, ``amp * y`` and the add, without their arrays. Other
    channel counts raise ValueError."""
    n_ch, n = x.shape
    if n_ch != 2:
        raise ValueError("svf_lowpass_add takes two channels")
    left = out[0, s:s + n]
    right = out[1, s:s + n]
    l1 = l2 = r1 = r2 = 0.0
    for i in range(n):
        a1, a2, a3 = _svf_coeffs(g[i], k)
        amp = level * env[i]
        v, l1, l2 = _svf_step(x[0, i], l1, l2, a1, a2, a3)
        left[i] = left[i] + amp * v
        v, r1, r2 = _svf_step(x[1, i], r1, r2, a1, a2, a3)
        right[i] = right[i] + amp * v


@njit(cache=True)
def ks_string(exc, n, delay, ap_c, a0, a1, g_on, g_off, off_frame):  # pragma: no cover - compiled
    """Karplus-Strong loop: ``y = exc + allpass(g * (a0 y[n-N] + a1 y[n-N-1]))``.

    ``delay`` (N) is the integer part of the loop, ``ap_c`` the first-order allpass coefficient that
    supplies the fractional rest, ``g_on``/``g_off`` the loop gain before/after note-off.
    """
    y = np.zeros(n)
    m = exc.shape[0]
    vprev = 0.0
    ax = 0.0
    ay = 0.0
    for i in range(n):
        v = y[i - delay] if i >= delay else 0.0
        g = g_on if i < off_frame else g_off
        w = g * (a0 * v + a1 * vprev)
        vprev = v
        u = ap_c * w + ax - ap_c * ay
        ax = w
        ay = u
        y[i] = u + (exc[i] if i < m else 0.0)
    return y


@njit(cache=True)
def fdn4(x, delays, gains, damp):  # pragma: no cover - compiled
    """Four delay lines mixed by a Householder matrix, one-pole damping in each loop.

    Returns the four line outputs ``(4, n)``; ``gains[j]`` is line j's feedback gain (sets its T60),
    ``damp`` the one-pole low-pass coefficient (0 = no damping). See :func:`fdn4_run`.
    """
    lines = np.empty((4, x.shape[0]))
    fdn4_run(x, delays, gains, damp, lines, np.empty((2, 0)), 0.0)
    return lines


@njit(cache=True)
def fdn4_run(x, delays, gains, damp, lines, wash, wash_gain):  # pragma: no cover - compiled
    """The :func:`fdn4` network over ``x``: writes the line outputs into ``lines`` when it has ``n``
    columns, and adds the pad's wash into ``wash`` in place when that has ``n`` columns:
    ``wash[0] += wash_gain (l0 - l2 + 0.5 l1)``, ``wash[1] += wash_gain (l1 - l3 + 0.5 l0)``, so the pad
    needs no ``(4, n)`` array of line outputs (278 MB on a 3-minute track). Ring-buffer positions advance
    by one and wrap with a compare (no integer division per sample).
    """
    n = x.shape[0]
    keep = lines.shape[1] == n
    add = wash.shape[1] == n
    size = 0
    for j in range(4):
        if delays[j] > size:
            size = delays[j]
    buf = np.zeros((4, size))
    r0 = (size - delays[0]) % size
    r1 = (size - delays[1]) % size
    r2 = (size - delays[2]) % size
    r3 = (size - delays[3]) % size
    g0, g1, g2, g3 = gains[0], gains[1], gains[2], gains[3]
    lp0 = lp1 = lp2 = lp3 = 0.0
    keep_lp = 1.0 - damp
    w = 0
    for i in range(n):
        t0 = buf[0, r0]
        t1 = buf[1, r1]
        t2 = buf[2, r2]
        t3 = buf[3, r3]
        half = 0.5 * (t0 + t1 + t2 + t3)
        lp0 = keep_lp * (t0 - half) * g0 + damp * lp0
        lp1 = keep_lp * (t1 - half) * g1 + damp * lp1
        lp2 = keep_lp * (t2 - half) * g2 + damp * lp2
        lp3 = keep_lp * (t3 - half) * g3 + damp * lp3
        if keep:
            lines[0, i] = t0
            lines[1, i] = t1
            lines[2, i] = t2
            lines[3, i] = t3
        if add:
            wash[0, i] = ((t0 - t2) + 0.5 * t1) * wash_gain + wash[0, i]
            wash[1, i] = ((t1 - t3) + 0.5 * t0) * wash_gain + wash[1, i]
        xi = x[i]
        buf[0, w] = lp0 + xi
        buf[1, w] = lp1 + xi
        buf[2, w] = lp2 + xi
        buf[3, w] = lp3 + xi
        w += 1
        if w == size:
            w = 0
        r0 += 1
        if r0 == size:
            r0 = 0
        r1 += 1
        if r1 == size:
            r1 = 0
        r2 += 1
        if r2 == size:
            r2 = 0
        r3 += 1
        if r3 == size:
            r3 = 0


@njit(cache=True, inline="always")
def _blep_wave(t, d, shape, pw):  # pragma: no cover - compiled
    """One polyBLEP sample at phase ``t`` (0..1) and increment ``d``: saw (shape 0) or pulse of width ``pw``."""
    if shape == 0:
        v = 2.0 * t - 1.0
        if t < d:
            x = t / d
            v -= x + x - x * x - 1.0
        elif t > 1.0 - d:
            x = (t - 1.0) / d
            v -= x * x + x + x + 1.0
        return v
    v = 1.0 if t < pw else -1.0
    if t < d:
        x = t / d
        v += x + x - x * x - 1.0
    elif t > 1.0 - d:
        x = (t - 1.0) / d
        v += x * x + x + x + 1.0
    t2 = t - pw
    if t2 < 0.0:
        t2 += 1.0
    if t2 < d:
        x = t2 / d
        v -= x + x - x * x - 1.0
    elif t2 > 1.0 - d:
        x = (t2 - 1.0) / d
        v -= x * x + x + x + 1.0
    return v


@njit(cache=True)
def osc_bank(dt, ratios, ph0, gl, gr, shape, pw, sub):  # pragma: no cover - compiled
    """Sum of polyBLEP oscillators into ``(2, n)``: voice j runs at ``dt * ratios[j]`` cycles/sample
    from phase ``ph0[j]``, weighted ``gl[j]``/``gr[j]``; ``shape`` 0 saw, 1 pulse of width ``pw``.
    ``sub`` adds, to both sides, a sine (parabolic approximation, < 0.1 % error) an octave below ``dt``.

    Voice-major: each voice's phase stays in a register for its whole run and is added into the output
    in voice order, so every sample is the same sum ``0 + g0 v0 + g1 v1 + ...`` as a sample-major loop.
    """
    n = dt.shape[0]
    out = np.zeros((2, n))
    for j in range(ratios.shape[0]):
        tj = ph0[j] - math.floor(ph0[j])
        r, wl, wr = ratios[j], gl[j], gr[j]
        for i in range(n):
            d = dt[i] * r
            if d > 0.5:
                d = 0.5
            v = _blep_wave(tj, d, shape, pw)
            out[0, i] += wl * v
            out[1, i] += wr * v
            tj += d
            if tj >= 1.0:
                tj -= 1.0
    if sub != 0.0:
        h = 0.0
        for i in range(n):
            x = h if h < 1.0 else h - 2.0  # sin(pi * h) for h in 0..2
            y = 4.0 * x * (1.0 - abs(x))
            y = 0.225 * (y * abs(y) - y) + y
            out[0, i] += sub * y
            out[1, i] += sub * y
            h += dt[i]
            if h >= 2.0:
                h -= 2.0
    return out


@njit(cache=True)
def osc_bank_fixed(d0, n, ratios, ph0, gl, gr, shape, pw, sub):  # pragma: no cover - compiled
    """:func:`osc_bank` for a constant increment ``d0`` (cycles/sample) over ``n`` samples.

    Each sample's phase is computed directly, ``frac(ph0 + i d)``, instead of accumulated, and the polyBLEP
    residuals are selected without branches, so the loop has no sample-to-sample dependency. The result
    matches :func:`osc_bank` to ~1e-9 (the accumulated phase's own rounding drift) at about twice the speed,
    and a unit-weight pulse voice equals :func:`pytest_overdub.dsp.signals.square` bit for bit (same phase
    and residual arithmetic).
    """
    out = np.empty((2, n))
    osc_bank_fixed_into(out, d0, n, ratios, ph0, gl, gr, shape, pw, sub)
    return out


@njit(cache=True)
def add_enveloped(out, s, sig, level, env):  # pragma: no cover - compiled
    """``out[:, s:s + m] += sig[:, :m] * (level * env)`` for ``m = len(env)``: a note's oscillators times
    its envelope, added into a bus in one pass (the numpy steps ``sig *= level * env`` and the add).

    Compiled loops index views from 0 here and below: numba wraps a negative index, and an index such as
    ``s + i`` that LLVM cannot prove non-negative keeps that branch in the loop, which then does not
    vectorise (3.9 -> 2.4 ns/frame for this one)."""
    m = env.shape[0]
    for c in range(2):
        dst = out[c, s:s + m]
        src = sig[c]
        for i in range(m):
            dst[i] = dst[i] + src[i] * (level * env[i])


@njit(cache=True)
def add_times_env(bus, s, sig, env, level):  # pragma: no cover - compiled
    """``bus[s:s + m] += (sig[:m] · env) · level`` for ``m = len(env)``, in one pass: the numpy steps
    ``sig *= env``, ``sig *= level`` and the add, in their order, without writing ``sig``."""
    m = env.shape[0]
    dst = bus[s:s + m]
    for i in range(m):
        dst[i] = dst[i] + (sig[i] * env[i]) * level


@njit(cache=True)
def keys_tine_phases(body, fast, ding, inc, ph0, two_pi, k_fm, k_tine, index, tine):  # pragma: no cover - compiled
    """The keys' TINES phases before their sines, in one pass: with ``wf = (n·inc + ph0)·two_pi`` and the
    carrier ``sw = body[n]``, ``index[n] = (k_fm·fast[n])·sw + wf`` over ``len(index)`` frames and
    ``tine[n] = (k_tine·ding[n])·sw + 14·wf`` over ``len(tine)`` (no longer): the numpy steps (the ramp
    times ``inc``, ``+ ph0``, ``· two_pi``; ``k_fm · fast``, ``· sw``, ``+ wf``; ``k_tine · ding``,
    ``· sw``, ``+ 14 wf``) in their order, without their arrays. ``body`` is only read."""
    m_ding = tine.shape[0]
    for i in range(m_ding):
        w = (float(i) * inc + ph0) * two_pi
        sw = body[i]
        index[i] = (k_fm * fast[i]) * sw + w
        tine[i] = (k_tine * ding[i]) * sw + 14.0 * w
    for i in range(m_ding, index.shape[0]):
        w = (float(i) * inc + ph0) * two_pi
        index[i] = (k_fm * fast[i]) * body[i] + w


@njit(cache=True)
def add_times(dst, src, level, env):  # pragma: no cover - compiled
    """``dst[:m] += src[:m] · (level · env)`` for ``m = len(env)``: the numpy steps ``src *= level * env``
    and the add, in their order, without their arrays."""
    for i in range(env.shape[0]):
        dst[i] = dst[i] + src[i] * (level * env[i])


@njit(cache=True)
def add_driven(out, s, y, div, amp, level):  # pragma: no cover - compiled
    """``out[c, s:s + m] += (y / div) · (amp · level)`` on both sides, ``m = len(y)``, in one pass: the
    numpy steps ``y /= div``, ``amp *= level``, ``y *= amp`` and the add of ``y`` into each side, in
    their order, without writing ``y`` or ``amp``."""
    m = y.shape[0]  # the caller keeps s..s + m inside out
    left = out[0, s:s + m]
    right = out[1, s:s + m]
    for i in range(m):
        v = (y[i] / div) * (amp[i] * level)
        left[i] = left[i] + v
        right[i] = right[i] + v


@njit(cache=True)
def add_panned(out, s, y, gain_left, gain_right):  # pragma: no cover - compiled
    """``out[0, s:s + m] += gain_left·y`` and ``out[1, s:s + m] += gain_right·y`` for ``m = len(y)`` (the
    caller keeps them inside ``out``), one pass and no product arrays: the numpy steps' arithmetic."""
    m = y.shape[0]
    left = out[0, s:s + m]
    right = out[1, s:s + m]
    for i in range(m):
        left[i] = left[i] + gain_left * y[i]
        right[i] = right[i] + gain_right * y[i]


@njit(cache=True)
def osc_bank_fixed_into(out, d0, n, ratios, ph0, gl, gr, shape, pw, sub):  # pragma: no cover - compiled
    """:func:`osc_bank_fixed` written into ``out[:, :n]`` (zeroed first), so a caller can reuse one
    buffer for every note instead of a fresh array (and its page faults) per note."""
    for c in range(2):
        for i in range(n):
            out[c, i] = 0.0
    for j in range(ratios.shape[0]):
        d = d0 * ratios[j]
        if d > 0.5:
            d = 0.5
        t0 = ph0[j] - math.floor(ph0[j])
        wl = gl[j]
        wr = gr[j]
        for i in range(n):
            u = t0 + i * d
            t = u - math.floor(u)
            xa = t / d
            xb = (t - 1.0) / d
            ra = (xa + xa - xa * xa - 1.0) if t < d else 0.0
            rb = (xb * xb + xb + xb + 1.0) if t > 1.0 - d else 0.0
            if shape == 0:
                v = (2.0 * t - 1.0) - ra - rb
            else:
                v = (1.0 if t < pw else -1.0) + ra + rb
                t2 = t - pw
                t2 = t2 + 1.0 if t2 < 0.0 else t2
                xa = t2 / d
                xb = (t2 - 1.0) / d
                v = v - ((xa + xa - xa * xa - 1.0) if t2 < d else 0.0) - ((xb * xb + xb + xb + 1.0) if t2 > 1.0 - d else 0.0)
            out[0, i] += wl * v
            out[1, i] += wr * v
    if sub != 0.0:
        for i in range(n):
            hu = i * d0
            h = hu - 2.0 * math.floor(0.5 * hu)  # 0..2
            x = h if h < 1.0 else h - 2.0  # sin(pi * h), as in osc_bank
            y = 4.0 * x * (1.0 - abs(x))
            y = 0.225 * (y * abs(y) - y) + y
            out[0, i] += sub * y
            out[1, i] += sub * y


@njit(cache=True)
def tremolo_into(out, s, mono, lfo, depth, fresh):  # pragma: no cover - compiled
    """The keys' auto-pan tremolo added into ``out`` from frame ``s``: ``out[0] += mono·(1 - depth·(1 + lfo))``
    and ``out[1] += mono·(1 - depth·(1 - lfo))`` over ``len(lfo)`` frames, one pass, the numpy steps'
    arithmetic in their order. With ``fresh`` those frames of ``out`` are taken as zeros, unread (``0.0 +``
    the term: the values of adding into zeros)."""
    n = lfo.shape[0]
    src = mono[s:s + n]
    left = out[0, s:s + n]
    right = out[1, s:s + n]
    if fresh:
        for i in range(n):
            v = lfo[i]
            m = src[i]
            left[i] = 0.0 + (1.0 - (1.0 + v) * depth) * m
            right[i] = 0.0 + (1.0 - (1.0 - v) * depth) * m
        return
    for i in range(n):
        v = lfo[i]
        m = src[i]
        left[i] = left[i] + (1.0 - (1.0 + v) * depth) * m
        right[i] = right[i] + (1.0 - (1.0 - v) * depth) * m


@njit(cache=True)
def bass_osc(dt, wave, sub):  # pragma: no cover - compiled
    """The bass oscillators in one pass: saw and square (polyBLEP, both from phase 0.5, the saw's zero
    crossing) blended by ``wave`` with the square inverted (fundamentals in phase), plus the parabolic sub
    sine an octave below at level ``0.8 sub``.

    Bit for bit the arithmetic of :func:`osc_bank` (one saw voice with sub, one square voice) followed by
    ``0.5 ((1 - wave)(row0 - row1) - wave sqr) + 0.8 sub row1`` (row0 = saw + sub, row1 = sub).
    """
    n = dt.shape[0]
    out = np.empty(n)
    ts = 0.5
    tq = 0.5
    h = 0.0
    w1 = 1.0 - wave
    ws = 0.8 * sub
    for i in range(n):
        d = dt[i] * 1.0
        if d > 0.5:
            d = 0.5
        v = _blep_wave(ts, d, 0, 0.5)
        q = _blep_wave(tq, d, 1, 0.5)
        ts += d
        if ts >= 1.0:
            ts -= 1.0
        tq += d
        if tq >= 1.0:
            tq -= 1.0
        xs = h if h < 1.0 else h - 2.0  # sin(pi * h) for h in 0..2
        y = 4.0 * xs * (1.0 - abs(xs))
        y = 0.225 * (y * abs(y) - y) + y
        h += dt[i]
        if h >= 2.0:
            h -= 2.0
        row0 = (0.0 + 1.0 * v) + 1.0 * y
        row1 = (0.0 + 0.0 * v) + 1.0 * y
        out[i] = 0.5 * (w1 * (row0 - row1) - wave * (0.0 + 1.0 * q)) + ws * row1
    return out


@njit(cache=True)
def mod_delay(x, delay):  # pragma: no cover - compiled
    """``y[i] = x[i - delay[i]]`` with linear interpolation (zero before the start); ``delay`` >= 0 samples."""
    n = x.shape[0]
    y = np.zeros(n)
    for i in range(n):
        pos = i - delay[i]
        if pos < 0.0:
            continue
        i0 = int(pos)
        fr = pos - i0
        b = x[i0 + 1] if i0 + 1 < n else 0.0
        y[i] = x[i0] + fr * (b - x[i0])
    return y


@njit(cache=True)
def cross_chorus(y, lfo_l, lfo_r, amount, sr, out):  # pragma: no cover - compiled
    """The pad chorus in one pass: side ``ch`` is ``(y[ch] + 0.6 amount * wet) / (1 + 0.3 amount)`` where
    ``wet`` is the other side read ``(0.012 + 0.004 lfo[ch]) * sr`` samples back (``lfo`` is ``lfo_l`` for
    the left side, ``lfo_r`` for the right), linearly interpolated (zero before the start):
    :func:`mod_delay` and the mix, with the same arithmetic. Written into ``out`` (2, n), not ``y``."""
    n = y.shape[1]
    mix = 0.6 * amount
    norm = 1.0 + 0.3 * amount
    for ch in range(2):
        src = y[1 - ch]
        lfo = lfo_l if ch == 0 else lfo_r
        for i in range(n):
            pos = i - (0.012 + 0.004 * lfo[i]) * sr
            wet = 0.0
            if pos >= 0.0:
                i0 = int(pos)
                fr = pos - i0
                b = src[i0 + 1] if i0 + 1 < n else 0.0
                wet = src[i0] + fr * (b - src[i0])
            out[ch, i] = (y[ch, i] + mix * wet) / norm


@njit(cache=True)
def tapped_lowpassed(x, delays, gains, coeff):  # pragma: no cover - compiled
    """``y = one_pole_lp(sum_k gains[k] * x[n - delays[k]])``; the one-pole is ``y += coeff * (u - y)``.

    Each sample's taps are summed in tap order (taps before the signal start add nothing), a tap at a
    time over a cache-sized chunk (a loop without branches, which vectorises), then the one-pole runs
    over the chunk in place: the same sums in the same order as one pass per sample.
    """
    n = x.shape[0]
    y = np.empty(n)
    state = 0.0
    for a in range(0, n, 4096):  # cache-sized chunks: zeros, the taps, then the one-pole
        b = min(n, a + 4096)
        y[a:b] = 0.0  # zeroed here, in cache, rather than in a pass of its own over the whole array
        for k in range(delays.shape[0]):
            d = max(delays[k], 0)
            lo = max(a, d)  # frames before the tap's first input add nothing
            if lo >= b:
                continue
            g = gains[k]
            dst = y[lo:b]
            src = x[lo - d:b - d]
            for i in range(b - lo):
                dst[i] += g * src[i]
        for i in range(a, b):
            state += coeff * (y[i] - state)
            if -TINY < state < TINY:  # at rest below TINY (dsp.filters): no subnormal tail
                state = 0.0
            y[i] = state
    return y


@njit(cache=True)
def body_resonance_add(buf, sa, ga, sb, gb, body, out):  # pragma: no cover - compiled
    """The pluck's body added into ``out`` (2, n), in one pass: the mid ``u = 0.5 (buf[0] + buf[1])``
    through two biquads ``sa`` and ``sb`` (sections ``[b0, b1, b2, 1, a1, a2]``, from rest), then
    ``out[c] += body (ga ya + gb yb)``. Each biquad is :func:`~pytest_overdub.dsp.filters.sos_samples`'s
    one-section arithmetic (transposed direct form II, a state below TINY set to rest), so this is
    ``body * (ga * sosfilt(sa, u) + gb * sosfilt(sb, u))`` added in, sample for sample; the two recursions
    run side by side (each is bound by its latency, so the pair costs about what one alone did).
    ``out`` may be ``buf`` (each frame is read before it is written)."""
    n = buf.shape[1]
    b0, b1, b2, a1, a2 = sa[0], sa[1], sa[2], sa[4], sa[5]
    c0, c1, c2, d1, d2 = sb[0], sb[1], sb[2], sb[4], sb[5]
    l0 = l1 = r0 = r1 = 0.0
    left = buf[0]
    right = buf[1]
    o0 = out[0]
    o1 = out[1]
    for i in range(n):
        u = 0.5 * (left[i] + right[i])
        v = b0 * u + l0
        l0 = b1 * u - a1 * v + l1
        l1 = b2 * u - a2 * v
        if -TINY < l0 < TINY and -TINY < l1 < TINY:
            l0 = 0.0
            l1 = 0.0
        w = c0 * u + r0
        r0 = c1 * u - d1 * w + r1
        r1 = c2 * u - d2 * w
        if -TINY < r0 < TINY and -TINY < r1 < TINY:
            r0 = 0.0
            r1 = 0.0
        wet = body * (ga * v + gb * w)
        o0[i] = o0[i] + wet
        o1[i] = o1[i] + wet


# --------------------------------------------------------------------------------------------- helpers


def _g_of(fc_hz, sr, *, out=None):
    """SVF coefficient for cutoff(s) ``fc_hz``, clamped to 20 Hz..0.45 sr: ``tan(pi * fc / sr)``.

    ``out`` (an array the size of ``fc_hz``, which may be ``fc_hz`` itself) receives it in place, the
    same arithmetic without three temporaries."""
    if out is None:
        return np.tan(np.pi * np.clip(fc_hz, 20.0, 0.45 * sr) / sr)
    np.clip(fc_hz, 20.0, 0.45 * sr, out=out)
    out *= np.pi
    out /= sr
    return np.tan(out, out=out)


def _damping(reso: float) -> float:
    """reso 0..1 -> SVF damping k = 1/Q: 1.414 (Butterworth) down to 0.1 (Q = 10)."""
    return 1.4142 - 1.3142 * float(reso)


def _drive(x: np.ndarray, drive: float) -> np.ndarray:
    """tanh saturation; drive 0 is gentle (``tanh(x)`` on a -6 dBFS signal), 1 is hard (``tanh(5x)/2``)."""
    d = 1.0 + 4.0 * drive
    return np.tanh(d * x) / (1.0 + 1.0 * drive)


def _output(n_frames: int, spans: list[tuple[int, int]]) -> tuple[np.ndarray, bool]:
    """An instrument's ``(2, n_frames)`` output for buses that will be added in over ``spans``, and
    whether it is *fresh*: with exactly one span ``[s, e)`` only the frames outside it are zeroed, and the
    caller writes ``0.0 +`` its bus inside (the values of adding into zeros, without a whole-track
    memset: 20 ms for 3 minutes). Otherwise zeros."""
    if len(spans) != 1:
        return np.zeros((2, n_frames)), False
    s, e = spans[0]
    out = np.empty((2, n_frames))
    out[:, :s] = 0.0
    out[:, e:] = 0.0
    return out, True


def _pan_gains(pan: float) -> tuple[float, float]:
    """Balance-style constant-power pan, -1..1: centre is unity on both sides. (Python floats and
    :mod:`math`, the values of numpy's scalar functions at an eighth of their per-call cost.)"""
    a = (_clamp(pan, -1.0, 1.0) + 1.0) * math.pi / 4.0
    return math.cos(a) * math.sqrt(2.0), math.cos(math.pi / 2.0 - a) * math.sqrt(2.0)  # equal at centre


def _clamp(x: float, lo: float, hi: float) -> float:
    """``np.clip`` of one finite float, without numpy's per-call overhead (8 us a call here)."""
    return min(max(x, lo), hi)


class _Synth(Instrument):
    """Shared plumbing: per-note params and frame ranges, and a per-device memo of note shapes."""

    def _memo(self, key: tuple, make) -> np.ndarray:
        """``make()`` once per ``key`` for this device (read-only: notes of the same shape share it)."""
        memo = self.__dict__.setdefault("_shapes", {})
        arr = memo.get(key)
        if arr is None:
            arr = memo[key] = make()
            arr.flags.writeable = False
        return arr

    def _adsr(self, gate_s: float, *, m: int, **times: float) -> np.ndarray:
        """:func:`adsr` (``n_frames=m``), memoised: chords and repeated notes share one envelope."""
        key = ("adsr", gate_s, m, *sorted(times.items()))
        return self._memo(key, lambda: adsr(gate_s, sr=self.sr, n_frames=m, **times))

    def _p(self, note: NoteEvent) -> dict[str, float]:
        p = self.spec.defaults()
        p.update(self.params)
        p.update(note.params or {})
        return p

    def _span(self, note: NoteEvent, tail_s: float, n_frames: int) -> tuple[int, int]:
        s = int(round(note.start_s * self.sr))
        e = min(n_frames, s + int(math.ceil((max(note.dur_s, 0.0) + tail_s) * self.sr)))
        return max(s, 0), e

    @staticmethod
    def _place(out: np.ndarray, s: int, sig: np.ndarray) -> None:
        """Add a ``(2, m)`` or ``(m,)`` signal at frame ``s`` (frames before 0 are dropped)."""
        if sig.ndim == 1:
            sig = np.broadcast_to(sig, (2, sig.shape[0]))
        out[:, s:s + sig.shape[1]] += sig[:, : out.shape[1] - s]


# --------------------------------------------------------------------------------------------- bass


class Bass(_Synth):
    """Mono bass: saw/square blend + sub sine, resonant SVF low-pass with envelope, drive.

    One voice: a note that starts while the previous one still sounds takes over the voice. When it
    overlaps or touches the previous note (starts at or before its end) the pitch glides there over
    ``glide`` ms (linear in semitones); in LEGATO mode the envelopes run on, in RETRIG they restart.
    After a gap the pitch jumps and the envelopes restart from the level the release had reached.
    """

    spec = HOUSE_SPECS["core.bass"]
    LEVEL = 0.55
    ATTACK_S = 0.003
    FILTER_OCTAVES = 4.0

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        out = np.zeros((2, n_frames))
        sr = self.sr
        notes = sorted(notes, key=lambda n: (n.start_s, n.index))
        notes = [n for n in notes if int(round(n.start_s * sr)) < n_frames and n.dur_s > 0]
        group: list[NoteEvent] = []
        group_end = -1
        for note in notes:
            s = int(round(note.start_s * sr))
            if group and s >= group_end:
                self._render_group(group, out)
                group = []
                group_end = -1
            group.append(note)
            rel = self._p(note)["release"]
            group_end = max(group_end, int(round((note.start_s + note.dur_s + rel) * sr)) + 1)
        if group:
            self._render_group(group, out)
        return out

    def _render_group(self, group: list[NoteEvent], out: np.ndarray) -> None:
        sr, n_frames = self.sr, out.shape[1]
        g0 = int(round(group[0].start_s * sr))
        starts = [int(round(n.start_s * sr)) - g0 for n in group]
        ends = [int(round((n.start_s + n.dur_s) * sr)) - g0 for n in group]
        last_p = self._p(group[-1])
        length = min(max(ends[-1], starts[-1] + 1) + int(math.ceil(last_p["release"] * sr)) + 1, n_frames - g0)
        if length <= 0:
            return
        pitch = np.empty(length)
        dt = np.empty(length)  # mtof(pitch) / sr, computed once per held pitch
        chains: list[tuple[int, int]] = []  # (first note index, gate-end frame)
        for i, note in enumerate(group):
            s = starts[i]
            if s >= length:
                break
            e = starts[i + 1] if i + 1 < len(group) else length
            seg = np.full(max(min(e, length) - s, 0), float(note.pitch))
            legato = i > 0 and s <= ends[i - 1]
            p = self._p(note)
            if legato and p["glide"] > 0 and s > 0:
                t = np.arange(seg.shape[0]) / sr
                ramp = np.maximum(0.0, 1.0 - t / (p["glide"] / 1000.0))
                seg += (pitch[s - 1] - note.pitch) * ramp
                dt[s:s + seg.shape[0]] = mtof(seg) / sr
            else:
                dt[s:s + seg.shape[0]] = mtof(seg[:1]) / sr
            pitch[s:s + seg.shape[0]] = seg
            gate_end = min(ends[i], starts[i + 1]) if i + 1 < len(group) else ends[i]
            if legato and int(p["mode"]) == 0 and chains:
                chains[-1] = (chains[-1][0], gate_end)
            else:
                chains.append((i, gate_end))
        amp = np.zeros(length)
        g = np.empty(length)  # SVF coefficient of the filter envelope, per chain
        for c, (i0, gate_end) in enumerate(chains):
            s = starts[i0]
            e = starts[chains[c + 1][0]] if c + 1 < len(chains) else length
            e = min(e, length)
            p = self._p(group[i0])
            m = e - s
            shape = self._adsr(max(gate_end - s, 1) / sr, m=m, attack_s=self.ATTACK_S, decay_s=0.8, sustain=0.85,
                               release_s=p["release"])
            lvl0 = amp[s - 1] / max(group[i0].velocity, 1e-9) if s > 0 else 0.0
            env = shape.copy()
            if lvl0 != 0.0:  # restart from the level the release reached
                ramp = self._memo(("bass_ramp", m), lambda: np.maximum(0.0, 1.0 - (np.arange(m) / sr) / self.ATTACK_S))
                env += lvl0 * ramp * (1.0 - shape)
            amp[s:e] = env * group[i0].velocity
            g[s:e] = self._memo(("bass_g", p["cutoff"], p["envamt"], p["fdecay"], m), lambda: _g_of(
                p["cutoff"] * np.exp2(self.FILTER_OCTAVES * p["envamt"] * np.exp(-(np.arange(m) / sr) / p["fdecay"])),
                sr))
        first = self._p(group[0])  # timbre (wave, sub, reso, drive) is read at the phrase's first note
        wave, sub, drive, k = first["wave"], first["sub"], first["drive"], _damping(first["reso"])
        # saw and square start at phase 0.5 (the saw's zero crossing); -square: fundamentals in phase
        x = bass_osc(dt, wave, sub)
        y = svf_lowpass(x[None, :], g, k)[0]
        y *= 1.0 + 4.0 * drive
        np.tanh(y, out=y)
        if 0 <= g0 and g0 + length <= n_frames:  # (tanh / (1 + drive)) (LEVEL amp), added into both sides
            add_driven(out, g0, y, 1.0 + drive, amp, self.LEVEL)
            return
        y /= 1.0 + drive
        amp *= self.LEVEL  # LEVEL * amp * y, in place
        y *= amp
        self._place(out, g0, y)


# --------------------------------------------------------------------------------------------- keys


#: Frames per block of the keys' tremolo (a whole-bus temporary per channel would leave the cache).


class Keys(_Synth):
    """FM electric piano (two-operator pairs, Chowning 1973 FM; DX-style tine and bell).

    TINES: a 1:1 carrier/modulator pair (the bark, index ``0.3 + 2.2 bright`` decaying fast), a tine
    partial at 14x the fundamental (level ``bell``) and an FM sideband pair around it driven by
    ``bright``. GRAND: a 1:2 pair for a fuller, hammered spectrum plus a bell partial at 7x. Amplitude
    decays with a pitch-dependent T60 (``decay`` scales it), ``release`` ends a held note; ``trem`` at
    ``rate`` Hz is a stereo (auto-pan) tremolo locked to song time. Partials that would pass 0.45 sr fade out.
    """

    spec = HOUSE_SPECS["core.keys"]
    LEVEL = 0.36

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        buses: dict[tuple[float, float], list] = {}  # (trem, rate) -> [mono buffer, first, last frame]
        for note in notes:
            p = self._p(note)
            t60 = p["decay"] * _clamp(6.0 * 2.0 ** (-(note.pitch - 48) / 24.0), 0.6, 10.0)
            s, e = self._span(note, p["release"], n_frames)
            e = min(e, s + int(t60 * self.sr) + 1)
            if e > s:
                key = (p["trem"], p["rate"])
                if key not in buses:
                    buses[key] = [np.zeros(n_frames), s, e]
                bus = buses[key]
                self._note(note, p, t60, e - s, bus[0], s)
                bus[1], bus[2] = min(bus[1], s), max(bus[2], e)
        out, fresh = _output(n_frames, [bus[1:] for bus in buses.values()])
        for (trem, rate), (mono, s, e) in buses.items():
            # song time: the tremolo is locked across notes
            lfo = sine(rate, sr=self.sr, n_frames=e - s, phase0=s * rate / self.sr)
            tremolo_into(out, s, mono, lfo, 0.25 * trem, fresh)
        return out

    def _note(self, note: NoteEvent, p: Mapping[str, float], t60: float, m: int, bus: np.ndarray, s: int
              ) -> None:
        """The note's ``m`` frames added into the mono ``bus`` from frame ``s``."""
        sr = self.sr
        f = float(mtof(note.pitch))
        v = note.velocity
        ph0 = rng_for(self.seed, note.index).uniform(0.0, 1.0)
        bright, bell = p["bright"], p["bell"]
        tau_fm, tau_ding = 0.25 * p["decay"], 0.12 * p["decay"]
        # the FM index and the tine fall to exactly 0 after 3 and 5 time constants (release-curve shape)
        m_fm = min(m, int(3.0 * tau_fm * sr) + 1)
        m_ding = min(m_fm, int(5.0 * tau_ding * sr) + 1)
        fast = self._memo(("fast", tau_fm, m_fm), lambda: np.maximum(
            np.exp(-(np.arange(m_fm) / sr) / tau_fm) - math.exp(-3.0), 0.0) / (1.0 - math.exp(-3.0)))
        ding = self._memo(("ding", tau_ding, m_ding), lambda: np.maximum(
            np.exp(-(np.arange(m_ding) / sr) / tau_ding) - math.exp(-5.0), 0.0) / (1.0 - math.exp(-5.0)))

        def nyq_ok(ratio: float) -> float:  # fade partials that would pass 0.45 sr
            return _clamp((0.45 * sr - ratio * f) / (0.1 * sr), 0.0, 1.0)

        if int(p["voice"]) == 0:  # TINES: 1:1 bark, tine partial at 14x
            # sin(wf + index sw) and c ding sin(14 wd + tine_idx sw), wf = 2 pi (f/sr n + ph0): the modulator
            # is the carrier's own sine (sin(wf) to ~1e-13); both phases in one pass, then the sines
            body = sine(f, sr=sr, n_frames=m, phase0=ph0)
            scratch = self.__dict__.get("_scratch")
            if scratch is None or scratch.shape[1] < m_fm:
                scratch = self._scratch = np.empty((2, m_fm))
            index, tine = scratch[0, :m_fm], scratch[1, :m_ding]
            keys_tine_phases(body, fast, ding, f / sr, ph0, 2.0 * np.pi,
                             (0.3 + 2.2 * bright) * (0.5 + 0.5 * v) * nyq_ok(4.0), 0.2 + 1.6 * bright, index, tine)
            compiled.sin(index, out=body[:m_fm])
            compiled.sin(tine, out=tine)
            add_times(body, tine, (0.04 + 0.35 * bell) * (0.25 + 0.75 * bright) * v * nyq_ok(16.0), ding)
            env = self._adsr(note.dur_s, m=m, attack_s=0.002, decay_s=t60, sustain=0.0, release_s=p["release"])
            add_times_env(bus, s, body, env, self.LEVEL * v)
            return
        # 2 pi (f/sr n + ph0), in place on a copy of a memoised float ramp (the int ramp's cast gives the same)
        wf = np.multiply(self._memo(("ramp", m_fm), lambda: np.arange(m_fm, dtype=np.float64)), f / sr)
        wf += ph0
        wf *= 2.0 * np.pi
        wd = wf[:m_ding]
        # GRAND: 1:2 pair plus a second carrier, bell partial at 7x
        index = (0.5 + 2.5 * bright) * (0.5 + 0.5 * v) * nyq_ok(6.0) * fast
        s1, s2 = sine(f, sr=sr, n_frames=m, phase0=ph0), sine(2.0 * f, sr=sr, n_frames=m, phase0=2 * ph0)
        body = s1 + 0.3 * s2
        sw, s2w = s1[:m_fm], s2[:m_fm]  # sin(wf) and sin(2 wf) to ~1e-13
        body[:m_fm] = compiled.sin(wf + index * s2w) + 0.3 * compiled.sin(2.0 * wf + 0.5 * index * sw)
        tine_idx = (0.2 + 1.4 * bright) * ding
        tine = (0.03 + 0.3 * bell) * (0.25 + 0.75 * bright) * v * nyq_ok(9.0) * ding * compiled.sin(
            7.0 * wd + tine_idx * s2w[:m_ding])
        body[:m_ding] += tine
        env = self._adsr(note.dur_s, m=m, attack_s=0.002, decay_s=t60, sustain=0.0, release_s=p["release"])
        add_times_env(bus, s, body, env, self.LEVEL * v)


# --------------------------------------------------------------------------------------------- pluck


class Pluck(_Synth):
    """Extended Karplus-Strong string (Jaffe & Smith, CMJ 7(2) 1983).

    Excitation: one period of seeded noise, low-passed by ``tone``, then a pick-position comb
    ``x[n] - x[n - round(beta * N)]``. Loop: two-tap loss filter (brightness from ``tone``), its gain set
    so the fundamental's T60 equals ``decay`` seconds, and a first-order allpass for the fractional part
    of the period (tuning). After note-off the loop gain switches to a T60 of ``mute`` seconds. ``body``
    mixes in two resonant peaks (110 Hz and 240 Hz, a small guitar body). ``spread`` places notes
    across the stereo field by pitch (higher notes to the right) with a small per-note offset.

    ``pick`` is the pluck point as a fraction of the string (0.04..0.5); values above 0.5 are folded back
    (``beta = min(f, 1 - f)`` with ``f`` the fractional part), because the studio's range runs to 5.
    """

    spec = HOUSE_SPECS["core.pluck"]
    LEVEL = 0.4

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        out = None
        by_body: dict[float, np.ndarray] = {}
        for note in notes:
            p = self._p(note)
            tail = p["mute"] if note.dur_s < p["decay"] else 0.0
            s, e = self._span(note, tail, n_frames)
            e = min(e, s + int(math.ceil(1.2 * p["decay"] * self.sr)) + 1)
            if e <= s:
                continue
            y = self._string(note, p, e - s)
            gl, gr = _pan_gains(self._pan(note, p))
            if p["body"] not in by_body:
                by_body[p["body"]] = np.zeros((2, n_frames))
            add_panned(by_body[p["body"]], s, y, gl, gr)  # buf[0, s:e] += gl * y, buf[1, s:e] += gr * y
        for body, buf in by_body.items():
            if out is None:
                out = buf  # the first bus is the output (0 + x is x)
            else:
                out += buf
            if body > 0:  # the body resonates with the sum of both sides and sounds in the centre
                body_resonance_add(buf, *self._body_sections(), body, out)
        return np.zeros((2, n_frames)) if out is None else out

    def _pan(self, note: NoteEvent, p: Mapping[str, float]) -> float:
        jitter = rng_for(self.seed, note.index, "pan").uniform(-0.15, 0.15)
        return p["spread"] * _clamp((note.pitch - 64) / 18.0 + jitter, -0.9, 0.9)

    def _body_sections(self) -> tuple[np.ndarray, float, np.ndarray, float]:
        """The body's two resonances (110 Hz, Q 6 and 240 Hz, Q 8) and their levels, for
        :func:`body_resonance_add`."""
        from ..dsp.filters import rbj_biquad

        return (rbj_biquad("bp", freq_hz=110.0, sr=self.sr, q=6.0), 0.8,
                rbj_biquad("bp", freq_hz=240.0, sr=self.sr, q=8.0), 0.5)

    def _string(self, note: NoteEvent, p: Mapping[str, float], m: int) -> np.ndarray:
        sr = self.sr
        f = float(mtof(note.pitch))
        tone = p["tone"]
        a1 = 0.5 - 0.45 * tone  # loss filter: 0.5/0.5 (dark) .. 0.95/0.05 (bright)
        a0 = 1.0 - a1
        period = sr / f
        total = period - a1  # the loss filter delays low frequencies by a1 samples
        delay = max(int(math.floor(total - 0.5)), 2)
        frac = total - delay
        ap_c = (1.0 - frac) / (1.0 + frac)
        w = 2.0 * math.pi * f / sr
        loss = abs(a0 + a1 * complex(math.cos(w), -math.sin(w)))
        g_on = 10.0 ** (-3.0 * period / (p["decay"] * sr)) / loss
        g_off = 10.0 ** (-3.0 * period / (p["mute"] * sr)) / loss
        rng = rng_for(self.seed, note.index)
        n_exc = max(int(round(period)), 2)
        exc = rng.uniform(-1.0, 1.0, n_exc)
        from ..dsp.compiled import lfilter

        pole = 0.85 * (1.0 - tone)
        exc = lfilter([1.0 - pole], [1.0, -pole], exc)
        pick = p["pick"]
        fpart = pick - math.floor(pick) if pick > 0.5 else pick
        beta = min(max(min(fpart, 1.0 - fpart), 0.04), 0.5)
        lag = max(int(round(beta * n_exc)), 1)
        shifted = np.concatenate([np.zeros(lag), exc[:-lag]])
        exc = exc - shifted
        exc *= 1.0 / max(np.max(np.abs(exc)), 1e-9)
        off = int(round(note.dur_s * sr))
        y = ks_string(exc * note.velocity * self.LEVEL, m, delay, ap_c, a0, a1, g_on, g_off, off)
        fade = min(m, int(0.005 * sr))
        y[m - fade:] *= self._memo(("fade", fade), lambda: np.linspace(1.0, 0.0, fade))
        return y


# --------------------------------------------------------------------------------------------- pad


class Pad(_Synth):
    """Three detuned saws per note (centre, -detune, +detune cents; the outer two split left/right),
    ADSR with ``attack``/``release``, then on the pad's bus: an SVF low-pass at ``tone`` whose cutoff
    ``motion`` sweeps (±1.5 octaves at most, 0.13 Hz) with a gentle amplitude swell (0.21 Hz), a
    stereo chorus (two modulated delays, 12 ± 4 ms, 0.4 Hz in quadrature, wet ``chorus``), and ``space``:
    a four-line FDN wash (T60 1.2..3.2 s, damped) mixed in at up to -12 dB.

    Notes whose bus params (tone, motion, chorus, space) differ are processed on separate buses.
    """

    spec = HOUSE_SPECS["core.pad"]
    LEVEL = 0.22
    BUS_KEYS = ("tone", "motion", "chorus", "space")

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        buses: dict[tuple, list] = {}
        for note in notes:
            p = self._p(note)
            s, e = self._span(note, p["release"], n_frames)
            if e > s:
                key = tuple(p[k] for k in self.BUS_KEYS)
                if key not in buses:
                    buses[key] = [np.zeros((2, n_frames)), s, e]
                bus = buses[key]
                self._add_note(bus[0], s, note, p, e - s)
                bus[1], bus[2] = min(bus[1], s), max(bus[2], e)
        spans = {}
        for key, (buf, s, e) in buses.items():
            tail = int((3.5 * dict(zip(self.BUS_KEYS, key))["space"] + 0.05) * self.sr)
            spans[key] = (s, min(n_frames, e + tail))
        out, fresh = _output(n_frames, list(spans.values()))
        for key, (buf, _, _) in buses.items():
            p = dict(zip(self.BUS_KEYS, key))
            s, e = spans[key]
            wet = self._bus(buf[:, s:e], p, s)
            if fresh:  # 0 + wet, into frames nobody zeroed
                np.add(wet, 0.0, out=out[:, s:e])
            else:
                out[:, s:e] += wet
        return out

    def _add_note(self, bus: np.ndarray, s: int, note: NoteEvent, p: Mapping[str, float], m: int) -> None:
        """The note's saws times its envelope, added into ``bus`` from frame ``s`` for ``m`` frames. The
        oscillators run into one scratch buffer the pad reuses (a fresh array per note cost a page fault
        per 4 KB: 140 000 of them on the 3-minute bench song)."""
        sr = self.sr
        rng = rng_for(self.seed, note.index)
        f = float(mtof(note.pitch))
        d = p["detune"]
        ratios = np.exp2(np.array([0.0, -d, d]) / 1200.0)
        env = self._adsr(note.dur_s, m=m, attack_s=p["attack"], decay_s=1.5, sustain=0.8, release_s=p["release"])
        scratch = self.__dict__.get("_scratch")
        if scratch is None or scratch.shape[1] < m:
            scratch = self._scratch = np.empty((2, m))
        osc_bank_fixed_into(scratch, f / sr, m, ratios, rng.uniform(0.0, 1.0, 3), np.array([0.7, 1.0, 0.0]),
                            np.array([0.7, 0.0, 1.0]), 0, 0.5, 0.0)
        add_enveloped(bus, s, scratch, self.LEVEL * note.velocity, env)

    def _bus(self, x: np.ndarray, p: Mapping[str, float], s: int) -> np.ndarray:
        sr = self.sr
        m = x.shape[1]
        motion = p["motion"]
        t0 = s / sr  # LFOs run on song time
        # in place, same arithmetic as tone * 2 ** (1.5 motion lfo) and 1 - 0.1 motion (1 + lfo)
        fc = sine(0.13, sr=sr, n_frames=m, phase0=0.13 * t0)
        fc *= 1.5 * motion
        np.exp2(fc, out=fc)
        fc *= p["tone"]
        g = _g_of(fc, sr, out=fc)
        swell = sine(0.21, sr=sr, n_frames=m, phase0=0.21 * t0)
        swell += 1.0
        swell *= 0.1 * motion
        np.subtract(1.0, swell, out=swell)
        y = x  # the bus is the pad's own: filtered and swelled in place, one pass
        svf_lowpass_scaled_into(x, g, 1.2, swell, y)
        if p["chorus"] > 0:
            y = self._chorus(y, p["chorus"], t0)
        if p["space"] > 0:
            y = self._space(y, p["space"])
        return y

    def _chorus(self, y: np.ndarray, amount: float, t0: float) -> np.ndarray:
        sr = self.sr
        m = y.shape[1]
        # each side hears the other side's voices through a delay swept 12 +- 4 ms, the LFOs in quadrature
        lfo_l, lfo_r = (sine(0.4, sr=sr, n_frames=m, phase0=0.4 * t0 + off) for off in (0.0, 0.25))
        out = np.empty((2, m))  # numpy's allocation: large ones are backed by huge pages (numba's are not)
        cross_chorus(y, lfo_l, lfo_r, amount, float(sr), out)  # no stacked copy of the LFOs
        return out

    def _space(self, y: np.ndarray, amount: float) -> np.ndarray:
        """``y`` plus the FDN wash: ``y + 0.25 amount [l0 - l2 + 0.5 l1, l1 - l3 + 0.5 l0]`` (in place, on
        ``y``, which the pad owns)."""
        sr = self.sr
        t60 = 1.2 + 2.0 * amount
        delays = np.array([int(sr * ms / 1000.0) for ms in (29.7, 37.1, 41.1, 43.7)], dtype=np.int64)
        gains = 10.0 ** (-3.0 * delays / (t60 * sr))
        mid = np.add(y[0], y[1])
        mid *= 0.5
        fdn4_run(mid, delays, gains, 0.35, np.empty((4, 0)), y, 0.25 * amount)
        return y


# --------------------------------------------------------------------------------------------- poly


class Poly(_Synth):
    """Subtractive polyphonic synth.

    Per note: ``2 + round(4 * unison)`` oscillators (SAW, SQUARE or PULSE with width ``pw``, folded into
    0.05..0.95) spread evenly over ±``detune``/2 cents and panned over ±``spread``; a sine sub an octave
    down (``sub``); an SVF low-pass per side whose cutoff follows ``cutoff * 2 ** (6 envamt e^(-t/fdecay))``
    (envamt may be negative); an ADSR amplifier. ``glide`` ms slides each note from the pitch of the note
    started before it (linear in semitones).
    """

    spec = HOUSE_SPECS["core.poly"]
    LEVEL = 0.3

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        out = np.zeros((2, n_frames))
        prev_pitch = None
        for note in sorted(notes, key=lambda n: (n.start_s, n.index)):
            p = self._p(note)
            s, e = self._span(note, p["release"], n_frames)
            if e > s:
                self._add_note(out, s, note, p, e - s, prev_pitch)
            prev_pitch = note.pitch
        return out

    def _add_note(self, out: np.ndarray, s: int, note: NoteEvent, p: Mapping[str, float], m: int,
                  prev_pitch) -> None:
        """The note's ``m`` frames added into ``out`` from frame ``s``: oscillators, then the filter, the
        amplifier and the add in one pass (:func:`svf_lowpass_add`)."""
        sr = self.sr
        rng = rng_for(self.seed, note.index)
        pitch: float | np.ndarray = float(note.pitch)
        if p["glide"] > 0 and prev_pitch is not None and prev_pitch != note.pitch:
            t = np.arange(m) / sr
            pitch = note.pitch + (prev_pitch - note.pitch) * np.maximum(0.0, 1.0 - t / (p["glide"] / 1000.0))
        n_osc = 2 + int(round(4 * p["unison"]))
        pw = p["pw"] - math.floor(p["pw"]) if p["pw"] > 1.0 else p["pw"]
        pw = min(max(pw, 0.05), 0.95)
        wave = int(p["wave"])
        pos = self._memo(("pos", n_osc), lambda: np.linspace(-1.0, 1.0, n_osc))
        ratios = np.exp2(pos * p["detune"] / 2400.0)
        ph0 = rng.uniform(0.0, 1.0, n_osc)
        a = (np.clip(pos * p["spread"], -1.0, 1.0) + 1.0) * np.pi / 4.0
        norm = math.sqrt(2.0 / n_osc)
        osc_args = (ratios, ph0, norm * np.cos(a), norm * np.cos(np.pi / 2.0 - a), 0 if wave == 0 else 1,
                    0.5 if wave == 1 else pw, p["sub"])
        if isinstance(pitch, float):
            lr = osc_bank_fixed(float(mtof(pitch)) / sr, m, *osc_args)
        else:  # a glide: per-sample increments
            lr = osc_bank(mtof(pitch) / sr, *osc_args)
        g = self._memo(("g", p["cutoff"], p["envamt"], p["fdecay"], m),
                       lambda: _g_of(p["cutoff"] * np.exp2(6.0 * p["envamt"] * np.exp(-(np.arange(m) / sr) / p["fdecay"])),
                                     sr))
        k = _damping(p["reso"])
        env = self._adsr(note.dur_s, m=m, attack_s=p["attack"], decay_s=p["decay"], sustain=p["sustain"],
                         release_s=p["release"])
        svf_lowpass_add(lr, g, k, self.LEVEL * note.velocity, env, out, s)
