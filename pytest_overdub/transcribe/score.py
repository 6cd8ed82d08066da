"""Scoring a transcription answer (docs/transcription.md).

    score = (Σ part weight × part F1 / Σ part weights) × (1 if the gate part's F1 ≥ 0.5 and more of its
            written notes are right than wrong, else 0)

The F1 is onset-and-pitch F1 (:mod:`.matching`); precision, recall, F1 with offsets, octave errors and
rhythm are reported beside it with weight 0 (shown in every result, never scored). No answer (the
do-nothing baseline) is an answer with no notes. Nothing is rendered: the truth is the song's notes.
"""

from __future__ import annotations

import time

from .. import BENCH_VERSION
from ..bench.scoring import CheckResult, TaskResult, check_score, task_score
from ..song.model import Song
from . import matching
from .answer import Answer
from .task import TranscriptionCheck, TranscriptionTask
from .truth import reference


def figure(check: TranscriptionCheck, ref: list, est: list, *, step_s: float) -> float:
    """The value of one check's figure on one part."""
    if check.figure == "octaveErrors":
        return float(matching.octave_errors(ref, est))
    if check.figure == "rhythm":
        return matching.rhythm(ref, est, step_s=step_s)
    f = matching.figures(ref, est, offsets=check.figure == "f1Offsets")
    if check.figure == "surplus":
        return float(f.matched - (f.n_est - f.matched))  # notes written right minus notes written wrong
    return {"f1": f.f1, "f1Offsets": f.f1, "precision": f.precision, "recall": f.recall}[check.figure]


def score_transcription(task: TranscriptionTask, answer: Answer | None, *, song: Song,
                        grader_hash: str = "") -> TaskResult:
    """Score ``answer`` (None = no notes) against the truth of ``task`` on ``song``."""
    t0 = time.perf_counter()
    truth = reference(task, song)
    step_s = task.grid * 60.0 / song.tempo
    results = []
    for c in task.checks:
        est = answer.notes(c.part) if answer is not None else []
        value = figure(c, truth[c.part], est, step_s=step_s)
        detail = None
        if c.figure == "f1" and not c.gate:
            detail = f"({len(truth[c.part])} true notes, {len(est)} answered)"
        results.append(CheckResult(id=c.id, label=c.label, kind=c.kind, value=value, unit=c.unit,
                                   target=tuple(c.target), soft=c.soft, weight=None if c.gate else c.weight,
                                   gate=c.gate, score=check_score(value, tuple(c.target), c.soft),
                                   detail=detail))
    return TaskResult(task=task.id, title=task.title, score=task_score(results), checks=tuple(results),
                      bench_version=BENCH_VERSION, grader_hash=grader_hash,
                      timings={"seconds": round(time.perf_counter() - t0, 3)}, given=tuple(task.given))
