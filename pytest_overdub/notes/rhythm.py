"""Rhythm readings: ``pattern``, ``differs``, ``jitter``, ``swing`` (docs/checks.md).

Conventions:

* Beats are 0-based and absolute; bar ``i`` spans ``[i * beats_per_bar, (i + 1) * beats_per_bar)`` and a
  note's position in its bar is ``start - i * beats_per_bar``.
* The groove grid has steps ``k * grid`` (``grid`` = 0.25 beats, a 1/16 in 4/4). Each onset belongs to its
  nearest step ``k = floor(start / grid + 1/2)``; odd ``k`` are the off-beat 16ths that swing moves.
* Swing amount ``s`` = mean over notes on odd steps of ``(start - k * grid)`` ÷ ``grid``: 0 is straight;
  0.24 puts the off 16ths 0.06 beats late, at (0.25 + 0.06) / 0.5 = 62 % of the eighth (a drum machine's
  "62 % swing"; in general swing % = 50 · (1 + s)). Every note counts, so a hat and a kick on the same step
  weigh twice. With no note on an odd step, ``s`` is 0.
* The swung grid puts even steps at ``k * grid`` and odd steps at ``k * grid + s0 * grid``, where ``s0`` is
  the swing of the reference (starting) groove.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import TaskError
from .selection import PlacedNote, bar_range
from .theory import parse_pitch

EPS = 1e-9
POSITION_DECIMALS = 3


def pattern(notes: Sequence[PlacedNote], *, pitches: Sequence[int | str], at: Sequence[float],
            bars: range | Sequence[int], tol_beats: float, beats_per_bar: float = 4) -> float:
    """How well the onsets of ``pitches`` in ``bars`` match the wanted (bar, position) pairs: the F-measure
    ``2 · hits / (wanted + onsets)``, the harmonic mean of recall (``hits / wanted``) and precision
    (``hits / onsets``), so extra hits count against as missing ones do.

    ``at`` holds positions in the bar in beats (0 = the downbeat). An onset of one of ``pitches`` counts
    when it starts in ``[first downbeat - tol_beats, last bar's end - tol_beats)``; a wanted pair is hit
    by one onset within ``tol_beats`` of it, and one onset hits at most one pair (a doubled hit on one
    position is one hit and one extra). 0.0 with no onsets.
    """
    span = bar_range(bars)
    if not pitches or not at:
        raise TaskError(f"pattern: pitches {list(pitches)!r} and positions {list(at)!r} must both be non-empty")
    _check_tol(tol_beats)
    wanted = frozenset(parse_pitch(p) for p in pitches)
    lo, hi = span.start * beats_per_bar - tol_beats, span.stop * beats_per_bar - tol_beats
    onsets = sorted(n.start_beats for n in notes if n.p in wanted and lo <= n.start_beats < hi)
    targets = sorted(i * beats_per_bar + pos for i in span for pos in at)
    hits = _matched_onsets(onsets, targets, tol_beats=tol_beats)
    return 2 * hits / (len(targets) + len(onsets))


def _matched_onsets(onsets: Sequence[float], targets: Sequence[float], *, tol_beats: float) -> int:
    """Size of a maximum one-to-one matching of sorted onsets to sorted targets within ``tol_beats``
    (greedy in time order is maximum for points on a line with a fixed tolerance)."""
    hits = i = 0
    for t in targets:
        while i < len(onsets) and onsets[i] < t - tol_beats - EPS:
            i += 1
        if i < len(onsets) and onsets[i] <= t + tol_beats + EPS:
            hits += 1
            i += 1
    return hits


def _check_tol(tol_beats: float) -> None:
    if not 0 <= tol_beats < 0.5:
        raise TaskError(f"tol_beats {tol_beats!r}: expected an on-beat tolerance in beats, 0 <= tol < 0.5")


def bar_content(notes: Sequence[PlacedNote], *, bar: int, beats_per_bar: float = 4) -> frozenset[tuple[int, float]]:
    """The (pitch, position-in-bar rounded to 3 decimals) pairs of the notes starting in ``bar``."""
    lo = bar * beats_per_bar
    return frozenset((n.p, round(n.start_beats - lo, POSITION_DECIMALS))
                     for n in notes if lo <= n.start_beats < lo + beats_per_bar)


def differs(notes: Sequence[PlacedNote], *, bar_a: int, bar_b: int, beats_per_bar: float = 4,
            new_hits: int | None = None, tol_beats: float = 0.0) -> float:
    """1.0 when both bars have notes and their (pitch, position-in-bar) sets differ, else 0.0.

    Given ``new_hits``, the bars must differ by that many hits of bar ``a`` that bar ``b`` does not have
    (:func:`new_hits_count`), so a fill is more than one hit swapped, nudged or added."""
    a = bar_content(notes, bar=bar_a, beats_per_bar=beats_per_bar)
    b = bar_content(notes, bar=bar_b, beats_per_bar=beats_per_bar)
    if new_hits is not None:
        return 1.0 if b and new_hits_count(a, b, tol_beats=tol_beats) >= new_hits else 0.0
    return 1.0 if a and b and a != b else 0.0


def new_hits_count(a: frozenset[tuple[int, float]], b: frozenset[tuple[int, float]], *, tol_beats: float) -> int:
    """How many hits of bar content ``a`` bar ``b`` lacks: a (pitch, position) of ``a`` with no hit of its
    pitch in ``b`` within ``tol_beats``; new hits of one pitch closer than ``tol_beats`` to each other are
    one (a hit nudged or stacked is not a new one)."""
    _check_tol(tol_beats)
    count = 0
    last: dict[int, float] = {}
    for p, pos in sorted(a):
        if any(q == p and abs(x - pos) <= tol_beats + EPS for q, x in b):
            continue
        if p in last and pos - last[p] <= tol_beats + EPS:
            continue
        last[p] = pos
        count += 1
    return count


def _step(start: float, grid: float) -> int:
    return math.floor(start / grid + 0.5)


def _check_grid(grid: float) -> None:
    if not grid > 0:
        raise TaskError(f"grid {grid!r}: expected a step in beats > 0 (0.25 = a 1/16 in 4/4)")


def swing_amount(notes: Sequence[PlacedNote], *, grid: float = 0.25) -> float:
    """Mean lateness of the notes on odd grid steps, as a fraction of ``grid``; 0.0 with none."""
    _check_grid(grid)
    late = [n.start_beats - k * grid for n in notes if (k := _step(n.start_beats, grid)) % 2 == 1]
    return sum(late) / len(late) / grid if late else 0.0


def swing_change(before: Sequence[PlacedNote], after: Sequence[PlacedNote], *, grid: float = 0.25) -> float:
    """How much the swing moved: ``|s1 - s0| / |s0|``, or ``|s1|`` when the starting groove is straight."""
    s0 = swing_amount(before, grid=grid)
    s1 = swing_amount(after, grid=grid)
    return abs(s1) if s0 == 0 else abs(s1 - s0) / abs(s0)


def jitter(notes: Sequence[PlacedNote], *, reference_notes: Sequence[PlacedNote], grid: float = 0.25) -> float:
    """RMS distance in beats of the onsets from the grid swung as ``reference_notes`` swing.

    Infinity with no notes: an empty part is not a tight one.
    """
    _check_grid(grid)
    if not notes:
        return math.inf
    shift = swing_amount(reference_notes, grid=grid) * grid

    def nearest(x: float) -> float:
        k0 = math.floor(x / grid)
        return min(abs(x - (k * grid + (shift if k % 2 else 0.0))) for k in range(k0 - 1, k0 + 3))

    return math.sqrt(sum(nearest(n.start_beats) ** 2 for n in notes) / len(notes))
