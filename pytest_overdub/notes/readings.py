"""Every note check kind of docs/checks.md in one namespace: ``from pytest_overdub.notes import readings``.

Each reading is a small pure function over :class:`~pytest_overdub.notes.selection.PlacedNote` lists that
returns a float; they live by concern in :mod:`.pitch` (count, inKey, span, within), :mod:`.harmony`
(clashes, doubling, roots, chordTones, chordsUnder), :mod:`.melody` (distinct, turns, copied),
:mod:`.edits` (unchanged, transposed, quantized) and :mod:`.rhythm` (pattern, differs, jitter, swing). Their modules' docstrings state the conventions and the choices made
in detail (docs/checks.md states them for users).
"""

from __future__ import annotations

from .edits import quantized, transposed, unchanged
from .harmony import chord_tones, chords_under, clashes, doubling, roots
from .melody import copied, distinct, turns
from .pitch import count, in_key, span, within
from .rhythm import differs, jitter, pattern, swing_amount, swing_change

__all__ = [
    "count", "in_key", "span", "within",
    "clashes", "doubling", "roots", "chord_tones", "chords_under",
    "distinct", "turns", "copied",
    "unchanged", "transposed", "quantized",
    "pattern", "differs", "jitter", "swing_amount", "swing_change",
]
