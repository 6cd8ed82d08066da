"""Transcription note matching against hand-checked cases (pytest_overdub/transcribe/matching.py)."""

import pytest

from pytest_overdub.transcribe.matching import TimedNote, figures, match_notes, octave_errors, rhythm


def n(pitch, onset, dur=0.5):
    return TimedNote(float(pitch), onset, onset + dur)


@pytest.mark.parametrize("late_s, hit", [(0.049, True), (0.050, True), (0.051, False), (-0.049, True),
                                         (-0.051, False)])
def test_an_onset_matches_within_50_ms_inclusive(late_s, hit):
    # 1.0 + 0.05 is 1.05 only after rounding to 7 decimals (in floats the distance is 0.05000000000000004)
    f = figures([n(60, 1.0)], [n(60, 1.0 + late_s)])
    assert f.f1 == (1.0 if hit else 0.0)


@pytest.mark.parametrize("cents, hit", [(49, True), (49.9, True), (50, False), (51, False), (-49, True),
                                         (-50, False), (-51, False)])
def test_a_pitch_matches_less_than_50_cents_away(cents, hit):
    assert figures([n(60, 1.0)], [n(60 + cents / 100, 1.0)]).matched == (1 if hit else 0)


def test_a_note_written_a_quarter_tone_off_is_neither_of_its_two_neighbours():
    """Every note of a line hedged halfway between its pitch and the semitone above matched the true note
    while the pitch bound was inclusive (F1 1.000); it matches no true note now, whichever of the two
    neighbours the truth holds."""
    line = [n(p, 0.5 * i) for i, p in enumerate((60, 62, 64, 65, 67))]
    for shift in (0.5, -0.5):
        assert figures(line, [n(x.pitch + shift, x.onset_s) for x in line]).f1 == 0.0
    assert figures(line, [n(x.pitch + 0.49, x.onset_s) for x in line]).f1 == 1.0


def test_a_duplicated_estimate_matches_once_and_costs_precision():
    f = figures([n(60, 1.0)], [n(60, 1.0), n(60, 1.01)])
    assert (f.matched, f.precision, f.recall) == (1, 0.5, 1.0)
    assert f.f1 == pytest.approx(2 / 3)


def test_matching_is_maximum_not_greedy():
    # A greedy pass giving each reference its nearest estimate pairs A with X (20 ms) and leaves B with
    # nothing; the one-to-one maximum pairs A with Y (40 ms) and B with X (50 ms).
    ref = [n(60, 0.10), n(60, 0.17)]        # A, B
    est = [n(60, 0.12), n(60, 0.06)]        # X, Y
    assert match_notes(ref, est) == [(0, 1), (1, 0)]
    assert figures(ref, est).f1 == 1.0


def test_offsets_use_the_larger_of_20_percent_and_50_ms():
    long_ref = [TimedNote(60.0, 0.0, 1.0)]       # tolerance 0.2 s
    assert figures(long_ref, [TimedNote(60.0, 0.0, 1.199)], offsets=True).f1 == 1.0
    assert figures(long_ref, [TimedNote(60.0, 0.0, 1.201)], offsets=True).f1 == 0.0
    assert figures(long_ref, [TimedNote(60.0, 0.0, 1.201)]).f1 == 1.0  # onsets only: offset ignored
    short_ref = [TimedNote(60.0, 0.0, 0.1)]      # 20 % is 20 ms: the floor of 50 ms holds
    assert figures(short_ref, [TimedNote(60.0, 0.0, 0.149)], offsets=True).f1 == 1.0
    assert figures(short_ref, [TimedNote(60.0, 0.0, 0.151)], offsets=True).f1 == 0.0


def test_empty_sides_score_zero():
    assert figures([], [n(60, 0)]).f1 == 0.0
    assert figures([n(60, 0)], []).f1 == 0.0
    assert figures([], []).f1 == 0.0


def test_octave_errors_count_notes_an_octave_off_one_to_one():
    ref = [n(60, 0.0), n(64, 1.0), n(67, 2.0)]
    est = [n(72, 0.01), n(48, 0.02), n(52, 1.0), n(67, 2.0), n(79, 2.0)]
    # 60 is heard as 72 and 48 (one counts: one to one), 64 as 52, 67 is right (its 79 is a spare)
    assert octave_errors(ref, est) == 2
    assert octave_errors(ref, [n(61, 0.0)]) == 0  # a semitone off is a wrong note, not an octave error


def test_rhythm_is_the_share_of_matched_notes_on_the_grid_step_and_length():
    step = 0.125  # a 1/16 at 120 bpm
    ref = [TimedNote(60.0, 0.0, 0.25), TimedNote(62.0, 0.5, 0.75), TimedNote(64.0, 1.0, 1.125)]
    est = [TimedNote(60.0, 0.02, 0.26),     # on its step, 2 steps long: right
           TimedNote(62.0, 0.49, 0.90),     # on its step, but 3 steps long (the reference is 2): wrong
           TimedNote(65.0, 1.0, 1.125)]     # a wrong pitch: not matched, not counted
    assert rhythm(ref, est, step_s=step) == 0.5
    assert rhythm(ref, [], step_s=step) == 0.0
