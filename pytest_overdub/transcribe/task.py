"""Transcription tasks (``transcribe-*``): the agent hears a mix and writes down the notes of named parts.

A task file (docs/transcription.md)::

    {"id": "transcribe-solo-hook", "family": "transcription", "tier": 1, "title": "...",
     "instruction": "...", "song": "night-shift", "heard": ["Hook"], "from": 0, "to": 32,
     "parts": {"hook": ["Hook"]}, "gate": "hook", "grid": 0.25}

* ``heard``: the song's tracks in the mix the agent is handed (``null``: every track the song plays).
* ``from``/``to``: the excerpt, in beats (default: the whole song, with its 1.5 s tail); the mix starts at
  ``from``, so answer times count from there.
* ``parts``: answer part name -> the song's tracks whose notes are that part's truth (each must be heard).
* ``gate``: the part whose pitch F1 gates the task; ``grid``: the song's grid in beats, for rhythm.
* ``weights``: part -> weight of its F1 in the score (default 1 each).
* ``given``: an oracle run hands the agent more than the mix: ``"tempo"`` (the tempo and meter), ``"stems"``
  (each part's tracks alone, ``stems/<part>.wav``), ``"tracks"`` (the heard tracks' names and count, and
  which make each part). Default ``[]``: blind, the mix alone. An oracle run says so in its title
  (``"oracle run"``) and its results carry ``given``, so a report never mixes it with blind runs.

Like an audio task, the task names its files (derived, not written): :attr:`~TranscriptionTask.inputs`
(``mix.wav``, and ``stems/<part>.wav`` in an oracle run given stems) and :attr:`~TranscriptionTask.answer`
(``notes.json`` or ``notes.mid``).

The checks are not written in the file: every task has the same ones, derived from ``parts`` and ``gate``
(:func:`derived_checks`), so a generated task states only what differs. Per part: ``f1-<part>`` (the
score's goal, weighted), and reported with weight 0 (shown, not scored): ``precision-``, ``recall-``,
``f1-offsets-``, ``octaves-`` and ``rhythm-<part>``; and two gates on the gate part: ``gate-<part>``, its F1
at least :data:`GATE_F1`, and ``surplus-<part>``, more of its written notes right than wrong (matched minus
unmatched at least 1, so precision above one half). The second closes hedging: a note written in two
octaves, or at two onsets, matches at most once, so every hedge of two or more guesses a note has a
precision of at most one half, though its F1 reaches 0.667 (two guesses) or 0.5 (three).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

GATE_F1 = 0.5
#: The figures reported for every part; ``surplus`` (right minus wrong notes) is the gate part's alone.
FIGURES = ("f1", "precision", "recall", "f1Offsets", "octaveErrors", "rhythm")
TRANSCRIPTION = "transcription"
ORACLE_RUN = "oracle run"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class TranscriptionCheck(_Model):
    """One figure of one part. ``weight`` 0 = reported, not scored."""

    id: str
    label: str
    kind: Literal["transcription"] = "transcription"
    figure: Literal["f1", "precision", "recall", "f1Offsets", "octaveErrors", "rhythm", "surplus"]
    part: str
    unit: str = ""
    target: tuple[float | None, float | None]
    soft: float | None = None
    weight: float = Field(default=1.0, ge=0)
    gate: bool = False

    @property
    def effective_weight(self) -> float:
        return 0.0 if self.gate else self.weight


_FIGURE_TEXT = {
    "f1": ("note F1 (onset within 50 ms, pitch within 50 cents)", "", (1.0, None), 1.0),
    "precision": ("note precision", "", (1.0, None), 1.0),
    "recall": ("note recall", "", (1.0, None), 1.0),
    "f1Offsets": ("note F1 with offsets too (within 20% of the note, at least 50 ms)", "", (1.0, None), 1.0),
    "octaveErrors": ("notes heard an octave off", "notes", (None, 0.0), None),
    "rhythm": ("matched notes on the right grid step and length", "", (1.0, None), 1.0),
}


def derived_checks(parts: list[str], *, gate: str, weights: dict[str, float]) -> list[TranscriptionCheck]:
    checks = []
    for part in parts:
        for figure in FIGURES:
            text, unit, target, soft = _FIGURE_TEXT[figure]
            ident = {"f1": "f1", "f1Offsets": "f1-offsets", "octaveErrors": "octaves"}.get(figure, figure)
            checks.append(TranscriptionCheck(id=f"{ident}-{part}", label=f"{part}: {text}", figure=figure,
                                             part=part, unit=unit, target=target, soft=soft,
                                             weight=weights.get(part, 1.0) if figure == "f1" else 0.0))
    checks.append(TranscriptionCheck(id=f"gate-{gate}", label=f"{gate}: note F1 at least {GATE_F1:g} (gate)",
                                     figure="f1", part=gate, target=(GATE_F1, None), gate=True))
    checks.append(TranscriptionCheck(id=f"surplus-{gate}", label=f"{gate}: more notes written right than wrong "
                                     "(gate)", figure="surplus", part=gate, unit="notes", target=(1.0, None),
                                     gate=True))
    return checks


class HandedFile(_Model):
    """A file of a transcription task, named as an audio task names its inputs and answer files: what the
    agent is handed (:attr:`TranscriptionTask.inputs`) or hands back (:attr:`TranscriptionTask.answer`).
    ``what`` never names the heard tracks: a blind task does not tell their count."""

    name: str
    what: str


MIX = "mix.wav"
NOTE_FILES = ("notes.json", "notes.mid")


def stem_name(part: str) -> str:
    return f"stems/{part}.wav"


class TranscriptionTask(_Model):
    id: str = Field(pattern=r"^transcribe-[a-z0-9-]+(@[0-9]+)?$", description="a variant's id ends in @<seed>")
    family: Literal["transcription"]
    tier: int = Field(ge=1, le=3)
    title: str = Field(min_length=1)
    instruction: str = Field(min_length=40)
    song: str = Field(description="a song name in songs/ (without .json)")
    heard: list[str] | None = Field(default=None, min_length=1, description="tracks in the mix; null = all")
    from_beats: float = Field(default=0.0, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", gt=0)
    parts: dict[str, list[str]] = Field(min_length=1, description="part name -> the song's tracks")
    gate: str
    grid: float = Field(default=0.25, gt=0, description="the song's grid, beats (rhythm)")
    weights: dict[str, float] = Field(default_factory=dict)
    given: list[Literal["tempo", "stems", "tracks"]] = Field(
        default_factory=list, description="an oracle run: what the agent is handed besides the mix (the tempo "
                                          "and meter, each part's stem, the heard tracks); empty: blind")
    split: Literal["train", "test"] = Field(
        default="train", description="train (default): open for tuning; test: the held-out release gate "
                                     "(as a song task's split; overdub eval --split selects by it)")

    @model_validator(mode="after")
    def _consistent(self) -> "TranscriptionTask":
        names = list(self.parts)
        for name, tracks in self.parts.items():
            if not name.replace("-", "").isalnum() or name != name.lower():
                raise ValueError(f"parts.{name}: a part name is lower-case letters, digits and '-'")
            if not tracks:
                raise ValueError(f"parts.{name}: name at least one track")
        if self.gate not in self.parts:
            raise ValueError(f"gate = {self.gate!r}: not a part ({', '.join(names)})")
        for name, w in self.weights.items():
            if name not in self.parts or not w > 0:
                raise ValueError(f"weights.{name} = {w!r}: want a part ({', '.join(names)}) and a weight > 0")
        if len(set(self.given)) != len(self.given):
            raise ValueError(f"given = {self.given}: name each of tempo, stems, tracks at most once")
        if self.given and ORACLE_RUN not in self.title.lower():
            raise ValueError(f"title = {self.title!r}: a task that gives the agent more than the mix (given = "
                             f"{self.given}) says so in its title: '{ORACLE_RUN}'")
        if self.to_beats is not None and self.to_beats <= self.from_beats:
            raise ValueError(f"to = {self.to_beats:g} must be after from = {self.from_beats:g}")
        return self

    @property
    def checks(self) -> tuple[TranscriptionCheck, ...]:
        return tuple(derived_checks(list(self.parts), gate=self.gate, weights=self.weights))

    @property
    def inputs(self) -> tuple[HandedFile, ...]:
        """The files handed over: the mix of ``heard``, and in an oracle run given ``stems`` each part's."""
        files = [HandedFile(name=MIX, what="the recording: 48 kHz, 24-bit, stereo; time 0 is its first sample")]
        if "stems" in self.given:
            files += [HandedFile(name=stem_name(p), what=f"the stem of {p}: its tracks alone, as in the mix")
                      for p in self.parts]
        return tuple(files)

    @property
    def answer(self) -> tuple[HandedFile, ...]:
        """The answer's forms: one of these files (a folder holds exactly one)."""
        parts = ", ".join(self.parts)
        return (HandedFile(name=NOTE_FILES[0], what=f"the notes of {parts} (house note format); or instead:"),
                HandedFile(name=NOTE_FILES[1], what=f"the notes of {parts} as a standard MIDI file, one track "
                                                    "per part, named for it"))

    @property
    def oracle_run(self) -> bool:
        """True when the agent is given more than the mix: its score is not a (blind) transcription score."""
        return bool(self.given)

    @property
    def setup(self) -> list:
        """No setup: the mix is rendered from the song as it is (a song task's field, so every task's
        starting song is ``start_song(task)``)."""
        return []

    @property
    def is_audio(self) -> bool:
        """Not an audio-in task: its answer is notes, not audio files."""
        return False

    @property
    def house_gates(self) -> tuple[str, ...]:
        """No song is rendered from the answer, so neither ``clean`` nor ``scope`` applies."""
        return ()
