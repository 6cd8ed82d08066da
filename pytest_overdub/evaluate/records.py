"""The run folder's records: ``run.json`` (the run) and ``<task>/<trial>/result.json`` (one trial).

Layout and field names are the contract between ``overdub eval``, which writes them, and ``overdub
report``/``compare``, which read them (README.md, "Evaluating an agent"). Every file is written atomically
(a temporary file in the same folder, then ``os.replace``), so a run killed at any moment leaves either
the whole record or none: a trial folder holding a ``result.json`` is finished.

Statuses: ``scored`` (an answer was scored, its score may be 0), ``failed`` (the agent exited non-zero,
not 75, or left no answer), ``timeout``, ``invalid`` (an answer that could not be read as a submission, or
whose ops were refused: score 0), ``infra`` (exit 75 on every attempt: not the agent's failure, not
counted). ``score`` is 0.0 and ``passed`` false for failed, timeout and invalid; null for infra.
``given``: what an oracle run handed the agent besides its inputs (a transcription task's ``given``:
``tempo``, ``stems``, ``tracks``); ``[]`` for a blind run, which every other task is.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

FORMAT = "overdub-eval/1"
STATUSES = ("scored", "failed", "timeout", "invalid", "infra")
RESULT_FIELDS = ("task", "trial", "family", "split", "given", "status", "reason", "exit_code", "seconds",
                 "answer_source", "answer_sha256", "score", "passed", "pass_line", "checks", "gates_failed",
                 "warnings", "tool_calls", "usage", "retries", "retry_reasons", "bench_version", "grader_hash")
#: The distributions whose versions run.json records.
PACKAGES = ("pytest-overdub", "numpy", "scipy", "numba", "pydantic", "soundfile")


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically; NaN anywhere is a bug and raises."""
    text = json.dumps(data, indent=2, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def combined_hash(hashes: list[str]) -> str:
    """One hash over per-task grader hashes (sha256 of the sorted hashes, one a line; 16 hex digits), the
    same as the pytest report's ``grader_hash``."""
    return hashlib.sha256("\n".join(sorted(hashes)).encode()).hexdigest()[:16]


def package_versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = __version__ if name == "pytest-overdub" else None
    return out


def run_record(*, agent: dict[str, Any], options: dict[str, Any], grader_hashes: dict[str, str]) -> dict[str, Any]:
    """run.json: the agent, the options, the bench version and grader hashes, packages, machine."""
    from .. import BENCH_VERSION

    return {"format": FORMAT, "agent": agent, "options": options, "seed": options["seed"],
            "bench_version": BENCH_VERSION, "grader_hash": combined_hash(list(grader_hashes.values())),
            "grader_hashes": dict(sorted(grader_hashes.items())), "packages": package_versions(),
            "machine": {"platform": platform.platform(), "python": platform.python_version(),
                        "cpus": os.cpu_count()}}


def result_record(*, task: Any, trial: int, pass_line: float, grader_hash: str, status: str,
                  reason: str | None = None, scored: Any = None, **fields: Any) -> dict[str, Any]:
    """result.json for one trial: every field of :data:`RESULT_FIELDS`, null where it does not apply.

    ``scored`` is the TaskResult when the answer was scored; ``fields`` fills the rest (exit_code, seconds,
    answer_source, answer_sha256, tool_calls, usage, retries, retry_reasons, warnings)."""
    from .. import BENCH_VERSION

    assert status in STATUSES, status
    rec: dict[str, Any] = {name: None for name in RESULT_FIELDS}
    rec.update(task=task.id, trial=trial, family=task.family, split=task.split,
               given=list(getattr(task, "given", ())), status=status, reason=reason,
               pass_line=pass_line, checks=[], gates_failed=[], warnings=[], retries=0, retry_reasons=[],
               bench_version=BENCH_VERSION, grader_hash=grader_hash)
    unknown = set(fields) - set(RESULT_FIELDS)
    assert not unknown, unknown
    rec.update(fields)
    if scored is not None:
        rec.update(score=scored.score, passed=scored.score >= pass_line, checks=check_records(scored),
                   gates_failed=[c.id for c in scored.checks if c.gate and c.score < 1.0],
                   warnings=list(scored.warnings) + list(fields.get("warnings") or []),
                   grader_hash=scored.grader_hash, bench_version=scored.bench_version)
    if status in ("failed", "timeout", "invalid"):
        rec.update(score=0.0, passed=False)
    return rec


def check_records(scored: Any) -> list[dict[str, Any]]:
    """Each check's id, label, value (null when not finite), target, score, gate and passed (score 1)."""
    from ..bench.report import json_number

    return [{"id": c.id, "label": c.label, "value": json_number(c.value), "target": list(c.target),
             "score": c.score, "gate": c.gate, "passed": c.score >= 1.0} for c in scored.checks]
