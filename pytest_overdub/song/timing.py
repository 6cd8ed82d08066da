"""Beats <-> seconds <-> frames at a song's tempo, section spans, and where a song ends (docs/rendering.md).

Conventions:

* Time is 0-based. Beats are quarter notes at ``tempo`` bpm (one tempo per song), so
  ``seconds = beats * 60 / tempo``.
* A time in seconds becomes a frame index by rounding half up (``floor(s * sr + 0.5)``), never with
  Python's banker's rounding, so a beat lands on the same frame in every process.
* The song ends at the later of the last clip end and the last section end, rounded UP to a whole bar
  (``meter[0] * 4 / meter[1]`` beats); the renderer adds a tail of :data:`TAIL_S` seconds so reverbs and
  delays ring out. An empty song ends at beat 0 (the render is the tail alone).

Pure Python: importing this module does not import numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import SongError
from .model import Song

#: Seconds rendered after the song's end so tails ring out.
TAIL_S = 1.5
#: Tolerance when rounding beats up to a bar, so 31.999999999 beats is bar 8, not bar 9.
_BAR_EPS = 1e-9


def beats_to_seconds(beats: float, *, tempo_bpm: float) -> float:
    return float(beats) * 60.0 / float(tempo_bpm)


def seconds_to_beats(seconds: float, *, tempo_bpm: float) -> float:
    return float(seconds) * float(tempo_bpm) / 60.0


def seconds_to_frames(seconds: float, *, sr: int) -> int:
    """The frame at ``seconds``, rounded half up."""
    return int(math.floor(float(seconds) * int(sr) + 0.5))


def content_end_beats(song: Song) -> float:
    """The later of the last clip end and the last section end, in beats (0 for an empty song)."""
    ends = [c.start + c.length for tr in song.tracks for c in tr.clips]
    ends += [s.start + s.length for s in song.sections]
    return max(ends, default=0.0)


def song_end_beats(song: Song) -> float:
    """:func:`content_end_beats` rounded up to a whole bar of the song's meter."""
    bar = song.beats_per_bar
    bars = math.ceil(content_end_beats(song) / bar - _BAR_EPS)
    return max(bars, 0) * bar


@dataclass(frozen=True)
class Span:
    """A stretch of the timeline in beats: ``start_beats`` inclusive, ``end_beats`` exclusive."""

    start_beats: float
    end_beats: float

    @property
    def length_beats(self) -> float:
        return self.end_beats - self.start_beats


def section_span(song: Song, ref: str) -> Span:
    """The span of a section named by id or name (case-insensitive); :class:`SongError` if unknown."""
    sec = song.section(ref)
    if sec is None:
        known = ", ".join(repr(s.name or s.id) for s in song.sections) or "none (the song has no sections)"
        raise SongError(f"section {ref!r} is not in song {song.id!r}; its sections are: {known}")
    return Span(sec.start, sec.start + sec.length)


def section_spans(song: Song) -> dict[str, Span]:
    """Every section's span keyed by section id, in song order."""
    return {s.id: Span(s.start, s.start + s.length) for s in song.sections}


@dataclass(frozen=True)
class Timeline:
    """The clock of one render: tempo, sample rate and the song's end.

    ``n_frames`` covers the song to its (bar-rounded) end plus the :data:`TAIL_S` tail.
    """

    tempo_bpm: float
    sr: int
    beats_per_bar: float
    end_beats: float
    tail_s: float = TAIL_S

    @classmethod
    def of(cls, song: Song, *, sr: int = 48000) -> "Timeline":
        return cls(tempo_bpm=float(song.tempo), sr=int(sr), beats_per_bar=song.beats_per_bar,
                   end_beats=song_end_beats(song))

    def beats_to_seconds(self, beats: float) -> float:
        return beats_to_seconds(beats, tempo_bpm=self.tempo_bpm)

    def seconds_to_beats(self, seconds: float) -> float:
        return seconds_to_beats(seconds, tempo_bpm=self.tempo_bpm)

    def seconds_to_frames(self, seconds: float) -> int:
        return seconds_to_frames(seconds, sr=self.sr)

    def beats_to_frames(self, beats: float) -> int:
        return self.seconds_to_frames(self.beats_to_seconds(beats))

    def frames_to_beats(self, frames: float) -> float:
        return self.seconds_to_beats(float(frames) / self.sr)

    @property
    def end_s(self) -> float:
        """The song's end (bar-rounded, without the tail) in seconds."""
        return self.beats_to_seconds(self.end_beats)

    @property
    def n_frames(self) -> int:
        """Frames in a render: the song to its end plus the tail."""
        return self.seconds_to_frames(self.end_s + self.tail_s)

    def span_frames(self, span: Span) -> tuple[int, int]:
        """``(first, stop)`` frames of a span, clamped to the render."""
        n = self.n_frames
        a = min(max(self.beats_to_frames(span.start_beats), 0), n)
        b = min(max(self.beats_to_frames(span.end_beats), a), n)
        return a, b


def timeline(song: Song, *, sr: int = 48000) -> Timeline:
    """The :class:`Timeline` of ``song`` rendered at ``sr``."""
    return Timeline.of(song, sr=sr)
