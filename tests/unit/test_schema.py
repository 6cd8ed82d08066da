"""The JSON Schemas that ``overdub schema`` prints accept the project's own files and refuse broken ones."""

import json
import re
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


@pytest.mark.parametrize("path", [p for p in _files("oracles", "near_misses")
                                  if "make" not in json.loads(p.read_text())],  # audio and transcription
                         ids=lambda p: p.name)                                # answers are made by code
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


# --- the ops schema is complete, and neither looser nor stricter than the op code -----------------------

from pytest_overdub.errors import OpError  # noqa: E402
from pytest_overdub.song.limits import LIMITS  # noqa: E402
from pytest_overdub.song.model import load_song  # noqa: E402
from pytest_overdub.song.ops import OPS as OP_TABLE, apply_ops  # noqa: E402
from pytest_overdub.song.schema import OP_DESCRIPTIONS, op_schemas  # noqa: E402

NIGHT = load_song(ROOT / "songs" / "night-shift.json")
DOC_SECTIONS = re.split(r"^### ", (ROOT / "docs" / "ops.md").read_text(encoding="utf-8"), flags=re.M)[1:]


def _doc_examples() -> list[tuple[str, list]]:
    out = []
    for part in DOC_SECTIONS:
        data = json.loads(re.search(r"```json\n(.*?)```", part, re.S).group(1))
        out.append((re.match(r"`([a-z.]+)`", part).group(1), data if isinstance(data, list) else [data]))
    return out


@pytest.mark.parametrize("name, ops", _doc_examples(), ids=lambda x: x if isinstance(x, str) else "")
def test_ops_schema_accepts_every_example_in_the_ops_page(name, ops):
    OPS.validate(ops)


def test_every_op_field_is_typed_and_described_as_the_ops_page_says():
    ops, _ = op_schemas()
    assert sorted(ops) == sorted(OP_TABLE) == sorted(OP_DESCRIPTIONS)
    untyped = [f"{name}.{key}" for name, s in ops.items() for key, sub in s["properties"].items() if not sub]
    assert untyped == []
    firsts = {re.match(r"`([a-z.]+)`", p).group(1): p.split("\n\n")[1].strip() for p in DOC_SECTIONS}
    assert firsts == OP_DESCRIPTIONS  # the first paragraph of each op's section is its schema description


def test_ops_schema_ranges_are_the_models():
    ops, _ = op_schemas()
    gain = ops["track.set"]["properties"]["patch"]["properties"]["gain"]
    assert (gain["minimum"], gain["maximum"]) == (-96, 24)
    tempo = ops["project.set"]["properties"]["patch"]["properties"]["tempo"]
    assert (tempo["minimum"], tempo["maximum"]) == (20, 400)
    assert ops["clip.add"]["properties"]["clip"]["properties"]["length"]["minimum"] == 0.25


# Each op is wrong in one way: the schema refuses it and so does apply_ops (on the song docs/ops.md uses).
WRONG = {
    "unknown op type": {"type": "track.sett", "track": "Bass", "patch": {"gain": -6}},
    "unknown field": {"type": "track.set", "track": "Bass", "patch": {"gain": -6}, "bogus": 1},
    "unknown patch field": {"type": "track.set", "track": "Bass", "patch": {"volume": -6}},
    "gain out of range": {"type": "track.set", "track": "Bass", "patch": {"gain": 40}},
    "gain as a string": {"type": "track.set", "track": "Bass", "patch": {"gain": "-6"}},
    "pan out of range": {"type": "track.set", "track": "Bass", "patch": {"pan": 1.5}},
    "mute as a number": {"type": "track.set", "track": "Bass", "patch": {"mute": 1}},
    "missing patch": {"type": "track.set", "track": "Bass"},
    "missing track": {"type": "track.remove"},
    "tempo out of range": {"type": "project.set", "patch": {"tempo": 10}},
    "meter of three": {"type": "project.set", "patch": {"meter": [4, 4, 4]}},
    "unknown scale": {"type": "project.set", "patch": {"key": {"root": "A", "scale": "ionian"}}},
    "short clip": {"type": "clip.add", "track": "Bass", "clip": {"start": 0, "length": 0.1}},
    "clip without start": {"type": "clip.add", "track": "Bass", "clip": {"length": 4}},
    "pitch 128": {"type": "notes.add", "track": "Bass", "clip": "c_bass_verse", "notes": [{"p": 128, "t": 0, "d": 1}]},
    "zero duration": {"type": "notes.add", "track": "Bass", "clip": 0, "notes": [{"p": 60, "t": 0, "d": 0}]},
    "loud note": {"type": "notes.add", "track": "Bass", "clip": 0, "notes": [{"p": 60, "t": 0, "d": 1, "v": 2}]},
    "negative time": {"type": "notes.add", "track": "Bass", "clip": 0, "notes": [{"p": 60, "t": -1, "d": 1}]},
    "note field": {"type": "notes.add", "track": "Bass", "clip": 0, "notes": [{"p": 60, "t": 0, "d": 1, "x": 1}]},
    "neither notes nor grid": {"type": "notes.replace", "track": "Bass", "clip": 0, "grid": None},
    "a clip's worth of notes and one more": {"type": "notes.replace", "track": "Bass", "clip": 0,
                                             "notes": [{"p": 60, "t": 0, "d": 1}] * (LIMITS.notes_per_clip + 1)},
    "notes as a number": {"type": "notes.replace", "track": "Bass", "clip": 0, "notes": 5},
    "param as a list": {"type": "instrument.set", "track": "Bass", "params": {"cutoff": [300]}},
    "insert without device": {"type": "insert.add", "track": "Bass", "insert": {"params": {}}},
    "insert on as a string": {"type": "insert.set", "track": "Keys", "insert": 0, "patch": {"on": "yes"}},
    "point field": {"type": "auto.write", "track": "Bass", "param": "cutoff", "points": [{"t": 0, "v": 1, "w": 2}]},
    "negative index": {"type": "track.move", "track": "Hook", "index": -1},
    "house device id": {"type": "device.define", "device": {"id": "core.x", "kind": "effect", "kernel": "x"}},
    "section of no length": {"type": "section.add", "section": {"start": 0, "length": 0}},
    "master clip mode": {"type": "master.set", "patch": {"clip": "hard"}},
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_wrong_op_is_refused_by_the_schema_and_by_apply_ops(case):
    with pytest.raises(jsonschema.ValidationError):
        OPS.validate([WRONG[case]])
    with pytest.raises(OpError):
        apply_ops(NIGHT, [WRONG[case]])


# --- ops the schema accepts apply or are refused with OpError; for song-independent fields, both agree ------

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

# Whole floats (2.0) are left out: JSON Schema counts them as integers, the op code (like song files) wants
# an integer written as one where an integer is meant, and a schema cannot tell them apart.
FRACTIONS = st.floats(-200, 500).filter(lambda x: x != int(x))
VALUES = st.one_of(st.integers(0, 8), st.integers(-200, 500), st.floats(0.1, 0.9), FRACTIONS, st.booleans(),
                   st.sampled_from(["", "C4", "-6", "soft", "clean", "x"]))
PATCHES = {
    "track.set": ("name", "color", "gain", "pan", "mute", "solo", "arm", "volume"),
    "clip.set": ("start", "length", "name", "gain", "mute", "speed"),
    "master.set": ("gain", "clip", "width"),
    "project.set": ("tempo", "title", "swing"),
}
TARGETS = {"track.set": {"track": "Bass"}, "clip.set": {"track": "Bass", "clip": "c_bass_verse"},
           "master.set": {}, "project.set": {}}


@st.composite
def _patch_ops(draw):
    kind = draw(st.sampled_from(sorted(PATCHES)))
    keys = draw(st.lists(st.sampled_from(PATCHES[kind]), min_size=1, max_size=3, unique=True))
    return {"type": kind, **TARGETS[kind], "patch": {k: draw(VALUES) for k in keys}}


@st.composite
def _note_ops(draw):
    keys = ["p", "t", "d"] + draw(st.lists(st.sampled_from(["v", "w"]), max_size=1))
    note = {k: draw(st.one_of(VALUES, st.integers(0, 127))) for k in keys}
    if draw(st.booleans()):
        del note[draw(st.sampled_from(keys))]
    return {"type": "notes.add", "track": "Bass", "clip": "c_bass_verse", "notes": [note]}


@st.composite
def _new_things(draw):
    kind, fields = draw(st.sampled_from([("clip", ("start", "length", "gain", "mute", "name", "loop")),
                                         ("section", ("start", "length", "name", "color"))]))
    keys = ["start", "length"] + draw(st.lists(st.sampled_from(fields[2:]), max_size=2, unique=True))
    spec = {k: draw(VALUES) for k in keys}
    return {"type": f"{kind}.add", "track": "Bass", "clip": spec} if kind == "clip" else \
        {"type": "section.add", "section": spec}


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_patch_ops(), _note_ops(), _new_things()))
def test_the_schema_and_apply_ops_agree_on_generated_ops(o):
    """These ops name things night-shift has and stay within its limits, so what decides is each field's type
    and range: the schema accepts exactly the ops apply_ops applies."""
    accepted = OPS.is_valid([o])
    try:
        apply_ops(NIGHT, [o])
        applied = True
    except OpError:
        applied = False
    assert accepted == applied, f"schema {'accepts' if accepted else 'refuses'} {o}"


@pytest.mark.parametrize("name, ops", _doc_examples(), ids=lambda x: x if isinstance(x, str) else "")
def test_an_optional_field_set_to_null_is_read_as_absent_by_both(name, ops):
    k = max(i for i, o in enumerate(ops) if o["type"] == name)
    for field in (f for f, need in OP_TABLE[name][1].items() if need == "optional"):
        absent = ops[:k] + [{f: v for f, v in ops[k].items() if f != field}] + ops[k + 1:]
        null = ops[:k] + [{**ops[k], field: None}] + ops[k + 1:]
        assert OPS.is_valid(null) == OPS.is_valid(absent), field
        outcomes = []
        for trial in (absent, null):
            try:
                outcomes.append(apply_ops(NIGHT, trial))
            except OpError as exc:
                outcomes.append(str(exc).split(":")[0])  # the same op refused (the message names the value)
        assert outcomes[0] == outcomes[1], field


def test_cli_prints_the_ops_schema(capsys):
    assert cli_main(["schema", "ops"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == ops_schema()
    patch = printed["$defs"]["track.set"]["properties"]["patch"]
    assert patch["properties"]["pan"]["maximum"] == 1 and patch["additionalProperties"] is False
