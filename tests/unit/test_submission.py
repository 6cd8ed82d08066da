"""Submissions: every form of docs/formats.md reads into transactions or a song; anything else says why."""

import hashlib
import json
from pathlib import Path

import pytest

from pytest_overdub.errors import OverdubError, SubmissionError
from pytest_overdub.song.model import dumps_song, load_song
from pytest_overdub.song.ops import apply_transactions
from pytest_overdub.song.submission import FORMS, Submission, load_submission, submission_from_data

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
TINY = load_song(FIXTURES / "tiny.json")

GAIN = {"type": "track.set", "track": "Bass", "patch": {"gain": -6}}
PAN = {"type": "track.set", "track": "Drums", "patch": {"pan": 0.5}}
KERNEL = "def process(x, params):\n    return x\n"


def _write(tmp_path, data, name="sub.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_op_list(tmp_path):
    path = _write(tmp_path, [GAIN, PAN])
    sub = load_submission(path)
    assert sub.transactions == ((GAIN, PAN),)
    assert not sub.is_song and sub.song is None
    assert sub.source == str(path)
    assert sub.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_ops_object():
    assert submission_from_data({"ops": [GAIN]}).transactions == ((GAIN,),)


def test_list_of_transactions():
    sub = submission_from_data([{"ops": [GAIN]}, {"ops": [PAN]}])
    assert sub.transactions == ((GAIN,), (PAN,))
    song = apply_transactions(TINY, [list(t) for t in sub.transactions])
    assert song.track("Bass").gain == -6.0 and song.track("Drums").pan == 0.5


def test_empty_op_list_is_one_empty_transaction():
    assert submission_from_data([]).transactions == ((),)


def test_calls_replay_apply_ops_and_ignore_other_tools():
    sub = submission_from_data({"calls": [
        {"tool": "get_song", "input": {}},
        {"tool": "apply_ops", "input": {"ops": [GAIN]}},
        {"name": "render_preview", "arguments": "{}"},
        {"name": "apply_ops", "arguments": json.dumps({"ops": [PAN]})},
    ]})
    assert sub.transactions == ((GAIN,), (PAN,))
    assert sub.ignored_calls == ("get_song", "render_preview")


def test_undo_drops_the_last_transaction_still_applied():
    define = {"id": "my.x", "kind": "effect", "kernel": "def process(x, params, ctx):\n    return x\n"}
    sub = submission_from_data({"calls": [
        {"tool": "apply_ops", "input": {"ops": [GAIN]}},
        {"tool": "define_device", "input": {"device": define}},
        {"tool": "apply_ops", "input": {"ops": [PAN]}},
        {"tool": "undo", "input": {}},
        {"tool": "undo", "input": {}},
        {"tool": "apply_ops", "input": {"ops": [PAN]}},
    ]})
    assert sub.transactions == ((GAIN,), (PAN,))
    assert sub.ignored_calls == ()


def test_undo_with_nothing_applied_names_the_call():
    calls = [{"tool": "apply_ops", "input": {"ops": [GAIN]}}, {"tool": "undo", "input": {}},
             {"name": "undo", "arguments": "{}"}]
    with pytest.raises(SubmissionError) as info:
        submission_from_data({"calls": calls}, source="a.json")
    assert "a.json: calls[2]: undo with nothing to undo" in str(info.value)


def test_define_device_effect_with_use_on_becomes_insert_add():
    dev = {"id": "my.echo", "kind": "effect", "kernel": KERNEL}
    sub = submission_from_data({"calls": [
        {"tool": "define_device", "input": {"device": dev, "use_on": {"track": "Bass", "index": 0}}}]})
    assert sub.transactions == (({"type": "device.define", "device": dev},
                                 {"type": "insert.add", "track": "Bass", "insert": {"device": "my.echo"},
                                  "index": 0}),)
    song = apply_transactions(TINY, [list(t) for t in sub.transactions])
    assert song.devices["my.echo"].kind == "effect"
    assert [i.device for i in song.track("Bass").inserts] == ["my.echo", "core.eq", "core.comp"]


def test_define_device_instrument_with_use_on_becomes_instrument_set():
    # flat fields, "code" for the kernel, arguments as a JSON string: the forms agents log
    args = {"id": "my.bell", "kind": "instrument", "code": KERNEL, "use_on": {"track": "Drums"}}
    sub = submission_from_data({"calls": [{"name": "define_device", "arguments": json.dumps(args)}]})
    (tx,) = sub.transactions
    assert tx == ({"type": "device.define", "device": {"id": "my.bell", "kind": "instrument", "kernel": KERNEL}},
                  {"type": "instrument.set", "track": "Drums", "device": "my.bell"})
    song = apply_transactions(TINY, [list(tx)])
    assert song.track("Drums").instrument.device == "my.bell"
    assert song.devices["my.bell"].kernel == KERNEL


def test_define_device_without_use_on_only_defines():
    sub = submission_from_data({"calls": [{"tool": "define_device",
                                           "input": {"id": "my.x", "kind": "effect", "kernel": KERNEL}}]})
    assert sub.transactions == (({"type": "device.define",
                                  "device": {"id": "my.x", "kind": "effect", "kernel": KERNEL}},),)


def test_whole_song():
    path = FIXTURES / "tiny.json"
    sub = load_submission(path)
    assert sub.is_song and sub.transactions == ()
    assert dumps_song(sub.song) == path.read_text(encoding="utf-8")


def test_whole_song_with_problems_is_a_submission_error():
    data = json.loads((FIXTURES / "tiny.json").read_text(encoding="utf-8"))
    data["tempo"] = 1000
    with pytest.raises(SubmissionError, match=r"answer\.json: 1 problem\(s\)\n  tempo = 1000: Input should be"):
        submission_from_data(data, source="answer.json")


@pytest.mark.parametrize("value", ["-6", True])
def test_a_song_and_an_op_read_a_number_by_the_same_rule(value):
    # "gain": "-6" used to be coerced to -6.0 in a song while the same value in an op was refused.
    data = json.loads((FIXTURES / "tiny.json").read_text(encoding="utf-8"))
    data["tracks"][1]["gain"] = value
    with pytest.raises(SubmissionError, match=rf'tracks\[1\]\.gain = {json.dumps(value)}: .*valid number'):
        submission_from_data(data, source="answer.json")
    op = {"type": "track.set", "track": "Bass", "patch": {"gain": value}}
    with pytest.raises(OverdubError, match=rf'patch\.gain = {json.dumps(value)}: allowed a finite number'):
        apply_transactions(TINY, [list(t) for t in submission_from_data([op]).transactions])


@pytest.mark.parametrize("data, shape", [
    ({"edits": []}, "an object with keys edits"),
    ([GAIN, "track.remove"], 'a list whose item [1] is "track.remove"'),
    ("ops", "str"),
    (42, "int"),
    ([{"ops": [GAIN]}, GAIN], "a list whose item [0] is"),
])
def test_bad_form_lists_the_accepted_forms(data, shape):
    with pytest.raises(SubmissionError) as info:
        submission_from_data(data, source="answer.json")
    msg = str(info.value)
    assert msg.startswith(f"answer.json: not a submission ({shape}")
    assert msg.endswith("accepted forms: " + "; ".join(FORMS))
    assert len(FORMS) == 5


@pytest.mark.parametrize("calls, fragment", [
    ("apply_ops", "a.json: calls must be a list of {tool, input}"),
    (["apply_ops"], "a.json: calls[0]: expected an object {tool, input}"),
    ([{"tool": "apply_ops", "input": {"ops": "X"}}], "a.json: calls[0].input.ops: expected a list of ops"),
    ([{"name": "apply_ops", "arguments": "{ops: []}"}], "a.json: calls[0].arguments: not valid JSON"),
    ([{"tool": "define_device", "input": [1]}], "a.json: calls[0].input: expected an object"),
    ([{"tool": "define_device", "input": {"id": "my.x", "kind": "effect", "kernel": "", "use_on": "Bass"}}],
     'a.json: calls[0].input.use_on: expected {track, index?}, got "Bass"'),
])
def test_bad_calls(calls, fragment):
    with pytest.raises(SubmissionError) as info:
        submission_from_data({"calls": calls}, source="a.json")
    assert fragment in str(info.value)


def test_transaction_list_with_ops_not_a_list():
    with pytest.raises(SubmissionError, match=r"a\.json: \[1\]\.ops: expected a list of ops"):
        submission_from_data([{"ops": [GAIN]}, {"ops": "nope"}], source="a.json")


def test_missing_file(tmp_path):
    with pytest.raises(SubmissionError, match=r"gone\.json: no such file"):
        load_submission(tmp_path / "gone.json")


def test_malformed_json(tmp_path):
    path = tmp_path / "half.json"
    path.write_text('[{"type": "track.set",\n', encoding="utf-8")
    with pytest.raises(SubmissionError) as info:
        load_submission(path)
    assert str(info.value) == f"{path}: not valid JSON: Expecting property name enclosed in double quotes at line 2, column 1"


def test_not_utf8(tmp_path):
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe[]")
    with pytest.raises(SubmissionError, match="not UTF-8 text"):
        load_submission(path)


def test_submission_error_is_an_overdub_error():
    assert issubclass(SubmissionError, OverdubError)
    assert Submission(source="x", sha256="").is_song is False
