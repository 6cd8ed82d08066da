"""``overdub report OUT --regrade``: rescore every stored answer with the installed bench.

The answer that was scored is ``OUT/<task>/<trial>/answer.json`` (the runner's copy), else the file its
``answer_source`` names (``answer.json`` or ``calls.json``) in the trial folder; a file task's answer is
the folder ``answer/`` (``answer_source`` ``"answer/"``), rescored as the trial scored it; it is read as a submission (:func:`~pytest_overdub.song.submission.load_submission`) and scored on the installed
task (:func:`~pytest_overdub.bench.tasks.score_task`). Only ``scored`` and ``invalid`` trials are
regraded: a ``failed`` or ``timeout`` trial scored 0 because of the agent, not the grader. An answer that
no longer reads as a submission, or whose ops are refused, scores 0 (status ``invalid``); an answer whose
sha256 is not the ``answer_sha256`` recorded is flagged (it changed after it was scored). A verdict is ``passed`` (score at or over
the trial's pass line); every verdict that changed is listed with its score change, and every task whose
grader hash (:func:`~pytest_overdub.bench.tasks.grader_hash`) differs from the one in ``run.json``.
Nothing in OUT is rewritten: the run stays the record of what was scored then.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
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
        path = _answer_path(trial)
        if trial.status not in ("scored", "invalid") or (path is None and trial.answer_source is None):
            continue
        name = f"{trial.task}/{trial.trial}"
        if trial.task not in tasks:
            skipped.append({"trial": name, "why": "the installed bench has no such task"})
            continue
        if path is None:
            names = "answer/" if trial.answer_source == "answer/" else \
                " and ".join(dict.fromkeys(("answer.json", trial.answer_source)))
            skipped.append({"trial": name, "why": f"{names} missing"})
            continue
        row = _rescore(trial, path, tasks[trial.task], bench)
        if row["passed_after"] != row["passed_before"]:
            verdicts.append(row)
        elif abs(row["score_after"] - row["score_before"]) > SCORE_TOLERANCE or row["answer_changed"]:
            scores.append(row)
        else:
            unchanged += 1
    stored = run.meta.get("grader_hashes", {})
    installed = {tid: grader_hash(task) for tid, task in tasks.items()}
    return {"regraded": len(verdicts) + len(scores) + unchanged, "verdicts_changed": verdicts,
            "scores_changed": scores, "unchanged": unchanged, "not_regraded": skipped,
            "grader_hash_differs": {tid: {"run": stored.get(tid), "installed": h}
                                    for tid, h in installed.items() if stored.get(tid) != h}}


def _answer_path(trial: Trial) -> Path | None:
    if trial.answer_source == "answer/":  # a file task's answer folder
        return trial.folder / "answer" if (trial.folder / "answer").is_dir() else None
    for name in ("answer.json", trial.answer_source):
        if name is not None and (trial.folder / name).is_file():
            return trial.folder / name
    return None


def _rescore(trial: Trial, path: Path, task: Any, bench: Any) -> dict[str, Any]:
    from ..bench.tasks import score_task
    from ..song.submission import load_submission

    if path.is_dir():
        status, score, reason, sha = _rescore_folder(path, task, bench)
        return _row(trial, path, status, score, reason, sha)
    try:
        sub = load_submission(path)
    except OverdubError as exc:
        status, score, reason, sha = "invalid", 0.0, str(exc), _sha256(path)
    else:
        result = score_task(task, sub, bench=bench)
        status = "invalid" if result.error else "scored"  # refused ops: the runner's "invalid" too
        score, reason, sha = (0.0 if result.error else result.score), result.error, sub.sha256
    return _row(trial, path, status, score, reason, sha)


def _rescore_folder(path: Path, task: Any, bench: Any) -> tuple[str, float, str | None, str]:
    """A file task's stored ``answer/`` folder, scored as the trial scored it."""
    from .files import folder_sha256, score_folder

    sha = folder_sha256(path)
    try:
        result = score_folder(task, path, bench=bench)
    except OverdubError as exc:
        return "invalid", 0.0, str(exc), sha
    return ("invalid", 0.0, result.error, sha) if result.error else ("scored", result.score, None, sha)


def _row(trial: Trial, path: Path, status: str, score: float, reason: str | None,
         sha: str | None) -> dict[str, Any]:
    return {"trial": f"{trial.task}/{trial.trial}", "answer": path.name, "status_before": trial.status,
            "status_after": status, "score_before": trial.score, "score_after": score,
            "passed_before": bool(trial.passed), "passed_after": score >= trial.pass_line, "reason": reason,
            "answer_changed": trial.answer_sha256 is not None and sha != trial.answer_sha256}


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def regrade_text(r: dict[str, Any]) -> str:
    lines = [f"regraded {r['regraded']} stored answers with the installed bench: "
             f"{len(r['verdicts_changed'])} verdicts changed, {len(r['scores_changed'])} other scores or answers changed, "
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
    if row["answer_changed"]:
        text += f"; {row['answer']} is not the answer that was scored (its sha256 differs from result.json's)"
    return text + (f": {row['reason']}" if row["reason"] else "")


def _verdict(passed: bool) -> str:
    return "passed" if passed else "failed"
