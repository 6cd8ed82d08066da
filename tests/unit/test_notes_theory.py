"""Pitch names, scales and chord symbols, checked against the note names a musician would spell."""

import pytest

from pytest_overdub.errors import TaskError
from pytest_overdub.notes.theory import CHORD_SUFFIXES, SCALE_STEPS, parse_chord, parse_pitch, pitch_class, scale_pcs


def pcs_of(spelled: str) -> frozenset[int]:
    return frozenset(pitch_class(n) for n in spelled.split())


@pytest.mark.parametrize("name, pc", [("C", 0), ("C#", 1), ("Db", 1), ("E", 4), ("F", 5), ("Bb", 10),
                                      ("B", 11), ("Cb", 11), ("B#", 0), ("A", 9), ("G#", 8)])
def test_pitch_class(name, pc):
    assert pitch_class(name) == pc


@pytest.mark.parametrize("bad", ["H", "c", "C##", "", "A-", 9])
def test_pitch_class_rejects(bad):
    with pytest.raises(TaskError, match="note name"):
        pitch_class(bad)


@pytest.mark.parametrize("root, scale, spelled", [
    ("C", "major", "C D E F G A B"),
    ("A", "minor", "A B C D E F G"),
    ("E", "minor", "E F# G A B C D"),
    # the modes of C major share its seven notes
    ("D", "dorian", "C D E F G A B"),
    ("E", "phrygian", "C D E F G A B"),
    ("F", "lydian", "C D E F G A B"),
    ("G", "mixolydian", "C D E F G A B"),
    ("B", "locrian", "C D E F G A B"),
    ("A", "harmonicMinor", "A B C D E F G#"),
    ("A", "melodicMinor", "A B C D E F# G#"),
    ("C", "majorPentatonic", "C D E G A"),
    ("A", "minorPentatonic", "A C D E G"),
    ("A", "blues", "A C D D# E G"),
    ("Bb", "major", "Bb C D Eb F G A"),
    ("F#", "minor", "F# G# A B C# D E"),
])
def test_scale_pcs(root, scale, spelled):
    assert scale_pcs(root, scale) == pcs_of(spelled)


def test_scale_pcs_by_pitch_class_and_chromatic():
    assert scale_pcs(9, "minor") == pcs_of("A B C D E F G")
    assert scale_pcs("D", "chromatic") == frozenset(range(12))
    assert len(SCALE_STEPS) == 13  # the thirteen scales docs/formats.md lists


def test_scale_pcs_rejects_unknown_scale_and_names_the_allowed():
    with pytest.raises(TaskError, match=r"'aeolian'.*harmonicMinor"):
        scale_pcs("A", "aeolian")
    with pytest.raises(TaskError, match="pitch class must be 0..11"):
        scale_pcs(12, "major")


@pytest.mark.parametrize("suffix, spelled", [
    ("", "C E G"), ("m", "C Eb G"), ("dim", "C Eb Gb"), ("aug", "C E G#"), ("sus2", "C D G"),
    ("sus4", "C F G"), ("5", "C G"), ("7", "C E G Bb"), ("maj7", "C E G B"), ("m7", "C Eb G Bb"),
    ("m7b5", "C Eb Gb Bb"), ("dim7", "C Eb Gb A"), ("6", "C E G A"), ("m6", "C Eb G A"),
    ("add9", "C E G D"), ("madd9", "C Eb G D"), ("9", "C E G Bb D"), ("maj9", "C E G B D"),
    ("m9", "C Eb G Bb D"),
])
def test_every_suffix_on_c(suffix, spelled):
    chord = parse_chord("C" + suffix)
    assert chord.pcs == pcs_of(spelled)
    assert chord.root_pc == 0 and chord.bass_pc == 0


def test_suffix_table_is_complete():
    assert len(CHORD_SUFFIXES) == 19


@pytest.mark.parametrize("symbol, root, spelled, bass", [
    ("Am", 9, "A C E", 9), ("F", 5, "F A C", 5), ("G7", 7, "G B D F", 7), ("Cmaj7", 0, "C E G B", 0),
    ("Bdim", 11, "B D F", 11), ("F#m7b5", 6, "F# A C E", 6), ("Bbmaj9", 10, "Bb D F A C", 10),
    ("Ebm9", 3, "Eb Gb Bb Db F", 3), ("E5", 4, "E B", 4),
    # slash chords: the named root stays the root; the bass joins the pitch classes
    ("Am/C", 9, "A C E", 0), ("D/F#", 2, "D F# A", 6), ("C/Bb", 0, "C E G Bb", 10),
])
def test_parse_chord(symbol, root, spelled, bass):
    chord = parse_chord(symbol)
    assert (chord.root_pc, chord.pcs, chord.bass_pc) == (root, pcs_of(spelled), bass)


@pytest.mark.parametrize("bad", ["am", "Amin", "A#x", "Am/", "Hm", "", "Am/c", "Cmaj13"])
def test_parse_chord_rejects_and_lists_suffixes(bad):
    with pytest.raises(TaskError, match=r"chord .*'maj7'"):
        parse_chord(bad)


@pytest.mark.parametrize("text, midi", [("C4", 60), ("F#3", 54), ("Bb2", 46), ("A4", 69), ("C-1", 0),
                                        ("G9", 127), ("E1", 28), ("Cb4", 59), ("B#3", 60), ("60", 60),
                                        (60, 60), (" 36 ", 36)])
def test_parse_pitch(text, midi):
    assert parse_pitch(text) == midi


@pytest.mark.parametrize("bad", ["H4", "C", "128", "G#9", "C4.5", "-1", 200, True])
def test_parse_pitch_rejects(bad):
    with pytest.raises(TaskError, match="pitch"):
        parse_pitch(bad)
