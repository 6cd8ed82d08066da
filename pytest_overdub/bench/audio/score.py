"""Scoring an audio answer (docs/audio-tasks.md): read the folder, compute each check, one house gate.

The house gate of an audio task is ``files``: the answer's files are there and readable in the allowed
form (:mod:`.files`). When they are not, every check is unscored (NaN, score 0) with that one error and
the task scores 0, like a refused song submission.
"""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import OverdubError, TaskError
from ..scoring import CheckResult, TaskResult, task_score

FILES_LABEL = "the answer's files are there, in an allowed form"


@dataclass
class AudioContext:
    """What audio checks read: the inputs and the answer's files as float64 (2, n) arrays."""

    inputs: dict[str, Any]
    answer: dict[str, Any]
    sr: int
    _lufs: dict[str, float] = field(default_factory=dict)
    _figures: dict[tuple, Any] = field(default_factory=dict)

    def figure(self, key: tuple, compute: Any) -> Any:
        """``compute()``, once per context under ``key`` (what it reads of this context's files)."""
        if key not in self._figures:
            self._figures[key] = compute()
        return self._figures[key]

    def get(self, ref: str):
        """An answer file by name, or an input as ``input:<name>``."""
        table, name = (self.inputs, ref[len("input:"):]) if ref.startswith("input:") else (self.answer, ref)
        if name not in table:
            raise TaskError(f"the check reads {ref!r}, which is not one of the task's files "
                            f"(answer: {', '.join(self.answer)}; inputs: {', '.join(self.inputs)})")
        return table[name]

    def heard(self, ref: str):
        """:meth:`get`'s file in the audio band (:func:`~pytest_overdub.measure.compare.audio_band`: nothing
        above 20 kHz), for the readings that content no one hears must not move; an input's is kept for the
        next answer."""
        from ...measure.compare import audio_band
        from ...measure.kept import kept

        x = self.get(ref)
        return self.figure(("heard", ref), lambda: kept(x, f"audio-band {self.sr}",
                                                       lambda: audio_band(x, sr=self.sr)))

    def expand(self, patterns: list[str]) -> list[str]:
        """Answer file names matching each pattern (``stems/*.wav``), in order, each once."""
        names = []
        for p in patterns:
            hits = [n for n in self.answer if fnmatch.fnmatchcase(n, p)] if "*" in p else [p]
            names += [n for n in hits if n not in names]
        return names

    def lufs(self, ref: str) -> float:
        if ref not in self._lufs:
            from ...measure import integrated_lufs
            from ...measure.kept import kept

            x = self.get(ref)  # an input's loudness is kept for the next answer
            self._lufs[ref] = kept(x, f"lufs {self.sr}", lambda: integrated_lufs(x, sr=self.sr))
        return self._lufs[ref]


def files_result(error: str | None) -> CheckResult:
    return CheckResult(id="files", label=FILES_LABEL, kind="files", value=float("nan") if error else 0.0,
                       unit="problems", target=(0.0, 0.0), soft=None, weight=None, gate=True,
                       score=0.0 if error else 1.0, error=error)


def score_audio_task(task: Any, folder: Path, *, bench: Any) -> TaskResult:
    """Score the answer in ``folder`` (or ``folder/<task-id>/``) on an audio task."""
    from .files import answer_folder, read_answer
    from .inputs import SR, load_inputs

    t0 = time.perf_counter()
    inputs = load_inputs(task, bench)
    try:
        answer = read_answer(task, answer_folder(Path(folder), task.id), {n: x.shape[1] for n, x in inputs.items()},
                             sr=SR)
    except OverdubError as exc:
        return failed_audio(task, str(exc))
    return scored_audio(task, inputs, answer, t0=t0)


def score_held_answer(task: Any, held: dict[str, tuple[str, Any]], *, inputs: dict[str, Any],
                      source: str) -> TaskResult:
    """Score a made answer held in memory (``{name: (subtype, float64 array)}``, what its files would hold:
    :func:`.answers.as_held`) on an audio task, against ``inputs`` (:func:`.inputs.load_inputs`), read by
    the folder's rules (:func:`.files.read_made`; ``source`` stands for the folder in an error)."""
    from .files import read_made
    from .inputs import SR

    t0 = time.perf_counter()
    try:
        answer = read_made(task, held, {n: x.shape[1] for n, x in inputs.items()}, sr=SR, source=source)
    except OverdubError as exc:
        return failed_audio(task, str(exc))
    return scored_audio(task, inputs, answer, t0=t0)


def scored_audio(task: Any, inputs: dict[str, Any], answer: dict[str, Any], *, t0: float) -> TaskResult:
    """Every check of ``task`` on answer files that passed the reader, and the house gate."""
    from ..checks import evaluate
    from ..tasks import grader_hash
    from .inputs import SR
    from ... import BENCH_VERSION

    ctx = AudioContext(inputs=inputs, answer=answer, sr=SR)
    results = [evaluate(c, ctx) for c in task.checks] + [files_result(None)]
    return TaskResult(task=task.id, title=task.title, score=task_score(results), checks=tuple(results),
                      bench_version=BENCH_VERSION, grader_hash=grader_hash(task),
                      timings={"seconds": round(time.perf_counter() - t0, 3)})


def failed_audio(task: Any, message: str) -> TaskResult:
    from ..tasks import grader_hash
    from ... import BENCH_VERSION

    checks = tuple(CheckResult(id=c.id, label=c.label, kind=c.kind, value=float("nan"), unit=c.unit,
                               target=tuple(c.target), soft=c.soft, weight=None if c.gate else c.effective_weight,
                               gate=c.gate, score=0.0, error=message) for c in task.checks)
    return TaskResult(task=task.id, title=task.title, score=0.0, checks=checks + (files_result(message),),
                      error=message, bench_version=BENCH_VERSION, grader_hash=grader_hash(task))
