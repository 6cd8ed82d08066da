"""Pitch readings over a note selection: ``count``, ``inKey``, ``span``, ``within`` (docs/checks.md).

Every reading takes the selected notes (:class:`~pytest_overdub.notes.selection.PlacedNote`) and returns
a float. Empty selections (docs/checks.md lists each) read as "nothing was written": a share reads
0.0 (no note is in key or in range), never a vacuous 1.0; ``span`` reads infinity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import TaskError
from .selection import PlacedNote
from .theory import scale_pcs


def count(notes: Sequence[PlacedNote]) -> float:
    """The number of selected notes."""
    return float(len(notes))


def in_key(notes: Sequence[PlacedNote], *, key_root: str | int | None, key_scale: str | None) -> float:
    """Share of notes whose pitch class is in the key; no key (``key_root`` None) means chromatic.

    An empty selection reads 0.0 (nothing was written in key), whatever the key.
    """
    if not notes:
        return 0.0
    pcs = scale_pcs(key_root, key_scale) if key_root is not None else frozenset(range(12))
    return sum(1 for n in notes if n.p % 12 in pcs) / len(notes)


def span(notes: Sequence[PlacedNote]) -> float:
    """Highest minus lowest selected pitch, in semitones; infinity with no notes."""
    if not notes:
        return math.inf
    pitches = [n.p for n in notes]
    return float(max(pitches) - min(pitches))


def within(notes: Sequence[PlacedNote], *, lo: int, hi: int) -> float:
    """Share of notes with ``lo <= p <= hi`` (MIDI, both ends included); 0.0 with no notes."""
    if lo > hi:
        raise TaskError(f"within: lo {lo} is above hi {hi}; expected lo <= hi (MIDI pitches)")
    if not notes:
        return 0.0
    return sum(1 for n in notes if lo <= n.p <= hi) / len(notes)
