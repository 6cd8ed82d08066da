"""``overdub eval`` and ``overdub mcp`` on file tasks (audio in, or transcription): the workspace holds the
inputs, the agent answers with the folder ``answer/``, the trial scores it as ``overdub score`` does.

The audio answers are the bench's own (the oracle's files, made by its registered maker); the
transcription answer is the true notes. Expected scores come from the scorer itself, never recomputed here.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from pytest_overdub.bench.audio.answers import make_answer
from pytest_overdub.bench.audio.score import score_audio_task
from pytest_overdub.bench.handoff import hand_back
from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.cli import main
from pytest_overdub.evaluate.files import folder_sha256
from pytest_overdub.evaluate.reader import load_run
from pytest_overdub.evaluate.regrade import regrade
from pytest_overdub.studio.files import open_file_task
from pytest_overdub.studio.server import call_tool
from pytest_overdub.transcribe.truth import reference

BENCH = bundled_bench()
AUDIO, NOTES = "master-mid-side", "transcribe-solo-hook"


@pytest.fixture(scope="module")
def oracle_folder() -> Path:
    task = BENCH.task(AUDIO)
    return make_answer(task, json.loads(BENCH.oracle_path(AUDIO).read_text())["make"], BENCH)


def agent(tmp_path: Path, body: str) -> str:
    path = tmp_path / "agent.sh"
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return f"/bin/sh {path}"


def result(out: Path, task: str, trial: int = 0) -> dict:
    return json.loads((out / task / str(trial) / "result.json").read_text())


def truth_notes(tmp_path: Path) -> Path:
    task = BENCH.task(NOTES)
    parts = reference(task, BENCH.song(task.song))
    data = {"time": "seconds", "parts": {k: [{"p": n.pitch, "t": n.onset_s, "d": n.duration_s} for n in v]
                                         for k, v in parts.items()}}
    path = tmp_path / "truth.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_an_audio_agent_gets_the_inputs_and_its_answer_folder_is_scored(tmp_path, oracle_folder):
    task = BENCH.task(AUDIO)
    want = score_audio_task(task, oracle_folder, bench=BENCH).score
    assert want >= 0.9  # the premise: the oracle passes
    # the agent checks its inputs are there, then hands back the oracle's files
    ins = " ".join(f'test -s "{i.name}" &&' for i in task.inputs)
    cmd = agent(tmp_path, f'{ins} grep -q "answer/" instruction.md && mkdir answer && cp "{oracle_folder}"/* answer/\n')
    out = tmp_path / "out"
    assert main(["eval", "--agent-cmd", cmd, "--agent-id", "t", "--tasks", AUDIO, "--out", str(out)]) == 0
    rec = result(out, AUDIO)
    assert (rec["status"], rec["answer_source"], rec["passed"]) == ("scored", "answer/", True), rec["reason"]
    assert rec["score"] == pytest.approx(want, abs=1e-9)
    kept = out / AUDIO / "0" / "answer"
    assert sorted(p.name for p in kept.iterdir()) == sorted(p.name for p in oracle_folder.iterdir()
                                                            if not p.name.startswith("."))
    assert rec["answer_sha256"] == folder_sha256(kept)
    # regrade rescoring the kept folder finds the same verdict; a changed file is flagged
    r = regrade(load_run(out))
    assert (r["regraded"], r["unchanged"], r["not_regraded"]) == (1, 1, [])
    (kept / "extra.txt").write_text("x")
    r = regrade(load_run(out))
    assert r["scores_changed"][0]["answer_changed"] is True


def test_a_transcription_agent_writing_the_true_notes_passes(tmp_path):
    truth = truth_notes(tmp_path)
    cmd = agent(tmp_path, f'test -s mix.wav && mkdir answer && cp "{truth}" answer/notes.json\n')
    out = tmp_path / "out"
    assert main(["eval", "--agent-cmd", cmd, "--agent-id", "t", "--tasks", NOTES, "--out", str(out)]) == 0
    rec = result(out, NOTES)
    assert (rec["status"], rec["passed"], rec["score"]) == ("scored", True, 1.0), rec["reason"]
    assert (out / NOTES / "0" / "answer" / "notes.json").read_bytes() == truth.read_bytes()


def test_no_answer_folder_fails_and_a_garbage_or_linked_answer_is_invalid(tmp_path):
    out = tmp_path / "out"
    cmd = agent(tmp_path, 'case "$OVERDUB_TRIAL" in\n'
                          '  1) mkdir answer && echo "{not json" > answer/notes.json ;;\n'
                          '  2) mkdir answer && ln -s /etc/hostname answer/notes.json ;;\n'
                          'esac\n')
    assert main(["eval", "--agent-cmd", cmd, "--agent-id", "t", "--tasks", NOTES, "--trials", "3",
                 "--out", str(out)]) == 0
    none, garbage, linked = (result(out, NOTES, k) for k in range(3))
    assert (none["status"], none["score"]) == ("failed", 0.0)
    assert none["reason"] == "no answer: the agent wrote no workspace/answer/ folder"
    assert (garbage["status"], garbage["score"], garbage["passed"]) == ("invalid", 0.0, False)
    assert garbage["reason"].startswith("answer/notes.json") and "\n" not in garbage["reason"]
    assert linked["status"] == "invalid" and "not a regular file" in linked["reason"]
    assert not (out / NOTES / "2" / "answer").exists()


def test_an_empty_audio_answer_folder_is_invalid_naming_the_missing_file(tmp_path):
    out = tmp_path / "out"
    cmd = agent(tmp_path, "mkdir answer\n")
    assert main(["eval", "--agent-cmd", cmd, "--agent-id", "t", "--tasks", AUDIO, "--out", str(out)]) == 0
    rec = result(out, AUDIO)
    assert rec["status"] == "invalid" and "master" in rec["reason"], rec["reason"]


def test_replay_of_answer_folders(tmp_path, oracle_folder):
    truth = truth_notes(tmp_path)
    replay = tmp_path / "replay"
    (replay / AUDIO).mkdir(parents=True)  # DIR/<task>/: one answer for every trial
    for p in oracle_folder.glob("*.flac"):
        (replay / AUDIO / p.name).write_bytes(p.read_bytes())
    (replay / NOTES / "1").mkdir(parents=True)  # DIR/<task>/<trial>/: trial 1 only
    (replay / NOTES / "1" / "notes.json").write_bytes(truth.read_bytes())
    out = tmp_path / "out"
    assert main(["eval", "--agent", f"replay:{replay}", "--tasks", f"{AUDIO},{NOTES}", "--trials", "2",
                 "--out", str(out)]) == 0
    assert [result(out, AUDIO, k)["passed"] for k in range(2)] == [True, True]
    assert result(out, NOTES, 0)["status"] == "failed" and result(out, NOTES, 0)["reason"].startswith("no answer")
    assert (result(out, NOTES, 1)["status"], result(out, NOTES, 1)["score"]) == ("scored", 1.0)
    # an earlier run's folder replays: DIR/<task>/<trial>/answer/
    again = tmp_path / "again"
    assert main(["eval", "--agent", f"replay:{out}", "--tasks", NOTES, "--trials", "2", "--out", str(again)]) == 0
    assert [result(again, NOTES, k)["status"] for k in range(2)] == ["failed", "scored"]


def test_mcp_get_task_on_an_audio_task_names_the_written_inputs_and_refuses_song_tools(tmp_path):
    task = BENCH.task(AUDIO)
    session = open_file_task(AUDIO, bench=BENCH, inputs_dir=tmp_path / "in", log_path=None)
    got = call_tool(session, "get_task", {})
    assert not got.is_error
    assert (got.data["id"], got.data["instruction"]) == (task.id, task.instruction)
    assert [i["name"] for i in got.data["inputs"]] == [i.name for i in task.inputs]
    for item in got.data["inputs"]:
        path = Path(item["path"])
        assert path.is_absolute() and path.stat().st_size > 1000 and path.parent == (tmp_path / "in").resolve()
    assert got.data["hand_back"] == hand_back(task) and got.data["hand_back"][0]["name"] == "master.wav"
    for tool, args in (("get_project", {}), ("apply_ops", {"ops": []}), ("render_and_measure", {})):
        refused = call_tool(session, tool, args)
        assert refused.is_error and "answered with files, not with ops" in refused.data["error"]
    assert open_file_task("mix-darken-keys", bench=BENCH, inputs_dir=None, log_path=None) is None
