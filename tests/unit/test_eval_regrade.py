"""``overdub report --regrade``: stored answers rescored with the installed bench (edit-quantize-swing's oracle,
a task that scores in a tenth of a second)."""

from __future__ import annotations

import json
import shutil

import pytest
from evaldirs import write_run

from pytest_overdub.bench.tasks import bundled_bench, grader_hash
from pytest_overdub.cli import main

TASK = "edit-quantize-swing"


@pytest.fixture(scope="module")
def bench():
    return bundled_bench()


def make_run(tmp_path, bench, scores, overrides=None):
    run = write_run(tmp_path / "run", {TASK: scores}, grader_hashes={TASK: grader_hash(bench.task(TASK))},
                    overrides={(TASK, i): {"answer_source": "answer.json", **(overrides or {}).get(i, {})}
                               for i in range(len(scores))})
    for i in range(len(scores)):
        shutil.copy(bench.oracle_path(TASK), run / TASK / str(i) / "answer.json")
    return run


def regrade(run, capsys, *more) -> tuple[int, str]:
    code = main(["report", str(run), "--regrade", *more])
    return code, capsys.readouterr().out


def test_an_oracle_answer_that_passed_still_passes(tmp_path, bench, capsys):
    run = make_run(tmp_path, bench, [1.0])
    code, out = regrade(run, capsys)
    assert code == 0
    assert out.splitlines() == [
        "regraded 1 stored answers with the installed bench: 0 verdicts changed, 0 other scores or answers changed, 1 unchanged",
        "grader hash: the same as run.json's for every task"]


def test_a_changed_verdict_is_listed_with_its_score_change(tmp_path, bench, capsys):
    run = make_run(tmp_path, bench, [0.3, 1.0, 0.0, 0.0, 0.0], {2: {"status": "invalid"}, 3: {"status": "failed"},
                                                                4: {"answer_source": "calls.json"}})
    (run / TASK / "2" / "answer.json").write_text('{"not": "a submission"}')
    ops = json.loads(bench.oracle_path(TASK).read_text())["ops"]
    (run / TASK / "4" / "calls.json").write_text(json.dumps({"calls": [{"tool": "apply_ops", "input": {"ops": ops}}]}))
    (run / TASK / "4" / "answer.json").unlink()  # no copy: the MCP log named by answer_source is the answer
    code, out = regrade(run, capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == ("regraded 4 stored answers with the installed bench: 2 verdicts changed, "
                        "0 other scores or answers changed, 2 unchanged")  # trial 3 failed: no answer was scored
    assert lines[1] == f"  VERDICT {TASK}/0: failed -> passed, score 0.300 -> 1.000"
    assert lines[2] == f"  VERDICT {TASK}/4: failed -> passed, score 0.000 -> 1.000"
    data = json.loads(regrade(run, capsys, "--json")[1])
    assert [r["trial"] for r in data["verdicts_changed"]] == [f"{TASK}/0", f"{TASK}/4"]


def test_a_grader_hash_that_differs_is_said(tmp_path, bench, capsys):
    run = make_run(tmp_path, bench, [1.0])
    meta = json.loads((run / "run.json").read_text())
    meta["grader_hashes"][TASK] = "0123456789abcdef"
    (run / "run.json").write_text(json.dumps(meta))
    code, out = regrade(run, capsys)
    assert code == 0  # every verdict held
    assert out.splitlines()[-1] == (f"grader hash differs from run.json's for 1 task(s): {TASK} "
                                    f"(run 0123456789abcdef, installed {grader_hash(bench.task(TASK))})")


def test_an_answer_that_no_longer_reads_scores_zero_and_a_missing_one_is_said(tmp_path, bench, capsys):
    run = make_run(tmp_path, bench, [1.0, 1.0])
    (run / TASK / "0" / "answer.json").write_text("[1, 2]")
    (run / TASK / "1" / "answer.json").unlink()
    code, out = regrade(run, capsys)
    assert code == 1
    assert f"  VERDICT {TASK}/0: passed -> failed, score 1.000 -> 0.000, scored -> invalid: " in out
    assert f"  not regraded {TASK}/1: answer.json missing" in out
    stored = json.loads((run / TASK / "0" / "result.json").read_text())
    assert (stored["status"], stored["score"]) == ("scored", 1.0)  # nothing in the run is rewritten


def test_an_answer_that_changed_after_it_was_scored_is_flagged(tmp_path, bench, capsys):
    run = make_run(tmp_path, bench, [1.0], {0: {"answer_sha256": "0" * 64}})
    code, out = regrade(run, capsys)
    assert code == 0
    assert (f"  score   {TASK}/0: still passed, score 1.000 -> 1.000; answer.json is not the answer that was "
            "scored (its sha256 differs from result.json's)") in out.splitlines()


def test_the_runners_copy_is_preferred_to_the_session_log(tmp_path, bench, capsys):
    run = make_run(tmp_path, bench, [1.0], {0: {"answer_source": "calls.json"}})
    (run / TASK / "0" / "calls.json").write_text('{"calls": "garbage"}')  # answer.json is what was scored
    assert regrade(run, capsys)[0] == 0
