"""The bench's own oracle and do-nothing baseline scores, shown beside the agent's.

They are scored with the installed bench (the same rules as ``overdub run``) and cached in
``OUT/bench_reference.json`` as ``{"format", "tasks": {task: {"grader_hash", "oracle", "baseline"}}}``;
an entry is reused while the installed grader hash of its task (:func:`~pytest_overdub.bench.tasks.grader_hash`)
is the one it was scored under, so each task is scored once per grader. A task the installed bench does
not have gets no reference (``None``); a variant's oracle and baseline are its template's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .reader import read_json_file

FILE = "bench_reference.json"
FORMAT = "overdub-bench-reference/1"


def bench_reference(root: Path, task_ids: list[str]) -> dict[str, dict[str, Any] | None]:
    """task -> ``{"grader_hash", "oracle", "baseline"}`` (None for a task the installed bench lacks)."""
    from ..bench.tasks import bundled_bench, grader_hash

    from ..bench.variants import is_variant_id

    bench = bundled_bench()
    known = set(bench.task_ids())
    path = root / FILE
    cached = _read_cache(path) if path.exists() else {}
    out: dict[str, dict[str, Any] | None] = {}
    changed = False
    for task_id in task_ids:
        if task_id not in known and not _known_variant(task_id, is_variant_id):
            out[task_id] = None
            continue
        task = bench.task(task_id)
        h = grader_hash(task)
        entry = cached.get(task_id)
        if entry is None or entry.get("grader_hash") != h:
            entry = _score(task, bench, h)
            cached[task_id] = entry
            changed = True
        out[task_id] = entry
    if changed:
        _write_cache(path, cached)
    return out


def _known_variant(task_id: str, is_variant_id: Any) -> bool:
    """A variant of a template the installed bench has (its oracle is made by the template)."""
    from ..bench.variants import parse_variant_id, templates
    from ..errors import OverdubError

    if not is_variant_id(task_id):
        return False
    try:
        return parse_variant_id(task_id)[0] in templates()
    except OverdubError:
        return False


def _score(task: Any, bench: Any, h: str) -> dict[str, Any]:
    from ..bench.validity import check_baseline, check_oracle

    if "@" in task.id:  # a variant: its oracle and baseline come from its template
        from ..bench.variant_rules import variant_verdict

        oracle, baseline = variant_verdict(task.id, "oracle", bench), variant_verdict(task.id, "baseline", bench)
    else:
        oracle, baseline = check_oracle(task, bench), check_baseline(task, bench)
    return {"grader_hash": h, "oracle": oracle.result.score, "baseline": baseline.result.score}


def _read_cache(path: Path) -> dict[str, dict[str, Any]]:
    data = read_json_file(path)
    ok = isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("tasks"), dict) and all(
        isinstance(e, dict) and isinstance(e.get("grader_hash"), str) and all(
            isinstance(e.get(k), (int, float)) for k in ("oracle", "baseline")) for e in data["tasks"].values())
    if not ok:
        raise UsageError(f"{path}: not a {FORMAT} cache ({{\"format\", \"tasks\": {{task: {{\"grader_hash\", "
                         f"\"oracle\", \"baseline\"}}}}}}); delete it and it is scored again")
    return dict(data["tasks"])


def _write_cache(path: Path, tasks: dict[str, dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps({"format": FORMAT, "tasks": dict(sorted(tasks.items()))}, indent=2) + "\n",
                       encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"{path}: cannot write: {exc.strerror} (--no-reference leaves the oracle and "
                         "baseline out)") from None
