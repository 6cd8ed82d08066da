"""Music theory the note readings need: pitch names, scales and chord symbols (docs/formats.md, docs/checks.md).

Conventions:

* Pitch classes are integers 0..11 with C = 0, C#/Db = 1, ... B = 11.
* Pitch names are scientific pitch notation with C4 = MIDI 60 (so A4 = 69, F#3 = 54, Bb2 = 46, C-1 = 0);
  ``#``/``b`` after the letter (note names for keys and chords take one). ``Cb4`` is 59 and ``B#3`` is 60:
  accidentals move the pitch, they do not wrap the octave number.
* Scales are given as semitone steps above the root; ``minor`` is natural minor (Aeolian) and
  ``melodicMinor`` is the ascending (jazz) melodic minor.
* Chord symbols are an uppercase root letter with an optional ``#``/``b``, one suffix from
  :data:`CHORD_SUFFIXES`, and optionally ``/`` plus a bass note (``Am/C``). The chord's pitch classes
  include the slash bass; its ``root_pc`` stays the named root (A for ``Am/C``).

Every bad name raises :class:`~pytest_overdub.errors.TaskError` naming what was passed and what is allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import TaskError
from ..song import notation

LETTER_PCS: dict[str, int] = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
ACCIDENTALS: dict[str, int] = {"": 0, "#": 1, "b": -1}

SCALE_STEPS: dict[str, tuple[int, ...]] = {
    "major": (0, 2, 4, 5, 7, 9, 11),
    "minor": (0, 2, 3, 5, 7, 8, 10),
    "dorian": (0, 2, 3, 5, 7, 9, 10),
    "phrygian": (0, 1, 3, 5, 7, 8, 10),
    "lydian": (0, 2, 4, 6, 7, 9, 11),
    "mixolydian": (0, 2, 4, 5, 7, 9, 10),
    "locrian": (0, 1, 3, 5, 6, 8, 10),
    "harmonicMinor": (0, 2, 3, 5, 7, 8, 11),
    "melodicMinor": (0, 2, 3, 5, 7, 9, 11),
    "majorPentatonic": (0, 2, 4, 7, 9),
    "minorPentatonic": (0, 3, 5, 7, 10),
    "blues": (0, 3, 5, 6, 7, 10),
    "chromatic": tuple(range(12)),
}

# Semitones above the root; 9ths are written as 2 (pitch classes fold the octave).
CHORD_SUFFIXES: dict[str, tuple[int, ...]] = {
    "": (0, 4, 7),
    "m": (0, 3, 7),
    "dim": (0, 3, 6),
    "aug": (0, 4, 8),
    "sus2": (0, 2, 7),
    "sus4": (0, 5, 7),
    "5": (0, 7),
    "7": (0, 4, 7, 10),
    "maj7": (0, 4, 7, 11),
    "m7": (0, 3, 7, 10),
    "m7b5": (0, 3, 6, 10),
    "dim7": (0, 3, 6, 9),
    "6": (0, 4, 7, 9),
    "m6": (0, 3, 7, 9),
    "add9": (0, 4, 7, 2),
    "madd9": (0, 3, 7, 2),
    "9": (0, 4, 7, 10, 2),
    "maj9": (0, 4, 7, 11, 2),
    "m9": (0, 3, 7, 10, 2),
}

_NOTE_NAME = re.compile(r"^([A-G])([#b]?)$")
_CHORD = re.compile(r"^([A-G][#b]?)(.*?)(?:/([A-G][#b]?))?$")


@dataclass(frozen=True)
class Chord:
    """A parsed chord symbol: its root, every pitch class it sounds, and its bass (the root unless slashed)."""

    root_pc: int
    pcs: frozenset[int]
    bass_pc: int


def pitch_class(name: str) -> int:
    """``"C"`` -> 0, ``"C#"``/``"Db"`` -> 1, ... ``"B"`` -> 11 (``"Cb"`` -> 11, ``"B#"`` -> 0)."""
    m = _NOTE_NAME.match(name) if isinstance(name, str) else None
    if m is None:
        raise TaskError(f"note name {name!r}: expected an uppercase letter A-G with an optional # or b "
                        f"(C, F#, Bb)")
    return (LETTER_PCS[m.group(1)] + ACCIDENTALS[m.group(2)]) % 12


def scale_pcs(root: str | int, scale: str) -> frozenset[int]:
    """The pitch classes of ``scale`` on ``root`` (a note name or a pitch class 0..11)."""
    steps = SCALE_STEPS.get(scale)
    if steps is None:
        raise TaskError(f"scale {scale!r}: expected one of {', '.join(SCALE_STEPS)}")
    root_pc = _root_pc(root)
    return frozenset((root_pc + s) % 12 for s in steps)


def _root_pc(root: str | int) -> int:
    if isinstance(root, bool) or not isinstance(root, (str, int)):
        raise TaskError(f"key root {root!r}: expected a note name (A, F#, Bb) or a pitch class 0..11")
    if isinstance(root, int):
        if not 0 <= root <= 11:
            raise TaskError(f"key root {root}: a pitch class must be 0..11")
        return root
    return pitch_class(root)


def parse_chord(symbol: str) -> Chord:
    """``"Am"`` -> Chord(root_pc=9, pcs={9, 0, 4}, bass_pc=9); ``"Am/C"`` has bass_pc 0."""
    m = _CHORD.match(symbol) if isinstance(symbol, str) else None
    if m is None or m.group(2) not in CHORD_SUFFIXES:
        allowed = ", ".join(repr(s) for s in CHORD_SUFFIXES)
        raise TaskError(f"chord {symbol!r}: expected an uppercase root A-G with optional # or b, a suffix "
                        f"among {allowed}, and optionally /bass (Am/C)")
    root_pc = pitch_class(m.group(1))
    pcs = {(root_pc + s) % 12 for s in CHORD_SUFFIXES[m.group(2)]}
    bass_pc = pitch_class(m.group(3)) if m.group(3) else root_pc
    pcs.add(bass_pc)
    return Chord(root_pc=root_pc, pcs=frozenset(pcs), bass_pc=bass_pc)


def parse_pitch(text: str | int) -> int:
    """A MIDI pitch from ``"F#3"`` (54), ``"Bb2"`` (46), ``"C4"`` (60) or a MIDI number (``"60"``, 60).

    Names are read by the one pitch reader of the text note format (:mod:`pytest_overdub.song.notation`);
    its errors become :class:`TaskError` here, since a check's ``pitches`` come from a task file.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        if not 0 <= text <= 127:
            raise TaskError(f"pitch {text!r}: outside MIDI 0..127")
        return text
    if not isinstance(text, str):
        raise TaskError(f"pitch {text!r}: expected a MIDI number 0..127 or a name like C4, F#3, Bb2")
    try:
        return notation.parse_pitch(text)
    except notation.NotationError as exc:
        raise TaskError(str(exc)) from None
