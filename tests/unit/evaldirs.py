"""Run directories built by hand for the report/compare tests (the layout of README.md, "Evaluating an
agent"): no agent and no runner involved, so the statistics are checked on values chosen by the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FAMILY = {"mix": "mix", "write": "writing", "edit": "editing", "device": "device"}


def run_json(tasks: list[str], trials: int, *, agent: str = "test-agent",
             grader_hashes: dict[str, str] | None = None) -> dict[str, Any]:
    return {"format": "overdub-eval/1", "agent": {"id": agent, "cmd": "true", "replay": None},
            "options": {"tasks": tasks, "trials": trials, "parallel": 1, "seed": 0, "timeout_s": 600,
                        "split": "train", "infra_retries": 2, "env_pass": [], "executor": "local",
                        "pass_line": 0.9},
            "seed": 0, "bench_version": "overdub-bench/1", "grader_hash": "combined",
            "grader_hashes": grader_hashes or {t: "h-" + t for t in tasks},
            "packages": {"pytest-overdub": "0.1.0"}, "machine": {"platform": "test", "python": "3.11", "cpus": 2}}


def result_json(task: str, trial: int, score: float | None, *, status: str = "scored", split: str = "train",
                seconds: float = 10.0, usage: dict | None = None, retries: int = 0,
                checks: list[dict] | None = None, answer_source: str | None = None,
                answer_sha256: str | None = None) -> dict[str, Any]:
    counted = status != "infra"
    if status in ("failed", "timeout", "invalid"):
        score = 0.0
    return {"task": task, "trial": trial, "family": FAMILY[task.split("-")[0]], "split": split,
            "status": status, "reason": None if status == "scored" else f"{status} on purpose",
            "exit_code": 0, "seconds": seconds, "answer_source": answer_source, "answer_sha256": answer_sha256,
            "score": score if counted else None, "passed": (score >= 0.9) if counted else None,
            "pass_line": 0.9,
            "checks": checks if checks is not None else [
                {"id": "lift", "label": "Lift", "value": 1.0 + (score or 0), "target": [1.5, 3.0],
                 "score": score or 0.0, "gate": False, "passed": (score or 0) >= 1.0}],
            "gates_failed": [], "warnings": [], "tool_calls": {}, "usage": usage, "retries": retries,
            "retry_reasons": ["exit 75"] * retries, "bench_version": "overdub-bench/1", "grader_hash": "h-" + task}


def write_run(root: Path, scores: dict[str, list[float | None]], *, trials: int | None = None,
              overrides: dict[tuple[str, int], dict[str, Any]] | None = None, **run_kw: Any) -> Path:
    """``scores``: task -> one score per trial (trial i = list index). ``overrides``: (task, trial) -> keyword
    arguments for :func:`result_json` (status, usage, ...)."""
    root.mkdir(parents=True, exist_ok=True)
    n = trials if trials is not None else max(len(v) for v in scores.values())
    (root / "run.json").write_text(json.dumps(run_json(list(scores), n, **run_kw)), encoding="utf-8")
    for task, values in scores.items():
        for i, score in enumerate(values):
            kw = (overrides or {}).get((task, i), {})
            folder = root / task / str(i)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "result.json").write_text(json.dumps(result_json(task, i, score, **kw)), encoding="utf-8")
    return root
