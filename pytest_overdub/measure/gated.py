"""Gated level statistics: ``rmsGated``, ``peakGated`` and ``crestGated``, the music only (docs/meters.md).

``rms``, ``peak`` and ``crest`` read every sample, so silence counts: appending a minute of silence to a
song lowers its rms and raises its crest factor without changing a note of the music. The gated figures
read the signal the way BS.1770-4 reads loudness, by gated blocks, but unweighted:

* Mean squares (all channels, as ``rms``) per 100 ms segment (segment k spans samples ``round(k sr/10)``
  up to ``round((k+1) sr/10)``, as :mod:`pytest_overdub.measure.loudness`); a **block** is four consecutive
  segments (400 ms on a 100 ms hop); only blocks wholly inside the signal count.
* A block is **music** when its mean square is above -70 dBFS (absolute gate) and above the power mean of
  the blocks that passed the absolute gate minus 20 dB (relative gate, as EBU Tech 3342's): digital
  silence, a reverb tail dying away and a near-silent pad never count.
* ``rmsGated`` is the power mean of the music blocks in dBFS; ``peakGated`` the largest ``|x|`` over the
  samples the music blocks cover, so a click in the silence does not count either; ``crestGated`` is
  ``peakGated - rmsGated``. No music block: -120, -120 and 0 (as silence reads for ``crest``).
* On a signal that is music throughout they agree with ``rms``/``peak``/``crest`` up to how the
  overlapping blocks weigh the first and last 300 ms.
* They need one block, 400 ms; shorter signals are refused (:class:`~pytest_overdub.errors.TooShortError`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_overdub.measure._input import FLOOR_DB, amplitude_db, as_signal, power_db
from pytest_overdub.measure.minimums import require

SEGMENT_S = 0.1
BLOCK_SEGMENTS = 4
ABSOLUTE_GATE_DBFS = -70.0
RELATIVE_GATE_DB = -20.0


@dataclass(frozen=True)
class GatedLevels:
    """``rms_db``, ``peak_db`` and ``crest_db`` over the music blocks; ``blocks``/``music`` count them."""

    rms_db: float
    peak_db: float
    crest_db: float
    blocks: int
    music: int


def gated_levels_of(x: np.ndarray, *, sr: int) -> GatedLevels:
    """The gated figures of a validated ``(channels, n)`` signal (see the module docstring)."""
    require("rmsGated", x.shape[1], sr)
    n = x.shape[1]
    n_seg = int(np.floor(n / (sr * SEGMENT_S) + 1e-9))
    bounds = np.round(np.arange(n_seg + 1) * sr * SEGMENT_S).astype(np.int64)
    sq = (x[:, : bounds[-1]] ** 2).sum(axis=0)
    seg_energy = np.add.reduceat(sq, bounds[:-1])
    seg_peak = np.maximum.reduceat(np.abs(x[:, : bounds[-1]]).max(axis=0), bounds[:-1])
    k = BLOCK_SEGMENTS
    energy = np.convolve(seg_energy, np.ones(k), mode="valid")
    power = energy / ((bounds[k:] - bounds[:-k]) * x.shape[0])
    music = power > 10.0 ** (ABSOLUTE_GATE_DBFS / 10.0)
    if music.any():
        music &= power > power[music].mean() * 10.0 ** (RELATIVE_GATE_DB / 10.0)
    if not music.any():
        return GatedLevels(FLOOR_DB, FLOOR_DB, 0.0, int(power.size), 0)
    covered = np.convolve(music.astype(np.int64), np.ones(k, dtype=np.int64), mode="full") > 0
    rms_db = power_db(float(power[music].mean()))
    peak_db = amplitude_db(float(seg_peak[covered].max()))
    return GatedLevels(rms_db, peak_db, peak_db - rms_db, int(power.size), int(music.sum()))


def gated_levels(x: np.ndarray, *, sr: int) -> GatedLevels:
    """:func:`gated_levels_of` of any signal the meters accept."""
    arr, rate = as_signal(x, sr)
    return gated_levels_of(arr, sr=rate)
