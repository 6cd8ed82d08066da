"""Which notes a note check reads: tracks, a beat span and pitches (docs/checks.md, "Scopes and selections").

Conventions:

* A :class:`PlacedNote` is a note as heard on the song's timeline: ``start_beats`` is absolute
  (clip start + ``t``) and ``dur_beats`` is the heard duration ``min(d, clip.length - t)`` (docs/formats.md).
* Not placed: notes with ``t >= clip.length`` (never heard), notes of muted clips, and audio clips.
  A muted *track* still places its notes (:func:`placed_notes` is what is written); a check's selection
  leaves it out (below).
* Tracks are named by id or by name (case-insensitive). Each reference is resolved against the starting
  song first, then the track with that starting id is looked up in the song, so a track the agent renamed
  is still found, and a track the agent removed reads as no notes. A reference only the current song knows
  (a track the agent added) is found by id or name in the current song. ``"new"`` means every track whose id
  the starting song did not have.
* A note is in the span when ``from_beats <= start_beats < to_beats`` (either bound may be absent).
* A check's selection (:func:`select`) reads only what the mix plays: the tracks that play (mute and solo:
  the bench passes the engine's rule, ``render.heard.plays``, as ``track_plays``) with their fader above
  :data:`SILENT_FADER_DB`, and their notes at a velocity, times the clip's gain, of at least
  :data:`MIN_PLAYED_VELOCITY`. A note that is silent or all
  but silent supplies no root, chord tone, hit or turn the ear never gets and pads no count; a muted
  helper track beside a heard one lent the heard line its pitches and turns (the ``heard`` check reads
  the new tracks together).
* Bars are 0-based and given as a ``range`` or a ``(first, last)`` pair with ``last`` exclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..errors import TaskError
from ..song.model import Song, Track
from .theory import parse_pitch

#: How far from a beat an onset may start and still count as on it, in every reading that asks "on the
#: beat" (``pattern``, ``roots``, ``chordTones``, ``doubling``, ``chordsUnder``, ``copied``, ``quantized``):
#: 30 ms either side, turned into beats at the starting song's tempo by :func:`on_beat_tol_beats`.
ON_BEAT_TOL_S = 0.030


def on_beat_tol_beats(tempo_bpm: float) -> float:
    """:data:`ON_BEAT_TOL_S` in beats at ``tempo_bpm`` (0.046 beats at 92 bpm, 0.06 at 120)."""
    if not tempo_bpm > 0:
        raise TaskError(f"tempo {tempo_bpm!r}: expected beats per minute > 0")
    return ON_BEAT_TOL_S * tempo_bpm / 60.0


NEW = "new"

#: The softest velocity (times the clip's gain) a check's selection reads as played: 0.1 (MIDI 13), 18 dB
#: under a note at 0.8. The bench's songs play nothing softer than 0.28 (a ghost snare); a silent root
#: (velocity 0, or a clip at -96 dB) under a fifth on each downbeat read as the root and scored 1.0 on
#: write-bassline.
MIN_PLAYED_VELOCITY = 0.1
#: A track whose fader is this low or lower is not played: 30 dB down, the bench's "made inaudible".
SILENT_FADER_DB = -30.0


@dataclass(frozen=True)
class PlacedNote:
    """One heard note: MIDI pitch ``p``, absolute ``start_beats``, heard ``dur_beats``, velocity ``v``."""

    track_id: str
    clip_id: str
    note_id: str
    p: int
    start_beats: float
    dur_beats: float
    v: float
    clip_gain_db: float = 0.0

    @property
    def end_beats(self) -> float:
        return self.start_beats + self.dur_beats


def placed_notes(song: Song, track: Track) -> list[PlacedNote]:
    """The heard notes of one track, sorted by (start_beats, p); ties keep clip and note order."""
    out: list[PlacedNote] = []
    for clip in track.clips:
        if clip.mute or clip.kind != "notes":
            continue
        for note in clip.notes:
            if note.t >= clip.length:
                continue
            out.append(PlacedNote(track_id=track.id, clip_id=clip.id, note_id=note.id, p=note.p,
                                  start_beats=clip.start + note.t, dur_beats=min(note.d, clip.length - note.t),
                                  v=note.v, clip_gain_db=clip.gain))
    out.sort(key=lambda n: (n.start_beats, n.p))
    return out


def resolve_tracks(song: Song, refs: Iterable[str] | str | None, *, start_song: Song) -> list[Track]:
    """The tracks of ``song`` that ``refs`` name (see the module docstring); ``None`` = every track.

    The result keeps the order of ``refs`` and lists each track once. A reference neither song knows
    raises :class:`TaskError` naming it and listing the tracks there are.
    """
    if refs is None:
        return list(song.tracks)
    if isinstance(refs, str):
        refs = [refs]
    start_ids = {t.id for t in start_song.tracks}
    found: list[Track] = []
    for ref in refs:
        if not isinstance(ref, str):
            raise TaskError(f"track reference {ref!r}: expected a track name, a track id or \"new\"")
        if ref == NEW:
            found.extend(t for t in song.tracks if t.id not in start_ids)
            continue
        was = start_song.track(ref)
        if was is not None:
            now = next((t for t in song.tracks if t.id == was.id), None)
        else:
            now = song.track(ref)
            if now is None:
                raise TaskError(f"track {ref!r}: no such track; tracks are {_names(song, start_song)} "
                                f"(or \"new\")")
        if now is not None:
            found.append(now)
    unique: dict[str, Track] = {}
    for t in found:
        unique.setdefault(t.id, t)
    return list(unique.values())


def _names(song: Song, start_song: Song) -> str:
    names: list[str] = []
    for t in (*start_song.tracks, *song.tracks):
        label = f"{t.name!r} ({t.id})" if t.name else repr(t.id)
        if label not in names:
            names.append(label)
    return ", ".join(names) if names else "none"


def select(song: Song, *, start_song: Song, tracks: Iterable[str] | str | None = None,
           from_beats: float | None = None, to_beats: float | None = None,
           pitches: Iterable[int | str] | None = None,
           track_plays: Callable[[Song, Track], bool] | None = None) -> list[PlacedNote]:
    """The played notes (see the module docstring: tracks the mix plays, velocity times clip gain at
    least :data:`MIN_PLAYED_VELOCITY`) of the named tracks starting in [from_beats, to_beats) with a pitch
    in ``pitches``.

    ``pitches`` may hold MIDI numbers or names (``"C#2"``); ``None`` keeps every pitch. ``track_plays``
    (the mix's rule, ``render.heard.plays``) leaves out the tracks it says do not play and those faded to
    :data:`SILENT_FADER_DB` or lower; without it every named track is read. Sorted by (start_beats, p).
    """
    wanted = None if pitches is None else frozenset(parse_pitch(p) for p in pitches)
    out: list[PlacedNote] = []
    for track in resolve_tracks(song, tracks, start_song=start_song):
        if track_plays is not None and (not track_plays(song, track) or track.gain <= SILENT_FADER_DB):
            continue
        for n in placed_notes(song, track):
            if from_beats is not None and n.start_beats < from_beats:
                continue
            if to_beats is not None and n.start_beats >= to_beats:
                continue
            if wanted is not None and n.p not in wanted:
                continue
            if n.v * 10 ** (n.clip_gain_db / 20) < MIN_PLAYED_VELOCITY:
                continue
            out.append(n)
    out.sort(key=lambda n: (n.start_beats, n.p))
    return out


def bar_range(bars: range | Sequence[int]) -> range:
    """``range(0, 4)`` or ``(0, 4)`` -> ``range(0, 4)``: bars 0, 1, 2, 3 (the last bound is exclusive)."""
    if isinstance(bars, range):
        r = bars
    elif (isinstance(bars, Sequence) and len(bars) == 2
          and all(isinstance(b, int) and not isinstance(b, bool) for b in bars)):
        r = range(bars[0], bars[1])
    else:
        raise TaskError(f"bars {bars!r}: expected [first, last] bar numbers (0-based, last exclusive)")
    if len(r) == 0 or r.start < 0 or r.step != 1:
        raise TaskError(f"bars {bars!r}: expected at least one bar, first >= 0 and first < last")
    return r
