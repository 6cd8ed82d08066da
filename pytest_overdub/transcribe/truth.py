"""The ground truth of a transcription task: the song's own notes per part, in seconds from the mix's start.

A part's truth is every heard note (:func:`~pytest_overdub.notes.selection.placed_notes`: muted clips
skipped, a note cut at its clip's end) of the tracks it names, whose onset lies in the excerpt
``[from, to)``; times are seconds from ``from`` at the song's tempo, and a note still sounding at ``to``
ends there (the mix is cut there). A ``core.bass`` part is read as its one voice plays it
(:func:`~pytest_overdub.notes.selection.mono_voice` with ``join_repeats``): each note cut where the next
starts, and a note re-struck at the same pitch while the last still holds in LEGATO mode is the one long
note the render plays (no attack, so no onset to hear). A generated song drops in unchanged: its notes are
its truth.
"""

from __future__ import annotations

from ..errors import TaskError
from ..notes.selection import MONO_DEVICE, PlacedNote, mono_voice, placed_notes, resolve_tracks
from ..render.heard import heard_tracks
from ..song.model import Song, Track
from ..song.timing import TAIL_S, song_end_beats
from .matching import TimedNote
from .task import TranscriptionTask


def excerpt_beats(task: TranscriptionTask, song: Song) -> tuple[float, float]:
    """``(from, to)`` of the excerpt in beats; ``to`` defaults to the song's end."""
    end = task.to_beats if task.to_beats is not None else song_end_beats(song)
    if end <= task.from_beats:
        raise TaskError(f"task {task.id}: from = {task.from_beats:g} beats is at or after the song's end "
                        f"({end:g} beats)")
    return task.from_beats, end


def mix_seconds(task: TranscriptionTask, song: Song) -> float:
    """How long the mix lasts in seconds: the excerpt, and the render's tail when it runs to the song's
    end (as :func:`~pytest_overdub.transcribe.inputs.render_mix` cuts it; an instrument's own longer tail
    rings on, but no note starts in it)."""
    lo, hi = excerpt_beats(task, song)
    return (hi - lo) * 60.0 / song.tempo + (TAIL_S if hi >= song_end_beats(song) else 0.0)


def heard_ids(task: TranscriptionTask, song: Song) -> list[str] | None:
    """The ids of the tracks in the mix, or None for every track the song plays."""
    if task.heard is None:
        return None
    try:
        return [t.id for t in resolve_tracks(song, task.heard, start_song=song)]
    except TaskError as exc:
        raise TaskError(f"task {task.id}: heard: {exc}") from None


def part_track_ids(task: TranscriptionTask, song: Song, part: str) -> list[str]:
    """The ids of the tracks that make ``part``."""
    try:
        return [t.id for t in resolve_tracks(song, task.parts[part], start_song=song)]
    except TaskError as exc:
        raise TaskError(f"task {task.id}: parts.{part}: {exc}") from None


def reference(task: TranscriptionTask, song: Song) -> dict[str, list[TimedNote]]:
    """Each part's true notes (sorted by onset, then pitch)."""
    lo, hi = excerpt_beats(task, song)
    heard = heard_ids(task, song)
    audible = {t.id for _, t in heard_tracks(song)} if heard is None else set(heard)
    sec = 60.0 / song.tempo
    out: dict[str, list[TimedNote]] = {}
    for part, refs in task.parts.items():
        try:
            tracks = resolve_tracks(song, refs, start_song=song)
        except TaskError as exc:
            raise TaskError(f"task {task.id}: parts.{part}: {exc}") from None
        silent = [t.name for t in tracks if t.id not in audible]
        if silent:
            raise TaskError(f"task {task.id}: parts.{part}: track {silent[0]!r} is not heard in the mix")
        notes = [TimedNote(float(n.p), (n.start_beats - lo) * sec, (min(n.end_beats, hi) - lo) * sec)
                 for t in tracks for n in _sounded(t, placed_notes(song, t)) if lo <= n.start_beats < hi]
        out[part] = sorted(notes, key=lambda n: (n.onset_s, n.pitch))
    return out


def _sounded(track: Track, notes: list[PlacedNote]) -> list[PlacedNote]:
    """The notes a track's instrument strikes: a one-voice ``core.bass`` as :func:`mono_voice` plays them."""
    if track.instrument is not None and track.instrument.device == MONO_DEVICE:
        return mono_voice(track, notes, join_repeats=True)
    return notes
