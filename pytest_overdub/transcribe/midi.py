"""A standard MIDI file as notes per part (read with ``mido``, imported here only).

One track per part, named by its track-name meta event (type 0 and type 1 files; a type 0 file's one
track names its part the same way). Ticks become seconds through the file's own tempo map (every
``set_tempo`` event of every track; 120 bpm until the first). A note-on with velocity 0 is a note-off;
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
    if not mid.ticks_per_beat or mid.ticks_per_beat <= 0:
        raise SubmissionError(f"{path}: ticks per beat = {mid.ticks_per_beat!r}: want a positive number")
    changes = []
    for track in mid.tracks:
        tick = 0
        for msg in track:
            tick += msg.time
            if msg.type == "set_tempo":
                changes.append((tick, msg.tempo))
    seconds = _TempoMap(changes, mid.ticks_per_beat)
    out: dict[str, list[TimedNote]] = {}
    for index, track in enumerate(mid.tracks):
        name, notes = _track_notes(track, seconds, where=f"{path}: track {index}")
        if not notes:
            continue
        if name is None:
            raise SubmissionError(f"{path}: track {index} has notes but no track name; name each track for its "
                                  f"part ({', '.join(allowed)})")
        if name not in allowed:
            raise SubmissionError(f"{path}: track {index} {name!r}: not a part of this task "
                                  f"(parts: {', '.join(allowed)})")
        out.setdefault(name, []).extend(notes)
        if sum(len(v) for v in out.values()) > MAX_NOTES:
            raise SubmissionError(f"{path}: more than {MAX_NOTES} notes: an answer holds at most {MAX_NOTES}")
    return {k: tuple(sorted(v, key=lambda n: (n.onset_s, n.pitch))) for k, v in out.items()}


def _track_notes(track, seconds: _TempoMap, *, where: str) -> tuple[str | None, list[TimedNote]]:
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
