"""``overdub compare A B`` on runs built by hand: a clear winner, a run against itself, a mixed result."""

from __future__ import annotations

import json

import pytest
from evaldirs import write_run

from pytest_overdub.cli import main
from pytest_overdub.evaluate.compare import verdict

TASKS = ["mix-chorus-lift", "mix-darken-keys", "mix-hook-in-front", "write-bassline", "write-drum-groove",
         "write-counter-melody", "edit-quantize-swing", "edit-chorus-up-a-step", "device-dotted-echo",
         "device-rumble-filter"]


def scores(base: float, step: float = 0.01, trials: int = 3) -> dict[str, list[float]]:
    """Every task: ``trials`` scores from ``base`` (different per task and trial, in [0, 1])."""
    return {t: [round(min(1.0, base + step * (i + j)), 3) for j in range(trials)] for i, t in enumerate(TASKS)}


def compare(a, b, capsys, *more) -> tuple[int, str]:
    code = main(["compare", str(a), str(b), *more])
    return code, capsys.readouterr().out


def test_a_clearly_better(tmp_path, capsys):
    a = write_run(tmp_path / "a", scores(0.6), agent="good")
    b = write_run(tmp_path / "b", scores(0.3), agent="worse")
    code, out = compare(a, b, capsys)
    assert code == 0
    assert out.splitlines()[-1] == "verdict: A better"
    assert "A - B = +0.300, 95% CI [+0.300, +0.300]" in out  # every pair differs by exactly 0.3
    assert "A higher on 10, B higher on 0, 0 tied; p = 0.001953" in out  # 2 / 2^10
    code, out = compare(b, a, capsys)
    assert out.splitlines()[-1] == "verdict: B better"


def test_a_run_against_itself(tmp_path, capsys):
    a = write_run(tmp_path / "a", scores(0.2, step=0.08))
    code, out = compare(a, a, capsys, "--json")
    r = json.loads(out)
    assert (code, r["verdict"]) == (0, "no clear winner")
    assert r["overall"]["mean_score_diff_ci95"] == [0.0, 0.0]
    assert r["overall"]["sign_test"] == {"p": 1.0, "a_higher": 0, "b_higher": 0, "ties": 10}


def test_the_same_scores_in_another_trial_order_are_ties(tmp_path, capsys):
    a = write_run(tmp_path / "a", {t: [0.1, 0.2, 0.3] for t in TASKS})  # summed: 0.6000000000000001
    b = write_run(tmp_path / "b", {t: [0.3, 0.2, 0.1] for t in TASKS})  # summed: 0.6
    r = json.loads(compare(a, b, capsys, "--json")[1])
    assert r["overall"]["sign_test"]["ties"] == 10 and r["verdict"] == "no clear winner"


def test_mixed_results_are_no_clear_winner(tmp_path, capsys):
    # A much better on 2 tasks, slightly worse on the other 8: the mean favours A, the tasks favour B.
    a_scores = scores(0.5)
    b_scores = {t: [round(s + 0.02, 3) for s in v] for t, v in a_scores.items()}
    for t in TASKS[:2]:
        a_scores[t] = [1.0, 1.0, 1.0]
    a = write_run(tmp_path / "a", a_scores)
    b = write_run(tmp_path / "b", b_scores)
    r = json.loads(compare(a, b, capsys, "--json")[1])
    assert r["overall"]["mean_score_diff"] > 0
    assert r["overall"]["sign_test"]["a_higher"] == 2 and r["overall"]["sign_test"]["b_higher"] == 8
    assert r["verdict"] == "no clear winner"


def test_unpaired_trials_are_listed_and_left_out(tmp_path, capsys):
    a = write_run(tmp_path / "a", {t: [0.9, 0.9, 0.9] for t in TASKS[:3]},
                  overrides={(TASKS[0], 1): {"status": "infra"}})
    b = write_run(tmp_path / "b", {t: [0.5, 0.5] for t in TASKS[:4]})
    code, out = compare(a, b, capsys)
    assert "paired: 5 trials on 3 tasks" in out
    assert f"unpaired, only in A: 3 ({TASKS[0]}/2, {TASKS[1]}/2, {TASKS[2]}/2)" in out
    assert f"unpaired, only in B: 2 ({TASKS[3]}/0, {TASKS[3]}/1)" in out
    assert f"unpaired, infra in A: 1 ({TASKS[0]}/1)" in out
    assert out.splitlines()[-1] == "verdict: no clear winner"  # 3 tasks can never reach p < 0.05


def test_different_graders_are_said(tmp_path, capsys):
    a = write_run(tmp_path / "a", {TASKS[0]: [0.5]})
    b = write_run(tmp_path / "b", {TASKS[0]: [0.5]}, grader_hashes={TASKS[0]: "another"})
    assert f"grader hash differs between the runs for: {TASKS[0]}" in compare(a, b, capsys)[1]


@pytest.mark.parametrize("ci, a_higher, b_higher, p, want", [
    ((0.01, 0.2), 9, 1, 0.02, "A better"),
    ((-0.2, -0.01), 1, 9, 0.02, "B better"),
    ((-0.01, 0.2), 9, 1, 0.02, "no clear winner"),  # the interval holds 0
    ((0.01, 0.2), 9, 1, 0.06, "no clear winner"),  # the sign test is not significant
    ((0.01, 0.2), 1, 9, 0.02, "no clear winner"),  # the two disagree
])
def test_verdict_rule(ci, a_higher, b_higher, p, want):
    assert verdict(ci, a_higher, b_higher, p) == want


def test_bad_directory_is_one_line(tmp_path, capsys):
    a = write_run(tmp_path / "a", {TASKS[0]: [0.5]})
    assert main(["compare", str(a), str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing: not a directory" in err
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(a), str(tmp_path / "empty")]) == 2
    assert "empty/run.json: no such file" in capsys.readouterr().err


def test_no_common_trial_is_one_line(tmp_path, capsys):
    a = write_run(tmp_path / "a", {TASKS[0]: [0.5]})
    b = write_run(tmp_path / "b", {TASKS[1]: [0.5]})
    assert main(["compare", str(a), str(b)]) == 2
    assert "nothing to pair" in capsys.readouterr().err
