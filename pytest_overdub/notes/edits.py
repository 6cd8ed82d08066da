"""Edit readings: ``unchanged``, ``transposed`` and ``quantized`` (docs/checks.md).

Both compare the selection on the starting song (``before``) with the same selection on the agent's song
(``after``). A starting note is "still there" when an ``after`` note on the same track (by track id, which
survives a rename) has the expected pitch and its start, heard duration and velocity are each within
:data:`EXACT_TOL` (1e-3). Clip ids and note ids are not compared: moving notes into a new clip that plays
them at the same times changes nothing heard. Notes are matched one to one with a maximum matching
(Kuhn's augmenting paths), so duplicated notes count once each.

The share is ``matched / max(#before, #after)``: a removed note and an added note both cost.

``quantized`` matches the same way, except that a note's start must now be on the line of the swung grid
nearest to where it was (:func:`quantized`) and its heard duration may change (a quantize moves onsets).
"""

from __future__ import annotations

import bisect
import math
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


def _onsets_by_key(after: Sequence[PlacedNote]) -> dict[tuple[str, int], list[tuple[float, int]]]:
    """(track id, pitch) -> sorted (onset in beats, index) of the ``after`` notes: what a matching of
    starting notes to answer notes searches by bisection."""
    by_key: dict[tuple[str, int], list[tuple[float, int]]] = defaultdict(list)
    for j, a in enumerate(after):
        by_key[(a.track_id, a.p)].append((a.start_beats, j))
    for lst in by_key.values():
        lst.sort()
    return by_key


def _matched(before: Sequence[PlacedNote], after: Sequence[PlacedNote], *, semitones: int) -> int:
    """Size of a maximum one-to-one matching of ``before`` notes (shifted) to equal ``after`` notes."""
    by_key = _onsets_by_key(after)
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
    return _max_matching(candidates)


def _max_matching(candidates: Sequence[Sequence[int]]) -> int:
    """Size of a maximum matching of left items to the right indices each may take (Kuhn's augmenting
    paths)."""
    owner: dict[int, int] = {}  # right index -> left index

    def augment(i: int, seen: set[int]) -> bool:
        for j in candidates[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    return sum(1 for i in range(len(candidates)) if candidates[i] and augment(i, set()))


def swung_lines_near(start_beats: float, *, grid: float, shift: float, tol_beats: float) -> list[float]:
    """The lines of the grid swung by ``shift`` beats (even steps ``k · grid``, odd steps ``k · grid + shift``)
    nearest to ``start_beats``: the nearest one and any other no more than ``tol_beats`` farther."""
    k0 = math.floor(start_beats / grid)
    lines = [k * grid + (shift if k % 2 else 0.0) for k in range(k0 - 2, k0 + 4)]
    nearest = min(abs(x - start_beats) for x in lines)
    return [x for x in lines if abs(x - start_beats) <= nearest + tol_beats + 1e-12]


def quantized(before: Sequence[PlacedNote], after: Sequence[PlacedNote], *, grid: float, swing: float,
              tol_beats: float) -> float:
    """Share of starting notes moved onto their nearest line of the swung grid, otherwise kept.

    The grid has steps ``k · grid`` with odd steps ``swing · grid`` late (``swing``: the starting groove's
    swing amount, :func:`.rhythm.swing_amount`). A starting note counts when an ``after`` note on the same
    track has its pitch and velocity (within :data:`EXACT_TOL`) and starts within ``tol_beats`` of the
    line nearest to the starting note's onset (or of a line no more than ``tol_beats`` farther from it).
    Matched one to one; the share is ``matched / max(#before, #after)``. 0.0 with no starting notes.
    """
    if not grid > 0 or not 0 <= tol_beats < grid / 2:
        raise TaskError(f"quantized: grid {grid!r} must be > 0 and tol_beats {tol_beats!r} in [0, grid/2)")
    if not before:
        return 0.0
    shift = swing * grid
    by_key = _onsets_by_key(after)
    candidates: list[list[int]] = []
    for b in before:
        lst = by_key.get((b.track_id, b.p), [])
        cands = []
        for line in swung_lines_near(b.start_beats, grid=grid, shift=shift, tol_beats=tol_beats):
            lo = bisect.bisect_left(lst, (line - tol_beats - 1e-12, -1))
            for start, j in lst[lo:]:
                if start > line + tol_beats + 1e-12:
                    break
                if abs(after[j].v - b.v) <= EXACT_TOL + 1e-12 and j not in cands:
                    cands.append(j)
        candidates.append(cands)
    return _max_matching(candidates) / max(len(before), len(after))
