"""``core.comp``, ``core.limiter`` and ``core.gain``: dynamics and level.

* Balance pan (docs/rendering.md): centre is unity on both sides; ``pan > 0`` leaves the right at unity and
  scales the left by ``cos(pan·π/2)``; ``pan < 0`` mirrors it.
* Compressor: feed-forward, stereo-linked (the level is ``max(|L|, |R|)``), gain computer in dB with a
  quadratic soft knee, then the smooth decoupled log-domain detector of Giannoulis, Massberg & Reiss
  (JAES 2012) on the gain reduction: an instant-attack exponential release (time constant ``release``)
  followed by a one-pole attack (time constant ``attack``). ``makeup`` is added after.
* Limiter: ``gain`` dB of drive, then a true-peak lookahead limiter holding ``ceiling`` dBTP: the 4×
  interpolated peak of every frame (:class:`~pytest_overdub.dsp.oversample.TruePeakDetector`) sets the
  attenuation it needs; a sliding max over the lookahead, an exponential release (``release``) and a box
  average over the lookahead turn that into a smooth gain that is never less attenuation than any frame
  near the one it is applied to needs. The audio is delayed by :attr:`Limiter.latency_frames`.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
from ..dsp.jit import njit

from ..dsp.delay import IntegerDelay
from ..dsp.dynamics import balance_gains, compressor_samples, db_to_gain, release_coeff
from ..dsp.levels import LN10_OVER_20
from ..dsp.oversample import TruePeakDetector, true_peak_samples
from .base import Effect
from .params import HOUSE_SPECS

LIMITER_LOOKAHEAD_S = 0.003
LIMITER_MARGIN_DB = 0.02  # aims this far under the ceiling to absorb interpolation error

# The 4x interpolation and the compressor's whole pass run compiled (cache in __pycache__); so does the
# limiter's lookahead smoothing below.
_TRUE_PEAK = njit(cache=True)(true_peak_samples)
_COMPRESSOR = njit(cache=True)(compressor_samples)


#: Long inputs are processed in blocks of this many frames, state carried (so the samples are those of one
#: call): the temporaries stay small and are reused, instead of a fresh full-length array (140 MB for a
#: 3-minute stereo track, every page faulted in) for each intermediate step.
BLOCK_FRAMES = 1 << 15


def in_blocks(step, x: np.ndarray, params, *, block_frames: int = BLOCK_FRAMES) -> np.ndarray:
    """``step(x, params)`` applied to consecutive blocks of ``x`` (channels, n), joined along time.

    Only for a stateful ``step`` whose output does not depend on how its input is split (every house
    effect: see the block-size invariance tests)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[1]
    if n <= block_frames:
        return step(x, params)
    first = step(x[:, :block_frames], params)
    out = np.empty((first.shape[0], n))
    out[:, :block_frames] = first
    for s in range(block_frames, n, block_frames):
        e = min(n, s + block_frames)
        out[:, s:e] = step(x[:, s:e], params)
    return out


def apply_gain_pan(x: np.ndarray, *, gain_db: float, pan: float) -> np.ndarray:
    """``x`` times ``gain_db`` with a balance pan; a fresh array."""
    g = db_to_gain(gain_db)
    left, right = balance_gains(pan)
    return x * np.array([[g * left], [g * right]])


class Gain(Effect):
    spec = HOUSE_SPECS["core.gain"]

    def passes_through(self, params):
        """0 dB, centred: :meth:`process` multiplies by exactly 1."""
        return params["gain"] == 0.0 and params["pan"] == 0.0

    def process(self, x, params):
        return apply_gain_pan(np.asarray(x, dtype=np.float64), gain_db=params["gain"], pan=params["pan"])


class Compressor(Effect):
    spec = HOUSE_SPECS["core.comp"]

    def __init__(self, *, sr, tempo_bpm, seed, params):
        super().__init__(sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._state = np.zeros(2)  # [release stage h, attack stage z]

    def gain_reduction_db(self, x: np.ndarray, params: Mapping[str, float]) -> np.ndarray:
        """The smoothed gain reduction (dB, >= 0) for each frame of ``x``; advances the state."""
        x = np.asarray(x, dtype=np.float64)
        gr = np.empty(x.shape[1])
        self._run(x, params, y=np.empty((x.shape[0], 0)), gr=gr)
        return gr

    def process(self, x, params):
        """The level, gain law, detector and gain in one compiled pass
        (:func:`~pytest_overdub.dsp.dynamics.compressor_samples`), without whole-block temporaries."""
        x = np.asarray(x, dtype=np.float64)
        y = np.empty(x.shape)
        self._run(x, params, y=y, gr=np.empty(0))
        return y

    def _run(self, x, params, *, y, gr) -> None:
        _COMPRESSOR(x, float(params["threshold"]), float(params["ratio"]), float(params["knee"]),
                    float(params["makeup"]), release_coeff(params["release"] / 1000.0, sr=self.sr),
                    release_coeff(params["attack"] / 1000.0, sr=self.sr), self._state, y, gr)


@njit(cache=True)
def _lookahead_smoothing(need, max_hist, box_hist, coeff, state, att):  # pragma: no cover - compiled
    """The limiter's attenuation (dB) from what each frame needs, in one pass: the sliding max over the
    last ``len(max_hist) + 1`` frames (a monotonic queue; a maximum is exact, so it equals
    :func:`~pytest_overdub.dsp.dynamics.window_max`), the instant-attack exponential release
    ``e = max(held, coeff·e)`` (:func:`~pytest_overdub.dsp.dynamics.peak_hold_samples`), and the box
    average over the last ``len(box_hist) + 1`` released values as a difference of running sums (the
    sequential sums of ``np.cumsum``). ``max_hist`` and ``box_hist`` carry the tails between calls
    (updated in place); returns the release state."""
    n = need.shape[0]
    hm = max_hist.shape[0]
    hb = box_hist.shape[0]
    w = hb + 1
    z = np.empty(hm + n)
    z[:hm] = max_hist
    z[hm:] = need
    rel = np.empty(hb + n)
    rel[:hb] = box_hist
    queue = np.empty(hm + n, np.int64)  # indices into z, their values decreasing from head to tail
    head = 0
    tail = 0
    e = state
    for t in range(hm + n):
        v = z[t]
        while tail > head and z[queue[tail - 1]] <= v:
            tail -= 1
        queue[tail] = t
        tail += 1
        i = t - hm  # the window z[i .. t] ends on new frame i
        if i >= 0:
            while queue[head] < i:
                head += 1
            e = max(z[queue[head]], coeff * e)
            rel[hb + i] = e
    lo = 0.0  # running sums: lo = sum(rel[:i]), hi = sum(rel[:i + w])
    hi = 0.0
    for k in range(w):
        hi = hi + rel[k]
    for i in range(n):
        att[i] = (hi - lo) / w
        lo = lo + rel[i]
        if i + w < hb + n:
            hi = hi + rel[i + w]
    max_hist[:] = z[n:]
    box_hist[:] = rel[n:]
    return e


@njit(cache=True)
def _need_db(peak, target_db, quiet, out):  # pragma: no cover - compiled
    """The attenuation (dB) each frame's true peak needs to sit at ``target_db``:
    ``np.maximum(20·log10(peak) - target_db, 0)``, value for value, without the logarithm of a peak under
    ``quiet`` (the target's level less a relative 1e-9 that no rounding reaches: it needs 0)."""
    for i in range(peak.shape[0]):
        p = peak[i]
        if p < quiet:
            out[i] = 0.0
        else:
            v = 20.0 * math.log10(p) - target_db
            out[i] = v if v > 0.0 or v != v else 0.0  # np.maximum's choice, NaN kept


@njit(cache=True)
def _attenuate(y, att):  # pragma: no cover - compiled
    """``y *= db_to_gain(-att)`` frame by frame, in place: ``exp(-att · ln 10 / 20)``, as
    :func:`~pytest_overdub.dsp.levels.db_to_gain` computes it, skipped where ``att`` is 0 (a factor of 1)."""
    for i in range(att.shape[0]):
        a = att[i]
        if a != 0.0:
            g = math.exp(-a * LN10_OVER_20)
            for c in range(y.shape[0]):
                y[c, i] *= g


class Limiter(Effect):
    spec = HOUSE_SPECS["core.limiter"]

    def __init__(self, *, sr, tempo_bpm, seed, params):
        super().__init__(sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self.window = int(round(LIMITER_LOOKAHEAD_S * self.sr)) | 1  # odd, for the centred max filter
        self.latency_frames = self.window + TruePeakDetector.delay_frames
        self._detector = TruePeakDetector(channels=2, loop=_TRUE_PEAK)
        self._audio = IntegerDelay(self.latency_frames)
        span = self.window + 2  # odd: covers the frame a gain is applied to and both neighbours
        self._max_span = span
        self._max_hist = np.zeros(span - 1)
        self._box_hist = np.zeros(self.window - 1)
        self._release_state = 0.0

    def _attenuation_db(self, peak: np.ndarray, params) -> np.ndarray:
        target = params["ceiling"] - LIMITER_MARGIN_DB
        need = np.empty(peak.shape[0])
        _need_db(peak, float(target), db_to_gain(target) * (1.0 - 1e-9), need)
        att = np.empty(need.shape[0])
        coeff = release_coeff(params["release"] / 1000.0, sr=self.sr)
        self._release_state = _lookahead_smoothing(need, self._max_hist, self._box_hist, coeff,
                                                   self._release_state, att)
        return att

    def process(self, x, params):
        return in_blocks(self._block, x, params)

    def _block(self, x, params):
        x = np.asarray(x, dtype=np.float64) * db_to_gain(params["gain"])
        floor = db_to_gain(params["ceiling"] - LIMITER_MARGIN_DB)
        att = self._attenuation_db(self._detector.process(x, floor=floor), params)
        y = self._audio.process(x)  # a fresh array
        _attenuate(y, att)
        return y
