"""``overdub eval``'s choices before anything runs: which tasks, which split, a resumable run, one-line errors;
and what it reads from an agent's folder (usage lines, tool calls)."""

from __future__ import annotations

import json
import shutil

import pytest

from pytest_overdub.bench.tasks import Bench, bundled_bench
from pytest_overdub.cli import main
from pytest_overdub.errors import OverdubError, TaskError
from pytest_overdub.evaluate import outputs
from pytest_overdub.evaluate.runner import select_tasks

BENCH = bundled_bench()
DRUMS = "write-drum-groove"


def _err(capsys, *argv: str) -> str:
    assert main(["eval", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.fixture
def split_bench(tmp_path) -> Bench:
    """The bench's four writing tasks, write-bassline held out (split test)."""
    for name in ("tasks", "songs"):
        (tmp_path / name).mkdir()
    for tid in BENCH.task_ids():
        task = BENCH.task(tid)
        if task.family != "writing":
            continue
        data = json.loads((BENCH.tasks_dir / f"{tid}.json").read_text())
        if tid == "write-bassline":
            data["split"] = "test"
        (tmp_path / "tasks" / f"{tid}.json").write_text(json.dumps(data))
        shutil.copy(BENCH.root / "songs" / f"{task.song}.json", tmp_path / "songs")
    return Bench(tmp_path)


def test_tasks_by_id_family_or_all_within_the_split(split_bench):
    train = ("write-counter-melody", "write-drum-groove", "write-harmonize-hook")
    assert select_tasks(split_bench, "all", split="train") == train
    assert select_tasks(split_bench, "writing", split="test") == ("write-bassline",)
    assert select_tasks(split_bench, None, split="all") == ("write-bassline", *train)
    assert select_tasks(split_bench, "write-drum-groove, write-bassline", split="all") == \
        ("write-bassline", "write-drum-groove")
    with pytest.raises(OverdubError, match="write-bassline not in the train split; add --split all"):
        select_tasks(split_bench, "write-drum-groove,write-bassline", split="train")
    with pytest.raises(OverdubError, match="no task selected"):
        select_tasks(split_bench, "mix", split="all")
    with pytest.raises(TaskError, match="write-drum-groove"):  # an unknown id lists the known ones
        select_tasks(split_bench, "write-drum-grove", split="train")


def test_bad_options_are_one_line_each(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OVERDUB_SURELY_UNSET", raising=False)
    out = str(tmp_path / "run")
    assert "--agent-cmd needs --agent-id" in _err(capsys, "--agent-cmd", "true", "--tasks", DRUMS, "--out", out)
    assert "HOME: the eval sets it" in _err(capsys, "--agent-cmd", "true", "--agent-id", "a", "--env-pass", "HOME")
    assert "OVERDUB_SURELY_UNSET: not set" in _err(capsys, "--agent-cmd", "true", "--agent-id", "a",
                                                   "--env-pass", "OVERDUB_SURELY_UNSET")
    assert f"no folder {tmp_path / 'nope'}" in _err(capsys, "--agent", f"replay:{tmp_path / 'nope'}")
    assert "want replay:DIR" in _err(capsys, "--agent", "human")
    assert "want a label" in _err(capsys, "--agent-cmd", "true", "--agent-id", "../up")
    assert "not in the test split" in _err(capsys, "--agent-cmd", "true", "--agent-id", "a", "--tasks", DRUMS,
                                           "--split", "test", "--out", out)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    assert "not empty and holds no run.json" in _err(capsys, "--agent-cmd", "true", "--agent-id", "a",
                                                     "--tasks", DRUMS, "--out", str(tmp_path / "busy"))


def test_a_resumed_run_must_be_the_same_run(tmp_path, capsys):
    out = str(tmp_path / "run")
    base = ["--agent-cmd", "true", "--agent-id", "idle", "--tasks", DRUMS, "--out", out]
    assert main(["eval", *base]) == 0  # the agent writes nothing: one failed trial, nothing scored
    capsys.readouterr()
    assert main(["eval", *base, "--parallel", "2"]) == 0  # more workers: the same run, nothing left to do
    assert "this run was started with --trials = 1, not 2" in _err(capsys, *base, "--trials", "2")
    assert 'agent.cmd = "true", not "false"' in _err(capsys, *base[:1], "false", *base[2:])
    run_json = tmp_path / "run" / "run.json"
    data = json.loads(run_json.read_text())
    run_json.write_text(json.dumps({**data, "grader_hash": "0" * 16}))
    assert "the grader changed since this run started" in _err(capsys, *base)


def test_usage_lines_are_summed_and_a_bad_line_is_skipped_by_name(tmp_path):
    lines = ['{"input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.01}', "",
             '{"input_tokens": 500, "cost_usd": 0.002}', "not json", '{"output_tokens": true}',
             '{"cost_usd": -1}', '{"input_tokens": 1.5}', "[1]", '{"cost_usd": Infinity}']
    (tmp_path / "usage.jsonl").write_text("\n".join(lines) + "\n")
    used, warnings = outputs.usage(tmp_path)
    assert used == {"input_tokens": 1500, "output_tokens": 200, "cost_usd": 0.012, "turns": 2}
    assert [w.split(":")[0] for w in warnings] == [f"usage.jsonl line {n}" for n in (4, 5, 6, 7, 8, 9)]
    assert outputs.usage(tmp_path / "nowhere") == (None, [])


def test_tool_calls_are_counted_per_tool_and_a_broken_log_is_a_warning(tmp_path):
    calls = [{"tool": "apply_ops", "input": {}}, {"name": "undo", "arguments": "{}"}, {"tool": "apply_ops"}]
    (tmp_path / "calls.json").write_text(json.dumps({"calls": calls}))
    assert outputs.tool_calls(tmp_path) == ({"apply_ops": 2, "undo": 1}, [])
    (tmp_path / "calls.json").write_text('{"calls": 3}')
    counts, warnings = outputs.tool_calls(tmp_path)
    assert counts is None and warnings[0].startswith("calls.json: tool calls not counted")


def test_a_run_folder_in_use_by_another_eval_is_refused(tmp_path, capsys):
    import fcntl

    base = ["--agent-cmd", "true", "--agent-id", "idle", "--tasks", DRUMS, "--out", str(tmp_path / "run")]
    assert main(["eval", *base]) == 0
    capsys.readouterr()
    with open(tmp_path / "run" / "run.json", "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running eval holds it
        assert "another overdub eval is running this run" in _err(capsys, *base)
    assert main(["eval", *base]) == 0
