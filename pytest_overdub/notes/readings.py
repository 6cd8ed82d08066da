"""Every note check kind of docs/checks.md in one namespace: ``from pytest_overdub.notes import readings``.

Each reading is a small pure function over :class:`~pytest_overdub.notes.selection.PlacedNote` lists that
returns a float; they live by concern in :mod:`.pitch` (count, inKey, span, within), :mod:`.harmony`
(clashes, doubling, roots, chordsUnder), :mod:`.edits` (unchanged, transposed) and :mod:`.rhythm`
(pattern, differs, jitter, swing). Their modules' docstrings state the conventions and the choices made
in detail (docs/checks.md states them for users).
"""

from __future__ import annotations

from .edits import transposed, unchanged
from .harmony import chords_under, clashes, doubling, roots
from .pitch import count, in_key, span, within
from .rhythm import differs, jitter, pattern, swing_amount, swing_change

__all__ = [
    "count", "in_key", "span", "within",
    "clashes", "doubling", "roots", "chords_under",
    "unchanged", "transposed",
    "pattern", "differs", "jitter", "swing_amount", "swing_change",
]
