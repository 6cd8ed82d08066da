"""Reading a transcription answer: notes per part, from a notes JSON file, a standard MIDI file or a folder.

Forms (docs/transcription.md):

* **Notes JSON** (``.json``)::

      {"time": "beats", "tempo": 92, "parts": {"bass": [{"p": 40, "t": 0, "d": 1, "v": 0.8}, ...], ...}}
      {"time": "seconds", "parts": {"bass": [{"p": 40, "t": 0.0, "d": 0.652}, ...]}}

  ``time`` is required: ``"beats"`` (then ``tempo`` in bpm is required and ``t``/``d`` are beats at that
  tempo) or ``"seconds"`` (no ``tempo``). ``t`` counts from the first sample of the mix. A note is the
  house note (:class:`~pytest_overdub.song.model.Note`): ``p`` MIDI pitch 0..127 (here it may be
  fractional: 60.25 is C4 and 25 cents), ``t`` ≥ 0, ``d`` > 0, ``v`` 0..1 optional and not scored, ``id``
  optional and ignored. A part left out has no notes.
* **Standard MIDI file** (``.mid``/``.midi``): one track per part, named by its track-name meta event; the
  file's own tempo map turns ticks into seconds; a note-on with velocity 0 is a note-off; tracks without
  notes (a conductor track) need no name.
* **A folder** holding exactly one of ``notes.json``, ``notes.mid``, ``notes.midi``.

Every problem is one :class:`~pytest_overdub.errors.SubmissionError` line naming the file and the place
(``parts.bass[3].d``, or a MIDI track and tick), the value, and what was allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..errors import SubmissionError
from ..song.model import read_json
from .matching import ONSET_TOL_S, TimedNote

#: At most this many notes in one answer: ten a second for half an hour, far more than any part holds,
#: and few enough that matching a flood of wrong notes stays quick.
MAX_NOTES = 20_000
FOLDER_NAMES = ("notes.json", "notes.mid", "notes.midi")


@dataclass(frozen=True)
class Answer:
    """Notes per part in seconds, and where they came from."""

    parts: dict[str, tuple[TimedNote, ...]]
    source: str

    def notes(self, part: str) -> list[TimedNote]:
        return list(self.parts.get(part, ()))


def read_answer(path: str | Path, *, parts: Iterable[str]) -> Answer:
    """The answer at ``path`` (a notes JSON file, a MIDI file or a folder holding one); ``parts`` are the
    part names the task asks for (any other name is an error)."""
    p = Path(path)
    allowed = tuple(parts)
    if p.is_dir():
        found = [p / n for n in FOLDER_NAMES if (p / n).is_file()]
        if len(found) != 1:
            what = "none" if not found else ", ".join(f.name for f in found)
            raise SubmissionError(f"{p}: a transcription answer folder holds exactly one of "
                                  f"{', '.join(FOLDER_NAMES)} (found {what})")
        p = found[0]
    if not p.is_file():
        raise SubmissionError(f"{p}: no such file (want a notes .json, a .mid file or a folder holding one)")
    if p.suffix.lower() in (".mid", ".midi"):
        from .midi import read_midi

        return Answer(read_midi(p, parts=allowed), str(p))
    if p.suffix.lower() != ".json":
        raise SubmissionError(f"{p}: a transcription answer is a .json notes file or a .mid/.midi file")
    return answer_from_data(read_json(p, error=SubmissionError), parts=allowed, source=str(p))


def answer_from_data(data: Any, *, parts: Iterable[str], source: str) -> Answer:
    """A notes JSON answer already parsed (see the module docstring)."""
    allowed = tuple(parts)
    if not isinstance(data, dict):
        raise SubmissionError(f"{source}: want an object {{\"time\", \"parts\"}}, got {type(data).__name__}")
    extra = sorted(set(data) - {"time", "tempo", "parts"})
    if extra:
        raise SubmissionError(f"{source}: unknown field {extra[0]!r} (allowed: time, tempo, parts)")
    time = data.get("time")
    if time not in ("beats", "seconds"):
        raise SubmissionError(f"{source}: time = {time!r}: want \"beats\" (with tempo) or \"seconds\"")
    tempo = data.get("tempo")
    if time == "beats":
        if not _number(tempo) or not 20 <= tempo <= 400:
            raise SubmissionError(f"{source}: tempo = {tempo!r}: time \"beats\" needs tempo in bpm, 20..400")
        scale = 60.0 / tempo
    else:
        if tempo is not None:
            raise SubmissionError(f"{source}: tempo = {tempo!r}: time \"seconds\" takes no tempo")
        scale = 1.0
    raw = data.get("parts")
    if not isinstance(raw, dict):
        raise SubmissionError(f"{source}: parts = {_short(raw)}: want an object part name -> list of notes")
    out: dict[str, tuple[TimedNote, ...]] = {}
    total = 0
    for name, notes in raw.items():
        if name not in allowed:
            raise SubmissionError(f"{source}: parts.{name}: not a part of this task (parts: {', '.join(allowed)})")
        if not isinstance(notes, list):
            raise SubmissionError(f"{source}: parts.{name} = {_short(notes)}: want a list of notes")
        total += len(notes)
        if total > MAX_NOTES:
            raise SubmissionError(f"{source}: more than {MAX_NOTES} notes: an answer holds at most {MAX_NOTES}")
        out[name] = tuple(_note(n, where=f"{source}: parts.{name}[{i}]", scale=scale, unit=time)
                          for i, n in enumerate(notes))
    return Answer(out, source)


def _note(n: Any, *, where: str, scale: float, unit: str) -> TimedNote:
    if not isinstance(n, dict):
        raise SubmissionError(f"{where} = {_short(n)}: want a note {{\"p\", \"t\", \"d\", \"v\"?}}")
    extra = sorted(set(n) - {"p", "t", "d", "v", "id"})
    if extra:
        raise SubmissionError(f"{where}: unknown field {extra[0]!r} (a note has p, t, d, v, id)")
    for key, lo, hi, what in (("p", 0, 127, "a MIDI pitch 0..127"), ("t", 0, math.inf, f"{unit} >= 0"),
                              ("d", 0, math.inf, f"{unit} > 0")):
        v = n.get(key)
        if not _number(v) or not lo <= v <= hi or (key == "d" and v <= 0):
            raise SubmissionError(f"{where}.{key} = {_short(v)}: want {what}")
    if "v" in n and (not _number(n["v"]) or not 0 <= n["v"] <= 1):
        raise SubmissionError(f"{where}.v = {_short(n['v'])}: want a velocity 0..1")
    onset = n["t"] * scale
    return TimedNote(float(n["p"]), onset, onset + n["d"] * scale)


def refuse_unheard(answer: Answer, *, mix_s: float) -> None:
    """Refuse an answer with a note that starts after the mix ends (``mix_s`` seconds, and the onset
    tolerance): nothing in the recording starts there, so its times are in another unit than the one it
    states (beats written as seconds, milliseconds) or its tempo is off; one line naming the part, how many
    notes, the first such onset and the mix's length."""
    for part, notes in answer.parts.items():
        late = [n.onset_s for n in notes if n.onset_s > mix_s + ONSET_TOL_S]
        if late:
            raise SubmissionError(
                f"{answer.source}: parts.{part}: {len(late)} of {len(notes)} notes start after the mix ends "
                f"({mix_s:.2f} s), the first at {min(late):.2f} s; want times from the mix's first sample in "
                f"the unit stated (\"seconds\", or \"beats\" at the stated tempo): is the unit or the tempo wrong?")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."
