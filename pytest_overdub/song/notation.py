"""The text note format and drum grids used by ops and printouts (docs/formats.md).

``C4@0:0.5*0.8`` is pitch C4 (MIDI 60) at beat 0, half a beat long, velocity 0.8. Tokens are separated by
spaces, commas or semicolons; a token starting with ``#`` is a comment (to the end of that token). Pitch is
a MIDI number or a letter A-G with ``#``/``b`` and an octave (F#3 = 54, Bb2 = 46, C-1 = 0). Start and
duration may be fractions (``1/3``). Velocity defaults to 0.8; a value above 1 is read as MIDI (÷ 127).

A drum grid maps row names (or MIDI numbers) to one character per step (default a 1/16, 0.25 beat):
``X`` = 1, ``x`` = 0.8, ``O`` = 0.6, ``o`` = 0.45, anything else a rest.
"""

from __future__ import annotations

import re
from fractions import Fraction

DEFAULT_VELOCITY = 0.8

_LETTERS = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
_PITCH = re.compile(r"^([A-Ga-g])([#b]*)(-?\d{1,2})$")
_TOKEN = re.compile(r"^(?P<p>[^@]+)@(?P<t>[^:*]+)(?::(?P<d>[^*]+))?(?:\*(?P<v>.+))?$")
_SEPARATORS = re.compile(r"[\s,;]+")

DRUM_ROWS = {"kick": 36, "snare": 38, "hat": 42, "pedal": 44, "open": 46, "rim": 37, "clap": 39,
             "rimshot": 40}
GRID_VELOCITY = {"X": 1.0, "x": 0.8, "O": 0.6, "o": 0.45}


class NotationError(ValueError):
    """A token of the text note format or a drum grid that cannot be read."""


def parse_pitch(text: str) -> int:
    """``"C4"`` -> 60, ``"F#3"`` -> 54, ``"Bb2"`` -> 46, ``"64"`` -> 64."""
    s = text.strip()
    if re.fullmatch(r"[0-9]{1,3}", s):
        p = int(s)
    else:
        m = _PITCH.match(s)
        if not m:
            raise NotationError(f"pitch {text!r}: expected a MIDI number 0..127 or a name like C4, F#3, Bb2")
        letter, accidentals, octave = m.groups()
        p = (int(octave) + 1) * 12 + _LETTERS[letter.upper()] + accidentals.count("#") - accidentals.count("b")
    if not 0 <= p <= 127:
        raise NotationError(f"pitch {text!r} is MIDI {p}: allowed 0..127")
    return p


def pitch_name(p: int) -> str:
    """60 -> ``"C4"``; sharps are used for black keys."""
    names = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
    return f"{names[p % 12]}{p // 12 - 1}"


def _number(text: str, what: str) -> float:
    try:
        return float(Fraction(text.strip()))
    except (ValueError, ZeroDivisionError, OverflowError):
        raise NotationError(f"{what} {text!r} is not a number or fraction like 1/3") from None


def parse_notes_text(text: str) -> list[dict]:
    """Parse the text note format into ``[{p, t, d, v}]`` dicts (durations default to 1 beat)."""
    notes = []
    for token in _SEPARATORS.split(text.strip()):
        if not token or token.startswith("#"):
            continue
        m = _TOKEN.match(token)
        if not m:
            raise NotationError(f"note {token!r}: expected PITCH@START[:DUR][*VEL], e.g. C4@0:0.5*0.8")
        p = parse_pitch(m["p"])
        t = _number(m["t"], f"note {token!r}: start")
        d = _number(m["d"], f"note {token!r}: duration") if m["d"] else 1.0
        v = _number(m["v"], f"note {token!r}: velocity") if m["v"] else DEFAULT_VELOCITY
        if v > 1:
            v = v / 127.0
        if t < 0 or d <= 0 or not 0 <= v <= 1:
            raise NotationError(f"note {token!r}: start must be >= 0, duration > 0, velocity 0..1 (or MIDI 0..127)")
        notes.append({"p": p, "t": t, "d": d, "v": round(v, 6)})
    return notes


def format_notes_text(notes) -> str:
    """The inverse of :func:`parse_notes_text` for note objects or dicts with p, t, d, v."""
    out = []
    for n in notes:
        get = n.get if isinstance(n, dict) else lambda k, n=n: getattr(n, k)
        out.append(f"{pitch_name(get('p'))}@{get('t'):g}:{get('d'):g}*{get('v'):g}")
    return " ".join(out)


def parse_grid(grid: dict[str, str], *, step_beats: float = 0.25) -> list[dict]:
    """A drum grid to ``[{p, t, d, v}]`` dicts; each hit lasts one step."""
    notes = []
    for row, pattern in grid.items():
        key = str(row).strip().lower()
        if key in DRUM_ROWS:
            p = DRUM_ROWS[key]
        else:
            try:
                p = parse_pitch(str(row))
            except NotationError:
                raise NotationError(
                    f"grid row {row!r}: expected one of {', '.join(DRUM_ROWS)} or a MIDI number") from None
        if not isinstance(pattern, str):
            raise NotationError(f"grid row {row!r}: the pattern must be a string like 'X...x...'")
        for i, ch in enumerate(pattern):
            if ch in GRID_VELOCITY:
                notes.append({"p": p, "t": i * step_beats, "d": step_beats, "v": GRID_VELOCITY[ch]})
    notes.sort(key=lambda n: (n["t"], n["p"]))
    return notes
