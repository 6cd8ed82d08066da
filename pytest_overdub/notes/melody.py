"""Melody readings: ``distinct``, ``turns`` and ``copied`` (docs/checks.md).

Conventions:

* An *ornament* is a note heard shorter than a sixteenth (:data:`ORNAMENT_BEATS` less ``tol_beats``): a
  grace note or a click, heard as a flick on a note rather than a note of the line. Every melody reading
  leaves ornaments out, on both sides of a copy: a drone with 25 ms clicks of seven pitches between its
  notes read as seven pitches and fourteen turns (write-counter-melody 0.905), and a copy of the hook with
  a click after each note halved its copy share (0.5, inside the gate).
* The *line* of a selection is its top voice: at each onset (onsets closer than ``tol_beats`` are one
  onset) the highest note. ``turns`` reads the line; ``distinct`` and ``copied`` read every note.
* A *turn* is a change of direction between two successive moves of the line: up then down, or down then
  up. Repeated notes are not moves (A A C A has one turn: up, then down).
* A *copy* of another part keeps its rhythm and its intervals: the selected notes land on that part's
  notes, and cover the notes it plays there, once every one of them is moved by one time shift ``dt``
  (any, in beats, onsets within ``tol_beats``) and one transposition ``dv``, counted either in semitones
  (an exact transposition; 0 or 12 is a unison or octave copy) or in steps of the key's scale (a
  diatonic transposition, as a line in parallel thirds is; notes outside the scale take no part in that
  count). A line that plays another part's melody in a new rhythm is a copy too: its top line (repeated
  notes merged) shares runs of :data:`COPY_RUN` or more successive intervals with the other's, played
  forwards, inverted (every interval upside down), backwards (retrograde) or both.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Sequence

from ..errors import TaskError
from .selection import PlacedNote

EPS = 1e-9

#: The shortest note of a line, in beats before the on-beat tolerance is taken off: a sixteenth note (as
#: a root must sound, :data:`~.harmony.ROOT_MIN_BEATS`).
ORNAMENT_BEATS = 0.25


def line_notes(notes: Sequence[PlacedNote], *, tol_beats: float) -> list[PlacedNote]:
    """``notes`` without their ornaments (heard shorter than :data:`ORNAMENT_BEATS` less ``tol_beats``)."""
    shortest = ORNAMENT_BEATS - tol_beats - EPS
    return [n for n in notes if n.dur_beats >= shortest]


def distinct(notes: Sequence[PlacedNote], *, tol_beats: float) -> float:
    """The number of different MIDI pitches among the selected notes, ornaments left out."""
    return float(len({n.p for n in line_notes(notes, tol_beats=tol_beats)}))


def top_line(notes: Sequence[PlacedNote], *, tol_beats: float) -> list[int]:
    """The pitches of the top voice, in time order (see the module docstring)."""
    line: list[int] = []
    last_start = None
    for n in sorted(notes, key=lambda n: (n.start_beats, n.p)):
        if last_start is not None and n.start_beats - last_start <= tol_beats + EPS:
            line[-1] = max(line[-1], n.p)
            continue
        line.append(n.p)
        last_start = n.start_beats
    return line


def turns(notes: Sequence[PlacedNote], *, tol_beats: float) -> float:
    """How many times the top line (ornaments left out) changes direction; 0.0 for fewer than three
    different onsets."""
    line = top_line(line_notes(notes, tol_beats=tol_beats), tol_beats=tol_beats)
    moves = [b - a for a, b in zip(line, line[1:]) if b != a]
    return float(sum(1 for a, b in zip(moves, moves[1:]) if (a > 0) != (b > 0)))


def copied(notes: Sequence[PlacedNote], other: Sequence[PlacedNote], *, tol_beats: float,
           scale: frozenset[int] | None = None) -> float:
    """How much of ``notes`` is ``other`` moved by one time shift and one transposition.

    For a shift ``dt`` and a transposition ``dv``, the copied notes are the selected notes with an
    ``other`` note at ``start + dt`` (± ``tol_beats``) and ``dv`` higher; the share is their number over
    the larger of the selection's size and the number of ``other`` notes in the selection's time span
    moved by ``dt``, so a line that copies only a few of the other part's notes (an answer to the hook's
    long notes) is not a copy, while a copy of every note, or of a fragment, is. The value is the largest
    share over ``dt`` and ``dv``, with ``dv`` in semitones and, given ``scale`` (the key's pitch classes),
    in scale steps. The copy in another rhythm counts as well (:func:`_run_share`): the value is the larger
    of the two. Ornaments are left out on both sides. 0.0 when either side has no notes.
    """
    if not 0 <= tol_beats < 0.5:
        raise TaskError(f"tol_beats {tol_beats!r}: expected an on-beat tolerance in beats, 0 <= tol < 0.5")
    notes, other = line_notes(notes, tol_beats=tol_beats), line_notes(other, tol_beats=tol_beats)
    if not notes or not other:
        return 0.0
    measures: list[Callable[[int], int | None]] = [lambda p: p]
    if scale:
        measures.append(_scale_steps(scale))
    return max(max(_best_share(notes, other, value=m, tol_beats=tol_beats),
                   _run_share(notes, other, value=m, tol_beats=tol_beats)) for m in measures)


#: A run of this many successive intervals of the top line, equal to a run of the other part's, is a
#: melodic copy in any rhythm (5 notes: the hook's opening phrase is 5).
COPY_RUN = 4


def _run_share(notes: Sequence[PlacedNote], other: Sequence[PlacedNote], *,
               value: Callable[[int], int | None], tol_beats: float) -> float:
    """Share of the selection's top line (repeated notes merged) inside runs of :data:`COPY_RUN` or more
    successive intervals that the other part's top line also plays somewhere, in any rhythm; the largest
    share over its :func:`_forms` (one way of deriving the line, not a patchwork of all four)."""
    ours = _intervals(top_line(notes, tol_beats=tol_beats), value)
    theirs = _intervals(top_line(other, tol_beats=tol_beats), value)
    if not ours:
        return 0.0
    return max(len(_runs_covered(ours, form)) for form in _forms(theirs)) / (len(ours) + 1)


def _forms(intervals: list[int | None]) -> list[list[int | None]]:
    """A melody's intervals as played forwards, upside down (inverted), backwards (retrograde) and both:
    the old ways of deriving a line from another, each still its melody."""
    inverted = [None if v is None else -v for v in intervals]
    return [intervals, inverted, inverted[::-1], intervals[::-1]]


def _runs_covered(ours: list[int | None], theirs: list[int | None]) -> set[int]:
    """Indices of the notes of our line inside runs of :data:`COPY_RUN` or more successive intervals
    equal to a run of ``theirs``."""
    covered: set[int] = set()
    prev = [0] * (len(theirs) + 1)
    for i, a in enumerate(ours):
        cur = [0] * (len(theirs) + 1)
        for j, b in enumerate(theirs):
            if a is not None and a == b:
                cur[j + 1] = prev[j] + 1
                if cur[j + 1] >= COPY_RUN:
                    covered.update(range(i - cur[j + 1] + 1, i + 2))  # the notes around those intervals
        prev = cur
    return covered


def _intervals(line: list[int], value: Callable[[int], int | None]) -> list[int | None]:
    """Successive differences of the line's values with repeated notes merged; None where a note has no
    value (outside the scale), so no run passes through it."""
    vals = [value(p) for p in line]
    merged = [v for k, v in enumerate(vals) if k == 0 or v is None or v != vals[k - 1]]
    return [None if a is None or b is None else b - a for a, b in zip(merged, merged[1:])]


def _scale_steps(scale: frozenset[int]) -> Callable[[int], int | None]:
    """MIDI pitch -> its number of scale steps above C-1 (None for a pitch outside the scale)."""
    pcs = sorted(scale)
    index = {pc: i for i, pc in enumerate(pcs)}
    return lambda p: None if p % 12 not in index else (p // 12) * len(pcs) + index[p % 12]


def _best_share(notes: Sequence[PlacedNote], other: Sequence[PlacedNote], *,
                value: Callable[[int], int | None], tol_beats: float) -> float:
    """Max over (dt, dv) of the copied share (see :func:`copied`).

    Every (note, other note) pair gives a (dv, dt); for each dv, a window of width ``2 · tol_beats``
    slides over the sorted dt and counts the distinct notes inside it.
    """
    first = min(n.start_beats for n in notes)
    last = max(n.start_beats for n in notes)
    starts = sorted(m.start_beats for m in other)
    by_dv: dict[int, list[tuple[float, int]]] = defaultdict(list)
    others = [(m.start_beats, v) for m in other if (v := value(m.p)) is not None]
    for i, n in enumerate(notes):
        vn = value(n.p)
        if vn is None:
            continue
        for start, vm in others:
            by_dv[vm - vn].append((start - n.start_beats, i))
    best = 0.0
    for pairs in by_dv.values():
        pairs.sort()
        inside: dict[int, int] = defaultdict(int)
        lo = 0
        for dt, i in pairs:
            inside[i] += 1
            while pairs[lo][0] < dt - 2 * tol_beats - EPS:
                j = pairs[lo][1]
                inside[j] -= 1
                if not inside[j]:
                    del inside[j]
                lo += 1
            centre = dt - tol_beats
            span = (bisect.bisect_right(starts, last + centre + tol_beats + EPS)
                    - bisect.bisect_left(starts, first + centre - tol_beats - EPS))
            best = max(best, len(inside) / max(len(notes), span))
    return best
