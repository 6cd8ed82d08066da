"""The one contract every device keeps, house or song-defined.

Conventions (the renderer relies on them):

* Audio is float64, shaped ``(2, n)`` (left, right), at the render's sample rate ``sr`` (48 kHz canonical).
* A device is built once per track render with ``sr``, ``tempo_bpm``, ``seed`` (an int derived from stable
  ids: the device id and the track id) and its resolved params (defaults overlaid, clamped, snapped).
* **Effects** get ``process(x, params)`` called with whole-track audio or consecutive long segments of it
  (automation splits a track into segments); they keep their own state between calls, so the output
  does not depend on where the segments are cut (block-size invariance is tested). ``params`` is the
  full resolved dict for that segment. ``latency_frames`` is the delay the device adds (a limiter's
  lookahead); the renderer compensates it so timeline positions stay exact.
* **Instruments** get ``render(notes, n_frames=...)`` once per track with every note of the track
  (clip offsets, clip lengths and mutes already applied). Each note carries the params in force at its
  onset (automation is read at note-on). The instrument returns the whole ``(2, n_frames)`` buffer.
* No clock, no unseeded randomness: a device that needs noise draws it from
  ``numpy.random.default_rng([seed, note.index])`` or similar.
* An array a device returns becomes the renderer's: a writeable array that owns its memory may be scaled
  or overwritten in place (saving a whole-track copy), so return a fresh array, or mark one you keep
  read-only (``arr.flags.writeable = False``). Views (of the input, of a buffer) are always copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Mapping

import numpy as np

from .params import DeviceSpec


@dataclass(frozen=True)
class NoteEvent:
    """One note as an instrument sees it: times in seconds from the song's start."""

    start_s: float
    dur_s: float
    pitch: int
    velocity: float  # 0..1
    index: int  # the note's position in the track (stable; seeds per-note randomness)
    params: Mapping[str, float]  # resolved params at note-on


class Effect:
    """Base class of house effects. Subclasses set ``spec`` and implement ``process``."""

    spec: ClassVar[DeviceSpec]
    latency_frames: int = 0

    def __init__(self, *, sr: int, tempo_bpm: float, seed: int, params: Mapping[str, float]):
        self.sr = int(sr)
        self.tempo_bpm = float(tempo_bpm)
        self.seed = int(seed)
        self.params = dict(params)

    def process(self, x: np.ndarray, params: Mapping[str, float]) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def passes_through(self, params: Mapping[str, float]) -> bool:
        """True when ``process(x, params)`` returns the samples of ``x`` unchanged, whatever ``x``, with no
        latency: a streamed chain then hands its input on without calling it. False unless a device says."""
        return False


class Instrument:
    """Base class of house instruments. Subclasses set ``spec`` and implement ``render``."""

    spec: ClassVar[DeviceSpec]

    def __init__(self, *, sr: int, tempo_bpm: float, seed: int, params: Mapping[str, float]):
        self.sr = int(sr)
        self.tempo_bpm = float(tempo_bpm)
        self.seed = int(seed)
        self.params = dict(params)

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError
