"""``overdub report OUT --regrade``: rescore every stored answer with the installed bench.

An answer is stored as ``OUT/<task>/<trial>/<answer_source>`` (``answer.json`` or ``calls.json``); it is
read as a submission (:func:`~pytest_overdub.song.submission.load_submission`) and scored on the installed
task (:func:`~pytest_overdub.bench.tasks.score_task`). Only ``scored`` and ``invalid`` trials are
regraded: a ``failed`` or ``timeout`` trial scored 0 because of the agent, not the grader. An answer that
no longer reads as a submission scores 0 (status ``invalid``). A verdict is ``passed`` (score at or over
the trial's pass line); every verdict that changed is listed with its score change, and every task whose
grader hash (:func:`~pytest_overdub.bench.tasks.grader_hash`) differs from the one in ``run.json``.
Nothing in OUT is rewritten: the run stays the record of what was scored then.
"""

from __future__ import annotations

from typing import Any

from ..errors import OverdubError
from .reader import Run, Trial

#: Score changes smaller than this are rounding, not a change (task scores are rounded to 3 decimals).
SCORE_TOLERANCE = 5e-4


def regrade(run: Run) -> dict[str, Any]:
    """The regrade of ``run``: changed verdicts, changed scores, what could not be regraded, grader hashes."""
    from ..bench.tasks import bundled_bench, grader_hash

    bench = bundled_bench()
    known = set(bench.task_ids())
    tasks = {tid: bench.task(tid) for tid in sorted({t.task for t in run.trials}) if tid in known}
    verdicts, scores, skipped, unchanged = [], [], [], 0
    for trial in run.trials:
        if trial.status not in ("scored", "invalid") or trial.answer_source is None:
            continue
        name = f"{trial.task}/{trial.trial}"
        if trial.task not in tasks:
            skipped.append({"trial": name, "why": "the installed bench has no such task"})
            continue
        if not (trial.folder / trial.answer_source).is_file():
            skipped.append({"trial": name, "why": f"{trial.answer_source} is missing"})
            continue
        row = _rescore(trial, tasks[trial.task], bench)
        if row["passed_after"] != row["passed_before"]:
            verdicts.append(row)
        elif abs(row["score_after"] - row["score_before"]) > SCORE_TOLERANCE:
            scores.append(row)
        else:
            unchanged += 1
    stored = run.meta.get("grader_hashes", {})
    installed = {tid: grader_hash(task) for tid, task in tasks.items()}
    return {"regraded": len(verdicts) + len(scores) + unchanged, "verdicts_changed": verdicts,
            "scores_changed": scores, "unchanged": unchanged, "not_regraded": skipped,
            "grader_hash_differs": {tid: {"run": stored.get(tid), "installed": h}
                                    for tid, h in installed.items() if stored.get(tid) != h}}


def _rescore(trial: Trial, task: Any, bench: Any) -> dict[str, Any]:
    from ..bench.tasks import score_task
    from ..song.submission import load_submission

    path = trial.folder / trial.answer_source
    try:
        sub = load_submission(path)
    except OverdubError as exc:
        status, score, reason = "invalid", 0.0, str(exc)
    else:
        result = score_task(task, sub, bench=bench)
        status, score, reason = "scored", result.score, result.error
    return {"trial": f"{trial.task}/{trial.trial}", "status_before": trial.status, "status_after": status,
            "score_before": trial.score, "score_after": score, "passed_before": bool(trial.passed),
            "passed_after": score >= trial.pass_line, "reason": reason}


def regrade_text(r: dict[str, Any]) -> str:
    lines = [f"regraded {r['regraded']} stored answers with the installed bench: "
             f"{len(r['verdicts_changed'])} verdicts changed, {len(r['scores_changed'])} other scores changed, "
             f"{r['unchanged']} unchanged"]
    for row in r["verdicts_changed"]:
        lines.append(f"  VERDICT {row['trial']}: {_verdict(row['passed_before'])} -> "
                     f"{_verdict(row['passed_after'])}, {_change(row)}")
    for row in r["scores_changed"]:
        lines.append(f"  score   {row['trial']}: still {_verdict(row['passed_after'])}, {_change(row)}")
    for row in r["not_regraded"]:
        lines.append(f"  not regraded {row['trial']}: {row['why']}")
    if r["grader_hash_differs"]:
        lines.append(f"grader hash differs from run.json's for {len(r['grader_hash_differs'])} task(s): "
                     + ", ".join(f"{t} (run {h['run']}, installed {h['installed']})"
                                 for t, h in r["grader_hash_differs"].items()))
    else:
        lines.append("grader hash: the same as run.json's for every task")
    return "\n".join(lines)


def _change(row: dict[str, Any]) -> str:
    text = f"score {row['score_before']:.3f} -> {row['score_after']:.3f}"
    if row["status_after"] != row["status_before"]:
        text += f", {row['status_before']} -> {row['status_after']}"
    return text + (f": {row['reason']}" if row["reason"] else "")


def _verdict(passed: bool) -> str:
    return "passed" if passed else "failed"
