"""``core.eq``: 4th-order high- and low-pass, low shelf, mid bell, high shelf, output gain.

Conventions: the high-pass is off at its minimum (10 Hz) and the low-pass off at its maximum
(22000 Hz); both are 4th-order Butterworth (-3 dB at the set frequency, 24 dB/octave). Shelves and the
bell are RBJ cookbook biquads (:mod:`pytest_overdub.dsp.filters`): a shelf's half-gain point (in dB) is
at its frequency (so a +6 dB high shelf at 7 kHz is +3 dB at 7 kHz and reaches +6 dB well above it),
the bell's width is ``q``. A stage at 0 dB (or off) is skipped. Coefficients are recomputed when a param
changes (automation) while each stage keeps its state; the active stages run as one cascade (the same
samples as one stage after another).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..dsp.compiled import SOS
from ..dsp.dynamics import db_to_gain
from ..dsp.filters import SOSFilter, butterworth, rbj_biquad
from .base import Effect
from .params import HOUSE_SPECS

HP_OFF_HZ = 10.0
LP_OFF_HZ = 22000.0


class EQ(Effect):
    spec = HOUSE_SPECS["core.eq"]

    def __init__(self, *, sr, tempo_bpm, seed, params):
        super().__init__(sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._stages: dict[str, SOSFilter] = {}
        self._memo: tuple[tuple[float, ...], dict[str, np.ndarray | None]] | None = None

    def _sections(self, p: Mapping[str, float]) -> dict[str, np.ndarray | None]:
        """Each stage's sections for params ``p`` (None: the stage is off), computed again only when a
        param they depend on changed (a block of a long track, or a segment of automation, calls with the
        same values)."""
        key = tuple(float(p[k]) for k in ("hp", "low", "lowf", "mid", "midf", "q", "high", "highf", "lp"))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        sr = self.sr
        sections = {
            "hp": butterworth("hp", order=4, freq_hz=p["hp"], sr=sr) if p["hp"] > HP_OFF_HZ else None,
            "low": (rbj_biquad("lowshelf", freq_hz=p["lowf"], sr=sr, gain_db=p["low"])
                    if p["low"] != 0 else None),
            "mid": (rbj_biquad("peak", freq_hz=p["midf"], sr=sr, q=p["q"], gain_db=p["mid"])
                    if p["mid"] != 0 else None),
            "high": (rbj_biquad("highshelf", freq_hz=p["highf"], sr=sr, gain_db=p["high"])
                     if p["high"] != 0 else None),
            "lp": (butterworth("lp", order=4, freq_hz=p["lp"], sr=sr)
                   if p["lp"] < LP_OFF_HZ and p["lp"] < 0.49 * sr else None),
        }
        self._memo = (key, sections)
        return sections

    def passes_through(self, params: Mapping[str, float]) -> bool:
        """Every band off and the gain at 0 dB: :meth:`process` returns a copy of its input."""
        return params["gain"] == 0.0 and all(sos is None for sos in self._sections(params).values())

    def process(self, x: np.ndarray, params: Mapping[str, float]) -> np.ndarray:
        y = np.asarray(x, dtype=np.float64)
        active: list[SOSFilter] = []
        for name, sos in self._sections(params).items():
            if sos is None:
                self._stages.pop(name, None)  # off: a later re-enable starts from rest
                continue
            stage = self._stages.get(name)
            if stage is None:
                stage = self._stages[name] = SOSFilter(sos, loop=SOS)
            else:
                stage.set_sos(sos)
            active.append(stage)
        fresh = bool(active)
        if len(active) > 1 and y.ndim == 2:
            y = _cascade(active, y)
        else:
            for stage in active:
                y = stage.process(y)
        gain = db_to_gain(params["gain"])
        if gain != 1.0:
            return y * gain
        return y if fresh else y.copy()


def _cascade(stages: list[SOSFilter], x: np.ndarray) -> np.ndarray:
    """``x`` (channels, n) through ``stages`` in order, in one call of the compiled loop: their sections
    joined into one cascade with their states, the states written back after. Each section does the same
    arithmetic on each sample as stage after stage would (the samples are the same), but the loop runs
    sections two at a time, so a shelf or the bell pairs with its neighbour instead of taking a pass alone."""
    channels = x.shape[0]
    states = [stage.state(channels) for stage in stages]
    sos = np.concatenate([stage.sos for stage in stages])
    zi = np.concatenate(states)
    y = np.empty(x.shape)
    SOS(sos, x, zi, y)
    at = 0
    for state in states:
        state[...] = zi[at:at + state.shape[0]]
        at += state.shape[0]
    return y
