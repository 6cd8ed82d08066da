"""``core.delay`` and ``core.chorus``: time-based effects built on
:class:`~pytest_overdub.dsp.delay.FeedbackDelay`.

Delay conventions:

* Time: ``div`` is a tempo-synced division (``DELAY_DIVISION_BEATS``, at the song tempo); ``div = FREE``
  uses ``ms``. A time change between calls glides over 50 ms (no click).
* ``mode`` STEREO: each channel echoes itself. PING-PONG: the mono sum ``(L + R)/√2`` (equal power) enters
  the left line and the repeats alternate left, right, left... (the feedback crosses channels).
* ``tone`` (2nd-order Butterworth low-pass) and ``lowcut`` (2nd-order Butterworth high-pass) sit in the
  loop, so every repeat, the first included, passes through them once more than the one before.
* ``wow`` modulates the delay time by up to ±1.5 ms (``wow = 1``) with a 0.6 Hz sine whose starting phase
  comes from ``seed``.
* ``mix``: dry gain ``min(1, 2(1 - mix))``, wet gain ``min(1, 2·mix)``: up to 0.5 the dry stays at unity
  and the repeats come up to full level; above 0.5 the dry fades out (1 = repeats only).

Chorus conventions: two modulated delays (``delay`` ms ± ``depth``·min(``delay``/2, 4 ms)) at ``rate``
Hz, the right LFO ``width``·90° ahead of the left (quadrature at width 1, so a mono input comes out
wide), optional ``feedback``; ``mix`` is a linear crossfade ``(1 - mix)·dry + mix·wet`` (0.5 = equal
blend). LFO phases start at a phase derived from ``seed``.
"""

from __future__ import annotations

import math

import numpy as np
from ..dsp.jit import njit

from ..dsp.delay import (MONO_GAIN, FeedbackDelay, SineSweep, stereo_feedback_delay_samples, stereo_swept_samples,
                         swept_positions_samples)
from ..dsp.filters import SOSFilter, rbj_biquad
from .base import Effect
from .dynamics import in_blocks
from .params import DELAY_DIVISION_BEATS, HOUSE_SPECS

WOW_RATE_HZ = 0.6
WOW_DEPTH_S = 0.0015
GLIDE_S = 0.05
CHORUS_MAX_SWEEP_S = 0.004
LFO_GRID = 64  # frames between exact LFO evaluations (angle addition in between)

# The modulated line with its loop filter runs sample by sample, compiled (cache in __pycache__).
_STEREO_LINE = njit(cache=True)(stereo_feedback_delay_samples)  # two channels, two sections (Delay)
# The swept lines (Delay with its loop filter, Chorus without): the LFO sweep's read positions in a loop
# that vectorises, then the reads, the filter, the feedback writes and the dry/wet mix in one pass
_STEREO_SWEPT = njit(cache=True)(stereo_swept_samples)
_SWEPT_POSITIONS = njit(cache=True)(swept_positions_samples)  # the sweeps' read positions, for both


def _lfo_phase(seed: int, salt: int) -> float:
    return float(np.random.default_rng([int(seed) & 0xFFFFFFFF, salt]).uniform(0.0, 2.0 * math.pi))


class _Lfo:
    """A sine LFO indexed by absolute frame so any segmentation gives the same values.

    :meth:`sines` evaluates ``sin(phase + offset)`` by angle addition, ``sin(a + b) = sin a·cos b +
    cos a·sin b``, with ``a`` on a grid of :data:`LFO_GRID` frames (absolute, so segmentation still does not
    matter) and ``b`` the step within it: two ``sin``/``cos`` per grid point instead of one ``sin`` per
    frame (numpy's float64 ``sin`` costs ~25 ns here). Within ~1e-13 of the direct ``np.sin`` for phases
    up to hours.
    """

    def __init__(self, phase: float):
        self.phase0 = phase
        self.rate = None
        self.origin = 0  # frame at which phase0 holds
        self.frame = 0
        self._step = None  # the step the in-grid rotations below were computed for
        self._cos_b = self._sin_b = self._work = None

    def skip(self, n: int, *, rate_hz: float, sr: float) -> int:
        """Advance by ``n`` frames without computing them; returns the first frame's offset from origin."""
        if self.rate is None:
            self.rate = rate_hz
        elif rate_hz != self.rate:  # keep the phase continuous across a rate change
            self.phase0 += 2.0 * math.pi * self.rate * (self.frame - self.origin) / sr
            self.origin, self.rate = self.frame, rate_hz
        first = self.frame - self.origin
        self.frame += n
        return first

    def _grid(self, n: int, *, rate_hz: float, sr: float) -> tuple[int, np.ndarray]:
        """Advance by ``n`` frames: the first frame's place in its grid interval and the angles of the grid
        points the frames span (the in-grid rotations are kept while the rate holds)."""
        first = self.skip(n, rate_hz=rate_hz, sr=sr)
        step = 2.0 * math.pi * self.rate / sr
        j0, j1 = first // LFO_GRID, (first + n - 1) // LFO_GRID + 1
        if self._step != step:
            within = np.arange(LFO_GRID) * step
            self._step, self._cos_b, self._sin_b = step, np.cos(within)[None, :], np.sin(within)[None, :]
        return first - j0 * LFO_GRID, np.arange(j0, j1, dtype=np.float64) * (LFO_GRID * step)

    def sines(self, n: int, *, rate_hz: float, sr: float, offsets=(0.0,)) -> np.ndarray:
        """``sin(phase + offset)`` over the next ``n`` frames, one row per offset: ``(len(offsets), n)``."""
        lo, grid = self._grid(n, rate_hz=rate_hz, sr=sr)
        table, term = self._tables(grid.shape[0])
        out = np.empty((len(offsets), n))
        for row, offset in enumerate(offsets):
            a = grid + (self.phase0 + offset)
            np.multiply(np.sin(a)[:, None], self._cos_b, out=table)
            table += np.multiply(np.cos(a)[:, None], self._sin_b, out=term)
            out[row] = table.ravel()[lo:lo + n]
        return out

    def sweep(self, n: int, *, rate_hz: float, sr: float, scale: float, offset: float, gain: float = 1.0,
              offsets=(0.0,)) -> SineSweep:
        """The next ``n`` frames as a :class:`~pytest_overdub.dsp.delay.SineSweep`: delays
        ``max((s·scale + offset)·gain, 2)`` with ``s = sin(phase + o)``, one row per phase offset ``o`` in
        ``offsets``, for a compiled loop to evaluate frame by frame with the grid, rotations and arithmetic
        of :meth:`sines`."""
        lo, grid = self._grid(n, rate_hz=rate_hz, sr=sr)
        a = grid[None, :] + np.array([[self.phase0 + o] for o in offsets])
        return SineSweep(np.sin(a), np.cos(a), self._cos_b[0], self._sin_b[0], lo, float(scale), float(offset),
                         float(gain))

    def _tables(self, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Two ``(rows, LFO_GRID)`` work arrays kept between calls (no fresh allocation per block)."""
        work = self._work
        if work is None or work.shape[1] < rows:
            work = self._work = np.empty((2, rows, LFO_GRID))
        return work[0, :rows], work[1, :rows]


class Delay(Effect):
    spec = HOUSE_SPECS["core.delay"]

    def __init__(self, *, sr, tempo_bpm, seed, params):
        super().__init__(sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._loop = SOSFilter(self._loop_sos(params))
        self._line = FeedbackDelay(channels=2, loop_filter=self._loop, loop=_STEREO_LINE)
        self._filters = (params["tone"], params["lowcut"])  # what the loop's sections were designed for
        self._lfo = _Lfo(_lfo_phase(seed, 1))
        self._last_frames: float | None = None

    def _loop_sos(self, p) -> np.ndarray:
        return np.stack([rbj_biquad("lp", freq_hz=p["tone"], sr=self.sr),
                         rbj_biquad("hp", freq_hz=p["lowcut"], sr=self.sr)])

    def delay_seconds(self, p) -> float:
        beats = DELAY_DIVISION_BEATS[int(p["div"])]
        return p["ms"] / 1000.0 if beats is None else beats * 60.0 / self.tempo_bpm

    def _delay_frames(self, n: int, p) -> np.ndarray | float | SineSweep:
        """The block's delays: a number (no wow, no glide), a :class:`SineSweep` (wow, no glide: the loop
        computes them) or an array (a glide)."""
        target = self.delay_seconds(p) * self.sr
        start = target if self._last_frames is None else self._last_frames
        self._last_frames = target
        ramp = 0 if start == target else min(n, int(GLIDE_S * self.sr))
        if p["wow"] == 0:
            self._lfo.skip(n, rate_hz=WOW_RATE_HZ, sr=self.sr)
            if not ramp:
                return target
            d = np.full(n, target)
        elif not ramp:
            return self._lfo.sweep(n, rate_hz=WOW_RATE_HZ, sr=self.sr, scale=p["wow"] * WOW_DEPTH_S * self.sr,
                                   offset=target)
        else:  # the wow term first, then the (gliding) time added to it, all in place
            d = self._lfo.sines(n, rate_hz=WOW_RATE_HZ, sr=self.sr)[0]
            d *= p["wow"] * WOW_DEPTH_S * self.sr
            d[ramp:] += target
        if ramp:
            glide = start + (target - start) * (np.arange(1, ramp + 1) / ramp)
            if p["wow"]:
                d[:ramp] += glide
            else:
                d[:ramp] = glide
        np.maximum(d, 2.0, out=d)
        return d[None, :]

    def process(self, x, params):
        return in_blocks(self._block, x, params)

    def _block(self, x, params):
        x = np.asarray(x, dtype=np.float64)
        filters = (params["tone"], params["lowcut"])
        if filters != self._filters:  # the loop's sections are designed again only when their params change
            self._loop.set_sos(self._loop_sos(params))
            self._filters = filters
        ping = int(params["mode"]) == 1
        self._line.cross = ping
        mix = params["mix"]
        wet_gain, dry_gain = min(1.0, 2.0 * mix), min(1.0, 2.0 * (1.0 - mix))
        delays = self._delay_frames(x.shape[1], params)
        if isinstance(delays, SineSweep):  # the wow's delays, the ping's mono input and the mix in the loop
            return self._line.process_swept(x, sweep=delays, feedback=float(params["feedback"]), dry=x,
                                            wet_gain=wet_gain, dry_gain=dry_gain, positions=_SWEPT_POSITIONS,
                                            loop=_STEREO_SWEPT, mono_in=ping)
        if ping:
            mono = (x[0] + x[1]) * MONO_GAIN
            feed = np.stack([mono, np.zeros_like(mono)])
        else:
            feed = x
        wet = self._line.process(feed, delay_frames=delays, feedback=float(params["feedback"]))
        wet *= wet_gain  # in place: the same sum as dry·x + wet·y, without temporaries
        wet += dry_gain * x
        return wet


class Chorus(Effect):
    spec = HOUSE_SPECS["core.chorus"]

    def __init__(self, *, sr, tempo_bpm, seed, params):
        super().__init__(sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._line = FeedbackDelay(channels=2)  # runs only process_swept, with its own compiled loop
        self._lfo = _Lfo(_lfo_phase(seed, 2))

    def process(self, x, params):
        return in_blocks(self._block, x, params)

    def _block(self, x, params):
        x = np.asarray(x, dtype=np.float64)
        n = x.shape[1]
        base_s = params["delay"] / 1000.0
        sweep_s = params["depth"] * min(base_s / 2.0, CHORUS_MAX_SWEEP_S)
        offset = params["width"] * math.pi / 2.0
        # delays max((sin(phase [+ offset])·sweep + base)·sr, 2) and the crossfade, computed in the loop
        sweep = self._lfo.sweep(n, rate_hz=params["rate"], sr=self.sr, scale=sweep_s, offset=base_s,
                                gain=self.sr, offsets=(0.0, offset))
        mix = params["mix"]
        return self._line.process_swept(x, sweep=sweep, feedback=float(params["feedback"]), dry=x,
                                        wet_gain=mix, dry_gain=1.0 - mix, positions=_SWEPT_POSITIONS,
                                        loop=_STEREO_SWEPT)
