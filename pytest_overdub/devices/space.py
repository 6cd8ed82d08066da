"""``core.verb`` (an algorithmic reverb) and ``core.width`` (mid/side width, balance, MONO BASS).

Reverb signal flow: mono sum ``(L + R)/2`` → pre-delay (``predelay`` ms) → four Schroeder allpasses
(input diffusion) → an 8-line feedback delay network (Hadamard matrix; line lengths scale with
``size``; per-line gains give RT60 = ``decay`` seconds at low frequencies; a one-pole damping low-pass
in the loop: a two-tap averaging low-pass whose weight is ``damp/2``, from flat at ``damp = 0`` to a
zero at Nyquist at ``damp = 1``) → two decorrelated
output taps (left, right) → ``width`` on the wet's side → ``lowcut`` (2nd-order Butterworth high-pass on
the wet) → equal-power mix: ``dry·cos(mix·π/2) + wet·sin(mix·π/2)``.

Width conventions: mid ``(L + R)/2``, side ``(L - R)/2``; ``width`` scales the side (0 makes L == R
exactly, 2 doubles the side). MONO BASS (off at 20 Hz) removes the side below the cutoff with a
complementary 4th-order Linkwitz-Riley split: the side keeps only its high band, the mid passes the
split's allpass (lo + hi) so mid and side stay phase-aligned above the split. The split sits one octave
above the cutoff, so at the cutoff the side is already 24 dB down and below it falls a further
24 dB/octave (a split *at* the cutoff would leave the side only 6 dB down there: not mono). Then the
balance pan and the gain (see :func:`~pytest_overdub.dsp.dynamics.balance_gains`).
"""

from __future__ import annotations

import math

import numpy as np
from ..dsp.jit import njit

from ..dsp.delay import (FeedbackDelayNetwork, IntegerDelay, SchroederAllpass, comb_samples, fdn_samples,
                         hadamard)
from ..dsp.compiled import SOS
from ..dsp.dynamics import balance_gains, db_to_gain
from ..dsp.filters import Crossover, SOSFilter, rbj_biquad
from .base import Effect
from .dynamics import apply_gain_pan, in_blocks
from .params import HOUSE_SPECS

LINE_MS = (29.3, 33.7, 37.9, 41.1, 45.7, 49.9, 53.3, 59.9)
DIFFUSER_MS = (4.77, 3.59, 12.73, 9.31)
DIFFUSER_GAIN = 0.6
WET_GAIN = 0.7
MONOBASS_OFF_HZ = 20.0
MONOBASS_SPLIT_RATIO = 2.0


def width_samples(x0, x1, half_width, gain_left, gain_right, out0, out1):  # pragma: no cover - compiled
    """``core.width`` without MONO BASS, frame by frame: mid ``(L + R)·0.5``, side ``(L - R)·half_width``,
    ``out = [(mid + side)·gain_left, (mid - side)·gain_right]``; the products and sums of the numpy steps
    (:func:`~.dynamics.apply_gain_pan` on the stacked mid ± side) in the same order.

    These loops take the channels as separate rows: a row of a block cut from a longer array is
    contiguous and the loop vectorises, where the 2-D block, its row stride unknown, does not (2.1 ->
    1.0 ns a frame for :func:`add_scaled`)."""
    for i in range(x0.shape[0]):
        a = x0[i]
        b = x1[i]
        mid = (a + b) * 0.5
        side = (a - b) * half_width
        out0[i] = (mid + side) * gain_left
        out1[i] = (mid - side) * gain_right


def mono_into(x0, x1, out):  # pragma: no cover - compiled
    """``out[i] = (x0[i] + x1[i])·0.5``: the reverb's mono sum, written where the pre-delay wants it."""
    for i in range(x0.shape[0]):
        out[i] = (x0[i] + x1[i]) * 0.5


def add_scaled(y, gain, x):  # pragma: no cover - compiled
    """``y += gain·x`` for one row (numpy's ``y += gain * x`` makes ``gain * x`` first; the products and
    sums are the same)."""
    for i in range(y.shape[0]):
        y[i] = y[i] + gain * x[i]


# The diffusers' comb recursion and the FDN run sample by sample, compiled (cache in __pycache__).
_COMB = njit(cache=True)(comb_samples)
_FDN = njit(cache=True)(fdn_samples)
_SOS = SOS  # the low cut and the crossover: sosfilt's arithmetic without its per-call overhead
_WIDTH = njit(cache=True)(width_samples)
_MONO = njit(cache=True)(mono_into)
_ADD_SCALED = njit(cache=True)(add_scaled)


class Reverb(Effect):
    spec = HOUSE_SPECS["core.verb"]

    def __init__(self, *, sr, tempo_bpm, seed, params):
        super().__init__(sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._predelay = IntegerDelay(0)
        self._diffusers = [SchroederAllpass(delay_frames=max(2, round(ms * self.sr / 1000.0)),
                                            gain=DIFFUSER_GAIN, loop=_COMB) for ms in DIFFUSER_MS]
        h = hadamard(8) * math.sqrt(8.0)  # ±1 rows
        self._taps = np.stack([h[1], h[2]]) * (WET_GAIN / math.sqrt(8.0))  # (left, right) from the lines
        self._fdn = FeedbackDelayNetwork(**self._fdn_args(params), sr=self.sr, out=self._taps, loop=_FDN)
        self._lowcut = SOSFilter(rbj_biquad("hp", freq_hz=params["lowcut"], sr=self.sr), loop=_SOS)

    def _fdn_args(self, p) -> dict:
        scale = 0.35 + 1.3 * p["size"]
        delays = [max(2, round(ms * scale * self.sr / 1000.0)) for ms in LINE_MS]
        return {"delays_frames": delays, "rt60_s": p["decay"], "damp": 0.5 * p["damp"]}

    def process(self, x, params):
        return in_blocks(self._block, x, params)

    def _block(self, x, params):
        x = np.asarray(x, dtype=np.float64)
        key = (params["size"], params["decay"], params["damp"], params["lowcut"], params["predelay"])
        if key != self.__dict__.get("_set_for"):  # the lines, the low cut and the pre-delay follow the params
            self._set_for = key
            self._fdn.set(**self._fdn_args(params))
            self._lowcut.set_sos(rbj_biquad("hp", freq_hz=params["lowcut"], sr=self.sr))
            self._predelay.frames = int(round(params["predelay"] * self.sr / 1000.0))
        mono = self._mono_predelayed(x)
        for ap in self._diffusers:
            mono = ap.process(mono)
        angle = params["mix"] * math.pi / 2.0
        # width (mid ± side) and the wet gain are linear, so they fold into the FDN's output taps; the
        # lowcut is linear too, so scaling before it is the same as after
        w = 0.5 * params["width"]
        shape = np.array([[0.5 + w, 0.5 - w], [0.5 - w, 0.5 + w]]) * math.sin(angle)
        self._fdn.out = np.ascontiguousarray(shape @ self._taps)
        wet = self._lowcut.process(self._fdn.process(mono[0]))
        for c in range(2):
            _ADD_SCALED(wet[c], math.cos(angle), x[c])
        return wet

    def _mono_predelayed(self, x: np.ndarray) -> np.ndarray:
        """The mono sum delayed by the pre-delay, ``(1, n)``: the sum is written straight after the line's
        history (what :class:`~pytest_overdub.dsp.delay.IntegerDelay` does with a concatenation)."""
        n = x.shape[1]
        d = self._predelay.frames
        if d <= 0:
            mono = np.empty((1, n))
            _MONO(x[0], x[1], mono[0])
            return mono
        hist = self._predelay.history(d)
        line = np.empty((1, d + n))
        line[:, :d] = hist
        _MONO(x[0], x[1], line[0, d:])
        self._predelay.keep(line[:, n:])
        return line[:, :n]


class Width(Effect):
    spec = HOUSE_SPECS["core.width"]

    def __init__(self, *, sr, tempo_bpm, seed, params):
        super().__init__(sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._xo: Crossover | None = None

    def _split_hz(self, p) -> float | None:
        if p["monobass"] <= MONOBASS_OFF_HZ:
            return None
        return min(p["monobass"] * MONOBASS_SPLIT_RATIO, 0.45 * self.sr)

    def process(self, x, params):
        return in_blocks(self._block, x, params)

    def _block(self, x, params):
        x = np.asarray(x, dtype=np.float64)
        split = self._split_hz(params)
        if split is None:  # mid/side, width, balance and gain in one compiled pass
            self._xo = None
            g = db_to_gain(params["gain"])
            left, right = balance_gains(params["pan"])
            out = np.empty(x.shape)
            _WIDTH(x[0], x[1], 0.5 * params["width"], g * left, g * right, out[0], out[1])
            return out
        mid = (x[0] + x[1]) * 0.5
        side = (x[0] - x[1]) * (0.5 * params["width"])
        if self._xo is None:
            self._xo = Crossover(freq_hz=split, sr=self.sr, loop=_SOS)
        else:
            self._xo.set_freq(freq_hz=split, sr=self.sr)
        mid = self._xo.allpass(mid)
        side = self._xo.high(side)
        return apply_gain_pan(np.stack([mid + side, mid - side]), gain_db=params["gain"],
                              pan=params["pan"])
