"""The bounds on a song and a submission (song/limits.py): real music passes; each limit is refused, before
anything renders, with a line naming the limit, the value and the place."""

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_overdub.errors import OpError, SongError, SubmissionError
from pytest_overdub.song import edits, limits, ops as ops_module, submission as submission_module
from pytest_overdub.song.limits import LIMITS, Limits
from pytest_overdub.song.model import load_song, song_from_data
from pytest_overdub.song.ops import apply_ops, apply_transactions
from pytest_overdub.song.submission import load_submission, submission_from_data

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
TINY = load_song(FIXTURES / "tiny.json")


def _song(tracks, *, tempo=120, sections=()) -> dict:
    return {"format": "overdub/0", "id": "s", "tempo": tempo, "tracks": tracks, "sections": list(sections)}


def _track(k, *, clips=(), inserts=0) -> dict:
    return {"id": f"t_{k}", "name": f"T{k}", "instrument": {"device": "core.keys"},
            "inserts": [{"id": f"fx_{k}_{i}", "device": "core.eq"} for i in range(inserts)], "clips": list(clips)}


def _clip(cid, *, start=0.0, length=4.0, n_notes=0) -> dict:
    return {"id": cid, "start": start, "length": length,
            "notes": [{"p": 60, "t": i * 0.25, "d": 0.25} for i in range(n_notes)]}


@pytest.fixture
def small(monkeypatch):
    """Install small limits (keeping every test fast); returns them."""
    def install(**kw):
        lim = dataclasses.replace(LIMITS, **kw)
        for module in (limits, edits, ops_module):
            monkeypatch.setattr(module, "LIMITS", lim)
        return lim
    return install


@pytest.mark.parametrize("n_tracks, minutes", [(20, 3), (8, 7.5)], ids=["20 tracks of 3 min", "8 of 7.5"])
def test_a_large_production_passes_the_real_limits(n_tracks, minutes):
    # At 140 bpm: a drum clip of 16ths the whole way, the other tracks a note a beat.
    beats = int(minutes * 140)
    drums = _clip("c_dr", length=beats, n_notes=beats * 4)
    tracks = [_track(0, clips=[drums], inserts=8)] + [
        _track(k, clips=[_clip(f"c_{k}", length=beats, n_notes=0)], inserts=4) for k in range(1, n_tracks)]
    for tr in tracks[1:]:
        tr["clips"][0]["notes"] = [{"p": 48 + k % 12, "t": float(k), "d": 1.0} for k in range(beats)]
    song = song_from_data(_song(tracks, tempo=140), source="prog.json")
    assert len(song.tracks) == n_tracks
    assert sum(len(c.notes) for t in song.tracks for c in t.clips) == 4 * beats + (n_tracks - 1) * beats


def test_the_limits_are_generous_for_music_and_far_below_hours():
    assert 12 * 60 < LIMITS.song_s < 30 * 60 and LIMITS.track_s >= 20 * 3 * 60
    assert LIMITS.tracks >= 40 and LIMITS.notes_per_clip >= 12 * 60 * 200 / 60 * 4


# --- song files: each limit refused, just under it accepted --------------------------------------

def test_song_length_is_seconds_at_the_song_tempo():
    # 900 s at 120 bpm is beat 1800: a clip ending there passes, one ending a beat later does not.
    ok = song_from_data(_song([_track(0, clips=[_clip("c_a", start=1796, length=4)])]))
    assert ok.tracks[0].clips[0].start == 1796
    with pytest.raises(SongError) as info:
        song_from_data(_song([_track(0, clips=[_clip("c_a", start=1796, length=5)])]), source="long.json")
    assert str(info.value).splitlines() == [
        "long.json: 1 problem(s)",
        "  tracks[0].clips[0]: ends at beat 1801 = 900.5 s at 120 bpm, over the limit song_s = 900"]
    # The same beats at a faster tempo are a shorter song.
    song_from_data(_song([_track(0, clips=[_clip("c_a", start=1796, length=5)])], tempo=121))


def test_a_section_past_the_song_length_is_refused():
    sections = [{"id": "s_a", "name": "Drone", "start": 0, "length": 1801}]
    with pytest.raises(SongError, match=r"sections\[0\]: ends at beat 1801 = 900\.5 s at 120 bpm, over the limit "
                                        r"song_s = 900"):
        song_from_data(_song([], sections=sections))


@pytest.mark.parametrize("name, value, build, where", [
    ("tracks", 3, lambda n: [_track(k) for k in range(n)], "tracks: 3 tracks"),
    ("inserts_per_chain", 3, lambda n: [_track(0, inserts=n)], "tracks[0].inserts: 3 inserts"),
    ("clips", 3, lambda n: [_track(k, clips=[_clip(f"c_{k}")]) for k in range(n)],
     "tracks[*].clips: 3 clips in the song"),
    ("notes_per_clip", 3, lambda n: [_track(0, clips=[_clip("c_a", n_notes=n)])],
     "tracks[0].clips[0].notes: 3 notes"),
    ("notes", 3, lambda n: [_track(k, clips=[_clip(f"c_{k}", n_notes=1)]) for k in range(n)],
     "tracks[*].clips[*].notes: 3 notes in the song"),
])
def test_each_count_limit_is_refused_one_over_and_accepted_at_it(small, name, value, build, where):
    small(**{name: value - 1})
    with pytest.raises(SongError) as info:
        song_from_data(_song(build(value)), source="big.json")
    assert str(info.value).splitlines()[1:] == [f"  {where}, over the limit {name} = {value - 1}"]
    small(**{name: value})
    song_from_data(_song(build(value)))


def test_tracks_times_seconds_is_bounded(small):
    # Memory grows with tracks x seconds: 3 tracks of 10 s pass 30 track-seconds, a 4th does not.
    small(track_s=30.0)
    three = [_track(k, clips=[_clip(f"c_{k}", length=20)]) for k in range(3)]  # 20 beats = 10 s at 120 bpm
    song = song_from_data(_song(three))
    with pytest.raises(SongError) as info:
        song_from_data(_song(three + [_track(3)]))
    assert str(info.value).splitlines()[1:] == [
        "  tracks: 4 tracks x 10.0 s = 40 track-seconds, over the limit track_s = 30"]
    msg = _op_error(song, [{"type": "track.add", "track": {"name": "One more"}}])
    assert msg.startswith("transaction 0, op 0 (track.add): track = ")
    assert msg.endswith("allowed at most 30 track-seconds (limit track_s); this makes 4 tracks x 10.0 s = 40 "
                        "track-seconds")
    msg = _op_error(song, [{"type": "clip.set", "track": "T0", "clip": 0, "patch": {"length": 22}}])
    assert "(clip.set): patch.length = 22: allowed at most 30 track-seconds" in msg
    # After a shorter song, the same track fits: the bound follows removals within a transaction.
    shorter = apply_ops(song, [{"type": "clip.set", "track": f"T{k}", "clip": 0, "patch": {"length": 10}}
                               for k in range(3)] + [{"type": "track.add", "track": {"name": "One more"}}])
    assert len(shorter.tracks) == 4


def test_counts_are_refused_before_the_notes_are_built(small):
    # 5 "notes" that are not even notes: the count is refused, no note is validated.
    small(notes_per_clip=4)
    with pytest.raises(SongError) as info:
        song_from_data(_song([_track(0, clips=[dict(_clip("c_a"), notes=[0] * 5)])]), source="bomb.json")
    assert str(info.value).splitlines() == [
        "bomb.json: 1 problem(s)", "  tracks[0].clips[0].notes: 5 notes, over the limit notes_per_clip = 4"]


@pytest.mark.parametrize("op, field", [
    ({"type": "notes.add", "track": "Bass", "clip": "c_bass_a", "notes": "C2@0 " * 5}, "notes"),
    ({"type": "notes.add", "track": "Bass", "clip": "c_bass_a", "notes": ["C2@0 C2@1 C2@2", "C2@3 C2@4"]}, "notes"),
    ({"type": "notes.replace", "track": "Bass", "clip": "c_bass_a", "grid": {"kick": "X..x", "hat": "oO.X"}},
     "grid"),
    ({"type": "clip.add", "track": "Bass", "clip": {"start": 20, "length": 4, "grid": {"kick": "XXXXX"}}},
     "clip.grid"),
])
def test_an_op_carrying_more_notes_than_a_clip_holds_is_refused_unread(small, op, field):
    small(notes_per_clip=4)
    msg = _op_error(TINY, [op])
    expected = f'({op["type"]}): {field} = "up to 5 notes": allowed at most 4 notes in a clip (limit notes_per_clip)'
    assert expected in msg


def test_sections_and_automation_points_are_bounded(small):
    small(sections=1, points_per_param=1)
    data = _song([_track(0)], sections=[{"id": f"s_{i}", "start": i, "length": 1} for i in range(2)])
    data["tracks"][0]["instrument"]["auto"] = {"bright": [{"t": 0, "v": 0.1}, {"t": 4, "v": 0.9}]}
    lines = str(pytest.raises(SongError, song_from_data, data).value).splitlines()
    assert "  sections: 2 sections, over the limit sections = 1" in lines
    assert "  tracks[0].instrument.auto.bright: 2 points, over the limit points_per_param = 1" in lines
    small(sections=2, points_per_param=2)
    song_from_data(data)


def test_a_song_over_a_limit_is_refused_by_render_too(small):
    from pytest_overdub.render import render

    song = song_from_data(_song([_track(k) for k in range(3)]))
    small(tracks=2)
    with pytest.raises(SongError, match="tracks: 3 tracks, over the limit tracks = 2"):
        render(song)


# --- ops: refused at the op that crosses the limit -----------------------------------------------

def _op_error(song, ops) -> str:
    with pytest.raises(OpError) as info:
        apply_ops(song, ops)
    return str(info.value)


def test_track_and_insert_counts_are_refused_at_the_op(small):
    small(tracks=3, inserts_per_chain=2)
    add = {"type": "track.add", "track": {"name": "Pad"}}
    msg = _op_error(TINY, [add, add])
    assert msg.startswith("transaction 0, op 1 (track.add): track = ") and "limit tracks" in msg
    msg = _op_error(TINY, [{"type": "insert.add", "track": "Bass", "insert": {"device": "core.verb"}}])
    assert msg.startswith("transaction 0, op 0 (insert.add): insert = ")
    assert "at most 2 inserts in a chain (limit inserts_per_chain)" in msg


def test_note_limits_are_refused_at_the_op_that_crosses_them(small):
    small(notes_per_clip=6, notes=12)
    bass = TINY.track("Bass")
    assert len(bass.clips[0].notes) == 2
    ok = apply_ops(TINY, [{"type": "notes.add", "track": "Bass", "clip": "c_bass_a", "notes": "C2@1 C2@2 C2@3 C2@5"}])
    assert len(ok.track("Bass").clips[0].notes) == 6
    msg = _op_error(TINY, [{"type": "notes.add", "track": "Bass", "clip": "c_bass_a", "notes": "C2@1 C2@2 C2@3"},
                           {"type": "notes.add", "track": "Bass", "clip": "c_bass_a", "notes": "D2@1 D2@2"}])
    assert msg == ('transaction 0, op 1 (notes.add): notes = "2 notes": allowed at most 6 notes in a clip '
                   "(limit notes_per_clip); clip c_bass_a has 5")
    total = sum(len(c.notes) for t in TINY.tracks for c in t.clips)
    more = [{"type": "clip.add", "track": "Drums", "clip": {"start": 16, "length": 4, "notes": "C1@0 C1@1 C1@2"}}] * 3
    msg = _op_error(TINY, more)
    assert "limit notes); it has" in msg and total + 3 <= 12


def test_removing_notes_frees_room_under_the_limit(small):
    total = sum(len(c.notes) for t in TINY.tracks for c in t.clips)
    small(notes=total)
    n_b = len(TINY.track("Bass").clips[1].notes)
    song = apply_ops(TINY, [{"type": "notes.replace", "track": "Bass", "clip": "c_bass_a", "notes": "C2@0 D2@1"},
                            {"type": "clip.remove", "track": "Bass", "clip": "c_bass_b"},
                            {"type": "clip.add", "track": "Bass", "clip": {"start": 8, "length": 8,
                                                                            "notes": "E2@0 " * n_b}}])
    assert sum(len(c.notes) for t in song.tracks for c in t.clips) == total
    msg = _op_error(song, [{"type": "notes.add", "track": "Bass", "clip": 0, "notes": "C2@3"}])
    assert msg.endswith(f"allowed at most {total} notes in the song (limit notes); it has {total}")


@pytest.mark.parametrize("op, field", [
    ({"type": "clip.add", "track": "Bass", "clip": {"start": 1700, "length": 101}}, "clip.length = 101"),
    ({"type": "clip.set", "track": "Bass", "clip": "c_bass_a", "patch": {"start": 1800}}, "patch.start = 1800"),
    ({"type": "clip.move", "track": "Bass", "clip": "c_bass_a", "start": 1800}, "start = 1800"),
    ({"type": "section.add", "section": {"start": 0, "length": 1400}}, "section.length = 1400"),
    ({"type": "project.set", "patch": {"tempo": 20}}, "patch.tempo = 20"),
])
def test_song_length_is_refused_at_the_op(small, op, field):
    small(song_s=900.0)
    if op["type"] == "project.set":  # a clip to beat 400 is 1200 s at 20 bpm
        op = [{"type": "clip.add", "track": "Bass", "clip": {"start": 396, "length": 4}}, op]
    else:
        op = [op]
    msg = _op_error(TINY.model_copy(update={"tempo": 92.0}), op)
    assert f"({op[-1]['type']}): {field}: allowed an end by 900 s (limit song_s; " in msg


def test_ops_and_transactions_per_submission_are_bounded(small):
    small(ops=3, transactions=2)
    op = {"type": "track.set", "track": "Bass", "patch": {"gain": -1}}
    apply_transactions(TINY, [[op, op], [op]])
    with pytest.raises(OpError, match=r"^transaction 1, op 1 is op 4 of the submission, over the limit ops = 3$"):
        apply_transactions(TINY, [[op, op], [op, op]])
    with pytest.raises(OpError, match=r"^3 transactions, over the limit transactions = 2$"):
        apply_transactions(TINY, [[], [], []])


def test_a_submission_over_the_op_limits_is_refused_on_load(monkeypatch):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(LIMITS, ops=2))
    op = {"type": "track.set", "track": "Bass", "patch": {"gain": -1}}
    with pytest.raises(SubmissionError, match=r"^ops\.json: transaction 0, op 2 is op 3 of the submission, "
                                              r"over the limit ops = 2$"):
        submission_from_data({"ops": [op, op, op]}, source="ops.json")
    submission_from_data({"calls": [{"tool": "apply_ops", "input": {"ops": [op]}}] * 2}, source="ops.json")


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(LIMITS, file_bytes=100))
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"ops": [{"type": "track.add", "track": {"name": "x" * 200}}]}))
    with pytest.raises(SubmissionError, match=rf"^{path}: \d+ bytes, over the limit file_bytes = 100$"):
        load_submission(path)
    song = tmp_path / "song.json"
    song.write_text((FIXTURES / "tiny.json").read_text())
    with pytest.raises(SongError, match="over the limit file_bytes = 100"):
        load_song(song)


def test_the_limits_are_one_frozen_table():
    assert isinstance(LIMITS, Limits)
    with pytest.raises(dataclasses.FrozenInstanceError):
        LIMITS.tracks = 1000  # type: ignore[misc]
    assert submission_module.load_submission is load_submission
