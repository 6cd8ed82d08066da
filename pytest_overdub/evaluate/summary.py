"""``OUT/summary.json``: the statistics of a run, per task and overall (README.md, "summary.json").

Definitions (the README documents every field):

* A trial is *counted* unless its status is ``infra``; ``n`` counts them. A *success* is a counted trial
  whose ``passed`` is true (score at or over the pass line).
* ``pass_at_1`` = c/n with its Wilson 95% interval; ``pass_hat_k`` = C(c,k)/C(n,k) for k = 1..n.
* ``spread``: the sample standard deviation (n − 1 in the denominator; null under 2 trials), min and max
  of the task's scores. ``high_variance``: at least 2 trials and a standard deviation of at least
  :data:`HIGH_VARIANCE_STD` (two trials scoring 0.5 apart, or one failure in five otherwise perfect trials).
* Overall, per family and per split: the mean over tasks (with n > 0) of each per-task figure, sums of
  the counts, and bootstrap 95% intervals (tasks, then trials) of the mean score and of pass@1.
* Oracle runs (a task whose ``given`` is not empty: the agent was handed more than a blind run, such as a
  transcription task's tempo or stems) are never mixed with blind runs: they are left out of overall, the
  families and the splits, and aggregated alone in ``oracle_runs`` (null when the run has none).
* Seconds, tokens and cost: per trial = the mean over counted trials that report it; per success = the
  total over counted trials / successes (null without a success, or when a counted trial did not report
  it). Tokens are input + output.

Floats are rounded to 6 decimals; nothing in the summary depends on the clock or the machine.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .reader import Run, Trial
from .stats import bootstrap_mean_ci, pass_hat_k, seed_from, wilson_interval

FORMAT = "overdub-eval-summary/1"
FILE = "summary.json"
HIGH_VARIANCE_STD = 0.25
COUNTS = ("retries", "failed", "timeouts", "invalid", "infra")
_STATUS_OF = {"failed": "failed", "timeouts": "timeout", "invalid": "invalid", "infra": "infra"}


def build_summary(run: Run, *, reference: dict[str, dict[str, Any] | None] | None = None) -> dict[str, Any]:
    """The summary of ``run``; ``reference`` (task -> oracle and baseline scores) from :mod:`.reference`."""
    reference = reference or {}
    by_task = run.by_task()
    every = {tid: _task(trials, reference.get(tid)) for tid, trials in sorted(by_task.items())}
    blind = {tid: row for tid, row in every.items() if not row["given"]}
    oracle_runs = {tid: row for tid, row in every.items() if row["given"]}
    hashes = run.meta.get("grader_hashes", {})
    return rounded({
        "format": FORMAT,
        "run": {"agent": run.meta.get("agent"), "bench_version": run.meta.get("bench_version"),
                "grader_hash": run.meta.get("grader_hash"), "trials_planned": run.planned_trials,
                "pass_line": run.meta["options"].get("pass_line")},
        "tasks": every,
        "overall": _aggregate(blind, by_task),
        "families": _groups(blind, by_task, "family"),
        "splits": _groups(blind, by_task, "split"),
        "oracle_runs": _aggregate(oracle_runs, by_task) if oracle_runs else None,
        "incomplete": _incomplete(run, by_task),
        "reference_grader_differs": sorted(t for t, ref in reference.items()
                                           if ref and hashes.get(t) not in (None, ref["grader_hash"])),
    })


def _task(trials: list[Trial], ref: dict[str, Any] | None) -> dict[str, Any]:
    counted = [t for t in trials if t.counted]
    n = len(counted)
    c = sum(1 for t in counted if t.passed)
    scores = [t.score for t in counted]
    std = _std(scores)
    out = {
        "family": _one(trials, "family"), "split": _one(trials, "split"), "given": list(_one(trials, "given")),
        "n": n, "successes": c,
        "pass_at_1": c / n if n else None,
        "wilson_95": list(wilson_interval(c, n)) if n else None,
        "pass_hat_k": {str(k): v for k, v in pass_hat_k(c, n).items()},
        "mean_score": sum(scores) / n if n else None,
        "spread": {"std": std, "min": min(scores, default=None), "max": max(scores, default=None)},
        "high_variance": std is not None and std >= HIGH_VARIANCE_STD,
        "retries": sum(t.retries for t in trials),
    }
    out.update({k: sum(1 for t in trials if t.status == s) for k, s in _STATUS_OF.items()})
    out.update(_costs(counted, c))
    out["oracle_score"] = ref["oracle"] if ref else None
    out["baseline_score"] = ref["baseline"] if ref else None
    return out


def _one(trials: list[Trial], field: str) -> str:
    values = sorted({getattr(t, field) for t in trials})
    if len(values) != 1:
        where = ", ".join(str(t.folder / "result.json") for t in trials[:2])
        raise UsageError(f"{where}: {field} differs between trials of task {trials[0].task}: {values}")
    return values[0]


def _std(scores: list[float]) -> float | None:
    if len(scores) < 2:
        return None
    mean = sum(scores) / len(scores)
    return math.sqrt(sum((s - mean) ** 2 for s in scores) / (len(scores) - 1))


def _costs(counted: list[Trial], successes: int) -> dict[str, float | None]:
    figures = {
        "seconds": [t.seconds for t in counted],
        "tokens": [None if t.usage is None else t.usage["input_tokens"] + t.usage["output_tokens"]
                   for t in counted],
        "cost_usd": [None if t.usage is None else t.usage["cost_usd"] for t in counted],
    }
    out: dict[str, float | None] = {}
    for name, values in figures.items():
        known = [v for v in values if v is not None]
        out[f"{name}_per_trial"] = sum(known) / len(known) if known else None
        whole = bool(values) and len(known) == len(values)
        out[f"{name}_per_success"] = sum(known) / successes if whole and successes else None
    return out


def _aggregate(tasks: dict[str, dict[str, Any]], by_task: dict[str, list[Trial]]) -> dict[str, Any]:
    """The figures over a group of tasks: means over tasks with n > 0, sums of counts, bootstrap CIs."""
    ids = [t for t in tasks if tasks[t]["n"] > 0]
    rows = [tasks[t] for t in ids]
    counted = {t: [x for x in by_task[t] if x.counted] for t in ids}
    min_n = min((r["n"] for r in rows), default=0)
    out: dict[str, Any] = {
        "tasks": len(ids), "trials": sum(r["n"] for r in rows), "successes": sum(r["successes"] for r in rows),
        "pass_at_1": _mean(r["pass_at_1"] for r in rows),
        "pass_at_1_ci95": _ci([[float(bool(x.passed)) for x in counted[t]] for t in ids], "pass_at_1", ids),
        "pass_hat_k": {str(k): _mean(r["pass_hat_k"][str(k)] for r in rows) for k in range(1, min_n + 1)},
        "mean_score": _mean(r["mean_score"] for r in rows),
        "mean_score_ci95": _ci([[x.score for x in counted[t]] for t in ids], "mean_score", ids),
        "spread": {k: _mean(r["spread"][k] for r in rows) for k in ("std", "min", "max")},
        "high_variance_tasks": [t for t in ids if tasks[t]["high_variance"]],
    }
    out.update({k: sum(tasks[t][k] for t in tasks) for k in COUNTS})
    every = [x for t in ids for x in counted[t]]
    out.update(_costs(every, out["successes"]))
    out["oracle_score"] = _mean(r["oracle_score"] for r in rows)
    out["baseline_score"] = _mean(r["baseline_score"] for r in rows)
    return out


def _ci(per_task: list[list[float]], what: str, ids: list[str]) -> list[float] | None:
    if not per_task:
        return None
    return list(bootstrap_mean_ci(per_task, seed=seed_from(what, *ids)))


def _mean(values: Any) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _groups(tasks: dict[str, dict[str, Any]], by_task: dict[str, list[Trial]], field: str) -> dict[str, Any]:
    names = sorted({row[field] for row in tasks.values()})
    return {name: _aggregate({t: r for t, r in tasks.items() if r[field] == name}, by_task) for name in names}


def _incomplete(run: Run, by_task: dict[str, list[Trial]]) -> dict[str, int]:
    """Planned tasks with fewer finished trials than planned -> how many are missing."""
    missing = {t: run.planned_trials - len(by_task.get(t, [])) for t in run.planned_tasks}
    return {t: m for t, m in sorted(missing.items()) if m > 0}


def rounded(value: Any) -> Any:
    """``value`` with every float rounded to 6 decimals, through dicts and lists (the summary's and the
    comparison's JSON: the same run always writes the same bytes)."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def write_summary(root: Path, summary: dict[str, Any]) -> Path:
    """Write ``root/summary.json`` (atomically: a reader never sees half a file)."""
    path = root / FILE
    tmp = path.with_name(FILE + ".tmp")
    try:
        tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"{path}: cannot write: {exc.strerror}") from None
    return path
