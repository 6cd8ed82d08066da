"""The JSON Schemas that ``overdub schema`` prints accept the project's own files and refuse broken ones."""

import json
from pathlib import Path

import jsonschema
import pytest

from pytest_overdub.cli import main as cli_main
from pytest_overdub.song.schema import ops_schema, song_schema, task_schema

ROOT = Path(__file__).resolve().parents[2]
# One validator per schema (``jsonschema.validate`` re-checks the schema against its metaschema on
# every call, which is most of the time spent here).
SONG, TASK, OPS = (jsonschema.Draft202012Validator(s) for s in (song_schema(), task_schema(), ops_schema()))


def _files(*dirs: str) -> list[Path]:
    return sorted(p for d in dirs for p in (ROOT / d).glob("*.json"))


@pytest.mark.parametrize("path", _files("songs", "tests/fixtures"), ids=lambda p: p.name)
def test_song_schema_accepts_our_songs(path):
    SONG.validate(json.loads(path.read_text()))


@pytest.mark.parametrize("path", _files("tasks"), ids=lambda p: p.name)
def test_task_schema_accepts_our_tasks(path):
    TASK.validate(json.loads(path.read_text()))


@pytest.mark.parametrize("path", _files("oracles", "near_misses"), ids=lambda p: p.name)
def test_ops_schema_accepts_our_answers(path):
    OPS.validate(json.loads(path.read_text())["ops"])


def test_song_schema_refuses_an_unknown_field_and_a_loud_note():
    song = json.loads((ROOT / "songs" / "lab.json").read_text())
    song["tracks"][0]["bogus"] = 1
    with pytest.raises(jsonschema.ValidationError, match="bogus"):
        SONG.validate(song)
    song = json.loads((ROOT / "songs" / "lab.json").read_text())
    song["tracks"][0]["clips"][0]["notes"][0]["v"] = 2
    with pytest.raises(jsonschema.ValidationError, match="2"):
        SONG.validate(song)


def test_ops_schema_refuses_an_unknown_op_type_and_a_missing_field():
    with pytest.raises(jsonschema.ValidationError):
        OPS.validate([{"type": "trak.add", "track": {}}])
    with pytest.raises(jsonschema.ValidationError):
        OPS.validate([{"type": "track.set", "track": "Bass"}])


def test_cli_prints_the_song_schema(capsys):
    assert cli_main(["schema", "song"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["title"] == "overdub/0 song" and "tracks" in printed["properties"]
