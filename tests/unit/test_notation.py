"""The text note format and drum grids (docs/formats.md), checked against hand-worked MIDI numbers."""

import pytest

from pytest_overdub.song.notation import (DRUM_ROWS, NotationError, format_notes_text, parse_grid,
                                          parse_notes_text, parse_pitch, pitch_name)


@pytest.mark.parametrize("text, midi", [
    ("C4", 60), ("c4", 60), ("A4", 69), ("F#3", 54), ("Bb2", 46), ("Gb3", 54), ("E#4", 65), ("Cb4", 59),
    ("C##4", 62), ("C-1", 0), ("G9", 127), ("B-1", 11), ("64", 64), ("0", 0), ("127", 127), (" D5 ", 74),
])
def test_pitch(text, midi):
    assert parse_pitch(text) == midi


@pytest.mark.parametrize("text, fragment", [
    ("H4", "pitch 'H4': expected a MIDI number 0..127 or a name like C4, F#3, Bb2"),
    ("128", "pitch '128' is MIDI 128: allowed 0..127"),
    ("G#9", "pitch 'G#9' is MIDI 128: allowed 0..127"),
    ("Cb-1", "pitch 'Cb-1' is MIDI -1: allowed 0..127"),
    ("C", "pitch 'C': expected"),
    pytest.param("9" * 5000, "expected a MIDI number", id="5000-digits"),
])
def test_bad_pitch(text, fragment):
    with pytest.raises(NotationError) as info:
        parse_pitch(text)
    assert fragment in str(info.value)


def test_pitch_name_uses_sharps():
    assert [pitch_name(p) for p in (0, 46, 54, 60, 61, 127)] == ["C-1", "A#2", "F#3", "C4", "C#4", "G9"]


def test_full_token():
    assert parse_notes_text("C4@0:0.5*0.8") == [{"p": 60, "t": 0.0, "d": 0.5, "v": 0.8}]


def test_defaults_duration_one_velocity_point_eight():
    assert parse_notes_text("E4@2") == [{"p": 64, "t": 2.0, "d": 1.0, "v": 0.8}]
    assert parse_notes_text("E4@2*0.5") == [{"p": 64, "t": 2.0, "d": 1.0, "v": 0.5}]


def test_separators_and_comments():
    text = "#intro C4@0:1, E4@1:1;G4@2:1\n\t#-- 64@3:1 is a comment token only up to the next space\nA4@3"
    with pytest.raises(NotationError, match="note 'is': expected PITCH@START"):
        parse_notes_text(text)
    text = "#intro C4@0:1, E4@1:1;G4@2:1\n\t#comment 64@3:1 ;; ,"
    assert [n["p"] for n in parse_notes_text(text)] == [60, 64, 67, 64]
    assert parse_notes_text("  #only-a-comment ") == []
    assert parse_notes_text("") == []


def test_fractions():
    (a, b) = parse_notes_text("C4@1/3:2/3 C4@4/3:1/6")
    assert (a["t"], a["d"]) == (1 / 3, 2 / 3)
    assert (b["t"], b["d"]) == (4 / 3, 1 / 6)


def test_velocity_above_one_is_midi():
    assert parse_notes_text("C4@0*127")[0]["v"] == 1.0
    assert parse_notes_text("C4@0*64")[0]["v"] == round(64 / 127, 6)
    assert parse_notes_text("C4@0*1")[0]["v"] == 1.0  # exactly 1 is already 0..1


@pytest.mark.parametrize("text, fragment", [
    ("C4", "note 'C4': expected PITCH@START[:DUR][*VEL], e.g. C4@0:0.5*0.8"),
    ("C4@x", "note 'C4@x': start 'x' is not a number or fraction like 1/3"),
    ("C4@0:1/0", "note 'C4@0:1/0': duration '1/0' is not a number"),
    ("C4@1e999", "start '1e999' is not a number"),
    ("C4@0:0", "note 'C4@0:0': start must be >= 0, duration > 0, velocity 0..1 (or MIDI 0..127)"),
    ("C4@-1", "start must be >= 0"),
    ("C4@0*200", "velocity 0..1 (or MIDI 0..127)"),
    ("X9@0", "pitch 'X9'"),
])
def test_bad_notes(text, fragment):
    with pytest.raises(NotationError) as info:
        parse_notes_text(text)
    assert fragment in str(info.value)


def test_format_round_trips():
    notes = parse_notes_text("C4@0:0.5*0.8 F#3@1.5:2*1 Bb2@3:0.25*0.45")
    assert format_notes_text(notes) == "C4@0:0.5*0.8 F#3@1.5:2*1 A#2@3:0.25*0.45"
    assert parse_notes_text(format_notes_text(notes)) == notes


def test_drum_rows_are_general_midi():
    assert DRUM_ROWS == {"kick": 36, "snare": 38, "hat": 42, "pedal": 44, "open": 46, "rim": 37, "clap": 39,
                         "rimshot": 40}


def test_grid_velocities_and_steps():
    notes = parse_grid({"Kick": "X-x-O-o-", "open": "...X"})
    assert [(n["p"], n["t"], n["d"], n["v"]) for n in notes] == [
        (36, 0.0, 0.25, 1.0), (36, 0.5, 0.25, 0.8), (46, 0.75, 0.25, 1.0), (36, 1.0, 0.25, 0.6),
        (36, 1.5, 0.25, 0.45)]


def test_grid_row_by_midi_number_or_name_and_step():
    notes = parse_grid({"49": "X..X", "C2": "x"}, step_beats=0.5)
    assert [(n["p"], n["t"], n["d"]) for n in notes] == [(36, 0.0, 0.5), (49, 0.0, 0.5), (49, 1.5, 0.5)]


def test_bad_grid_rows():
    with pytest.raises(NotationError, match="grid row 'cowbell': expected one of kick, snare, hat, pedal"):
        parse_grid({"cowbell": "X"})
    with pytest.raises(NotationError, match="grid row 'kick': the pattern must be a string"):
        parse_grid({"kick": [1, 0]})


def test_notation_error_is_a_value_error():
    assert issubclass(NotationError, ValueError)
