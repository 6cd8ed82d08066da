"""The bench's own answers to a transcription task, made from the truth in code (docs/validity.md).

An answer file of a transcription task names its maker instead of holding ops::

    {"task": "transcribe-solo-hook", "why": "...", "make": "midi"}
    {"task": "transcribe-solo-hook", "why": "...", "make": "every-step", "fails": ["f1-hook", "gate-hook"]}

so a generated song gets the same oracle, alternatives and cheats with no file written. Every maker builds
the answer in one of the documented forms and reads it back through :mod:`.answer`, so the bench's own
answers go through the reader an agent's do.

Makers:

* ``truth`` (the oracle): the true notes, in seconds.
* ``beats``: the true notes in beats at the song's tempo (``"time": "beats"``).
* ``midi``: the true notes written as a standard MIDI file (one named track per part, the song's tempo)
  in a folder, read back as a folder answer.
* ``played``: the true notes as a careful player would write them down from a recording: each onset
  moved by a seeded draw in ±25 ms, each length by ±15 %.
* ``every-step`` (cheat): every pitch of each part's range at every grid step, one step long.
* ``octave-off`` (cheat): the true notes, but the gated part an octave down.
* ``scale-arpeggio`` (cheat): a constant arpeggio of the song key's scale (degrees 1, 3, 5, 8) on every
  eighth note, in each part's register.
* ``tempo-off`` (near miss): the true notes in beats, with a tempo 3 % off the song's.
* ``hedge-octaves`` (cheat): every true note of every part written twice, at its pitch and an octave up.
* ``hedge-onsets`` (cheat): every true note of every part written twice, at its onset and one grid step
  later.
"""

from __future__ import annotations

import hashlib
import random
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import TaskError
from ..song.model import Song
from .answer import Answer, answer_from_data, read_answer
from .matching import TimedNote
from .task import TranscriptionTask
from .truth import excerpt_beats, reference


@dataclass(frozen=True)
class MadeAnswer:
    """An answer file's ``make`` (and where it was read), resolved when it is scored."""

    make: str
    source: str


def made_answer(made: MadeAnswer, task: TranscriptionTask, song: Song) -> Answer:
    maker = MAKERS.get(made.make)
    if maker is None:
        raise TaskError(f"{made.source}: make = {made.make!r}: want one of {', '.join(MAKERS)}")
    return maker(task, song, reference(task, song), made.source)


def _seconds(parts: dict[str, list[TimedNote]], source: str, task: TranscriptionTask) -> Answer:
    data = {"time": "seconds", "parts": {k: [{"p": n.pitch, "t": n.onset_s, "d": n.duration_s} for n in v]
                                         for k, v in parts.items()}}
    return answer_from_data(data, parts=task.parts, source=source)


def _in_beats(parts: dict[str, list[TimedNote]], tempo: float) -> dict[str, list[dict[str, float]]]:
    b = tempo / 60.0
    return {k: [{"p": n.pitch, "t": n.onset_s * b, "d": n.duration_s * b} for n in v] for k, v in parts.items()}


def _truth(task, song, truth, source) -> Answer:
    return _seconds(truth, source, task)


def _beats(task, song, truth, source) -> Answer:
    data = {"time": "beats", "tempo": song.tempo, "parts": _in_beats(truth, song.tempo)}
    return answer_from_data(data, parts=task.parts, source=source)


def _tempo_off(task, song, truth, source) -> Answer:
    data = {"time": "beats", "tempo": song.tempo * 1.03, "parts": _in_beats(truth, song.tempo)}
    return answer_from_data(data, parts=task.parts, source=source)


def _midi(task, song, truth, source) -> Answer:
    import mido

    tpb = 960
    mid = mido.MidiFile(type=1, ticks_per_beat=tpb)
    mid.tracks.append(mido.MidiTrack([mido.MetaMessage("set_tempo", tempo=mido.bpm2tempo(song.tempo), time=0)]))
    for ch, (part, notes) in enumerate(truth.items()):
        events = []
        for n in notes:
            on = round(n.onset_s * song.tempo / 60.0 * tpb)
            off = max(on + 1, round(n.offset_s * song.tempo / 60.0 * tpb))
            events += [(on, 1, "note_on", int(n.pitch)), (off, 0, "note_off", int(n.pitch))]
        track = mido.MidiTrack([mido.MetaMessage("track_name", name=part, time=0)])
        now = 0
        for tick, _, kind, pitch in sorted(events):  # offs before ons at one tick
            track.append(mido.Message(kind, note=pitch, velocity=90 if kind == "note_on" else 0,
                                      channel=ch % 16, time=tick - now))
            now = tick
        mid.tracks.append(track)
    with tempfile.TemporaryDirectory() as tmp:
        mid.save(str(Path(tmp) / "notes.mid"))
        return read_answer(tmp, parts=task.parts)


def _rng(task: TranscriptionTask, salt: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(f"{task.id}|{salt}".encode()).digest()[:8], "big"))


def _played(task, song, truth, source) -> Answer:
    rng = _rng(task, "played")
    out = {}
    for part, notes in truth.items():
        moved = []
        for n in notes:
            onset = max(0.0, n.onset_s + rng.uniform(-0.025, 0.025))
            moved.append(TimedNote(n.pitch, onset, onset + n.duration_s * rng.uniform(0.85, 1.15)))
        out[part] = moved
    return _seconds(out, source, task)


def _steps(task: TranscriptionTask, song: Song, step_beats: float) -> list[float]:
    lo, hi = excerpt_beats(task, song)
    n = int((hi - lo) / step_beats + 1e-9)
    return [k * step_beats * 60.0 / song.tempo for k in range(n)]


def _every_step(task, song, truth, source) -> Answer:
    step_s = task.grid * 60.0 / song.tempo
    out = {}
    for part, notes in truth.items():
        if not notes:
            continue
        lo, hi = int(min(n.pitch for n in notes)), int(max(n.pitch for n in notes))
        out[part] = [TimedNote(p, t, t + step_s) for t in _steps(task, song, task.grid) for p in range(lo, hi + 1)]
    return _seconds(out, source, task)


def _octave_off(task, song, truth, source) -> Answer:
    out = dict(truth)
    out[task.gate] = [TimedNote(n.pitch - 12, n.onset_s, n.offset_s) for n in truth[task.gate]]
    return _seconds(out, source, task)


def _scale_arpeggio(task, song, truth, source) -> Answer:
    from ..notes.theory import SCALE_STEPS, pitch_class

    root = pitch_class(song.key.root) if song.key is not None else 0
    steps = SCALE_STEPS[song.key.scale] if song.key is not None else SCALE_STEPS["major"]
    shape = [steps[0], steps[2 % len(steps)], steps[4 % len(steps)], 12]
    eighth_s = 0.5 * 60.0 / song.tempo
    out = {}
    for part, notes in truth.items():
        if not notes:
            continue
        base = 12 * round((statistics.median(n.pitch for n in notes) - root - 6) / 12) + root
        times = _steps(task, song, 0.5)
        out[part] = [TimedNote(base + shape[k % 4], t, t + eighth_s) for k, t in enumerate(times)]
    return _seconds(out, source, task)


def _quarter_tone(task, song, truth, source) -> Answer:
    """Every true note written a quarter tone off, sharp and flat in turn: exactly between two semitones,
    no note at a pitch the song plays (it would match either neighbour under an inclusive 50-cent bound)."""
    out = {part: [TimedNote(n.pitch + (0.5 if i % 2 else -0.5), n.onset_s, n.offset_s) for i, n in enumerate(notes)]
           for part, notes in truth.items()}
    return _seconds(out, source, task)


def _twice(truth: dict[str, list[TimedNote]], guess: Callable[[TimedNote], TimedNote]) -> dict:
    """Every true note of every part followed by a second guess at it."""
    return {part: [m for n in notes for m in (n, guess(n))] for part, notes in truth.items()}


def _hedge_octaves(task, song, truth, source) -> Answer:
    return _seconds(_twice(truth, lambda n: TimedNote(n.pitch + 12, n.onset_s, n.offset_s)), source, task)


def _hedge_onsets(task, song, truth, source) -> Answer:
    step_s = task.grid * 60.0 / song.tempo
    return _seconds(_twice(truth, lambda n: TimedNote(n.pitch, n.onset_s + step_s, n.offset_s + step_s)),
                    source, task)


MAKERS: dict[str, Callable[[TranscriptionTask, Song, dict[str, list[TimedNote]], str], Answer]] = {
    "truth": _truth, "beats": _beats, "midi": _midi, "played": _played, "every-step": _every_step,
    "octave-off": _octave_off, "scale-arpeggio": _scale_arpeggio, "tempo-off": _tempo_off,
    "hedge-octaves": _hedge_octaves, "hedge-onsets": _hedge_onsets, "quarter-tone": _quarter_tone,
}


def made_from_data(data: dict[str, Any], *, source: str) -> MadeAnswer:
    make = data.get("make")
    if make not in MAKERS:
        raise TaskError(f"{source}: make = {make!r}: want one of {', '.join(MAKERS)}")
    return MadeAnswer(make, source)
