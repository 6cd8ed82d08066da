"""Reading transcription answers: notes JSON in beats or seconds, standard MIDI files, folders, bad input."""

import json

import mido
import pytest

from pytest_overdub.errors import SubmissionError
from pytest_overdub.transcribe.answer import answer_from_data, read_answer
from pytest_overdub.transcribe.matching import TimedNote

PARTS = ("bass", "lead")


def _write(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_beats_are_read_at_the_stated_tempo(tmp_path):
    a = read_answer(_write(tmp_path / "a.json", {"time": "beats", "tempo": 120, "parts": {
        "bass": [{"p": 40, "t": 2, "d": 1, "v": 0.8, "id": "n1"}]}}), parts=PARTS)
    assert a.notes("bass") == [TimedNote(40.0, 1.0, 1.5)]
    assert a.notes("lead") == []  # a part left out has no notes


def test_seconds_are_read_as_they_are_and_pitches_may_be_fractional():
    a = answer_from_data({"time": "seconds", "parts": {"lead": [{"p": 60.25, "t": 0.5, "d": 0.25}]}},
                         parts=PARTS, source="x")
    assert a.notes("lead") == [TimedNote(60.25, 0.5, 0.75)]


def _midi(path, tracks, *, tempo_changes=((0, 500000),), tpb=480):
    """``tracks``: (name or None, [(pitch, on tick, off tick)]); tempo changes go on a conductor track."""
    mid = mido.MidiFile(type=1, ticks_per_beat=tpb)
    conductor, now = mido.MidiTrack(), 0
    for tick, tempo in tempo_changes:
        conductor.append(mido.MetaMessage("set_tempo", tempo=tempo, time=tick - now))
        now = tick
    mid.tracks.append(conductor)
    for name, notes in tracks:
        events = sorted([(on, 1, "note_on", p) for p, on, _ in notes] + [(off, 0, "note_off", p) for p, _, off in notes])
        tr = mido.MidiTrack([mido.MetaMessage("track_name", name=name)] if name else [])
        now = 0
        for tick, _, kind, p in events:
            tr.append(mido.Message(kind, note=p, velocity=100 if kind == "note_on" else 0, time=tick - now))
            now = tick
        mid.tracks.append(tr)
    mid.save(str(path))
    return path


def test_a_midi_file_is_read_per_named_track_through_its_tempo_map(tmp_path):
    # 480 ticks a beat; 120 bpm (0.5 s a beat) for the first 960 ticks, then 60 bpm (1 s a beat)
    path = _midi(tmp_path / "a.mid", [("bass", [(40, 0, 480), (43, 960, 1440)]), ("lead", [(72, 480, 1200)])],
                 tempo_changes=((0, 500000), (960, 1000000)))
    a = read_answer(path, parts=PARTS)
    assert a.notes("bass") == [TimedNote(40.0, 0.0, 0.5), TimedNote(43.0, 1.0, 2.0)]
    assert a.notes("lead") == [TimedNote(72.0, 0.5, 1.5)]


def test_a_note_on_with_velocity_zero_ends_a_note(tmp_path):
    mid = mido.MidiFile(type=0, ticks_per_beat=480)
    mid.tracks.append(mido.MidiTrack([mido.MetaMessage("track_name", name="lead"),
                                      mido.Message("note_on", note=60, velocity=90, time=0),
                                      mido.Message("note_on", note=60, velocity=0, time=240)]))
    mid.save(str(tmp_path / "notes.mid"))
    assert read_answer(tmp_path, parts=PARTS).notes("lead") == [TimedNote(60.0, 0.0, 0.25)]  # a folder


def test_a_daws_track_names_are_read_without_case_spaces_or_nul_padding(tmp_path):
    # DAWs name tracks "Bass"; some exporters end a meta event's text with NUL bytes
    path = _midi(tmp_path / "a.mid", [("Bass ", [(40, 0, 480)]), ("lead\x00", [(72, 480, 960)]),
                                      ("BASS", [(43, 960, 1440)])])
    a = read_answer(path, parts=PARTS)
    assert a.notes("bass") == [TimedNote(40.0, 0.0, 0.5), TimedNote(43.0, 1.0, 1.5)]
    assert a.notes("lead") == [TimedNote(72.0, 0.5, 1.0)]


def _smpte_midi(path, division: bytes, notes):
    """A type 0 file with a raw SMPTE ``division`` and one 'lead' track of (pitch, on tick, off tick),
    its note-ons under running status (one status byte, then data bytes only)."""
    events = sorted([(on, 1, p, 90) for p, on, _ in notes] + [(off, 0, p, 0) for p, _, off in notes])
    body, now = b"\x00\xff\x03\x04lead", 0
    for i, (tick, _, p, v) in enumerate(events):
        delta = tick - now
        assert delta < 128  # one-byte delta times keep the writer small
        body += bytes([delta]) + (b"\x90" if i == 0 else b"") + bytes([p, v])
        now = tick
    body += b"\x00\xff\x2f\x00"
    path.write_bytes(b"MThd\x00\x00\x00\x06\x00\x00\x00\x01" + division + b"MTrk"
                     + len(body).to_bytes(4, "big") + body)
    return path


def test_a_smpte_division_is_read_at_its_frame_rate(tmp_path):
    # 25 frames a second, 40 ticks a frame: 1000 ticks a second whatever the tempo
    path = _smpte_midi(tmp_path / "a.mid", bytes([256 - 25, 40]), [(60, 0, 100), (62, 100, 125)])
    assert read_answer(path, parts=PARTS).notes("lead") == [TimedNote(60.0, 0.0, 0.1), TimedNote(62.0, 0.1, 0.125)]
    bad = _smpte_midi(tmp_path / "b.mid", bytes([256 - 23, 40]), [(60, 0, 100)])
    with pytest.raises(SubmissionError, match=rf"^{bad}: SMPTE division 23 frames a second, 40 ticks a frame: want"):
        read_answer(bad, parts=PARTS)


@pytest.mark.parametrize("data, where", [
    ({"time": "seconds", "parts": {"bass": [{"p": 40, "t": 0, "d": -0.5}]}}, "parts.bass[0].d = -0.5"),
    ({"time": "seconds", "parts": {"bass": [{"p": 40, "t": 0, "d": 0}]}}, "parts.bass[0].d = 0"),
    ({"time": "seconds", "parts": {"drums": []}}, "parts.drums: not a part of this task (parts: bass, lead)"),
    ({"time": "seconds", "parts": {"bass": [{"p": "E2", "t": 0, "d": 1}]}}, "parts.bass[0].p = 'E2'"),
    ({"time": "seconds", "parts": {"bass": [{"p": 40, "t": 0, "d": 1, "vel": 1}]}}, "unknown field 'vel'"),
    ({"time": "seconds", "parts": {"bass": [{"p": 40, "t": True, "d": 1}]}}, "parts.bass[0].t = True"),
    ({"time": "beats", "parts": {}}, "tempo = None: time \"beats\" needs tempo"),
    ({"parts": {}}, "time = None"),
    ({"time": "seconds", "tempo": 90, "parts": {}}, "time \"seconds\" takes no tempo"),
    ([{"p": 40}], "want an object"),
])
def test_bad_notes_json_is_one_line_naming_the_file_and_place(tmp_path, data, where):
    path = _write(tmp_path / "answer.json", data)
    with pytest.raises(SubmissionError) as err:
        read_answer(path, parts=PARTS)
    text = str(err.value)
    assert text.startswith(f"{path}: ") and where in text and "\n" not in text


def test_a_file_that_is_not_midi_is_one_clear_line(tmp_path):
    path = tmp_path / "a.mid"
    path.write_bytes(b"RIFF\x00\x00\x00\x00WAVEfmt ")
    with pytest.raises(SubmissionError, match=rf"^{path}: not a standard MIDI file"):
        read_answer(path, parts=PARTS)


@pytest.mark.parametrize("tracks, where", [
    ([("drums", [(36, 0, 10)])], "track 1 'drums': not a part of this task (parts: bass, lead)"),
    ([(None, [(36, 0, 10)])], "track 1 has notes but no track name"),
])
def test_midi_tracks_name_parts_of_the_task(tmp_path, tracks, where):
    with pytest.raises(SubmissionError, match=r"track 1"):
        read_answer(_midi(tmp_path / "a.mid", tracks), parts=PARTS)
    with pytest.raises(SubmissionError) as err:
        read_answer(_midi(tmp_path / "a.mid", tracks), parts=PARTS)
    assert where in str(err.value)


def test_a_midi_note_that_never_ends_is_refused_with_its_track_and_tick(tmp_path):
    mid = mido.MidiFile(type=1, ticks_per_beat=480)
    mid.tracks.append(mido.MidiTrack([mido.MetaMessage("track_name", name="bass"),
                                      mido.Message("note_on", note=40, velocity=90, time=960)]))
    mid.save(str(tmp_path / "a.mid"))
    with pytest.raises(SubmissionError, match=r"track 0 bass: note 40 from tick 960 never ends"):
        read_answer(tmp_path / "a.mid", parts=PARTS)


def test_a_folder_holds_exactly_one_answer(tmp_path):
    with pytest.raises(SubmissionError, match="found none"):
        read_answer(tmp_path, parts=PARTS)
    _write(tmp_path / "notes.json", {"time": "seconds", "parts": {}})
    _midi(tmp_path / "notes.mid", [])
    with pytest.raises(SubmissionError, match="found notes.json, notes.mid"):
        read_answer(tmp_path, parts=PARTS)


def test_an_answer_holds_at_most_max_notes(tmp_path):
    from pytest_overdub.transcribe.answer import MAX_NOTES

    notes = [{"p": 60, "t": 0.001 * i, "d": 0.1} for i in range(MAX_NOTES // 2 + 1)]
    path = _write(tmp_path / "a.json", {"time": "seconds", "parts": {"bass": notes, "lead": notes}})
    with pytest.raises(SubmissionError, match=rf"more than {MAX_NOTES} notes"):
        read_answer(path, parts=PARTS)
