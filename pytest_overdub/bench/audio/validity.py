"""The validity rules on an audio task (docs/validity.md): its answers are made by code (:mod:`.answers`),
then scored through the same reader and checks as an agent's folder.

* an answer file is ``{"task", "why", "make", "fails"?}`` (near misses and cheats name the checks they fail);
* the baseline is ``do-nothing``: the inputs handed back unchanged;
* the repeat rule makes the oracle's files again into a fresh folder (not the cache) and rescores them:
  every value must be the same, bit for bit.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ...errors import TaskError
from ...song.model import read_json
from ..scoring import TaskResult


def load_audio_answer(path: Path, *, task_id: str, kind: str) -> dict[str, Any]:
    data = read_json(path, error=TaskError)
    if not isinstance(data, dict) or not isinstance(data.get("make"), str) or "why" not in data:
        raise TaskError(f"{path}: a {kind} file of an audio task is {{\"task\", \"why\", \"make\"}} (make: a "
                        "registered answer maker, docs/audio-tasks.md)")
    if data.get("task") != task_id:
        raise TaskError(f"{path}: task = {data.get('task')!r}: must be {task_id!r}")
    if kind in ("near miss", "cheat") and not (isinstance(data.get("fails"), list) and data["fails"]):
        raise TaskError(f"{path}: a {kind} names the checks it must fail in \"fails\": [check ids]")
    return data


def score_made(task: Any, make: str, bench: Any, *, fresh: Path | None = None) -> TaskResult:
    """Answer ``make`` to ``task``, made (or taken from the cache) and scored. A variant's answers
    (``<task>@<seed>``) are made into a temporary folder and deleted once scored, never cached: there are
    thousands of variants and each answer is 50-150 MB of audio, so caching them would fill the disk."""
    from .answers import make_answer
    from .score import score_audio_task

    if fresh is None and "@" in task.id:
        with tempfile.TemporaryDirectory(prefix="overdub-variant-answer-") as tmp:
            return score_audio_task(task, make_answer(task, make, bench, fresh=Path(tmp)), bench=bench)
    return score_audio_task(task, make_answer(task, make, bench, fresh=fresh), bench=bench)


def score_answer_file(task: Any, path: Path, bench: Any, *, kind: str) -> tuple[TaskResult, dict[str, Any]]:
    data = load_audio_answer(path, task_id=task.id, kind=kind)
    return score_made(task, data["make"], bench), data


def repeat(task: Any, bench: Any) -> TaskResult:
    """The oracle made again, into a fresh folder, and scored."""
    data = load_audio_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
    with tempfile.TemporaryDirectory(prefix="overdub-repeat-") as tmp:
        return score_made(task, data["make"], bench, fresh=Path(tmp))
