"""distinct, turns and copied on hand-written lines (answers by hand in comments)."""

import pytest

from pytest_overdub.errors import TaskError
from pytest_overdub.notes.melody import copied, distinct, top_line, turns
from pytest_overdub.notes.selection import PlacedNote
from pytest_overdub.notes.theory import scale_pcs

TOL = 0.046  # 30 ms at 92 bpm
A_MINOR = scale_pcs("A", "minor")
# the hook's first bar and a half (E5 D5 C5 A4 C5 F5 E5 D5 C5), as in night-shift
HOOK = [(76, 0), (74, 1), (72, 1.5), (69, 2), (72, 3.5), (77, 4), (76, 5), (74, 5.5), (72, 6)]


def n(p, start=0.0, dur=0.5, track="t"):
    return PlacedNote(track, "c", "", p, start, dur, 0.8)


def line(pairs, *, dp=0, dt=0.0, track="t_new"):
    return [n(p + dp, t + dt, track=track) for p, t in pairs]


def test_one_pitch_is_not_a_melody():
    same = [n(57, k) for k in range(16)]
    assert distinct(same, tol_beats=TOL) == 1.0
    assert turns(same, tol_beats=TOL) == 0.0


def test_turns_count_changes_of_direction():
    assert turns(line([(57, 0), (60, 1), (57, 2), (60, 3)]), tol_beats=TOL) == 2.0   # up down up
    assert turns(line([(57, 0), (59, 1), (60, 2), (62, 3)]), tol_beats=TOL) == 0.0   # a scale run
    assert turns(line([(57, 0), (57, 1), (60, 2), (60, 3), (57, 4)]), tol_beats=TOL) == 1.0  # repeats are no move
    assert turns([], tol_beats=TOL) == 0.0
    assert distinct(line(HOOK), tol_beats=TOL) == 5.0      # E5 D5 C5 A4 F5: 76 74 72 69 77


def test_top_line_takes_the_highest_note_of_each_onset():
    chordal = [n(57, 0), n(64, 0.02), n(60, 1), n(65, 1), n(59, 2)]
    assert top_line(chordal, tol_beats=TOL) == [64, 65, 59]


def test_octave_and_transposed_copies_are_copies():
    hook = line(HOOK, track="t_hook")
    assert copied(line(HOOK, dp=-12), hook, tol_beats=TOL) == 1.0             # an octave down
    assert copied(line(HOOK, dp=5), hook, tol_beats=TOL) == 1.0               # up a fourth, chromatically
    assert copied(line(HOOK, dt=1), hook, tol_beats=TOL) == 1.0               # a beat late: a canon
    jittered = [n(p - 12, t + (0.02 if i % 2 else -0.02)) for i, (p, t) in enumerate(HOOK)]
    assert copied(jittered, hook, tol_beats=TOL) == 1.0                       # humanised by 20 ms
    assert copied(line(HOOK[:5], dp=-12), hook, tol_beats=TOL) == 1.0          # a fragment, all copied


def test_the_hook_in_another_rhythm_is_a_copy():
    hook = line(HOOK, track="t_hook")
    # the same nine pitches an octave down, each a dotted eighth from the and of one: no onset lines up
    retimed = [n(p - 12, 0.5 + 0.75 * i) for i, (p, _) in enumerate(HOOK)]
    assert copied(retimed, hook, tol_beats=TOL) == 1.0
    # every note played twice (repeats are merged before the intervals are compared)
    doubled = [n(p - 12, 0.5 * i) for i, p in enumerate(p for p, _ in HOOK for _ in (0, 1))]
    assert copied(doubled, hook, tol_beats=TOL) == 1.0
    # four notes of it (three intervals) are not a run: E D C A then a line of its own
    own_after = [n(p, 0.75 * i) for i, p in enumerate((64, 62, 60, 57, 64, 67, 65, 60))]
    assert copied(own_after, hook, tol_beats=TOL) < 0.5


def test_a_diatonic_third_below_is_a_copy_in_scale_steps_only():
    steps = sorted(A_MINOR)

    def third_below(p):
        deg = (p // 12) * 7 + steps.index(p % 12) - 2
        return (deg // 7) * 12 + steps[deg % 7]

    hook = line(HOOK, track="t_hook")
    thirds = [n(third_below(p), t) for p, t in HOOK]
    assert copied(thirds, hook, tol_beats=TOL, scale=A_MINOR) == 1.0
    # in semitones the thirds are major and minor, so no one transposition takes more than some of them
    assert copied(thirds, hook, tol_beats=TOL) < 0.7



def test_the_hook_backwards_or_upside_down_is_a_copy():
    """A line derived from the hook by the old devices (retrograde, inversion, both) is its melody still:
    each scored as its own line (copy 0.3 or less) and passed the counter-melody task."""
    steps = sorted(A_MINOR)

    def step(p):
        return (p // 12) * 7 + steps.index(p % 12)

    def unstep(k):
        return (k // 7) * 12 + steps[k % 7]

    hook = line(HOOK, track="t_hook")
    times = [t for _, t in HOOK]
    backwards = [n(p - 12, t) for (p, _), t in zip(reversed(HOOK), times)]   # retrograde, the hook's rhythm
    assert copied(backwards, hook, tol_beats=TOL) == 1.0
    mirrored = [n(2 * 60 - p, t) for p, t in HOOK]                           # inverted about C4, in semitones
    assert copied(mirrored, hook, tol_beats=TOL) == 1.0
    diatonic = [n(unstep(2 * step(60) - step(p)), t) for p, t in HOOK]        # inverted in A minor's steps
    assert copied(diatonic, hook, tol_beats=TOL, scale=A_MINOR) == 1.0
    both = [n(unstep(2 * step(60) - step(p)), t) for (p, _), t in zip(reversed(HOOK), times)]
    assert copied(both, hook, tol_beats=TOL, scale=A_MINOR) == 1.0
    # one run of four intervals upside down (E4 F4 G4 B4 G4: +1 +1 +2 -2 steps, the hook's -1 -1 -2 +2)
    # inside a line of its own is no copy: 5 of its 11 notes
    own = [n(p, 0.5 * i) for i, p in enumerate((64, 65, 67, 71, 67, 60, 62, 57, 62, 69, 64))]
    assert copied(own, hook, tol_beats=TOL, scale=A_MINOR) == pytest.approx(5 / 11)

def test_an_own_line_is_not_a_copy():
    hook = line(HOOK, track="t_hook")
    # half notes a sixth and a third against the hook, moving the other way
    own = line([(60, 0), (65, 2), (67, 4), (64, 6)])
    assert copied(own, hook, tol_beats=TOL, scale=A_MINOR) <= 0.5
    # the hook's long notes E5, A4, F5 answered an octave down two beats late: 3 copied notes, and the hook
    # plays 6 notes in the answer's span moved back two beats (beats 0-4) -> 3 / max(3, 6) = 0.5, not 1
    answer = line([(76, 2), (69, 4), (77, 6)], dp=-12)
    assert copied(answer, hook, tol_beats=TOL, scale=A_MINOR) == 0.5
    assert copied([], hook, tol_beats=TOL) == 0.0
    assert copied(own, [], tol_beats=TOL) == 0.0
    with pytest.raises(TaskError, match="tol_beats"):
        copied(own, hook, tol_beats=0.5)


def test_ornaments_are_not_notes_of_the_line():
    """A note heard shorter than a sixteenth (less the on-beat tolerance) is a grace note or a click: a drone
    with 0.05-beat clicks of six pitches is one pitch and no turn (it read seven and fourteen, 0.905 on
    write-counter-melody), and clicks after each note of a hook copy no longer halve its share."""
    drone = [n(64, 2 * k, 1.9) for k in range(8)]
    clicks = [n(p, 2 * k + 1.9, 0.05) for k, p in enumerate((72, 74, 67, 71, 76, 69, 74, 67))]
    assert distinct(drone + clicks, tol_beats=TOL) == 1.0
    assert turns(drone + clicks, tol_beats=TOL) == 0.0
    # a sixteenth, the shortest note of a line, still counts (0.25 - TOL beats heard is enough)
    assert distinct(drone + [n(72, 1.9, 0.25 - TOL)], tol_beats=TOL) == 2.0
    hook = line(HOOK, track="t_hook")
    copy = line(HOOK, dp=-12)
    flicked = copy + [n(p - 5, t + 0.45, 0.05) for p, t in HOOK]
    assert copied(flicked, hook, tol_beats=TOL) == 1.0
    # and ornaments in the other part do not dilute a copy of its line either
    assert copied(copy, hook + [n(p + 2, t + 0.45, 0.05, track="t_hook") for p, t in HOOK], tol_beats=TOL) == 1.0
