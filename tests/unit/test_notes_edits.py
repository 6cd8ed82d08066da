"""unchanged, transposed and quantized on hand-written before/after selections (answers by hand in comments)."""

import pytest

from pytest_overdub.errors import TaskError
from pytest_overdub.notes.edits import quantized, transposed, unchanged
from pytest_overdub.notes.selection import PlacedNote


def n(p, start=0.0, dur=1.0, v=0.8, track="t_bass"):
    return PlacedNote(track, "c", "", p, start, dur, v)


BEFORE = [n(45, 0), n(48, 1), n(52, 2)]


def test_unchanged_identical_and_within_tolerance():
    assert unchanged(BEFORE, list(BEFORE)) == 1.0
    # new clip and note ids, velocity 0.0005 off, duration 0.0009 off: still exactly there
    moved_clip = [PlacedNote("t_bass", "c_other", "x", 45, 0.0, 1.0009, 0.8005), n(48, 1), n(52, 2)]
    assert unchanged(BEFORE, moved_clip) == 1.0


def test_unchanged_counts_edits():
    assert unchanged(BEFORE, [n(45, 0, v=0.81), n(48, 1), n(52, 2)]) == pytest.approx(2 / 3)  # velocity
    assert unchanged(BEFORE, [n(45, 0.002), n(48, 1), n(52, 2)]) == pytest.approx(2 / 3)     # start
    assert unchanged(BEFORE, [n(45, 0, 0.5), n(48, 1), n(52, 2)]) == pytest.approx(2 / 3)    # duration
    assert unchanged(BEFORE, [n(46, 0), n(48, 1), n(52, 2)]) == pytest.approx(2 / 3)         # pitch
    assert unchanged(BEFORE, [n(48, 1), n(52, 2)]) == pytest.approx(2 / 3)                   # removed: 2/3
    assert unchanged(BEFORE, [*BEFORE, n(55, 3)]) == pytest.approx(3 / 4)                    # added: 3/4


def test_unchanged_same_note_on_another_track_is_not_there():
    assert unchanged([n(60, 0, track="t_keys")], [n(60, 0, track="t_pad")]) == 0.0


def test_unchanged_empty_cases():
    assert unchanged([], []) == 1.0
    assert unchanged([], [n(45, 0), n(48, 1)]) == 0.0     # 0 / max(0, 2)
    assert unchanged(BEFORE, []) == 0.0


def test_unchanged_matches_one_to_one():
    # two identical starting notes, one left: 1 / 2; one starting note doubled: 1 / 2
    assert unchanged([n(45, 0), n(45, 0)], [n(45, 0)]) == 0.5
    assert unchanged([n(45, 0)], [n(45, 0), n(45, 0)]) == 0.5


def test_unchanged_finds_the_full_matching():
    # b1 at 1.0 fits a1 (0.9995) and a2 (1.0009); b2 at 0.9988 fits only a1 (0.0007 away; a2 is 0.0021).
    # Giving a1 to b1 first would leave b2 unmatched; the maximum matching pairs b1-a2, b2-a1 -> 2/2.
    before = [n(45, 1.0), n(45, 0.9988)]
    after = [n(45, 0.9995), n(45, 1.0009)]
    assert unchanged(before, after) == 1.0


def test_transposed_up_a_step():
    up = [n(47, 0), n(50, 1), n(54, 2)]
    assert transposed(BEFORE, up, semitones=2) == 1.0
    assert transposed(BEFORE, list(BEFORE), semitones=2) == 0.0          # not moved
    assert transposed(BEFORE, [n(47, 0), n(50, 1), n(52, 2)], semitones=2) == pytest.approx(2 / 3)
    assert transposed(BEFORE, [*up, n(57, 3)], semitones=2) == pytest.approx(3 / 4)  # an extra note
    assert transposed(BEFORE, [n(33, 0), n(36, 1), n(40, 2)], semitones=-12) == 1.0
    assert transposed(BEFORE, up, semitones=2.0) == 1.0                  # a whole number from JSON


def test_transposed_empty_and_errors():
    assert transposed([], [], semitones=2) == 0.0
    assert transposed([], [n(47, 0)], semitones=2) == 0.0
    with pytest.raises(TaskError, match="semitones 1.5"):
        transposed(BEFORE, BEFORE, semitones=1.5)


# --- quantized ------------------------------------------------------------------------------------

SWING = 0.24          # odd 16ths 0.06 beats late
TOL = 0.048           # 30 ms at 96 bpm
LOOSE = [n(36, 0.01, 0.5), n(42, 0.30), n(38, 1.02, 0.5), n(42, 1.33), n(42, 1.49), n(36, 2.0)]
#: the lines nearest to each: 0, 0.31, 1.0, 1.31, 1.5, 2.0 (odd 16ths at k * 0.25 + 0.06)
TIGHT = [n(36, 0.0, 0.5), n(42, 0.31), n(38, 1.0, 0.5), n(42, 1.31), n(42, 1.5), n(36, 2.0)]


def test_quantized_each_note_onto_its_nearest_swung_line():
    assert quantized(LOOSE, TIGHT, grid=0.25, swing=SWING, tol_beats=TOL) == 1.0
    # durations may change (a quantize may tidy lengths); a velocity may not
    assert quantized(LOOSE, [*TIGHT[:5], n(36, 2.0, 0.25)], grid=0.25, swing=SWING, tol_beats=TOL) == 1.0
    assert quantized(LOOSE, [*TIGHT[:5], n(36, 2.0, v=0.9)], grid=0.25, swing=SWING,
                     tol_beats=TOL) == pytest.approx(5 / 6)


def test_a_quantize_that_stacks_hits_fails():
    # every hit stacked on two positions (beat 0 and the swung 16th after it): on the grid, still swung,
    # same count and pitches, but only the notes whose nearest line was one of those two count: 2 of 6
    stacked = [n(36, 0.0, 0.5), n(42, 0.31), n(38, 0.0, 0.5), n(42, 0.31), n(42, 0.0), n(36, 0.0)]
    assert quantized(LOOSE, stacked, grid=0.25, swing=SWING, tol_beats=TOL) == pytest.approx(2 / 6)


def test_quantized_straight_grid_misses_the_swung_lines_and_counts_edits():
    straight = [n(36, 0.0, 0.5), n(42, 0.25), n(38, 1.0, 0.5), n(42, 1.25), n(42, 1.5), n(36, 2.0)]
    # the two odd hats land 0.06 beats (37.5 ms) from their swung line: 4 of 6
    assert quantized(LOOSE, straight, grid=0.25, swing=SWING, tol_beats=TOL) == pytest.approx(4 / 6)
    assert quantized(LOOSE, TIGHT[:5], grid=0.25, swing=SWING, tol_beats=TOL) == pytest.approx(5 / 6)  # dropped
    assert quantized(LOOSE, [*TIGHT, n(49, 3.0)], grid=0.25, swing=SWING,
                     tol_beats=TOL) == pytest.approx(6 / 7)                                      # added
    assert quantized([], TIGHT, grid=0.25, swing=SWING, tol_beats=TOL) == 0.0
    with pytest.raises(TaskError, match="quantized"):
        quantized(LOOSE, TIGHT, grid=0.25, swing=SWING, tol_beats=0.2)
