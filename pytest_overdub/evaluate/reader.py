"""Reading a run directory (``OUT/run.json`` and every ``OUT/<task>/<trial>/result.json``) for the reports.

Every field the reports use is checked when it is read; a file that is missing, not JSON, or has a field
of the wrong kind is refused with one line naming the file, the field, the value and what was allowed
(:class:`~pytest_overdub.errors.UsageError`, exit 2). Fields the reports do not use are not checked, so a
later writer may add fields without breaking older readers; ``run.json``'s ``format`` pins the layout.

A trial folder without ``result.json`` is unfinished: it is not read, and counts as missing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError

RUN_FORMAT = "overdub-eval/1"
STATUSES = ("scored", "failed", "timeout", "invalid", "infra")
ANSWER_SOURCES = ("answer.json", "calls.json", "answer/")


@dataclass(frozen=True)
class CheckRecord:
    """One check of one trial: its value (NaN when it had none), target ``(lo, hi)`` (None = open)."""

    id: str
    label: str
    value: float
    target: tuple[float | None, float | None]
    score: float
    gate: bool
    passed: bool


@dataclass(frozen=True)
class Trial:
    """One ``result.json``. ``score``/``passed`` are None only for ``infra`` trials."""

    task: str
    trial: int
    family: str
    split: str
    given: tuple[str, ...]
    status: str
    reason: str | None
    seconds: float | None
    answer_source: str | None
    answer_sha256: str | None
    score: float | None
    passed: bool | None
    pass_line: float
    checks: tuple[CheckRecord, ...]
    usage: dict[str, float] | None
    retries: int
    grader_hash: str | None
    folder: Path

    @property
    def counted(self) -> bool:
        """Counted in the statistics: every status but ``infra``."""
        return self.status != "infra"

    @property
    def key(self) -> tuple[str, int]:
        return self.task, self.trial


@dataclass(frozen=True)
class Run:
    """A run directory: ``run.json`` as read, and its finished trials sorted by (task, trial)."""

    root: Path
    meta: dict[str, Any]
    trials: tuple[Trial, ...]

    @property
    def planned_tasks(self) -> list[str]:
        return list(self.meta["options"]["tasks"])

    @property
    def planned_trials(self) -> int:
        return int(self.meta["options"]["trials"])

    def by_task(self) -> dict[str, list[Trial]]:
        out: dict[str, list[Trial]] = {}
        for t in self.trials:
            out.setdefault(t.task, []).append(t)
        return out


def read_json_file(path: Path) -> Any:
    """Parse a JSON file; a missing, unreadable, oversized or malformed file is one UsageError line naming
    it (the song reader's :func:`~pytest_overdub.song.model.read_json`, raising the command's error)."""
    from ..song.model import read_json

    return read_json(path, error=UsageError)


def load_run(root: str | Path) -> Run:
    """Read the run directory ``root``; refuse one that is not a run directory, naming what is wrong."""
    root = Path(root)
    if not root.is_dir():
        raise UsageError(f"{root}: not a directory (expected a run directory written by overdub eval)")
    meta = _run_meta(root / "run.json")
    trials = [read_result(path) for path in _result_paths(root)]
    return Run(root=root, meta=meta, trials=tuple(sorted(trials, key=lambda t: t.key)))


def _run_meta(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise UsageError(f"{path}: no such file; {path.parent} is not a run directory written by overdub eval")
    data = read_json_file(path)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a JSON object, got {type(data).__name__}")
    if data.get("format") != RUN_FORMAT:
        raise UsageError(f"{path}: format = {json.dumps(data.get('format'))}: expected \"{RUN_FORMAT}\"")
    opts = data.get("options")
    if not isinstance(opts, dict):
        raise UsageError(f"{path}: options = {_shown(opts)}: expected an object")
    tasks = opts.get("tasks")
    if not (isinstance(tasks, list) and all(isinstance(t, str) for t in tasks)):
        raise UsageError(f"{path}: options.tasks = {_shown(tasks)}: expected a list of task ids")
    trials = opts.get("trials")
    if not (isinstance(trials, int) and not isinstance(trials, bool) and trials >= 1):
        raise UsageError(f"{path}: options.trials = {_shown(trials)}: expected an integer >= 1")
    hashes = data.get("grader_hashes", {})
    if not (isinstance(hashes, dict) and all(isinstance(v, str) for v in hashes.values())):
        raise UsageError(f"{path}: grader_hashes = {_shown(hashes)}: expected an object of task id -> hash")
    return data


def _result_paths(root: Path) -> list[Path]:
    """``<task>/<trial>/result.json`` for every trial folder (an integer name) holding one."""
    out = []
    for task_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for trial_dir in sorted(p for p in task_dir.iterdir() if p.is_dir() and p.name.isdigit()):
            if (trial_dir / "result.json").is_file():
                out.append(trial_dir / "result.json")
    return out


def read_result(path: Path) -> Trial:
    """One ``result.json``, every used field checked (see the module docstring)."""
    data = read_json_file(path)
    f = _Fields(data, path)
    task, trial = f.str("task"), f.int("trial", low=0)
    if task != path.parent.parent.name or str(trial) != path.parent.name:
        raise UsageError(f"{path}: task, trial = {task!r}, {trial}: must match its folder "
                         f"{path.parent.parent.name}/{path.parent.name}")
    status = f.choice("status", STATUSES)
    counted = status != "infra"
    score = f.number("score", low=0.0, high=1.0, null=not counted)
    passed, pass_line = f.bool("passed", null=not counted), f.number("pass_line", low=0.0, high=1.0)
    _check_verdict(path, status, score, passed, pass_line)
    return Trial(task=task, trial=trial, family=f.str("family"), split=f.str("split"), given=_given(f),
                 status=status,
                 reason=f.str("reason", null=True), seconds=f.number("seconds", low=0.0, null=True),
                 answer_source=f.choice("answer_source", ANSWER_SOURCES, null=True),
                 answer_sha256=f.str("answer_sha256", null=True), score=score,
                 passed=passed, pass_line=pass_line,
                 checks=tuple(_check(f, i) for i in range(len(f.list("checks")))),
                 usage=_usage(f), retries=f.int("retries", low=0), grader_hash=f.str("grader_hash", null=True),
                 folder=path.parent)


def _given(f: "_Fields") -> tuple[str, ...]:
    """What an oracle run was given; absent (a result written before the field) is a blind run."""
    if "given" not in f.data:
        return ()
    v = f.list("given")
    if not all(isinstance(x, str) for x in v):
        raise f._bad("given", v, "a list of strings (what an oracle run was given; [] blind)")
    return tuple(v)


def _check_verdict(path: Path, status: str, score: float | None, passed: bool | None, pass_line: float) -> None:
    """A counted trial's verdict is its score against its pass line; a trial that ended without a scored
    answer scores 0 and fails. A file that says otherwise was not written by overdub eval."""
    if status in ("failed", "timeout", "invalid") and (score != 0.0 or passed is not False):
        raise UsageError(f"{path}: status {status!r} with score = {score}, passed = {json.dumps(passed)}: "
                         "expected score 0.0 and passed false")
    if score is not None and passed is not None and passed != (score >= pass_line):
        raise UsageError(f"{path}: passed = {json.dumps(passed)} with score {score} and pass_line {pass_line}: "
                         f"expected passed = score >= pass_line ({json.dumps(score >= pass_line)})")


def _check(f: "_Fields", i: int) -> CheckRecord:
    c = f.sub("checks", i)
    target = c.list("target")
    if len(target) != 2 or not all(t is None or _is_number(t) for t in target):
        raise UsageError(f"{f.path}: checks[{i}].target = {_shown(target)}: expected [low or null, high or null]")
    value = c.number("value", null=True, nan=True)
    return CheckRecord(id=c.str("id"), label=c.str("label"), value=math.nan if value is None else value,
                       target=(target[0], target[1]), score=c.number("score", low=0.0, high=1.0),
                       gate=c.bool("gate"), passed=c.bool("passed"))


def _usage(f: "_Fields") -> dict[str, float] | None:
    if f.data.get("usage", ...) is None:
        return None
    u = f.sub("usage")
    return {"input_tokens": u.number("input_tokens", low=0.0), "output_tokens": u.number("output_tokens", low=0.0),
            "cost_usd": u.number("cost_usd", low=0.0, null=True)}


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _shown(v: Any) -> str:
    text = json.dumps(v) if not isinstance(v, float) or math.isfinite(v) else str(v)
    return text if len(text) <= 60 else text[:57] + "..."


class _Fields:
    """Typed access to a JSON object's fields; each getter refuses a missing or wrong field in one line."""

    def __init__(self, data: Any, path: Path, where: str = ""):
        if not isinstance(data, dict):
            place = where.rstrip(".") or "the file"
            raise UsageError(f"{path}: {place}: expected a JSON object, got {type(data).__name__}")
        self.data, self.path, self.where = data, path, where

    def _get(self, key: str) -> Any:
        if key not in self.data:
            raise UsageError(f"{self.path}: {self.where}{key}: missing; the field is required")
        return self.data[key]

    def _bad(self, key: str, value: Any, allowed: str) -> UsageError:
        return UsageError(f"{self.path}: {self.where}{key} = {_shown(value)}: expected {allowed}")

    def str(self, key: str, *, null: bool = False) -> Any:
        v = self._get(key)
        if isinstance(v, str) or (null and v is None):
            return v
        raise self._bad(key, v, "a string" + (" or null" if null else ""))

    def bool(self, key: str, *, null: bool = False) -> Any:
        v = self._get(key)
        if isinstance(v, bool) or (null and v is None):
            return v
        raise self._bad(key, v, "true or false" + (" or null" if null else ""))

    def int(self, key: str, *, low: int) -> int:
        v = self._get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v >= low:
            return v
        raise self._bad(key, v, f"an integer >= {low}")

    def number(self, key: str, *, low: float | None = None, high: float | None = None, null: bool = False,
               nan: bool = False) -> Any:
        v = self._get(key)
        if null and v is None:
            return None
        if _is_number(v) and (nan or (
                math.isfinite(v) and (low is None or v >= low) and (high is None or v <= high))):
            return float(v)
        span = f" in [{low}, {high}]" if high is not None else f" >= {low}" if low is not None else ""
        raise self._bad(key, v, f"a number{span}" + (" or null" if null else ""))

    def choice(self, key: str, allowed: tuple[str, ...], *, null: bool = False) -> Any:
        v = self._get(key)
        if v in allowed or (null and v is None):
            return v
        raise self._bad(key, v, " | ".join(json.dumps(a) for a in allowed) + (" | null" if null else ""))

    def list(self, key: str) -> list:
        v = self._get(key)
        if isinstance(v, list):
            return v
        raise self._bad(key, v, "a list")

    def sub(self, key: str, index: int | None = None) -> "_Fields":
        v = self._get(key)
        where = f"{self.where}{key}" + ("" if index is None else f"[{index}]")
        return _Fields(v if index is None else v[index], self.path, where + ".")
