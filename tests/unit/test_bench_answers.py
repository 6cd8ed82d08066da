"""The bench's answer files: oracles, alternatives, near misses and cheats, found by name and judged."""

import json
import shutil
from pathlib import Path

from pytest_overdub.bench.run import _table, _task_rows
from pytest_overdub.bench.tasks import Bench, bundled_bench
from pytest_overdub.bench.validity import check_alternative, check_bench, check_cheat, stray_answers

SRC = bundled_bench()
QUANT = "edit-quantize-swing"


def _bench(root: Path) -> Bench:
    """A bench with the quantize task, its oracle and near miss, plus an alternative and a cheat."""
    for d in ("tasks", "songs", "oracles", "near_misses"):
        (root / d).mkdir(parents=True)
    shutil.copy(SRC.tasks_dir / f"{QUANT}.json", root / "tasks")
    shutil.copy(SRC.root / "songs" / "loose-groove.json", root / "songs")
    oracle = json.loads(SRC.oracle_path(QUANT).read_text())
    (root / "oracles" / f"{QUANT}.json").write_text(json.dumps(oracle))
    (root / "oracles" / f"{QUANT}.alt-same.json").write_text(json.dumps({**oracle, "why": "the oracle again"}))
    miss = json.loads((SRC.root / "near_misses" / f"{QUANT}.straight.json").read_text())
    (root / "near_misses" / f"{QUANT}.straight.json").write_text(json.dumps(miss))
    (root / "near_misses" / f"{QUANT}.cheat-straight.json").write_text(json.dumps(miss))
    return Bench(root)


def test_answer_files_are_told_apart_by_name(tmp_path):
    bench = _bench(tmp_path)
    o, n = tmp_path / "oracles", tmp_path / "near_misses"
    assert bench.oracle_path(QUANT) == o / f"{QUANT}.json"  # the alternatives share its prefix
    assert bench.alternative_paths(QUANT) == [o / f"{QUANT}.alt-same.json"]
    assert bench.near_miss_paths(QUANT) == [n / f"{QUANT}.straight.json"]  # cheats are not near misses
    assert bench.cheat_paths(QUANT) == [n / f"{QUANT}.cheat-straight.json"]


def test_a_misnamed_answer_file_is_reported_not_skipped(tmp_path):
    bench = _bench(tmp_path)
    assert stray_answers(bench, [QUANT]) == []
    (tmp_path / "oracles" / f"{QUANT}-alt-eq.json").write_text("{}")  # a dash instead of the dot
    (tmp_path / "near_misses" / "edit-quantise-swing.cheat-x.json").write_text("{}")  # no such task
    problems = stray_answers(bench, [QUANT])
    assert len(problems) == 2 and f"{QUANT}-alt-eq.json" in problems[0] and "quantise" in problems[1]
    assert all("not an answer file of any task" in p for p in problems)
    assert set(problems) <= set(check_bench(bench))


def test_an_alternative_must_score_like_an_oracle_and_a_cheat_like_a_near_miss(tmp_path):
    bench = _bench(tmp_path)
    task = bench.task(QUANT)
    alt = check_alternative(task, bench.alternative_paths(QUANT)[0], bench, trusted=True)
    assert (alt.rule, alt.ok, alt.result.score) == ("alt:same", True, 1.0)
    cheat = check_cheat(task, bench.cheat_paths(QUANT)[0], bench, trusted=True)
    assert (cheat.rule, cheat.ok) == ("cheat:straight", True) and cheat.result.score < 0.5
    # the near miss as an alternative fails its rule; the oracle as a cheat fails its rule and names the check
    shutil.copy(bench.cheat_paths(QUANT)[0], tmp_path / "oracles" / f"{QUANT}.alt-straight.json")
    bad_alt = check_alternative(task, tmp_path / "oracles" / f"{QUANT}.alt-straight.json", bench, trusted=True)
    assert not bad_alt.ok and "want >= 0.9" in bad_alt.message
    oracle = json.loads(bench.oracle_path(QUANT).read_text())
    path = tmp_path / "near_misses" / f"{QUANT}.cheat-oracle.json"
    path.write_text(json.dumps({**oracle, "fails": ["tight"]}))
    bad_cheat = check_cheat(task, path, bench, trusted=True)
    assert not bad_cheat.ok and "passes tight which it should fail" in bad_cheat.message
    # a check id the task does not have fails the rule, and the answer is still scored
    path.write_text(json.dumps({**oracle, "fails": ["tight", "tigth"]}))
    typo = check_cheat(task, path, bench, trusted=True)
    assert not typo.ok and typo.result.score == 1.0
    assert typo.message.startswith(f"fails names tigth, not checks of {QUANT} (bass, clean, ")


def test_run_reports_an_unreadable_answer_as_a_failed_rule_and_goes_on(tmp_path):
    bench = _bench(tmp_path)
    (tmp_path / "near_misses" / f"{QUANT}.cheat-no-fails.json").write_text(
        json.dumps({"task": QUANT, "why": "no fails", "ops": []}))
    row = _task_rows(str(bench.root), QUANT, False)
    by = {v["rule"]: v for v in row["verdicts"]}
    assert set(by) == {"oracle", "baseline", "alt:same", "near:straight", "cheat:straight", "cheat:no-fails"}
    assert not by["cheat:no-fails"]["ok"] and by["cheat:no-fails"]["score"] is None
    assert '"fails"' in by["cheat:no-fails"]["message"] and by["cheat:straight"]["ok"]
    text = _table([row])
    assert "error no-fails +1" in text and "<-- cheat:no-fails:" in text


def test_run_table_shows_the_lowest_alternative_and_the_highest_cheat_by_name():
    def v(rule, score):
        return {"rule": rule, "ok": True, "message": "", "score": score}

    verdicts = [v("oracle", 1.0), v("baseline", 0.0), v("alt:eq", 0.95), v("alt:automation", 0.91),
                v("near:fader", 0.2), v("cheat:mute-others", 0.3), v("cheat:master-eq", 0.1)]
    lines = _table([{"task": "mix-a", "family": "mix", "seconds": 0.1, "verdicts": verdicts}]).splitlines()
    assert lines[0].split() == ["task", "oracle", "baseline", "alternatives", "(min)", "near", "misses", "(max)",
                                "cheats", "(max)"]
    assert lines[2].split() == ["mix-a", "1.000", "0.000", "0.910", "automation", "+1", "0.200", "fader",
                                "0.300", "mute-others", "+1"]
    assert lines[-1].split() == ["mean", "1.000", "0.000", "0.930", "over", "2", "0.200", "over", "1",
                                 "0.200", "over", "2"]


def test_a_task_without_two_cheats_and_an_alternative_is_reported(tmp_path):
    from pytest_overdub.bench.validity import adversarial_set

    bench = _bench(tmp_path)
    assert adversarial_set(bench, [QUANT]) == [
        f"{QUANT}: 1 cheat(s) (want at least 2: near_misses/{QUANT}.cheat-<what>.json)"]
    shutil.copy(bench.cheat_paths(QUANT)[0], tmp_path / "near_misses" / f"{QUANT}.cheat-again.json")
    (tmp_path / "oracles" / f"{QUANT}.alt-same.json").unlink()
    assert adversarial_set(bench, [QUANT]) == [
        f"{QUANT}: 0 alternative answer(s) (want at least 1: oracles/{QUANT}.alt-<what>.json)"]
    assert adversarial_set(bench, [QUANT])[0] in check_bench(bench)  # a bench rule


def test_every_bundled_task_has_two_cheats_and_an_alternative():
    from pytest_overdub.bench.validity import adversarial_set

    assert adversarial_set(SRC, SRC.task_ids()) == []
