"""A standard MIDI file as notes per part (read with ``mido``, imported here only).

One track per part, named by its track-name meta event (type 0 and type 1 files; a type 0 file's one
track names its part the same way); the name is matched without regard to case or surrounding spaces and
NUL bytes (``Bass`` is the part ``bass``). Ticks become seconds through the file's own tempo map (every
``set_tempo`` event of every track; 120 bpm until the first), or, under a SMPTE time division, at its
fixed rate of frames a second times ticks a frame. A note-on with velocity 0 is a note-off;
notes of one pitch and channel that overlap are closed first-in, first-out. Pitch bends, controllers and
channels are not read: a part's pitches are the note numbers.
"""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Iterable

from ..errors import SubmissionError
from .matching import TimedNote

DEFAULT_TEMPO_US = 500_000  # microseconds per beat: 120 bpm


class _TempoMap:
    """Ticks to seconds through ``(tick, microseconds per beat)`` changes."""

    def __init__(self, changes: list[tuple[int, int]], ticks_per_beat: int) -> None:
        changes = sorted(changes, key=lambda c: c[0])
        self.ticks, self.tempos, self.seconds = [0], [DEFAULT_TEMPO_US], [0.0]
        for tick, tempo in changes:
            at = self.seconds[-1] + (tick - self.ticks[-1]) * self.tempos[-1] / 1e6 / ticks_per_beat
            if tick == self.ticks[-1]:
                self.tempos[-1] = tempo
            else:
                self.ticks.append(tick)
                self.tempos.append(tempo)
                self.seconds.append(at)
        self.tpb = ticks_per_beat

    def __call__(self, tick: int) -> float:
        k = bisect.bisect_right(self.ticks, tick) - 1
        return self.seconds[k] + (tick - self.ticks[k]) * self.tempos[k] / 1e6 / self.tpb


#: Stripped from a track name before it is matched to a part: spaces, and the NUL bytes some exporters end
#: a meta event's text with.
_PADDING = " \t\r\n\x00"
#: A SMPTE division's frame rates (the header's negative byte); 29 is 29.97 drop-frame.
_SMPTE_FPS = {24: 24.0, 25: 25.0, 29: 30000 / 1001, 30: 30.0}


def _clock(mid, path: Path):
    """Ticks to seconds for the file: through its tempo map (every ``set_tempo`` of every track) under a
    metrical division (ticks per beat), or at the fixed rate of a SMPTE division (frames a second times
    ticks a frame; tempo events do not apply)."""
    division = mid.ticks_per_beat
    if isinstance(division, int) and division < 0:  # mido reads a SMPTE division as a negative number
        fps, per_frame = -(division >> 8), division & 0xFF
        if fps not in _SMPTE_FPS or per_frame == 0:
            raise SubmissionError(f"{path}: SMPTE division {fps} frames a second, {per_frame} ticks a frame: "
                                  "want 24, 25, 29 (29.97) or 30 frames and at least 1 tick a frame")
        rate = _SMPTE_FPS[fps] * per_frame
        return lambda tick: tick / rate
    if not division:
        raise SubmissionError(f"{path}: ticks per beat = {division!r}: want a positive number")
    changes = []
    for track in mid.tracks:
        tick = 0
        for msg in track:
            tick += msg.time
            if msg.type == "set_tempo":
                changes.append((tick, msg.tempo))
    return _TempoMap(changes, division)


def read_midi(path: Path, *, parts: Iterable[str]) -> dict[str, tuple[TimedNote, ...]]:
    import mido

    from ..song.limits import check_file_size
    from .answer import MAX_NOTES

    allowed = tuple(parts)
    check_file_size(path.stat().st_size, source=str(path), error=SubmissionError)
    try:
        mid = mido.MidiFile(str(path))
    except EOFError:
        raise SubmissionError(f"{path}: not a standard MIDI file (it ends before its header and tracks do)") \
            from None
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise SubmissionError(f"{path}: not a standard MIDI file ({exc or type(exc).__name__})") from None
    if mid.type == 2:
        raise SubmissionError(f"{path}: a type 2 MIDI file (independent patterns); want type 0 or 1")
    seconds = _clock(mid, path)
    out: dict[str, list[TimedNote]] = {}
    for index, track in enumerate(mid.tracks):
        name, notes = _track_notes(track, seconds, where=f"{path}: track {index}")
        if not notes:
            continue
        if name is None:
            raise SubmissionError(f"{path}: track {index} has notes but no track name; name each track for its "
                                  f"part ({', '.join(allowed)})")
        part = name.strip(_PADDING).lower()
        if part not in allowed:
            raise SubmissionError(f"{path}: track {index} {name!r}: not a part of this task "
                                  f"(parts: {', '.join(allowed)})")
        out.setdefault(part, []).extend(notes)
        if sum(len(v) for v in out.values()) > MAX_NOTES:
            raise SubmissionError(f"{path}: more than {MAX_NOTES} notes: an answer holds at most {MAX_NOTES}")
    return {k: tuple(sorted(v, key=lambda n: (n.onset_s, n.pitch))) for k, v in out.items()}


def _track_notes(track, seconds, *, where: str) -> tuple[str | None, list[TimedNote]]:
    name = None
    tick = 0
    open_notes: dict[tuple[int, int], list[int]] = {}
    notes: list[TimedNote] = []
    for msg in track:
        tick += msg.time
        if msg.type == "track_name" and name is None:
            name = msg.name.strip()
        elif msg.type == "note_on" and msg.velocity > 0:
            open_notes.setdefault((msg.channel, msg.note), []).append(tick)
        elif msg.type in ("note_off", "note_on"):
            starts = open_notes.get((msg.channel, msg.note))
            if not starts:
                continue  # a note-off with no note sounding changes nothing
            start = starts.pop(0)
            if tick == start:
                raise SubmissionError(f"{where} {name or ''}: note {msg.note} at tick {start} ends where it "
                                      f"starts (length 0); want a note-off after the note-on".replace("  ", " "))
            notes.append(TimedNote(float(msg.note), seconds(start), seconds(tick)))
    for (_, pitch), starts in sorted(open_notes.items()):
        if starts:
            raise SubmissionError(f"{where} {name or ''}: note {pitch} from tick {starts[0]} never ends "
                                  f"(no note-off)".replace("  ", " "))
    return name, notes
