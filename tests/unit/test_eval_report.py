"""``overdub report``: summary.json on run directories built by hand, the table, the HTML file, bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from evaldirs import result_json, write_run

from pytest_overdub.cli import main
from pytest_overdub.evaluate import reference
from pytest_overdub.evaluate.stats import wilson_interval

README = Path(__file__).resolve().parents[2] / "README.md"
LIFT, BASS, SWING = "mix-chorus-lift", "write-bassline", "edit-quantize-swing"


def usage(i: int) -> dict:
    return {"input_tokens": 100 * (i + 1), "output_tokens": 10, "cost_usd": 0.01, "turns": 1}


@pytest.fixture
def run(tmp_path):
    """LIFT: 5 trials, 3 successes, one a timeout, one retried twice, every trial with usage; BASS: test split,
    2 of 3 trials done, one of them infra; SWING: only infra."""
    overrides = {(LIFT, i): {"usage": usage(i)} for i in range(5)}
    overrides[(LIFT, 3)] = {"usage": usage(3), "status": "timeout"}
    overrides[(LIFT, 2)] = {"usage": usage(2), "retries": 2}
    overrides[(BASS, 0)] = {"split": "test"}
    overrides[(BASS, 1)] = {"split": "test", "status": "infra"}
    overrides[(SWING, 0)] = {"status": "infra"}
    return write_run(tmp_path / "run", {LIFT: [1.0, 0.95, 0.5, 0.0, 1.0], BASS: [0.92, None], SWING: [None]},
                     trials=5, overrides=overrides)


def report(*args: str) -> int:
    return main(["report", *map(str, args)])


def summary_of(run: Path, capsys) -> dict:
    assert report(run, "--json", "--no-reference") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((run / "summary.json").read_text())
    return printed


def test_summary_per_task_figures_by_hand(run, capsys):
    t = summary_of(run, capsys)["tasks"][LIFT]
    assert (t["n"], t["successes"], t["pass_at_1"]) == (5, 3, 0.6)
    assert t["wilson_95"] == pytest.approx(list(wilson_interval(3, 5)), abs=1e-6)
    assert t["wilson_95"] == pytest.approx([0.2307, 0.8824], abs=1e-4)
    assert t["pass_hat_k"] == {"1": 0.6, "2": 0.3, "3": 0.1, "4": 0.0, "5": 0.0}
    assert t["mean_score"] == 0.69
    # deviations .31 .26 -.19 -.69 .31: sum of squares .772, / 4, sqrt
    assert t["spread"] == {"std": 0.439318, "min": 0.0, "max": 1.0}
    assert t["high_variance"] is True
    assert (t["retries"], t["timeouts"], t["failed"], t["invalid"], t["infra"]) == (2, 1, 0, 0, 0)
    assert (t["seconds_per_trial"], t["seconds_per_success"]) == (10.0, round(50 / 3, 6))
    assert (t["tokens_per_trial"], t["tokens_per_success"]) == (310.0, round(1550 / 3, 6))
    assert (t["cost_usd_per_trial"], t["cost_usd_per_success"]) == (0.01, round(0.05 / 3, 6))
    assert (t["family"], t["split"]) == ("mix", "train")


def test_infra_trials_are_not_counted_and_missing_trials_are_listed(run, capsys):
    s = summary_of(run, capsys)
    bass, swing = s["tasks"][BASS], s["tasks"][SWING]
    assert (bass["n"], bass["successes"], bass["infra"], bass["high_variance"]) == (1, 1, 1, False)
    assert bass["spread"]["std"] is None  # one trial has no sample standard deviation
    assert bass["tokens_per_trial"] is None  # no usage reported
    assert (swing["n"], swing["pass_at_1"], swing["wilson_95"], swing["pass_hat_k"], swing["mean_score"]) == \
        (0, None, None, {}, None)
    assert s["incomplete"] == {BASS: 3, SWING: 4}


def test_overall_is_the_mean_over_tasks_and_groups_keep_apart(run, capsys):
    s = summary_of(run, capsys)
    o = s["overall"]
    assert (o["tasks"], o["trials"], o["successes"]) == (2, 6, 4)  # SWING has no counted trial
    assert o["pass_at_1"] == pytest.approx((0.6 + 1.0) / 2)
    assert o["mean_score"] == pytest.approx((0.69 + 0.92) / 2)
    assert o["pass_hat_k"] == {"1": pytest.approx(0.8)}  # k up to the smallest n
    assert o["spread"]["std"] == 0.439318  # the mean over tasks that have one
    assert (o["retries"], o["timeouts"], o["infra"], o["high_variance_tasks"]) == (2, 1, 2, [LIFT])
    lo, hi = o["mean_score_ci95"]
    assert 0.0 <= lo < o["mean_score"] < hi <= 1.0
    assert set(s["splits"]) == {"train", "test"}
    assert s["splits"]["test"]["mean_score"] == 0.92 and s["splits"]["train"]["mean_score"] == 0.69
    assert set(s["families"]) == {"mix", "writing", "editing"}
    assert s["families"]["editing"]["tasks"] == 0 and s["families"]["editing"]["mean_score"] is None


def test_summary_is_the_same_every_time(run, capsys):
    summary_of(run, capsys)
    first = (run / "summary.json").read_bytes()
    summary_of(run, capsys)
    assert (run / "summary.json").read_bytes() == first


def test_every_summary_field_is_documented_in_the_readme(run, capsys):
    s = summary_of(run, capsys)
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### summary.json"):]
    section = section[:section.index("\n## ")] if "\n## " in section else section
    names = set(s) | set(s["run"]) | set(s["tasks"][LIFT]) | set(s["overall"]) | set(s["tasks"][LIFT]["spread"])
    undocumented = sorted(n for n in names if f"`{n}`" not in section)
    assert undocumented == []


def test_the_table(run, capsys):
    assert report(run, "--no-reference") == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith(LIFT))
    assert row.split()[3:7] == ["5", "3", "0.60", "[0.23,"]
    assert "HV" in row and "2r" in row and "1t" in row
    assert re.search(r"^overall: 2 tasks, 6 trials, 4 successes; pass@1 0\.800", out, re.M)
    assert f"incomplete: {SWING} (4 trials missing), {BASS} (3 trials missing)" in out
    assert "split test: 1 task," in out


def test_html_is_one_file_with_inline_svg_figures(run, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert report(run, "--no-reference", "--html", out) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 3  # pass rates; LIFT's, BASS's checks
    # nothing loaded from elsewhere: SVG's own references point inside the page (url(#id), href="#id")
    assert not re.search(r"<(script|link|img|iframe)\b|\bsrc=|url\((?!#)|href=\"(?!#)|@import", page)
    assert sorted(tmp_path.iterdir()) == sorted([run, out])  # one file, no figure files beside it
    assert report(run, "--no-reference", "--html", out) == 0
    assert out.read_text(encoding="utf-8") == page  # the same run, the same file


def test_html_without_matplotlib_is_one_line(run, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    assert report(run, "--no-reference", "--html", tmp_path / "r.html") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pytest-overdub[report]" in err
    assert not (tmp_path / "r.html").exists()


def test_the_report_modules_load_no_matplotlib():
    code = "import sys, pytest_overdub.evaluate.report; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("break_it, named", [
    (lambda r: (r / "run.json").unlink(), "run.json: no such file"),
    (lambda r: (r / "run.json").write_text("{"), "run.json: not valid JSON"),
    (lambda r: (r / LIFT / "2" / "result.json").write_text('{"task": '), f"{LIFT}/2/result.json: not valid JSON"),
    (lambda r: _edit(r / LIFT / "1" / "result.json", score="high"),
     f"{LIFT}/1/result.json: score = \"high\": expected a number in [0.0, 1.0]"),
    (lambda r: _edit(r / LIFT / "1" / "result.json", status="done"), f"{LIFT}/1/result.json: status = \"done\""),
    (lambda r: _edit(r / LIFT / "1" / "result.json", trial=4), f"{LIFT}/1/result.json: task, trial"),
    (lambda r: _edit(r / LIFT / "2" / "result.json", passed=True), f"{LIFT}/2/result.json: passed = true with score 0.5"),
    (lambda r: _edit(r / LIFT / "3" / "result.json", score=0.95, passed=True),
     f"{LIFT}/3/result.json: status 'timeout' with score = 0.95"),
    (lambda r: _edit(r / LIFT / "1" / "result.json", checks=[{"id": "x"}]),
     f"{LIFT}/1/result.json: checks[0].target: missing"),
])
def test_bad_run_directory_is_one_line_naming_the_file(run, capsys, break_it, named):
    break_it(run)
    assert report(run, "--no-reference") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err, err


def test_regrade_is_not_combined_with_html(run, tmp_path, capsys):
    assert report(run, "--regrade", "--html", tmp_path / "r.html") == 2
    assert "--regrade rescores the stored answers" in capsys.readouterr().err


def test_a_summary_that_cannot_be_written_comes_after_the_report(run, capsys):
    (run / "summary.json").mkdir()  # unwritable even for root
    assert report(run, "--no-reference") == 2
    out, err = capsys.readouterr()
    assert out.startswith("agent test-agent:")
    assert err.count("\n") == 1 and "summary.json: cannot write" in err
    assert not (run / "summary.json.tmp").exists()


def test_not_a_directory(tmp_path, capsys):
    assert report(tmp_path / "nowhere") == 2
    assert "nowhere: not a directory" in capsys.readouterr().err


def _edit(path: Path, **fields) -> None:
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))


def test_bench_reference_is_scored_once_per_grader(tmp_path, monkeypatch):
    run = write_run(tmp_path / "run", {SWING: [1.0]})
    first = reference.bench_reference(run, [SWING, "no-such-task"])
    assert first["no-such-task"] is None
    assert (first[SWING]["oracle"], first[SWING]["baseline"]) == (1.0, 0.0)  # the bench's own check holds these

    def refuse(*a):
        raise AssertionError("scored again")

    monkeypatch.setattr(reference, "_score", refuse)
    assert reference.bench_reference(run, [SWING]) == {SWING: first[SWING]}
    cache = json.loads((run / "bench_reference.json").read_text())
    cache["tasks"][SWING]["grader_hash"] = "an older grader"
    (run / "bench_reference.json").write_text(json.dumps(cache))
    with pytest.raises(AssertionError, match="scored again"):
        reference.bench_reference(run, [SWING])


def test_reference_scores_sit_beside_the_agents(tmp_path, capsys):
    run = write_run(tmp_path / "run", {SWING: [0.5, 1.0]})
    assert report(run) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(SWING))
    assert row.split()[-3:] == ["1.000", "0.000", "HV"]
    t = json.loads((run / "summary.json").read_text())["tasks"][SWING]
    assert (t["oracle_score"], t["baseline_score"]) == (1.0, 0.0)


def test_result_json_helper_matches_the_documented_fields():
    # the hand-built result.json carries every field of the documented layout
    fields = set(result_json(LIFT, 0, 1.0))
    assert fields == {"task", "trial", "family", "split", "status", "reason", "exit_code", "seconds",
                      "answer_source", "answer_sha256", "score", "passed", "pass_line", "checks", "gates_failed",
                      "warnings", "tool_calls", "usage", "retries", "retry_reasons", "bench_version", "grader_hash"}
