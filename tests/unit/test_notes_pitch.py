"""count, inKey, span, within on hand-written notes (answers worked out by hand in the comments)."""

import math

import pytest

from pytest_overdub.errors import TaskError
from pytest_overdub.notes.pitch import count, in_key, span, within
from pytest_overdub.notes.selection import PlacedNote


def n(p, start=0.0, dur=1.0, v=0.8, track="t"):
    return PlacedNote(track, "c", "", p, start, dur, v)


# A4, C5, G#4, F4
TUNE = [n(69, 0), n(72, 1), n(68, 2), n(65, 3)]


def test_count():
    assert count(TUNE) == 4.0
    assert count([]) == 0.0


def test_in_key_a_minor():
    # A minor = A B C D E F G: A, C, F in; G# out -> 3/4
    assert in_key(TUNE, key_root="A", key_scale="minor") == 0.75


def test_in_key_other_scales():
    # A harmonic minor has G#: all four in
    assert in_key(TUNE, key_root="A", key_scale="harmonicMinor") == 1.0
    # E minor = E F# G A B C D: A and C in, G# and F out -> 1/2
    assert in_key(TUNE, key_root="E", key_scale="minor") == 0.5


def test_in_key_without_key_is_chromatic_and_empty_is_zero():
    assert in_key(TUNE, key_root=None, key_scale=None) == 1.0
    assert in_key([], key_root="A", key_scale="minor") == 0.0
    assert in_key([], key_root=None, key_scale=None) == 0.0


def test_in_key_root_without_scale_is_an_error():
    with pytest.raises(TaskError, match="scale None"):
        in_key(TUNE, key_root="A", key_scale=None)


def test_span():
    assert span([n(67), n(79), n(72)]) == 12.0   # G4..G5
    assert span([n(60)]) == 0.0
    assert span([]) == math.inf


def test_within_inclusive_bounds():
    # 28 and 48 are the bounds themselves (in), 40 in, 49 and 27 out -> 3/5
    assert within([n(28), n(40), n(48), n(49), n(27)], lo=28, hi=48) == pytest.approx(0.6)
    assert within([], lo=28, hi=48) == 0.0
    with pytest.raises(TaskError, match="lo 50 is above hi 40"):
        within(TUNE, lo=50, hi=40)
