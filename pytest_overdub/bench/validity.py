"""The bench checks itself (docs/validity.md).

* every oracle scores at least :data:`ORACLE_MIN`;
* the do-nothing baseline (the starting song, unchanged) scores under :data:`MISS_MAX`;
* every near miss scores under :data:`MISS_MAX` and fails (scores under 1 on) every check it names;
* every oracle scored twice, the second time with fresh renders and fresh random ids, gives exactly the
  same value for every check, bit for bit;
* the bench as a whole: 12-16 tasks, every family at least twice, every task with an oracle file.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TaskError
from ..song.ids import song_ids
from ..song.model import Song, read_json
from ..song.submission import Submission, submission_from_data
from .model import Task
from .scoring import TaskResult
from .tasks import Bench, candidate_song, score_task, start_song

ORACLE_MIN = 0.9
MISS_MAX = 0.5
FAMILIES = ("mix", "writing", "device", "editing")


@dataclass(frozen=True)
class Verdict:
    """One validity rule on one task: did it hold, and the result it was judged on."""

    task: str
    rule: str  # "oracle" | "baseline" | "near:<what>" | "repeat"
    ok: bool
    message: str
    result: TaskResult | None = None


def load_answer(path: Path, *, task_id: str, kind: str) -> tuple[Submission, dict[str, Any]]:
    """An oracle or near-miss file: ``{task, why, ops, fails?}`` read as a submission."""
    data = read_json(path, error=TaskError)
    if not isinstance(data, dict) or "ops" not in data or "why" not in data:
        raise TaskError(f"{path}: a {kind} file is {{\"task\", \"why\", \"ops\"}}")
    if data.get("task") != task_id:
        raise TaskError(f"{path}: task = {data.get('task')!r}: must be {task_id!r}")
    if kind == "near miss" and not (isinstance(data.get("fails"), list) and data["fails"]):
        raise TaskError(f"{path}: a near miss names the checks it must fail in \"fails\": [check ids]")
    return submission_from_data(data["ops"], source=str(path)), data


def check_oracle(task: Task, bench: Bench, *, trusted: bool | None = None) -> Verdict:
    sub, _ = load_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
    r = score_task(task, sub, bench=bench, trusted=trusted)
    ok = r.score >= ORACLE_MIN
    return Verdict(task.id, "oracle", ok, f"oracle scores {r.score:.3f} (want >= {ORACLE_MIN})", r)


def check_baseline(task: Task, bench: Bench, *, trusted: bool | None = None) -> Verdict:
    r = score_task(task, None, bench=bench, trusted=trusted)
    ok = r.score < MISS_MAX
    return Verdict(task.id, "baseline", ok, f"doing nothing scores {r.score:.3f} (want < {MISS_MAX})", r)


def check_near_miss(task: Task, path: Path, bench: Bench, *, trusted: bool | None = None) -> Verdict:
    sub, data = load_answer(path, task_id=task.id, kind="near miss")
    what = path.name[len(task.id) + 1:-len(".json")]
    r = score_task(task, sub, bench=bench, trusted=trusted)
    ids = {c.id for c in r.checks}
    unknown = [c for c in data["fails"] if c not in ids]
    if unknown:
        raise TaskError(f"{path}: fails names {unknown}, not checks of {task.id} ({', '.join(sorted(ids))})")
    held = [c for c in data["fails"] if r.check(c).score >= 1.0]
    problems = []
    if r.score >= MISS_MAX:
        problems.append(f"scores {r.score:.3f} (want < {MISS_MAX})")
    if held:
        problems.append(f"passes {', '.join(held)} which it should fail")
    msg = "; ".join(problems) or f"scores {r.score:.3f} and fails {', '.join(data['fails'])}"
    return Verdict(task.id, f"near:{what}", not problems, msg, r)


def scramble_new_ids(song: Song, *, start: Song, seed: int) -> Song:
    """Give every id the start didn't have a random name, as a studio would (seeded, for the test)."""
    keep = song_ids(start)
    rng = random.Random(seed)

    def fresh(ident: str, prefix: str) -> str:
        return ident if ident in keep else f"{prefix}_{rng.getrandbits(48):012x}"

    data = song.model_dump(mode="json", by_alias=True)
    for tr in data["tracks"]:
        tr["id"] = fresh(tr["id"], "t")
        for ins in tr["inserts"]:
            ins["id"] = fresh(ins["id"], "fx")
        for c in tr["clips"]:
            c["id"] = fresh(c["id"], "c")
            for n in c["notes"]:
                n["id"] = fresh(n["id"], "n")
    for ins in data["master"]["inserts"]:
        ins["id"] = fresh(ins["id"], "fx")
    for s in data["sections"]:
        s["id"] = fresh(s["id"], "s")
    return Song.model_validate(data)


def check_repeat(task: Task, bench: Bench, *, first: TaskResult | None = None,
                 trusted: bool | None = None) -> Verdict:
    """Score the oracle again with fresh renders and fresh random ids; every value must match exactly."""
    from ..render.stems import PROCESS_CACHE

    sub, _ = load_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
    if first is None:
        first = score_task(task, sub, bench=bench, trusted=trusted)
    start = start_song(task, bench=bench)
    song = scramble_new_ids(candidate_song(start, sub), start=start, seed=len(task.id) * 7919)
    PROCESS_CACHE.clear()
    second = score_task(task, song, bench=bench, trusted=trusted, start=start)
    diffs = [f"{a.id}: {a.value!r} then {b.value!r}" for a, b in zip(first.checks, second.checks)
             if not _same(a.value, b.value)]
    ok = not diffs and first.score == second.score
    msg = "every check repeats exactly" if ok else "values changed: " + "; ".join(diffs)
    return Verdict(task.id, "repeat", ok, msg, second)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def check_bench(bench: Bench) -> list[str]:
    """Problems with the bench as a whole (empty when it is valid)."""
    problems = []
    paths = bench.task_paths()
    if not 12 <= len(paths) <= 16:
        problems.append(f"{len(paths)} tasks (want 12 to 16)")
    families: dict[str, int] = {}
    for p in paths:
        try:
            from .tasks import load_task

            task = load_task(p)
        except TaskError as exc:
            problems.append(str(exc))
            continue
        families[task.family] = families.get(task.family, 0) + 1
        if not bench.oracle_path(task.id).exists():
            problems.append(f"{task.id}: no oracle file {bench.oracle_path(task.id)}")
        try:
            from .scope import check_declaration

            check_declaration(task.scope, start_song(task, bench=bench))
        except TaskError as exc:
            problems.append(f"{task.id}: {exc}" if str(exc).startswith("scope.") else str(exc))
    for fam in FAMILIES:
        if families.get(fam, 0) < 2:
            problems.append(f"family {fam}: {families.get(fam, 0)} task(s) (want at least 2)")
    return problems
