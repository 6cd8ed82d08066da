"""pattern, differs, swing and jitter on hand-written grooves (answers by hand in comments)."""

import math

import pytest

from pytest_overdub.errors import TaskError
from pytest_overdub.notes.rhythm import differs, jitter, pattern, swing_amount, swing_change
from pytest_overdub.notes.selection import PlacedNote


def n(p, start=0.0, dur=0.25, v=0.8):
    return PlacedNote("t_drums", "c", "", p, start, dur, v)


def swung_sixteenths(late, count=8, p=42):
    """16ths from beat 0; odd steps ``late`` beats late."""
    return [n(p, k * 0.25 + (late if k % 2 else 0.0)) for k in range(count)]


# --- pattern --------------------------------------------------------------------------------------

def test_pattern_kick_on_one_and_three():
    # 8 (bar, position) pairs: 0, 2, 4, 6, 8, 10, 12, 14; 10.02 is 0.02 late, 14.03 exactly 0.03 late
    kicks = [n(36, b) for b in (0, 2, 4, 6, 8)] + [n(36, 10.02), n(36, 12), n(35, 14.03)]
    assert pattern(kicks, pitches=[35, 36], at=[0, 2], bars=(0, 4), tol_beats=0.03) == 1.0
    # the kick on 6 moved 0.04 late: 7 hits of 8 wanted, and the late kick is an extra onset (8 onsets);
    # a snare on 6 is the wrong pitch -> F = 2 * 7 / (8 + 8) = 0.875
    kicks[3] = n(36, 6.04)
    assert pattern([*kicks, n(38, 6)], pitches=["B1", "C2"], at=[0, 2], bars=(0, 4), tol_beats=0.03) == 0.875


def test_pattern_eighth_hats_with_one_missing_and_one_doubled():
    # 3 bars x 8 eighths = 24 pairs; the hat at 5.5 is missing, the one at 0 is doubled: 23 hits, 24 onsets
    # -> F = 2 * 23 / (24 + 24) = 23/24
    hats = [n(42, 0.5 * k) for k in range(24) if 0.5 * k != 5.5] + [n(46, 0)]
    at = [0.5 * i for i in range(8)]
    assert pattern(hats, pitches=[42, 44, 46], at=at, bars=(0, 3), tol_beats=0.03) == pytest.approx(23 / 24)


def test_pattern_extra_hits_count_against():
    # kick on 1 and 3 over bars 0-2 (6 wanted), plus one extra kick a bar on the and of 3:
    # 6 hits, 9 onsets -> F = 2 * 6 / (6 + 9) = 0.8
    kicks = [n(36, b * 4 + pos) for b in range(3) for pos in (0, 2, 2.5)]
    assert pattern(kicks, pitches=[36], at=[0, 2], bars=(0, 3), tol_beats=0.03) == pytest.approx(0.8)
    # a kick on every 16th: 6 hits, 48 onsets -> 12 / 54
    every = [n(36, 0.25 * k) for k in range(48)]
    assert pattern(every, pitches=[36], at=[0, 2], bars=(0, 3), tol_beats=0.03) == pytest.approx(12 / 54)
    # the same without the extras reads 1: recall alone cannot tell the two apart, precision can
    assert pattern([k for k in every if k.start_beats % 2 == 0], pitches=[36], at=[0, 2], bars=(0, 3),
                   tol_beats=0.03) == 1.0


def test_pattern_onset_matching_is_one_to_one_and_bounded_by_the_bars():
    # two kicks 0.02 apart on beat 0 are one hit and one extra; 1 hit of 2 wanted, 2 onsets -> 0.5
    assert pattern([n(36, 0), n(36, 0.02)], pitches=[36], at=[0, 2], bars=(0, 1), tol_beats=0.03) == 0.5
    # a kick 0.02 early for bar 1's downbeat belongs to bar 1, not to the bar before; one at 4.0 is outside
    # bars (0, 1) and is neither a hit nor an extra
    assert pattern([n(36, 3.98), n(36, 6)], pitches=[36], at=[0, 2], bars=(1, 2), tol_beats=0.03) == 1.0
    assert pattern([n(36, 0), n(36, 2), n(36, 4.0)], pitches=[36], at=[0, 2], bars=(0, 1),
                   tol_beats=0.03) == 1.0
    assert pattern([], pitches=[36], at=[0], bars=(0, 1), tol_beats=0.03) == 0.0


def test_pattern_errors():
    with pytest.raises(TaskError, match="must both be non-empty"):
        pattern([], pitches=[], at=[0], bars=(0, 1), tol_beats=0.03)
    with pytest.raises(TaskError, match="bars"):
        pattern([], pitches=[36], at=[0], bars=(2, 2), tol_beats=0.03)
    with pytest.raises(TaskError, match="tol_beats"):
        pattern([], pitches=[36], at=[0], bars=(0, 1), tol_beats=-0.1)


# --- differs --------------------------------------------------------------------------------------

BAR0 = [n(36, 0), n(38, 1), n(36, 2), n(38, 3)]


def test_differs():
    same = [n(36, 12), n(38, 13), n(36, 14), n(38, 15, v=0.3)]   # only a velocity differs: same set
    assert differs(BAR0 + same, bar_a=0, bar_b=3) == 0.0
    fill = same + [n(38, 15.5)]
    assert differs(BAR0 + fill, bar_a=3, bar_b=0) == 1.0
    # a note at 16 belongs to bar 4, not bar 3: bar 3 empty -> 0
    assert differs(BAR0 + [n(38, 16)], bar_a=0, bar_b=3) == 0.0
    assert differs([], bar_a=0, bar_b=3) == 0.0
    # same positions, different pitch -> 1
    assert differs(BAR0 + [n(36, 12), n(38, 13), n(36, 14), n(40, 15)], bar_a=0, bar_b=3) == 1.0



def test_differs_new_hits_counts_only_hits_bar_b_lacks():
    """A fill asks for hits bar 1 does not have: one hit added, three hits nudged by less than the
    tolerance, or one hit stacked three times is not a fill of three (each passed the plain ``differs``)."""
    tol = 0.046
    one_more = [n(36, 12), n(38, 13), n(36, 14), n(38, 15), n(36, 15.5)]
    assert differs(BAR0 + one_more, bar_a=3, bar_b=0) == 1.0
    assert differs(BAR0 + one_more, bar_a=3, bar_b=0, new_hits=3, tol_beats=tol) == 0.0
    nudged = [n(36, 12.01), n(38, 13.02), n(36, 14.03), n(38, 15.01)]
    assert differs(BAR0 + nudged, bar_a=3, bar_b=0) == 1.0
    assert differs(BAR0 + nudged, bar_a=3, bar_b=0, new_hits=1, tol_beats=tol) == 0.0
    stacked = [n(36, 12), n(38, 13), n(36, 14), n(38, 15)] + [n(45, 15.5 + k * 0.01) for k in range(3)]
    assert differs(BAR0 + stacked, bar_a=3, bar_b=0, new_hits=2, tol_beats=tol) == 0.0
    run = [n(36, 12), n(38, 13), n(36, 14), n(38, 15), n(38, 15.25), n(38, 15.5), n(45, 15.75)]
    assert differs(BAR0 + run, bar_a=3, bar_b=0, new_hits=3, tol_beats=tol) == 1.0
    assert differs(BAR0, bar_a=3, bar_b=0, new_hits=1, tol_beats=tol) == 0.0  # an empty bar is no fill

# --- swing ----------------------------------------------------------------------------------------

def test_swing_amount():
    # odd steps late by 0.06, 0.06 and 0 (the 1.25 hit) -> mean 0.04 -> / 0.25 = 0.16
    notes = [n(42, 0), n(42, 0.31), n(42, 0.5), n(42, 0.81), n(42, 1.25), n(36, 1.0)]
    assert swing_amount(notes) == pytest.approx(0.16)
    assert swing_amount(swung_sixteenths(0.06)) == pytest.approx(0.24)
    assert swing_amount(swung_sixteenths(-0.02)) == pytest.approx(-0.08)   # pushed ahead
    assert swing_amount(swung_sixteenths(0.0)) == 0.0
    assert swing_amount([n(42, 0), n(42, 0.5)]) == 0.0                     # no odd steps at all
    assert swing_amount([]) == 0.0


def test_swing_change():
    s024 = swung_sixteenths(0.06)
    assert swing_change(s024, swung_sixteenths(0.06)) == pytest.approx(0.0)
    assert swing_change(s024, swung_sixteenths(0.0)) == pytest.approx(1.0)     # straightened: all of it
    assert swing_change(s024, swung_sixteenths(0.04)) == pytest.approx(1 / 3)  # 0.16 vs 0.24: 0.08/0.24
    assert swing_change(swung_sixteenths(0.0), s024) == pytest.approx(0.24)    # s0 = 0: |s1|
    assert swing_change([], []) == 0.0


# --- jitter ---------------------------------------------------------------------------------------

REF = swung_sixteenths(0.06)   # the starting groove swings odd 16ths 0.06 late


def test_jitter_on_the_swung_grid_is_zero():
    assert jitter(swung_sixteenths(0.06, count=16), reference_notes=REF) == pytest.approx(0.0, abs=1e-12)


def test_jitter_straight_against_swung_reference():
    # 0, 0.25, 0.5, 0.75: odd steps 0.06 early of the swung grid -> sqrt((0 + 0.06² + 0 + 0.06²) / 4)
    assert jitter(swung_sixteenths(0.0, count=4), reference_notes=REF) == pytest.approx(math.sqrt(0.0018))


def test_jitter_humanised():
    # distances to 0, 0.31, 0.5, 0.81: 0.01, 0, 0.01, 0.02 -> sqrt((1e-4 + 0 + 1e-4 + 4e-4) / 4)
    notes = [n(36, 0.01), n(42, 0.31), n(38, 0.49), n(42, 0.83)]
    assert jitter(notes, reference_notes=REF) == pytest.approx(math.sqrt(1.5e-4))


def test_jitter_uses_the_nearest_swung_point():
    # 0.40 is 0.09 from the swung 0.31 (and 0.10 from 0.5); a straight reference gives 0.10 (to 0.5)
    assert jitter([n(42, 0.40)], reference_notes=REF) == pytest.approx(0.09)
    assert jitter([n(42, 0.40)], reference_notes=[]) == pytest.approx(0.10)
    assert jitter([n(42, 0.01), n(42, 0.26)], reference_notes=[]) == pytest.approx(0.01)


def test_jitter_empty_and_bad_grid():
    assert jitter([], reference_notes=REF) == math.inf
    with pytest.raises(TaskError, match="grid 0"):
        jitter([n(42, 0)], reference_notes=REF, grid=0)
