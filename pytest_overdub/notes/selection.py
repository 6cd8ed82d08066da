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
  the new tracks together). A ``core.bass`` track's notes are read as its one voice plays them
  (:func:`mono_voice`): cut where the next note starts, at the velocity of their legato chain.
* Bars are 0-based and given as a ``range`` or a ``(first, last)`` pair with ``last`` exclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from ..errors import DeviceError, TaskError
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
    #: The note's position among all the track's notes (every clip in clip order, muted or not), as the
    #: renderer numbers them: the order of two notes that start together.
    index: int = field(default=-1, compare=False)

    @property
    def end_beats(self) -> float:
        return self.start_beats + self.dur_beats


def placed_notes(song: Song, track: Track) -> list[PlacedNote]:
    """The heard notes of one track, sorted by (start_beats, p); ties keep clip and note order."""
    out: list[PlacedNote] = []
    index = 0
    for clip in track.clips:
        for note in clip.notes:
            i, index = index, index + 1
            if clip.mute or clip.kind != "notes" or note.t >= clip.length:
                continue
            out.append(PlacedNote(track_id=track.id, clip_id=clip.id, note_id=note.id, p=note.p,
                                  start_beats=clip.start + note.t, dur_beats=min(note.d, clip.length - note.t),
                                  v=note.v, clip_gain_db=clip.gain, index=i))
    out.sort(key=lambda n: (n.start_beats, n.p))
    return out


#: The house instrument with one voice (docs/devices.md, ``core.bass``): what its notes sound like is read
#: by :func:`mono_voice`.
MONO_DEVICE = "core.bass"
#: The house instruments that sound a note at its pitch (docs/devices.md). ``core.drums`` sounds a drum for
#: the notes of its map and nothing for the rest; a song-defined instrument may sound anything.
PITCHED_DEVICES = frozenset({"core.bass", "core.keys", "core.pluck", "core.pad", "core.poly"})
DRUM_DEVICE = "core.drums"


def sounds_as_written(device: str | None, p: int, *, voice: str) -> bool:
    """Whether an instrument ``device`` (a track's, ``None`` for none) sounds note ``p`` as ``voice`` reads
    it: ``"pitched"``, the pitch itself (a pitched house instrument); ``"drums"``, a drum of the kit (a note of
    ``core.drums``'s map, MIDI 35-59 and the shakers). A bassline on the kit is silence, kicks and cymbals;
    a groove on the keys is piano notes; a song-defined instrument is not taken on trust for either."""
    if voice == "pitched":
        return device in PITCHED_DEVICES
    if voice == "drums":
        from ..devices.drums import PLAYED_NOTES

        return device == DRUM_DEVICE and p in PLAYED_NOTES
    raise ValueError(f"voice {voice!r}: expected 'pitched' or 'drums'")


def mono_voice(track: Track, notes: Sequence[PlacedNote], *, join_repeats: bool = False) -> list[PlacedNote]:
    """``notes`` of a one-voice instrument as they sound: each cut where the next one starts, each played
    at the velocity the voice gives it; notes cut to nothing are left out. Sorted by (start_beats, p).

    The rule is the renderer's for ``core.bass`` (docs/devices.md), read in beats over the notes of each
    clip gain (the clips of one gain share a voice): notes in onset order, ties in the track's note order;
    a note that starts at or before the previous note's end is legato, and in LEGATO mode (``mode`` read at
    its onset) it carries on the envelope of its chain, played at the velocity of the chain's first note. A
    root at velocity 0 that starts a legato chain silences every note of the chain, and a root cut by a
    fifth a tick later is heard for a tick: the selection reads both as the ear does.

    With ``join_repeats`` a legato note in LEGATO mode at the pitch of the note it follows is no new note:
    nothing is struck (the envelope runs on and the pitch stays), so it lengthens that note, as a
    transcription hears it (the render is the same sample for sample, docs/transcription.md).
    """
    mode_at = _mode_reader(track)
    by_gain: dict[float, list[PlacedNote]] = {}
    for n in notes:
        by_gain.setdefault(n.clip_gain_db, []).append(n)
    out: list[PlacedNote] = []
    for group in by_gain.values():
        group.sort(key=lambda n: (n.start_beats, n.index))
        chain_v = 0.0
        heard: list[PlacedNote] = []
        for i, n in enumerate(group):
            legato = i > 0 and n.start_beats <= group[i - 1].end_beats
            held = legato and mode_at(n.start_beats) == 0
            if not held:
                chain_v = n.v
            dur = n.dur_beats if i + 1 == len(group) else min(n.dur_beats, group[i + 1].start_beats - n.start_beats)
            if join_repeats and held and heard and heard[-1].p == n.p and heard[-1].end_beats >= n.start_beats:
                heard[-1] = replace(heard[-1], dur_beats=max(dur, 0.0) + n.start_beats - heard[-1].start_beats)
            elif dur > 0:
                heard.append(replace(n, v=chain_v, dur_beats=dur))
        out.extend(heard)
    out.sort(key=lambda n: (n.start_beats, n.p))
    return out


def _mode_reader(track: Track) -> Callable[[float], float]:
    """``core.bass``'s ``mode`` (0 LEGATO, 1 RETRIG) at a beat, as the renderer reads it: the static value
    (a value it cannot read is ignored), or the automation's straight line between points, held outside
    them, clamped and snapped to an option."""
    from ..devices.params import house_spec
    param = house_spec(MONO_DEVICE).param("mode")
    try:
        static = param.coerce(track.instrument.params.get("mode", param.default), clamp=True)
    except DeviceError:
        static = float(param.default)
    points = sorted(track.instrument.auto.get("mode", ()), key=lambda pt: pt.t)
    if not points:
        return lambda beat: static

    def at(beat: float) -> float:
        if beat <= points[0].t:
            return param.snap(points[0].v)
        for a, b in zip(points, points[1:]):
            if beat <= b.t:
                w = 0.0 if b.t == a.t else (beat - a.t) / (b.t - a.t)
                return param.snap(a.v + w * (b.v - a.v))
        return param.snap(points[-1].v)
    return at


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
        placed = placed_notes(song, track)
        if track.instrument is not None and track.instrument.device == MONO_DEVICE:
            placed = mono_voice(track, placed)
        for n in placed:
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
