"""The validity rules on an audio task (docs/validity.md): its answers are made by code (:mod:`.answers`),
then scored through the same reader and checks as an agent's folder.

* an answer file is ``{"task", "why", "make", "fails"?}`` (near misses and cheats name the checks they fail);
* the baseline is ``do-nothing``: the inputs handed back unchanged;
* the repeat rule makes the oracle's files again into a fresh folder (not the cache) and rescores them:
  every value must be the same, bit for bit;
* a variant's answers are made every time and scored from memory (:func:`score_made`), never written.
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


def score_made(task: Any, make: str, bench: Any, *, fresh: bool = False) -> TaskResult:
    """Answer ``make`` to ``task``, made and scored. A published task's answer is taken from the cache (made
    into it the first time); ``fresh``: made again into a temporary folder (the repeat rule). A variant's
    (``<task>@<seed>``) is always made now and scored from memory, never written: there are thousands of
    variants and each answer is 50-150 MB of audio; what its files would hold (:func:`.answers.as_held`) is
    read by the same rules (:func:`.files.read_made`), so the values are those of the files, bit for bit."""
    from .answers import as_held, made_files, make_answer
    from .inputs import load_inputs
    from .score import score_audio_task, score_held_answer

    if "@" in task.id:
        inputs = load_inputs(task, bench)
        return score_held_answer(task, as_held(made_files(task, make, inputs)), inputs=inputs,
                                 source=f"<{make}, made in memory>")
    if fresh:
        with tempfile.TemporaryDirectory(prefix="overdub-repeat-") as tmp:
            return score_audio_task(task, make_answer(task, make, bench, fresh=Path(tmp)), bench=bench)
    return score_audio_task(task, make_answer(task, make, bench), bench=bench)


def score_answer_file(task: Any, path: Path, bench: Any, *, kind: str) -> tuple[TaskResult, dict[str, Any]]:
    data = load_audio_answer(path, task_id=task.id, kind=kind)
    return score_made(task, data["make"], bench), data


def repeat(task: Any, bench: Any) -> TaskResult:
    """The oracle made again, not from the cache, and scored."""
    data = load_audio_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
    return score_made(task, data["make"], bench, fresh=True)
