"""The overdub/0 song model: byte-for-byte round trips and error messages a person can act on."""

import json
from pathlib import Path

import pytest

from pytest_overdub.errors import OverdubError, SongError
from pytest_overdub.song.model import dump_song, dumps_song, load_song, song_from_data

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
# Every song the bench ships plus the fixtures; songs added later are picked up automatically.
SONG_FILES = sorted(ROOT.glob("songs/*.json")) + sorted(FIXTURES.glob("*.json"))


def _tiny() -> dict:
    return json.loads((FIXTURES / "tiny.json").read_text(encoding="utf-8"))


def _error(data, source="bad.json") -> str:
    with pytest.raises(SongError) as info:
        song_from_data(data, source=source)
    return str(info.value)


@pytest.mark.parametrize("path", SONG_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_song_file_round_trips_byte_for_byte(path, tmp_path):
    text = path.read_text(encoding="utf-8")
    song = load_song(path)
    assert dumps_song(song) == text
    out = tmp_path / path.name
    dump_song(song, out)
    assert out.read_bytes() == path.read_bytes()


def test_fixture_songs_exist():
    names = {p.name for p in SONG_FILES}
    assert {"tiny.json", "defined.json"} <= names


def test_loaded_values_are_the_files_values():
    song = load_song(FIXTURES / "tiny.json")
    assert song.tempo == 92.0
    assert song.key.root == "A" and song.key.scale == "minor"
    assert [t.name for t in song.tracks] == ["Drums", "Bass"]
    bass = song.track("bASS")
    assert bass.id == "t_bass" and bass.gain == -1.5 and bass.pan == -0.1
    assert [i.id for i in bass.inserts] == ["fx_eq", "fx_comp"]
    assert bass.inserts[1].on is False
    assert [n.p for n in bass.clips[1].notes] == [48, 43]
    assert song.track("t_drums").clips[0].notes[1].v == 0.8
    assert song.section("chorus").start == 8.0
    assert song.master.inserts[0].device == "core.limiter"
    assert song.meta["notes"][1] == {"nested": True}
    assert song.beats_per_bar == 4.0
    assert song.track("Nobody") is None


def test_optional_fields_are_filled_on_load():
    song = song_from_data({"format": "overdub/0", "id": "s", "tempo": 100, "tracks": []})
    assert song.meter == (4, 4) and song.master.clip == "soft" and song.master.gain == 0.0
    assert song.tracks == () and song.devices == {} and song.key is None


def test_required_fields_are_never_defaulted():
    # A song without tempo used to render at 120 bpm, one without tracks in silence.
    lines = _error({"id": "s", "tracks": [{"id": "t_a"}]}, source="songs/bare.json").splitlines()
    assert lines[0] == "songs/bare.json: 3 problem(s)"
    assert set(lines[1:]) == {"  format: missing; this field is required",
                              "  tempo: missing; this field is required",
                              "  tracks[0].name: missing; this field is required"}
    assert _error({"format": "overdub/0", "id": "s", "tempo": 90}).splitlines()[1:] == [
        "  tracks: missing; this field is required"]


@pytest.mark.parametrize("path, value, expected", [
    (("tracks", 0, "gain"), "-6", "Input should be a valid number"),
    (("tracks", 0, "mute"), 1, "Input should be a valid boolean"),
    (("tracks", 1, "clips", 0, "notes", 0, "p"), 45.0, "Input should be a valid integer"),
    (("tracks", 1, "clips", 0, "start"), True, "Input should be a valid number"),
    (("tempo",), "92", "Input should be a valid number"),
])
def test_numbers_and_booleans_are_strict(path, value, expected):
    # The same rule as ops: "-6" for a number is refused, not coerced.
    data = _tiny()
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    assert f"  {where} = {json.dumps(value)}: {expected}" in _error(data).splitlines()


def test_device_params_are_read_as_ops_read_them():
    data = _tiny()
    bass = data["tracks"][1]
    bass["inserts"][0]["params"]["gain"] = "-6"  # core.eq gain: a string is not a number here either
    bass["instrument"]["params"]["nope"] = 1
    bass["inserts"][0]["auto"] = {"low": [{"t": 0, "v": 40}]}
    lines = _error(data, source="songs/p.json").splitlines()
    assert lines[0] == "songs/p.json: 3 problem(s)"
    assert '  tracks[1].inserts[0].params.gain = "-6": allowed core.eq gain: -18..18 dB' in lines
    assert any(line.startswith("  tracks[1].instrument.params.nope = 1.0: allowed a param of core.bass: wave,")
               for line in lines)
    assert "  tracks[1].inserts[0].auto.low[0].v = 40.0: allowed core.eq low: -15..15 dB" in lines


def test_switch_params_take_option_names_in_songs_as_in_ops():
    data = _tiny()
    data["tracks"][0]["instrument"]["params"]["kit"] = "dust"
    assert song_from_data(data).tracks[0].instrument.params["kit"] == "dust"


def test_a_song_is_frozen():
    song = load_song(FIXTURES / "tiny.json")
    with pytest.raises(Exception):
        song.tempo = 100


def test_malformed_json_names_file_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "id": "x",\n  "tempo": 92\n  "title": "no comma"\n}\n', encoding="utf-8")
    with pytest.raises(SongError) as info:
        load_song(path)
    msg = str(info.value)
    assert msg.startswith(str(path))
    assert "not valid JSON: Expecting ',' delimiter at line 4, column 3" in msg


def test_missing_file_is_a_song_error(tmp_path):
    with pytest.raises(SongError, match=r"nowhere\.json: no such file"):
        load_song(tmp_path / "nowhere.json")


def test_non_utf8_file_is_a_song_error(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"id": "caf\xe9"}')
    with pytest.raises(SongError, match="not UTF-8 text"):
        load_song(path)


def test_wrong_format_says_what_is_expected():
    msg = _error({**_tiny(), "format": "overdub/1"}, source="songs/old.json")
    assert msg == 'songs/old.json: format = "overdub/1": expected "overdub/0"'


def test_note_velocity_two_names_path_value_and_bound():
    data = _tiny()
    data["tracks"][1]["clips"][0]["notes"][1]["v"] = 2
    msg = _error(data)
    assert msg.splitlines()[0] == "bad.json: 1 problem(s)"
    assert "tracks[1].clips[0].notes[1].v = 2: Input should be less than or equal to 1" in msg


def test_every_problem_is_listed_in_one_error():
    data = _tiny()
    data["tracks"][0]["gain"] = 40
    data["tracks"][0]["colour"] = "red"
    data["tracks"][1]["clips"][0]["notes"][1]["v"] = 2
    del data["tracks"][1]["clips"][1]["start"]
    data["key"] = {"root": "H", "scale": "minor"}
    data["meta"]["anything"] = {"goes": [1, 2]}  # meta is free-form: not a problem
    lines = _error(data, source="songs/many.json").splitlines()
    assert lines[0] == "songs/many.json: 5 problem(s)"
    assert "  tracks[0].gain = 40: Input should be less than or equal to 24" in lines
    assert ('  tracks[0].colour = "red": unknown field (not part of overdub/0; free-form data belongs in meta)'
            in lines)
    assert "  tracks[1].clips[0].notes[1].v = 2: Input should be less than or equal to 1" in lines
    assert "  tracks[1].clips[1].start: missing; this field is required" in lines
    assert any(line.startswith('  key.root = "H": Input should be \'C\'') for line in lines)


def test_not_an_object_at_top_level():
    assert "(top level) = list: Input should be a valid dictionary" in _error([1, 2])


def test_duplicate_ids_name_both_places():
    data = _tiny()
    data["tracks"][1]["clips"][0]["id"] = "c_beat"
    msg = _error(data)
    assert "id 'c_beat' at tracks[1].clips[0].id is already used at tracks[0].clips[0].id" in msg


def test_device_key_must_equal_its_id():
    data = json.loads((FIXTURES / "defined.json").read_text(encoding="utf-8"))
    data["devices"]["other.id"] = data["devices"].pop("my.fold")
    assert "devices.other.id: the key must equal the device's id 'my.fold'" in _error(data)


def test_house_device_ids_are_reserved_for_song_devices():
    data = json.loads((FIXTURES / "defined.json").read_text(encoding="utf-8"))
    data["devices"] = {"core.fold": {**data["devices"]["my.fold"], "id": "core.fold"}}
    assert "ids starting with 'core.' are reserved for house devices" in _error(data)


def test_declared_param_default_must_be_in_range():
    data = json.loads((FIXTURES / "defined.json").read_text(encoding="utf-8"))
    data["devices"]["my.fold"]["params"][0]["def"] = 3
    assert "def 3 is outside [min 0, max 1]" in _error(data)


@pytest.mark.parametrize("value", ["Infinity", "NaN"])
def test_inf_and_nan_are_refused(tmp_path, value):
    # json.loads accepts these tokens; a song holding them could not be dumped back to the same file.
    path = tmp_path / "inf.json"
    path.write_text('{"id": "x", "tempo": 100, "sections": [{"id": "s", "start": 0, "length": %s}]}' % value,
                    encoding="utf-8")
    with pytest.raises(SongError, match=r"sections\[0\]\.length = .*finite number"):
        load_song(path)


def test_song_error_is_an_overdub_error():
    assert issubclass(SongError, OverdubError)
