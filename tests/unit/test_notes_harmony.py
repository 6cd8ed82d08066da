"""clashes, doubling, roots, chordsUnder on hand-written notes (answers worked out by hand in comments)."""

import math

import pytest

from pytest_overdub.errors import TaskError
from pytest_overdub.notes.harmony import chord_tones, chords_under, clashes, doubling, is_chord, roots
from pytest_overdub.notes.selection import PlacedNote


#: The tolerance these hand-checked boundaries were written for (the bench passes 30 ms in beats).
TOL = 0.02


def n(p, start=0.0, dur=1.0, v=0.8, track="t"):
    return PlacedNote(track, "c", "", p, start, dur, v)


# --- clashes --------------------------------------------------------------------------------------

def test_minor_ninth_on_beat_2_is_one_clash():
    # C4 (60) against C#5 (73) on beat 2: 13 semitones = a minor 9th -> 1 clash
    assert clashes([n(60, 2)], [n(73, 2)]) == 1.0


def test_major_seventh_and_semitone_below():
    assert clashes([n(60, 0)], [n(71, 0)]) == 1.0      # C4-B4: 11, a major 7th
    assert clashes([n(60, 0)], [n(59, 0)]) == 1.0      # B3 under C4: a semitone
    assert clashes([n(60, 0)], [n(85, 0)]) == 1.0      # 25 semitones: two octaves and a semitone


def test_consonances_and_other_dissonances_are_not_clashes():
    # third, octave, tritone, whole tone: none is 1 or 11 mod 12
    for other in (64, 72, 66, 62):
        assert clashes([n(60, 0)], [n(other, 0)]) == 0.0


def test_weak_beat_clash_does_not_count():
    # beat 1 (the "2" of the bar) is not strong; the notes end before beat 2
    assert clashes([n(60, 1, 0.5)], [n(61, 1, 0.5)]) == 0.0
    assert clashes([n(60, 3, 1)], [n(61, 3, 1)]) == 0.0


def test_sustained_note_crossing_a_strong_beat():
    # ours starts on beat 1 and holds to 3, so it sounds at beat 2 where C#4 starts -> 1
    assert clashes([n(60, 1, 2)], [n(61, 2, 0.5)]) == 1.0
    # theirs holds across beat 2 instead
    assert clashes([n(60, 2, 0.5)], [n(61, 1.5, 1)]) == 1.0


def test_note_ending_exactly_on_the_strong_beat_is_silent_there():
    # ours: 0.5 .. 2.0, so it is not sounding at beat 2 where C#4 starts; at beat 0 it has not begun
    assert clashes([n(60, 0.5, 1.5)], [n(61, 2, 1)]) == 0.0


def test_each_strong_beat_counts_once_and_every_strong_beat_counts():
    # at beat 4: {C, E} against {C#, F}: three clashing pairs, one strong beat -> 1
    assert clashes([n(60, 4), n(64, 4)], [n(61, 4), n(65, 4)]) == 1.0
    # C4 held 8 beats against C#4 held 8 beats: strong beats 0, 2, 4, 6 -> 4
    assert clashes([n(60, 0, 8)], [n(61, 0, 8)]) == 4.0


def test_three_four_strong_beats_are_one_and_three_of_each_bar():
    # in 3/4 with strong_every 2: beats 0, 2 | 3, 5 | 6 ...; a 6-beat clash covers 0, 2, 3, 5 -> 4
    assert clashes([n(60, 0, 6)], [n(61, 0, 6)], beats_per_bar=3) == 4.0


def test_clashes_empty():
    assert clashes([], [n(61, 0)]) == math.inf
    assert clashes([n(60, 0)], []) == 0.0
    with pytest.raises(TaskError, match="strong_every 0"):
        clashes([n(60, 0)], [], strong_every=0)


# --- doubling -------------------------------------------------------------------------------------

def test_doubling():
    ours = [n(60, 0), n(64, 1), n(67, 2.015), n(69, 3)]
    theirs = [n(72, 0),      # C an octave up, same onset: doubled
              n(64, 1.03),   # same pitch but 0.03 beats off: not doubled
              n(55, 2.0),    # G an octave down, 0.015 beats off: doubled
              n(70, 3)]      # Bb against A: not doubled
    assert doubling(ours, theirs, tol_beats=TOL) == 0.5


def test_doubling_tolerance_boundary_and_empty():
    assert doubling([n(64, 1.02)], [n(64, 1.0)], tol_beats=TOL) == 1.0   # exactly 0.02 apart still counts
    assert doubling([n(64, 1.021)], [n(64, 1.0)], tol_beats=TOL) == 0.0
    assert doubling([], [n(64, 1.0)], tol_beats=TOL) == 0.0
    assert doubling([n(64, 1.0)], [], tol_beats=TOL) == 0.0


# --- roots ----------------------------------------------------------------------------------------

def test_roots_am_f_c_g():
    notes = [n(45, 0),        # A on bar 0's downbeat: Am root
             n(41, 4.01),     # F 0.01 late on bar 1: counts
             n(40, 8), n(36, 8.03),   # bar 2 wants C: E is not the root, the C is 0.03 late
             n(36, 7.5, 2),   # a C held over bar 2's downbeat does not start there
             n(31, 12)]       # G on bar 3
    assert roots(notes, chords=["Am", "F", "C", "G"], bars=(0, 4), tol_beats=TOL) == 0.75


def test_a_click_of_the_root_is_no_root():
    """A root that sounds less than a sixteenth (less the tolerance) under another note is not heard as the
    root: a 0.01-beat A under a held E scored the bar; a sixteenth (or a 16th cut by 0.02) still counts."""
    fifth = n(52, 0, 2)
    assert roots([n(45, 0, 0.01), fifth], chords=["Am"], bars=(0, 1), tol_beats=TOL) == 0.0
    assert roots([n(45, 0, 0.2), fifth], chords=["Am"], bars=(0, 1), tol_beats=TOL) == 0.0
    assert roots([n(45, 0, 0.23), fifth], chords=["Am"], bars=(0, 1), tol_beats=TOL) == 1.0
    assert roots([n(45, 0, 0.25)], chords=["Am"], bars=(0, 1), tol_beats=TOL) == 1.0

def test_roots_cycle_from_the_first_bar():
    # bars 1..3 with three chords: bar 1 Am, bar 2 F, bar 3 C (counting from the first bar, not bar 0)
    notes = [n(45, 4), n(41, 8), n(48, 12)]
    assert roots(notes, chords=["Am", "F", "C"], bars=(1, 4), tol_beats=TOL) == 1.0
    # two chords over four bars: 4 Am, 5 F, 6 Am, 7 F; bar 6 plays F -> 3/4
    notes = [n(57, 16), n(53, 20), n(41, 24), n(41, 28)]
    assert roots(notes, chords=["Am", "F"], bars=range(4, 8), tol_beats=TOL) == 0.75


def test_roots_of_slash_chord_is_the_named_root():
    assert roots([n(48, 0)], chords=["Am/C"], bars=(0, 1), tol_beats=TOL) == 0.0
    assert roots([n(45, 0)], chords=["Am/C"], bars=(0, 1), tol_beats=TOL) == 1.0


def test_roots_empty_and_errors():
    assert roots([], chords=["Am"], bars=(0, 4), tol_beats=TOL) == 0.0
    with pytest.raises(TaskError, match="chords is empty"):
        roots([n(45, 0)], chords=[], bars=(0, 4), tol_beats=TOL)
    with pytest.raises(TaskError, match="'Amin'"):
        roots([n(45, 0)], chords=["Amin"], bars=(0, 4), tol_beats=TOL)


# --- chordsUnder ----------------------------------------------------------------------------------

def bars_4_5(pad5, melody5):
    """Bar 4 (downbeat 16) is a good A minor triad under an E; bar 5 (downbeat 20) is given."""
    pad = [n(57, 16, 4), n(60, 16, 4), n(64, 16, 4), *pad5]
    melody = [n(76, 16, 1), *melody5]
    return chords_under(pad, melody, bars=(4, 6), key_root="A", key_scale="minor", tol_beats=TOL)


F_TRIAD_2_BEATS = [n(53, 20, 2), n(57, 20, 2), n(60, 20, 2)]


def test_chords_under_melody_outside_the_chord():
    # bar 4: {A, C, E} in key, contains the hook's E -> good. bar 5: F A C held exactly 2 beats,
    # but the hook plays G (79), not in {F, A, C} -> bad. 1/2
    assert bars_4_5(F_TRIAD_2_BEATS, [n(79, 20, 1)]) == 0.5


def test_chords_under_melody_silent_or_sustained():
    assert bars_4_5(F_TRIAD_2_BEATS, []) == 1.0                  # silent melody: the chord is enough
    assert bars_4_5(F_TRIAD_2_BEATS, [n(72, 19, 2)]) == 1.0      # C5 held over the downbeat: C in chord
    assert bars_4_5(F_TRIAD_2_BEATS, [n(79, 19, 1)]) == 1.0      # G ends exactly on 20: silent there
    assert bars_4_5(F_TRIAD_2_BEATS, [n(79, 20.05, 1)]) == 1.0   # G enters 0.05 late: not at the downbeat


def test_chords_under_hold_voices_onset_tolerance():
    short = [n(53, 20, 2), n(57, 20, 2), n(60, 20, 1.5)]     # C only 1.5 beats: two voices left
    assert bars_4_5(short, []) == 0.5
    late = [n(53, 20.02, 2), n(57, 20.02, 2), n(60, 20.02, 2)]   # 0.02 late still counts
    assert bars_4_5(late, []) == 1.0
    later = [n(53, 20.05, 2), n(57, 20.05, 2), n(60, 20.05, 2)]  # 0.05 late: no chord at the downbeat
    assert bars_4_5(later, []) == 0.5
    octaves = [n(45, 20, 4), n(57, 20, 4), n(60, 20, 4)]     # A A C: two pitch classes
    assert bars_4_5(octaves, []) == 0.5


def test_chords_under_pad_held_from_the_previous_bar():
    # the Am triad held 8 beats from 16 covers bar 5's downbeat until 24 (>= 22); hook E at 20 -> both bars
    pad = [n(57, 16, 8), n(60, 16, 8), n(64, 16, 8)]
    melody = [n(76, 16, 1), n(76, 20, 1)]
    assert chords_under(pad, melody, bars=(4, 6), key_root="A", key_scale="minor", tol_beats=TOL) == 1.0


def test_chords_under_key():
    # A C# E: C# is not in A minor -> bad; with no key every pitch class is in -> good
    pad = [n(57, 0, 4), n(61, 0, 4), n(64, 0, 4)]
    assert chords_under(pad, [], bars=(0, 1), key_root="A", key_scale="minor", tol_beats=TOL) == 0.0
    assert chords_under(pad, [], bars=(0, 1), key_root=None, key_scale=None, tol_beats=TOL) == 1.0
    # voices=2 makes an A-C dyad enough; hold=0 accepts anything sounding at the downbeat
    assert chords_under([n(57, 0, 0.5), n(60, 0, 0.5)], [], bars=(0, 1), voices=2, hold=0,
                        key_root="A", key_scale="minor", tol_beats=TOL) == 1.0


def test_chords_under_empty_and_errors():
    assert chords_under([], [n(76, 0)], bars=(0, 2), key_root="A", key_scale="minor", tol_beats=TOL) == 0.0
    with pytest.raises(TaskError, match="voices 0"):
        chords_under([], [], bars=(0, 2), voices=0, key_root=None, key_scale=None, tol_beats=TOL)


def test_a_seven_note_cluster_is_not_a_chord():
    # every note of A minor from A3 to G4 held under the hook: it contains the hook's E, and is no chord
    cluster = [n(p, 16, 4) for p in (57, 59, 60, 62, 64, 65, 67)]
    assert not is_chord([x.p for x in cluster])
    assert chords_under(cluster, [n(76, 16)], bars=(4, 5), key_root="A", key_scale="minor", tol_beats=TOL) == 0.0
    # five pitch classes is the most, but A B C D E stacked in seconds is still a cluster
    assert not is_chord([57, 59, 60, 62, 64])
    assert not is_chord([59, 60, 62])               # B3 C4 D4: two seconds in a row
    assert is_chord([53, 57, 60, 64])               # Fmaj7 F3 A3 C4 E4: thirds
    assert is_chord([45, 52, 55, 60])               # Am7 open, A2 E3 G3 C4
    assert is_chord([45, 57, 60, 64, 69, 76])       # six notes, three pitch classes: octave doublings
    assert not is_chord([57, 60])                   # two pitch classes


def test_chords_under_max_voices():
    six = [n(p, 0, 4) for p in (57, 60, 64, 67, 71, 74)]   # Am9(11)-ish: A C E G B D, six pitch classes
    assert chords_under(six, [], bars=(0, 1), key_root="A", key_scale="minor", tol_beats=TOL) == 0.0
    assert chords_under(six, [], bars=(0, 1), max_voices=6, key_root="A", key_scale="minor",
                        tol_beats=TOL) == 1.0


def test_chord_tones_on_the_strong_beats():
    # bar 0 Am: A on 1 (tone), B on 3 (not); bar 1 F: F held over 1 and 3 (two tones); a G on beat 2
    # (a weak beat) does not count -> 3 of 4
    notes = [n(45, 0, 1), n(47, 2, 1), n(41, 4, 4), n(43, 5, 0.5)]
    assert chord_tones(notes, chords=["Am", "F"], bars=(0, 2), tol_beats=TOL) == 0.75
    # a root 16 ms late at 92 bpm (0.0245 beats) still sounds on the beat with the bench's 30 ms
    late = [n(45, 0.0245, 1)]
    assert chord_tones(late, chords=["Am"], bars=(0, 1), tol_beats=0.046) == 1.0
    assert chord_tones(late, chords=["Am"], bars=(0, 1), tol_beats=0.02) == 0.0  # the old 0.02 beats
    assert chord_tones([], chords=["Am"], bars=(0, 1), tol_beats=TOL) == 0.0


def test_roots_16_ms_late_passes_with_the_one_tolerance():
    from pytest_overdub.notes.selection import on_beat_tol_beats

    tol = on_beat_tol_beats(92)                      # 30 ms at 92 bpm
    assert tol == pytest.approx(0.046)
    late = [n(45, 0 + 0.0245), n(41, 4 + 0.0245)]   # 16 ms behind the beat
    assert roots(late, chords=["Am", "F"], bars=(0, 2), tol_beats=tol) == 1.0
    assert roots([n(45, 0.05)], chords=["Am"], bars=(0, 1), tol_beats=tol) == 0.0   # 33 ms: off the beat
