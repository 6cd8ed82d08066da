"""Tasks: loading them, the song an agent is handed, and scoring a submission (docs/formats.md, docs/scoring.md).

A *bench* is a directory holding ``tasks/``, ``songs/``, ``oracles/`` and ``near_misses/`` (where each
answer file lives: :mod:`.layout`). The bundled bench is this checkout's (or, installed from a wheel, the
copy packaged as ``pytest_overdub/data``).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import BENCH_VERSION
from ..errors import OpError, OverdubError, SongError, SubmissionError, TaskError
from ..song.ids import stable_ids
from ..song.model import Song, describe_validation_error, load_song, read_json
from ..song.ops import apply_ops, apply_transactions
from ..song.submission import Submission
from .layout import BenchLayout, bundled_root
from .model import HOUSE_GATES, Task
from .scope import LABEL as SCOPE_LABEL
from .scoring import CheckResult, TaskResult, task_score

TRANSCRIPTION = "transcription"  # the family scored from notes (pytest_overdub/transcribe/)

__all__ = ["Bench", "Task", "bundled_bench", "load_task", "score_task", "start_song", "grader_hash"]


@dataclass(frozen=True)
class Bench(BenchLayout):
    """A directory of tasks, songs, oracles and near misses: its files (:class:`.layout.BenchLayout`), its
    tasks and songs, variants and generated songs included."""

    def task(self, task_id: str) -> Task:
        """A task file's task, or a variant's (``<task>@<seed>``, bench/variants.py)."""
        if "@" in task_id:
            from .variants import variant

            return variant(task_id).task
        path = self.tasks_dir / f"{task_id}.json"
        if not path.exists():
            known = ", ".join(self.task_ids()) or "none"
            raise TaskError(f"no task {task_id!r} in {self.tasks_dir} (tasks: {known})")
        return load_task(path)

    def song(self, name: str) -> Song:
        """A song in ``songs/``, or a generated one (``gen-t<tier>-<seed>``, made on demand)."""
        from .variants import generated_song

        made = generated_song(name)
        if made is not None:
            return made
        path = self.root / "songs" / f"{name}.json"
        if not path.exists():
            raise TaskError(f"song {name!r}: no file {path}")
        return load_song(path)


def bundled_bench() -> Bench:
    """The bench shipped with the package: the checkout's directories, else the wheel's data copy."""
    return Bench(bundled_root())


def load_task(path: str | Path) -> Task:
    p = Path(path)
    data = read_json(p, error=TaskError)
    model: Any = Task
    if isinstance(data, dict) and data.get("family") == TRANSCRIPTION:
        from ..transcribe.task import TranscriptionTask as model  # its own model: notes in, no song out
    try:
        task = model.model_validate(data)
    except ValidationError as err:
        raise TaskError(describe_validation_error(err, source=str(p))) from None
    if "@" in task.id:
        raise TaskError(f"{p}: id = {task.id!r}: '@' is reserved for variant ids (<task>@<seed>); a task file's "
                        f"id matches ^[a-z0-9][a-z0-9-]*$")
    if task.id != p.stem:
        raise TaskError(f"{p}: id = {task.id!r}: must equal the file name {p.stem!r}")
    return task


def start_song(task: Task, *, bench: Bench) -> Song:
    """The song the agent is handed: the task's song with the house setup applied."""
    song = bench.song(task.song)
    try:
        return apply_ops(song, task.setup)
    except OpError as exc:
        raise TaskError(f"task {task.id}: setup refused: {exc}") from None


#: Code that reads, runs or reports but never decides a score: left out of the grader hash, so a change to
#: the harness or the studio does not mark every stored result as graded by another bench.
NOT_GRADING = ("plugin.py", "cli.py", "cliargs.py", "data/", "evaluate/", "studio/")


@lru_cache(maxsize=1)
def _code_hash() -> str:
    pkg = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        if rel.startswith(NOT_GRADING):
            continue
        h.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def grader_hash(task: Task) -> str:
    """A hash of the scorer's own code and the task: equal hashes mean comparable scores. The task's
    ``split`` is left out: moving a task between train and test does not change how it is graded."""
    h = hashlib.sha256(_code_hash().encode())
    h.update(task.model_dump_json(by_alias=True, exclude={"split"}).encode())
    return h.hexdigest()[:16]


def candidate_song(start: Song, submission: Submission) -> Song:
    """The song a submission makes from ``start``, with new ids renamed by position."""
    song = submission.song if submission.is_song else apply_transactions(
        start, [list(t) for t in submission.transactions])
    return stable_ids(song, start=start)


def house_gates(task: Task) -> tuple[str, ...]:
    """The house gates a task's result carries: ``clean`` and ``scope``, or none for a family whose
    answer renders no song (a transcription task says so itself)."""
    return getattr(task, "house_gates", HOUSE_GATES)


def _failed(task: Task, message: str, **kw: Any) -> TaskResult:
    checks = tuple(
        CheckResult(id=c.id, label=c.label, kind=c.kind, value=float("nan"), unit=c.unit,
                    target=tuple(c.target), soft=c.soft, weight=None if c.gate else c.effective_weight,
                    gate=c.gate, score=0.0, error=message)
        for c in task.checks
    ) + (CheckResult(id="clean", label="renders clean (no NaN, no failed or faulting device)", kind="clean",
                     value=float("nan"), unit="problems", target=(0.0, 0.0), soft=None, weight=None, gate=True,
                     score=0.0, error=message),
         CheckResult(id="scope", label=SCOPE_LABEL, kind="scope", value=float("nan"), unit="changes",
                     target=(0.0, 0.0), soft=None, weight=None, gate=True, score=0.0, error=message))
    checks = tuple(c for c in checks if c.kind not in HOUSE_GATES or c.id in house_gates(task))
    return TaskResult(task=task.id, title=task.title, score=0.0, checks=checks, error=message,
                      bench_version=BENCH_VERSION, grader_hash=grader_hash(task),
                      given=tuple(getattr(task, "given", ())), **kw)


def score_task(task: Task, submission: Submission | Song | None, *, bench: Bench,
               trusted: bool | None = None, start: Song | None = None) -> TaskResult:
    """Score a submission (``None`` = the do-nothing baseline) on a task."""
    if task.family == TRANSCRIPTION:
        return _score_transcription(task, submission, bench=bench)
    from ..render.engine import kernel_scope
    from .checks import Context, clean_result, evaluate
    from .scope import scope_result

    t0 = time.perf_counter()
    start = start if start is not None else start_song(task, bench=bench)
    try:
        if submission is None:
            song = start
        elif isinstance(submission, Song):
            song = stable_ids(submission, start=start)
        else:
            song = candidate_song(start, submission)
    except (OpError, SongError) as exc:
        return _failed(task, f"submission refused: {exc}")
    if trusted is None:
        from ..render.kernels import trust_kernels_default

        trusted = trust_kernels_default()
    ctx = Context(start=start, song=song, trusted=trusted)
    with kernel_scope(song, trusted=trusted) as session:  # one kernel session: time budget, fault latch
        results = [evaluate(c, ctx) for c in task.checks]
        scope = scope_result(task.scope, ctx)  # its renders count for clean too
        confinement = session.confinement() if session is not None else \
            ({"kernels": "in-process"} if song.devices else None)
    results += [clean_result(ctx), scope]
    warnings = tuple(dict.fromkeys(_warning_text(w) for w in ctx.warnings))
    return TaskResult(task=task.id, title=task.title, score=task_score(results), checks=tuple(results),
                      warnings=warnings, bench_version=BENCH_VERSION, grader_hash=grader_hash(task),
                      timings={"seconds": round(time.perf_counter() - t0, 3)}, confinement=confinement)


def _score_transcription(task: Any, answer: Any, *, bench: Bench) -> TaskResult:
    """A transcription task: ``answer`` is an :class:`~pytest_overdub.transcribe.answer.Answer`, a bench
    answer's maker, or None (no notes); a song or ops cannot answer it."""
    from ..transcribe.answer import Answer, refuse_unheard
    from ..transcribe.answers import MadeAnswer, made_answer
    from ..transcribe.truth import mix_seconds
    from ..transcribe.score import score_transcription

    song = bench.song(task.song)
    if isinstance(answer, MadeAnswer):
        answer = made_answer(answer, task, song)
    elif answer is not None and not isinstance(answer, Answer):
        return _failed(task, "submission refused: a transcription task is answered with notes (a notes .json, "
                             "a .mid file or a folder holding one), not a song or ops")
    if answer is not None:
        try:
            refuse_unheard(answer, mix_s=mix_seconds(task, song))
        except SubmissionError as exc:
            return _failed(task, str(exc))
    return score_transcription(task, answer, song=song, grader_hash=grader_hash(task))


def _warning_text(w: Any) -> str:
    return f"{w.kind}: {w.where}: {w.message}"


def score_path(task: Task, path: str | Path, *, bench: Bench, trusted: bool | None = None) -> TaskResult:
    """Score the submission file at ``path`` (any form); a bad file is a failed result, not a raise."""
    from ..song.submission import load_submission

    try:
        if task.family == TRANSCRIPTION:
            from ..transcribe.answer import read_answer

            return score_task(task, read_answer(path, parts=task.parts), bench=bench)
        sub = load_submission(path)
    except OverdubError as exc:
        return _failed(task, str(exc))
    return score_task(task, sub, bench=bench, trusted=trusted)
