"""Edit readings: ``unchanged`` and ``transposed`` (docs/checks.md).

Both compare the selection on the starting song (``before``) with the same selection on the agent's song
(``after``). A starting note is "still there" when an ``after`` note on the same track (by track id, which
survives a rename) has the expected pitch and its start, heard duration and velocity are each within
:data:`EXACT_TOL` (1e-3). Clip ids and note ids are not compared: moving notes into a new clip that plays
them at the same times changes nothing heard. Notes are matched one to one with a maximum matching
(Kuhn's augmenting paths), so duplicated notes count once each.

The share is ``matched / max(#before, #after)``: a removed note and an added note both cost.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence

from ..errors import TaskError
from .selection import PlacedNote

EXACT_TOL = 1e-3


def unchanged(before: Sequence[PlacedNote], after: Sequence[PlacedNote]) -> float:
    """Share of starting notes still exactly there; 1.0 when both selections are empty."""
    if not before and not after:
        return 1.0
    return _matched(before, after, semitones=0) / max(len(before), len(after))


def transposed(before: Sequence[PlacedNote], after: Sequence[PlacedNote], *, semitones: int) -> float:
    """Share of starting notes now sounding ``semitones`` higher (lower if negative), otherwise untouched.

    0.0 when the starting selection had no notes (there was nothing to transpose).
    """
    if (isinstance(semitones, bool) or not isinstance(semitones, (int, float))
            or not float(semitones).is_integer()):
        raise TaskError(f"transposed: semitones {semitones!r}: expected a whole number of semitones")
    semitones = int(semitones)
    if not before:
        return 0.0
    return _matched(before, after, semitones=semitones) / max(len(before), len(after))


def _matched(before: Sequence[PlacedNote], after: Sequence[PlacedNote], *, semitones: int) -> int:
    """Size of a maximum one-to-one matching of ``before`` notes (shifted) to equal ``after`` notes."""
    by_key: dict[tuple[str, int], list[tuple[float, int]]] = defaultdict(list)
    for j, a in enumerate(after):
        by_key[(a.track_id, a.p)].append((a.start_beats, j))
    for lst in by_key.values():
        lst.sort()
    candidates: list[list[int]] = []
    for b in before:
        lst = by_key.get((b.track_id, b.p + semitones), [])
        lo = bisect.bisect_left(lst, (b.start_beats - EXACT_TOL - 1e-12, -1))
        cands = []
        for start, j in lst[lo:]:
            if start > b.start_beats + EXACT_TOL + 1e-12:
                break
            a = after[j]
            if abs(a.dur_beats - b.dur_beats) <= EXACT_TOL + 1e-12 and abs(a.v - b.v) <= EXACT_TOL + 1e-12:
                cands.append(j)
        candidates.append(cands)
    owner: dict[int, int] = {}  # after index -> before index

    def augment(i: int, seen: set[int]) -> bool:
        for j in candidates[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    return sum(1 for i in range(len(before)) if candidates[i] and augment(i, set()))
