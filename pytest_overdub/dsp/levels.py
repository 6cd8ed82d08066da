"""Levels in decibels: the package's one set of conversions between dB and amplitude or power.

Every layer takes its dB helpers from here: devices and the kernel stdlib (``dsp.db``, ``dsp.to_db``),
the engine's track, clip and master gains, the meters and the bench's probes.

Conventions:

* dB of an amplitude is ``20 log10 |g|``; dB of a power is ``10 log10 p``. Full scale (1.0) is 0 dB.
* :data:`FLOOR_DB` (-120) is the floor of every figure and conversion to dB: silence reads -120, never
  -inf or NaN. :data:`CEILING_DB` (+120) caps a ratio that can grow without bound.
* :func:`db_to_gain` computes ``10 ** (db / 20)`` as ``exp(db · ln(10) / 20)``: the same value to within
  an ulp or two, about three times faster in numpy (the compressor and limiter take it of every frame);
  0 dB gives exactly 1. A scalar gives a float, an array an array.

Importing this module imports nothing but :mod:`math` (the bench's check definitions take
:data:`FLOOR_DB` from here before numpy is loaded); the functions import numpy when called.
"""

from __future__ import annotations

import math

#: What the kernel stdlib re-exports (``dsp.db`` and ``dsp.to_db`` are the first two).
__all__ = ["db_to_gain", "gain_to_db", "power_db", "amplitude_db"]

#: The floor of every dB figure and conversion.
FLOOR_DB = -120.0
#: The ceiling used where a ratio can grow without bound (the side level of opposite channels).
CEILING_DB = 120.0
#: ln(10) / 20: ``10 ** (db / 20) == exp(db * LN10_OVER_20)``.
LN10_OVER_20 = math.log(10.0) / 20.0


def db_to_gain(db):
    """Amplitude factor of a level in dB (see the module's conventions).

    >>> round(db_to_gain(-6.0206), 4), db_to_gain(0.0)
    (0.5, 1.0)
    """
    import numpy as np

    if np.ndim(db):
        g = np.multiply(db, LN10_OVER_20, dtype=np.float64)
        return np.exp(g, out=g)
    return math.exp(float(db) * LN10_OVER_20)


def gain_to_db(gain, *, floor_db: float = FLOOR_DB):
    """Level in dB of an amplitude factor (its magnitude), never below ``floor_db`` (-120 by default).

    >>> float(gain_to_db(0.5)) < -6.02, float(gain_to_db(0.0))
    (True, -120.0)
    """
    import numpy as np

    g = np.abs(np.asarray(gain, dtype=np.float64))
    floor_gain = 10.0 ** (floor_db / 20.0)
    return 20.0 * np.log10(np.maximum(g, floor_gain))


def power_db(power: float) -> float:
    """``10 log10(power)`` between :data:`FLOOR_DB` and :data:`CEILING_DB`; zero or negative power reads
    the floor."""
    import numpy as np

    if not power > 0.0:
        return FLOOR_DB
    return float(min(max(10.0 * np.log10(power), FLOOR_DB), CEILING_DB))


def amplitude_db(amplitude: float) -> float:
    """``20 log10(amplitude)``, as :func:`power_db` of its square (the same floor and ceiling)."""
    return power_db(float(amplitude) ** 2)
