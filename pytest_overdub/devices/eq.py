"""``core.eq``: 4th-order high- and low-pass, low shelf, mid bell, high shelf, output gain.

Conventions: the high-pass is off at its minimum (10 Hz) and the low-pass off at its maximum
(22000 Hz); both are 4th-order Butterworth (-3 dB at the set frequency, 24 dB/octave). Shelves and the
bell are RBJ cookbook biquads (:mod:`pytest_overdub.dsp.filters`): a shelf's half-gain point (in dB) is
at its frequency (so a +6 dB high shelf at 7 kHz is +3 dB at 7 kHz and reaches +6 dB well above it),
the bell's width is ``q``. A stage at 0 dB (or off) is skipped. Coefficients are recomputed on every
call (automation) while each stage keeps its state.
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

    def _sections(self, p: Mapping[str, float]) -> dict[str, np.ndarray | None]:
        sr = self.sr
        return {
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

    def passes_through(self, params: Mapping[str, float]) -> bool:
        """Every band off and the gain at 0 dB: :meth:`process` returns a copy of its input."""
        return params["gain"] == 0.0 and all(sos is None for sos in self._sections(params).values())

    def process(self, x: np.ndarray, params: Mapping[str, float]) -> np.ndarray:
        y = np.asarray(x, dtype=np.float64)
        for name, sos in self._sections(params).items():
            if sos is None:
                self._stages.pop(name, None)  # off: a later re-enable starts from rest
                continue
            stage = self._stages.get(name)
            if stage is None:
                stage = self._stages[name] = SOSFilter(sos, loop=SOS)
            else:
                stage.set_sos(sos)
            y = stage.process(y)
        gain = db_to_gain(params["gain"])
        return y * gain if gain != 1.0 else y.copy()
