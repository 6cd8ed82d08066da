"""Note matching for transcription: precision, recall and F1 of an estimate against the true notes.

The rules (docs/transcription.md), the same as ``mir_eval.transcription`` so the figures agree with it:

* A reference note and an estimated note **match** when their onsets are at most ``onset_tol_s`` (50 ms)
  apart and their pitches less than ``pitch_tol_cents`` (50 cents) apart; with offsets on, their offsets
  must also be at most ``max(offset_ratio * reference duration, offset_min_s)`` apart (20 % of the note,
  at least 50 ms). The time bounds are inclusive. Time distances are rounded to 7 decimals first (as
  mir_eval does), so 50 ms written as 1.05 - 1.0 still counts as 50 ms.
* The pitch bound is **exclusive**, where mir_eval's is inclusive (the two differ only at exactly 50
  cents): a note written a quarter tone off (60.5) sits exactly between two semitones, and with the bound
  inclusive it matched either, so a transcription hedged on every note by writing it halfway between its
  two likeliest pitches scored as if it had chosen right (1.000 on transcribe-solo-hook). It matches
  neither now; 60.49 still matches 60.
* Matching is **one to one**: the largest set of matched pairs in which no note is used twice (a maximum
  bipartite matching), so a duplicated estimate matches once and the copy counts against precision.
* precision = matches / estimated notes, recall = matches / reference notes, F1 = 2PR / (P + R); all three
  are 0 when either side is empty (mir_eval's convention).
* Pitches are MIDI numbers (69 = A4 = 440 Hz) and may be fractional: 0.5 of a semitone is 50 cents.

Pure Python: importing this module does not import numpy.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

ONSET_TOL_S = 0.05
PITCH_TOL_CENTS = 50.0
OFFSET_RATIO = 0.2
OFFSET_MIN_S = 0.05
_DECIMALS = 7


@dataclass(frozen=True)
class TimedNote:
    """A note in seconds: MIDI ``pitch`` (may be fractional), ``onset_s`` and ``offset_s`` (> onset)."""

    pitch: float
    onset_s: float
    offset_s: float

    @property
    def duration_s(self) -> float:
        return self.offset_s - self.onset_s


@dataclass(frozen=True)
class Figures:
    """Precision, recall and F1 of one comparison, with the counts they come from."""

    precision: float
    recall: float
    f1: float
    matched: int
    n_ref: int
    n_est: int


def _rounded(distance: float) -> float:
    """``distance`` rounded to 7 decimals the way numpy's ``around`` does (scale, round half to even,
    unscale), so a boundary case decides as in mir_eval."""
    scale = 10.0 ** _DECIMALS
    return round(distance * scale) / scale


def _pair_ok(ref: TimedNote, est: TimedNote, *, onset_tol_s: float, pitch_tol_cents: float,
             offsets: bool, offset_ratio: float, offset_min_s: float, pitch_shift: float = 0.0) -> bool:
    if _rounded(abs(ref.onset_s - est.onset_s)) > onset_tol_s:
        return False
    if abs(100.0 * (ref.pitch + pitch_shift - est.pitch)) >= pitch_tol_cents:
        return False
    if offsets:
        tol = max(offset_ratio * (ref.offset_s - ref.onset_s), offset_min_s)
        if _rounded(abs(ref.offset_s - est.offset_s)) > tol:
            return False
    return True


def _max_matching(adjacent: list[list[int]], n_est: int) -> list[tuple[int, int]]:
    """A maximum matching of the bipartite graph ``adjacent[ref] = [est, ...]`` (augmenting paths, each
    search iterative so a long chain cannot overflow the stack), as sorted ``(ref, est)`` pairs."""
    est_of_ref: list[int] = [-1] * len(adjacent)
    ref_of_est: list[int] = [-1] * n_est
    for root in range(len(adjacent)):
        if not adjacent[root]:
            continue
        seen = [False] * n_est
        came_from: dict[int, tuple[int, int]] = {}  # est -> (ref that reached it, est that ref held)
        stack = [root]
        found = -1
        while stack and found < 0:
            r = stack.pop()
            for e in adjacent[r]:
                if seen[e]:
                    continue
                seen[e] = True
                came_from[e] = (r, est_of_ref[r])
                if ref_of_est[e] < 0:
                    found = e
                    break
                stack.append(ref_of_est[e])
        e = found
        while e >= 0:  # flip the path back to the root
            r, previous = came_from[e]
            est_of_ref[r], ref_of_est[e] = e, r
            e = previous if r != root else -1
    return sorted((r, e) for r, e in enumerate(est_of_ref) if e >= 0)


def _adjacency(ref: list[TimedNote], est: list[TimedNote], ok, *, onset_tol_s: float) -> list[list[int]]:
    """For each reference note, the estimated notes ``ok(ref_note, est_note)`` accepts among those whose
    onset is near (a window a little wider than the tolerance; ``ok`` decides exactly).

    A row stops at ``len(ref)`` candidates: a note with that many is matched in some maximum matching using
    only those (the other notes can hold at most ``len(ref) - 1`` of them), so the matching's size is the
    same and a flood of copies costs no time."""
    order = sorted(range(len(est)), key=lambda j: est[j].onset_s)
    onsets = [est[j].onset_s for j in order]
    slack = onset_tol_s + 1e-6
    adjacent = []
    for note in ref:
        row: list[int] = []
        for k in range(bisect.bisect_left(onsets, note.onset_s - slack),
                       bisect.bisect_right(onsets, note.onset_s + slack)):
            if ok(note, est[order[k]]):
                row.append(order[k])
                if len(row) == len(ref):
                    break
        adjacent.append(row)
    return adjacent


def match_notes(ref: list[TimedNote], est: list[TimedNote], *, onset_tol_s: float = ONSET_TOL_S,
                pitch_tol_cents: float = PITCH_TOL_CENTS, offsets: bool = False,
                offset_ratio: float = OFFSET_RATIO, offset_min_s: float = OFFSET_MIN_S) -> list[tuple[int, int]]:
    """The one-to-one matching of ``ref`` and ``est`` under the module's rules, as ``(ref index, est
    index)`` pairs."""
    def ok(r: TimedNote, e: TimedNote) -> bool:
        return _pair_ok(r, e, onset_tol_s=onset_tol_s, pitch_tol_cents=pitch_tol_cents, offsets=offsets,
                        offset_ratio=offset_ratio, offset_min_s=offset_min_s)

    return _max_matching(_adjacency(ref, est, ok, onset_tol_s=onset_tol_s), len(est))


def figures(ref: list[TimedNote], est: list[TimedNote], *, offsets: bool = False, **tolerances: float) -> Figures:
    """Precision, recall and F1 of ``est`` against ``ref`` (offsets too when ``offsets``)."""
    if not ref or not est:
        return Figures(0.0, 0.0, 0.0, 0, len(ref), len(est))
    matched = len(match_notes(ref, est, offsets=offsets, **tolerances))
    precision, recall = matched / len(est), matched / len(ref)
    f1 = 0.0 if precision == 0 and recall == 0 else 2 * precision * recall / (precision + recall)
    return Figures(precision, recall, f1, matched, len(ref), len(est))


def octave_errors(ref: list[TimedNote], est: list[TimedNote], *, onset_tol_s: float = ONSET_TOL_S,
                  pitch_tol_cents: float = PITCH_TOL_CENTS) -> int:
    """Reference notes missed on pitch but heard an octave off: after the onset-and-pitch matching, the
    notes left on each side are matched again one to one with the reference pitch moved 1, 2 or 3 octaves
    up or down; the count of those pairs."""
    pairs = match_notes(ref, est, onset_tol_s=onset_tol_s, pitch_tol_cents=pitch_tol_cents)
    used_ref, used_est = {r for r, _ in pairs}, {e for _, e in pairs}
    ref_left = [n for i, n in enumerate(ref) if i not in used_ref]
    est_left = [n for j, n in enumerate(est) if j not in used_est]

    def ok(r: TimedNote, e: TimedNote) -> bool:
        return any(_pair_ok(r, e, onset_tol_s=onset_tol_s, pitch_tol_cents=pitch_tol_cents, offsets=False,
                            offset_ratio=OFFSET_RATIO, offset_min_s=OFFSET_MIN_S, pitch_shift=shift)
                   for shift in (-36, -24, -12, 12, 24, 36))

    return len(_max_matching(_adjacency(ref_left, est_left, ok, onset_tol_s=onset_tol_s), len(est_left)))


def rhythm(ref: list[TimedNote], est: list[TimedNote], *, step_s: float, **tolerances: float) -> float:
    """Of the matched notes (onset and pitch), the share whose onset and duration, quantised to the song's
    grid (``step_s`` seconds, e.g. a 1/16 note at the song's tempo), equal the reference note's; a
    duration is at least one step. 0 when nothing matched."""
    pairs = match_notes(ref, est, **tolerances)
    if not pairs:
        return 0.0

    def grid(note: TimedNote) -> tuple[int, int]:
        start = round(note.onset_s / step_s)
        return start, max(1, round(note.offset_s / step_s) - start)

    return sum(grid(ref[r]) == grid(est[e]) for r, e in pairs) / len(pairs)
