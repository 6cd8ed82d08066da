"""Properties of the ops language (hypothesis, bounded): valid ops apply, a refused transaction changes
nothing, results are deterministic (also across processes), and bad input only ever raises OpError."""

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_overdub.devices.params import house_spec
from pytest_overdub.errors import OpError
from pytest_overdub.song.ids import stable_ids
from pytest_overdub.song.model import Song, dumps_song, load_song
from pytest_overdub.song.ops import apply_ops

ROOT = Path(__file__).resolve().parents[2]
TINY = load_song(ROOT / "tests" / "fixtures" / "tiny.json")
TINY_JSON = dumps_song(TINY)
BOUNDED = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DEVICES = ("core.bass", "core.keys", "core.pad", "core.eq", "core.verb", "core.delay", "core.limiter")
beats = st.integers(min_value=0, max_value=64).map(lambda q: q / 4)
pitches = st.integers(min_value=24, max_value=96)


# --- valid ops, built against the song as it stands ---------------------------------------------

def _track_ref(draw, song: Song) -> str:
    tr = draw(st.sampled_from(song.tracks))
    if tr.name and draw(st.booleans()):
        return draw(st.sampled_from([tr.name, tr.name.upper(), tr.name.lower()]))
    return tr.id


def _params(draw, device: str) -> dict:
    spec = house_spec(device)
    chosen = draw(st.lists(st.sampled_from(spec.params), max_size=3, unique_by=lambda p: p.key))
    out = {}
    for p in chosen:
        if p.options:
            out[p.key] = draw(st.integers(min_value=0, max_value=len(p.options) - 1))
        else:
            out[p.key] = draw(st.floats(min_value=p.min, max_value=p.max, allow_nan=False))
    return out


def _notes_text(draw) -> str:
    notes = draw(st.lists(st.tuples(pitches, beats, st.sampled_from(["1/4", "1/3", "1", "2"]),
                                    st.integers(min_value=1, max_value=127)), max_size=4))
    return " ".join(f"{p}@{t}:{d}*{v}" for p, t, d, v in notes)


def _valid_op(draw, song: Song, n: int) -> dict:
    kinds = ["track.add", "section.add", "master.set", "project.set", "insert.add"]
    if song.tracks:
        kinds += ["track.set", "track.move", "instrument.set", "clip.add", "track.remove"]
        if any(tr.clips for tr in song.tracks):
            kinds += ["notes.add", "clip.set", "notes.replace", "clip.remove"]
        if any(c.notes for tr in song.tracks for c in tr.clips):
            kinds += ["notes.set", "notes.remove"]
    kind = draw(st.sampled_from(kinds))
    if kind == "track.add":
        device = draw(st.sampled_from(DEVICES[:3]))
        return {"type": kind, "ref": f"r{n}", "track": {
            "name": f"New {n}", "instrument": {"device": device, "params": _params(draw, device)},
            "clips": [{"start": draw(beats), "length": 4, "notes": _notes_text(draw)}]}}
    if kind == "section.add":
        return {"type": kind, "section": {"name": f"S{n}", "start": draw(beats), "length": 4}}
    if kind == "master.set":
        return {"type": kind, "patch": {"gain": draw(st.floats(-96, 24)), "clip": draw(st.sampled_from(["soft", "clean"]))}}
    if kind == "project.set":
        return {"type": kind, "patch": {"tempo": draw(st.floats(20, 400))}}
    if kind == "insert.add":
        device = draw(st.sampled_from(DEVICES[3:]))
        target = "master" if not song.tracks or draw(st.booleans()) else _track_ref(draw, song)
        return {"type": kind, "track": target, "insert": {"device": device, "params": _params(draw, device)}}
    if kind == "track.set":
        return {"type": kind, "track": _track_ref(draw, song),
                "patch": {"gain": draw(st.floats(-96, 24)), "pan": draw(st.floats(-1, 1)),
                          "mute": draw(st.booleans())}}
    if kind == "track.move":
        return {"type": kind, "track": _track_ref(draw, song),
                "index": draw(st.integers(0, len(song.tracks) - 1))}
    if kind == "instrument.set":
        device = draw(st.sampled_from(DEVICES[:3]))
        return {"type": kind, "track": _track_ref(draw, song), "device": device, "params": _params(draw, device)}
    if kind == "clip.add":
        return {"type": kind, "track": _track_ref(draw, song),
                "clip": {"start": draw(beats), "length": draw(st.sampled_from([0.25, 1, 4, 8])),
                         "notes": [{"p": draw(pitches), "t": draw(beats), "d": 0.5, "v": 0.5}]}}
    if kind == "track.remove":
        return {"type": kind, "track": _track_ref(draw, song)}
    if kind in ("notes.set", "notes.remove"):  # edits of existing notes: their order and ids matter
        tr = draw(st.sampled_from([t for t in song.tracks if any(c.notes for c in t.clips)]))
        clip = draw(st.sampled_from([c for c in tr.clips if c.notes]))
        note = draw(st.sampled_from(clip.notes))
        if kind == "notes.remove":
            return {"type": kind, "track": tr.id, "clip": clip.id, "ids": [note.id]}
        return {"type": kind, "track": tr.id, "clip": clip.id, "notes": [{"id": note.id, "t": draw(beats),
                                                                         "p": draw(pitches)}]}
    tr = draw(st.sampled_from([t for t in song.tracks if t.clips]))
    clip = draw(st.sampled_from(tr.clips))
    if kind == "clip.remove":
        return {"type": kind, "track": tr.id, "clip": clip.id}
    if kind == "notes.add":
        return {"type": kind, "track": tr.id, "clip": clip.id, "notes": _notes_text(draw)}
    if kind == "clip.set":
        return {"type": kind, "track": tr.id, "clip": clip.id, "patch": {"length": draw(st.sampled_from([0.25, 2, 16]))}}
    return {"type": kind, "track": tr.id, "clip": clip.id, "grid": {"kick": "X...x...", "hat": "x.x.x.x."}}


@st.composite
def valid_ops(draw, max_size=6):
    """A list of ops, each valid on the song left by the ones before it (checked step by step)."""
    song, ops = TINY, []
    for n in range(draw(st.integers(min_value=1, max_value=max_size))):
        op = _valid_op(draw, song, n)
        song = apply_ops(song, [op])
        ops.append(op)
    return ops


@BOUNDED
@given(valid_ops())
def test_valid_ops_apply_as_one_transaction(ops):
    one = apply_ops(TINY, ops)
    stepwise = TINY
    for op in ops:
        stepwise = apply_ops(stepwise, [op])
    assert dumps_song(one) == dumps_song(stepwise)
    assert dumps_song(TINY) == TINY_JSON


def test_refs_work_inside_one_transaction():
    ops = [{"type": "track.add", "ref": "pad", "track": {"name": "Pad"}},
           {"type": "clip.add", "track": "$pad", "ref": "c", "clip": {"start": 0, "length": 4}},
           {"type": "notes.add", "track": "$pad", "clip": "$c", "notes": "C4@0"}]
    song = apply_ops(TINY, ops)
    assert [n.p for n in song.track("Pad").clips[0].notes] == [60]


# --- one invalid op: the whole transaction is refused and nothing changes -------------------------

INVALID = [
    {"type": "track.set", "track": "Nobody", "patch": {"gain": 0}},
    {"type": "master.set", "patch": {"gain": 30}},
    {"type": "project.set", "patch": {"tempo": 19}},
    {"type": "track.ad", "track": {}},
    {"type": "section.add", "section": {"start": 0, "length": -1}},
    {"type": "insert.add", "track": "master", "insert": {"device": "core.eq", "params": {"q": 9}}},
    {"type": "track.add", "track": {"name": "X", "pan": 1.5}},
    {"type": "clip.add", "track": "master", "clip": {"start": 0, "length": 4}},
]


@BOUNDED
@given(valid_ops(max_size=5), st.sampled_from(INVALID), st.data())
def test_one_invalid_op_refuses_the_transaction(ops, bad, data):
    at = data.draw(st.integers(min_value=0, max_value=len(ops)))
    ops = ops[:at] + [bad] + ops[at:]
    before = json.dumps(TINY.model_dump(mode="json"))
    try:
        apply_ops(TINY, ops)
    except OpError as exc:
        assert str(exc).startswith(f"transaction 0, op {at} ({bad['type']}): ")
    else:
        raise AssertionError("the transaction was applied")
    assert json.dumps(TINY.model_dump(mode="json")) == before


# --- determinism ----------------------------------------------------------------------------------

@BOUNDED
@given(valid_ops())
def test_same_ops_twice_give_identical_json_after_stable_renaming(ops):
    a = stable_ids(apply_ops(TINY, copy.deepcopy(ops)), start=TINY)
    b = stable_ids(apply_ops(TINY, copy.deepcopy(ops)), start=TINY)
    assert dumps_song(a) == dumps_song(b)


FIXED_OPS = [
    {"type": "track.add", "ref": "pad", "index": 0, "track": {
        "name": "Pad", "instrument": {"device": "core.pad", "params": {"attack": 0.2}},
        "inserts": [{"device": "core.verb", "params": {"mix": 0.5}}],
        "clips": [{"start": 0, "length": 8, "notes": "A3@0:4 C4@0:4 E4@0:4 F3@4:4 A3@4:4 C4@4:4"}]}},
    {"type": "insert.add", "track": "master", "index": 0, "insert": {"device": "core.eq", "params": {"high": -2}}},
    {"type": "clip.add", "track": "Drums", "clip": {"start": 8, "length": 8, "grid": {"kick": "X...X...",
                                                                                      "snare": "....x...",
                                                                                      "hat": "xoxoxoxo"}}},
    {"type": "notes.add", "track": "bass", "clip": "c_bass_b", "notes": "E2@6:1/2*100 G2@7:1/2"},
    {"type": "section.add", "section": {"name": "Outro", "start": 16, "length": 8}},
    {"type": "device.define", "device": {"id": "my.fold", "kind": "effect", "kernel": "def process(x, p):\n    return x\n"}},
]

_SCRIPT = """
import hashlib, json, sys
from pytest_overdub.song.ids import stable_ids
from pytest_overdub.song.model import dumps_song, load_song
from pytest_overdub.song.ops import apply_ops
start = load_song(sys.argv[1])
song = stable_ids(apply_ops(start, json.loads(sys.argv[2])), start=start)
print(hashlib.sha256(dumps_song(song).encode()).hexdigest())
"""


def test_same_ops_give_the_same_sha256_in_another_python_process():
    here = stable_ids(apply_ops(TINY, FIXED_OPS), start=TINY)
    expected = hashlib.sha256(dumps_song(here).encode()).hexdigest()
    # A different hash seed in the child: set or dict ordering that leaked into ids would show up here.
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _SCRIPT, str(ROOT / "tests" / "fixtures" / "tiny.json"),
                          json.dumps(FIXED_OPS)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected
    assert [t.id for t in here.tracks] == ["t_nw0000", "t_drums", "t_bass"]


# --- nothing but OpError escapes apply_ops for bad input ------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from([10 ** 400, -(2 ** 63)]) | st.floats()
    | st.text(max_size=6) | st.sampled_from(["Bass", "master", "$r0", "c_bass_a", "fx_eq", "n_b0", "C4@0"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


@st.composite
def corrupted_ops(draw):
    """A valid op with one field (at any depth) replaced by a random JSON-like value."""
    op = copy.deepcopy(_valid_op(draw, TINY, 0))
    path = draw(st.sampled_from([p for p in _paths(op) if p and p != ("type",)]))
    holder = op
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = draw(json_values)
    return op


@st.composite
def random_ops(draw):
    """An op of a known type whose fields are random JSON-like values."""
    from pytest_overdub.song.ops import OPS
    kind = draw(st.sampled_from(sorted(OPS)))
    fields = [f for f in OPS[kind][1] if f != "type"]
    chosen = draw(st.lists(st.sampled_from(fields), unique=True, max_size=len(fields)))
    return {"type": kind, **{f: draw(json_values) for f in chosen}}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(corrupted_ops() | random_ops() | json_values, min_size=1, max_size=3))
def test_bad_input_only_raises_op_error(ops):
    try:
        song = apply_ops(TINY, ops)
    except OpError:
        return
    # Whatever was accepted is a valid song that dumps and loads back the same.
    assert dumps_song(Song.model_validate_json(dumps_song(song))) == dumps_song(song)


@settings(max_examples=50, deadline=None)
@given(json_values)
def test_a_transaction_that_is_not_a_list_is_an_op_error(value):
    if isinstance(value, list):
        return
    try:
        apply_ops(TINY, value)
    except OpError as exc:
        assert "expected a list of ops" in str(exc)
    else:
        raise AssertionError("accepted a non-list transaction")
