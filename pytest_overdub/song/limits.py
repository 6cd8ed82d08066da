"""How big a song and a submission may be: the bounds that keep one scoring's time and memory finite.

Every figure is generous for real music (a 12-minute prog track with 40 tracks, a drum clip of 16ths
running the whole song, a long tool-call session) and far below what an attack needs to stall or exhaust
the scorer (hours of audio, a million notes, a million ops). A song or submission over a limit is refused
before anything renders, with one line naming the limit, the value and the place (file, JSON path or
op index).

Pure Python: importing this module does not import numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from ..errors import SongError
from .params import device_holders


@dataclass(frozen=True)
class Limits:
    """The bounds, each named as it appears in error messages."""

    #: Seconds of audio: every clip and section must end by then at the song's tempo (the song's length,
    #: and so each clip's and section's, is bounded by it). 15 minutes: longer than almost any song.
    song_s: float = 900.0
    #: Tracks in a song. Large film and prog sessions use 40-60.
    tracks: int = 64
    #: Tracks x the song's length in seconds: a scoring holds every track's stem (float64 stereo), so its
    #: memory grows with this (README, "Limits"): 20 tracks of 3 minutes, 12 of 5 or 8 of 7.5, whose scoring
    #: peaks under 9 GB, so two xdist workers fit the 24 GB machines this runs on.
    track_s: float = 8 * 450.0
    #: Inserts in one chain (a track's or the master's). A heavy mix chain is 8-12.
    inserts_per_chain: int = 32
    #: Clips in a song, all tracks together: one clip per bar on 40 tracks of a 6-minute song is 4,800.
    clips: int = 10_000
    #: Sections in a song.
    sections: int = 256
    #: Automation points of one param of one device (a point per 16th for 15 minutes at 200 bpm is 12,000).
    points_per_param: int = 20_000
    #: Notes in one clip: 16ths for 15 minutes at 200 bpm are 12,000.
    notes_per_clip: int = 20_000
    #: Notes in a song, all clips together.
    notes: int = 200_000
    #: Ops in one submission, all transactions together (a long agent session is a few hundred).
    ops: int = 10_000
    #: Transactions (``{"ops"}`` lists or ``apply_ops`` calls) in one submission.
    transactions: int = 10_000
    #: Bytes of a submission or song file (a song's embedded audio assets included).
    file_bytes: int = 64 * 1024 * 1024


#: The limits the bench applies.
LIMITS = Limits()


class LimitError(SongError):
    """A song or submission over one of the :data:`LIMITS` (a :class:`SongError`, so callers that handle
    a bad song handle it)."""


def over(name: str, value: float, where: str, *, what: str = "") -> str:
    """The message for ``value`` over limit ``name`` at ``where``: ``tracks: 65 tracks, over the limit
    tracks = 64``."""
    limit = getattr(LIMITS, name)
    return f"{where}: {what or f'{value:g}'}, over the limit {name} = {limit:g}"


def song_end_s(end_beats: float, tempo_bpm: float) -> float:
    return float(end_beats) * 60.0 / float(tempo_bpm)


def song_problems(song: Any) -> Iterator[str]:
    """Every limit a :class:`~.model.Song` exceeds, one line each (JSON path first). O(size of the song)."""
    tracks = song.tracks
    yield from _count_problems([[len(c.notes) for c in tr.clips] for tr in tracks])
    tempo = song.tempo
    for i, tr in enumerate(tracks):
        if len(tr.inserts) > LIMITS.inserts_per_chain:
            yield over("inserts_per_chain", len(tr.inserts), f"tracks[{i}].inserts",
                       what=f"{len(tr.inserts)} inserts")
        for j, c in enumerate(tr.clips):
            yield from _span_problem(f"tracks[{i}].clips[{j}]", c.start, c.length, tempo)
    end_s = song_end_s(max([c.start + c.length for tr in tracks for c in tr.clips]
                           + [s.start + s.length for s in song.sections], default=0.0), tempo)
    if len(tracks) * end_s > LIMITS.track_s:
        yield over("track_s", len(tracks) * end_s, "tracks", what=track_seconds(len(tracks), end_s))
    for where, holder in device_holders(song):
        for key, points in holder.auto.items():
            if len(points) > LIMITS.points_per_param:
                yield over("points_per_param", len(points), f"{where}.auto.{key}", what=f"{len(points)} points")
    if len(song.master.inserts) > LIMITS.inserts_per_chain:
        yield over("inserts_per_chain", len(song.master.inserts), "master.inserts",
                   what=f"{len(song.master.inserts)} inserts")
    if len(song.sections) > LIMITS.sections:
        yield over("sections", len(song.sections), "sections", what=f"{len(song.sections)} sections")
    for j, s in enumerate(song.sections):
        yield from _span_problem(f"sections[{j}]", s.start, s.length, tempo)


def raw_problems(data: Any) -> list[str]:
    """The track, clip and note counts over their limits in parsed JSON, counted before it is validated
    (so a file of millions of notes is refused without building them); shapes the model would refuse
    are left to it."""
    tracks = data.get("tracks") if isinstance(data, dict) else None
    if not isinstance(tracks, list):
        return []
    counts = []
    for tr in tracks:
        clips = tr.get("clips") if isinstance(tr, dict) else None
        counts.append([len(c["notes"]) if isinstance(c, dict) and isinstance(c.get("notes"), list) else 0
                       for c in (clips if isinstance(clips, list) else [])])
    return list(_count_problems(counts))


def _count_problems(notes: list[list[int]]) -> Iterator[str]:
    """``notes[i][j]``: the notes in clip j of track i."""
    if len(notes) > LIMITS.tracks:
        yield over("tracks", len(notes), "tracks", what=f"{len(notes)} tracks")
    for i, clips in enumerate(notes):
        for j, n in enumerate(clips):
            if n > LIMITS.notes_per_clip:
                yield over("notes_per_clip", n, f"tracks[{i}].clips[{j}].notes", what=f"{n} notes")
    n_clips = sum(len(clips) for clips in notes)
    if n_clips > LIMITS.clips:
        yield over("clips", n_clips, "tracks[*].clips", what=f"{n_clips} clips in the song")
    n_notes = sum(sum(clips) for clips in notes)
    if n_notes > LIMITS.notes:
        yield over("notes", n_notes, "tracks[*].clips[*].notes", what=f"{n_notes} notes in the song")


def _span_problem(where: str, start: float, length: float, tempo: float) -> Iterator[str]:
    end_s = song_end_s(start + length, tempo)
    if end_s > LIMITS.song_s:
        yield over("song_s", end_s, where, what=f"ends at beat {start + length:g} = {end_s:.1f} s at "
                                               f"{tempo:g} bpm")


def track_seconds(n_tracks: int, end_s: float) -> str:
    return f"{n_tracks} tracks x {end_s:.1f} s = {n_tracks * end_s:.0f} track-seconds"


def span_refusal(start: float, length: float, tempo: float) -> str | None:
    """What an op is told when a clip or section would end past :attr:`Limits.song_s`, else None."""
    end_s = song_end_s(start + length, tempo)
    if end_s <= LIMITS.song_s:
        return None
    return (f"an end by {LIMITS.song_s:g} s (limit song_s; beat {LIMITS.song_s * tempo / 60:g} at "
            f"{tempo:g} bpm); this ends at {end_s:.1f} s")


def ops_refusal(transactions: Any, *, first: int = 0) -> str | None:
    """Why a submission's transactions (lists of ops, numbered from ``first``) are too many, else None."""
    if len(transactions) > LIMITS.transactions:
        return f"{len(transactions)} transactions, over the limit transactions = {LIMITS.transactions}"
    total = 0
    for k, ops in enumerate(transactions, start=first):
        total += len(ops) if isinstance(ops, (list, tuple)) else 0
        if total > LIMITS.ops:
            i = len(ops) - (total - LIMITS.ops)
            return (f"transaction {k}, op {i} is op {LIMITS.ops + 1} of the submission, over the limit "
                    f"ops = {LIMITS.ops}")
    return None


def check_limits(song: Any, *, source: str) -> None:
    """Raise :class:`LimitError` listing every limit ``song`` exceeds."""
    problems = list(song_problems(song))
    if problems:
        raise LimitError(problem_lines(source, problems))


def problem_lines(source: str, problems: list[str]) -> str:
    """``source: N problem(s)`` and one indented line per problem, as every song error reads."""
    return "\n".join([f"{source}: {len(problems)} problem(s)"] + [f"  {p}" for p in problems])


def check_file_size(size: int, *, source: str, error: type[Exception] = LimitError) -> None:
    if size > LIMITS.file_bytes:
        raise error(over("file_bytes", size, source, what=f"{size} bytes"))
