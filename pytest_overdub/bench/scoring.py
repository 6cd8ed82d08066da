"""Scoring: the soft fall-off, goals times gates, the house gate ``clean`` (docs/scoring.md).

    score = (Σ weight × check score over the goals / Σ weights) × (product of the gates' scores)

Inside the target a check scores 1; outside it falls off linearly to 0 over ``soft``; without ``soft`` it
is pass/fail. A value that is not finite scores 0; a check that raised has the value NaN, scores 0 and
carries its error. Task scores are rounded to 3 decimals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def check_score(value: float, target: tuple[float | None, float | None], soft: float | None) -> float:
    """1 inside ``target``, falling linearly to 0 over ``soft`` outside it; 0 when not finite."""
    if value is None or not math.isfinite(value):
        return 0.0
    lo, hi = target
    miss = 0.0
    if lo is not None and value < lo:
        miss = lo - value
    elif hi is not None and value > hi:
        miss = value - hi
    if miss <= 0:
        return 1.0
    if not soft:
        return 0.0
    return max(0.0, 1.0 - miss / soft)


@dataclass(frozen=True)
class CheckResult:
    id: str
    label: str
    kind: str
    value: float
    unit: str
    target: tuple[float | None, float | None]
    soft: float | None
    weight: float | None
    gate: bool
    score: float
    error: str | None = None
    detail: str | None = None

    def line(self, *, task_error: str | None = None) -> str:
        """``1.00 w3  Chorus loudness minus verse loudness: 2.12 LU (want [1.5, 3] ±1.5)``.

        A check without a value (NaN) reads ``not scored`` when it has an error, else ``no value``, never
        ``NaN LU``; its error follows unless it is ``task_error``, the task's own, which the task says once.
        """
        tag = "gate" if self.gate else f"w{_g(self.weight if self.weight is not None else 1)}"
        lo, hi = self.target
        want = f"[{'…' if lo is None else _g(lo)}, {'…' if hi is None else _g(hi)}]"
        if self.soft:
            want += f" ±{_g(self.soft)}"
        if self.value is None or math.isnan(self.value):
            shown = "not scored" if self.error else "no value"
        else:
            shown = format_value(self.value) + (f" {self.unit}" if self.unit else "")
        text = f"{self.score:.2f} {tag:<4}  {self.label}: {shown} (want {want})"
        if self.error and self.error != task_error:
            text += f"  ERROR: {self.error}"
        if self.detail and self.score < 1.0:
            text += f"  {self.detail}"
        return text


@dataclass(frozen=True)
class TaskResult:
    task: str
    title: str
    score: float
    checks: tuple[CheckResult, ...]
    warnings: tuple[str, ...] = ()
    bench_version: str = ""
    grader_hash: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    #: What confined the submission's song-defined kernels (None when it defines none): ``{"kernels":
    #: "in-process"}``, or ``{"kernels": "sandboxed", "layers": [...], "missing": [...],
    #: "weak_sandbox_allowed": bool, "kernel_time": "cpu" | "wall"}`` (``"wall"`` with a ``"kernel_time_why"``)
    #: (:meth:`~pytest_overdub.render.sandbox.client._Session.confinement`).
    confinement: dict | None = None
    #: What an oracle run handed the agent besides its inputs (a transcription task's ``given``); empty for a
    #: blind run, which every other task is. A report keeps the two apart.
    given: tuple[str, ...] = ()

    def check(self, check_id: str) -> CheckResult:
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    def text(self) -> str:
        lines = [f"{self.task}  {self.score:.3f}  ({self.title})"]
        if self.given:
            lines.append(f"  oracle run: given {', '.join(self.given)} (not a blind score)")
        if self.error:
            lines.append(f"  ERROR: {self.error}")
        lines += [f"  {c.line(task_error=self.error)}" for c in self.checks]
        lines += [f"  warning: {w}" for w in self.warnings]
        if self.confinement is not None:
            c = self.confinement
            how = ", ".join(c.get("layers") or ()) or "no layer reported"
            lines.append(f"  kernels: {c['kernels']}" + (f" ({how})" if c["kernels"] == "sandboxed" else ""))
            lines += [f"  sandbox layer missing: {m}" for m in c.get("missing") or ()]
        return "\n".join(lines)


def task_score(results: list[CheckResult] | tuple[CheckResult, ...]) -> float:
    goals = [r for r in results if not r.gate]
    total_w = sum(r.weight if r.weight is not None else 1.0 for r in goals)
    base = sum((r.weight if r.weight is not None else 1.0) * r.score for r in goals) / total_w if total_w else 0.0
    for r in results:
        if r.gate:
            base *= r.score
    return round(base, 3)


def format_value(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.3g}" if abs(v) < 0.01 else f"{v:.2f}".rstrip("0").rstrip(".")


def _g(v: float) -> str:
    return f"{v:g}"
