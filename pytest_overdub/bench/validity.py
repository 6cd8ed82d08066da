"""The bench checks itself (docs/validity.md).

* every oracle scores at least :data:`ORACLE_MIN`;
* the do-nothing baseline (the starting song, unchanged) scores under :data:`MISS_MAX`;
* every alternative answer (``oracles/<task>.alt-<what>.json``, correct but done another way) scores at
  least :data:`ORACLE_MIN`;
* every near miss, and every cheat (``near_misses/<task>.cheat-<what>.json``, an answer that games the
  checks), scores under :data:`MISS_MAX` and fails (scores under 1 on) every check it names;
* every oracle scored twice, the second time with fresh renders and fresh random ids, gives exactly the
  same value for every check, bit for bit;
* an audio task's answers are made by code (:mod:`.audio.validity`): the same rules, its baseline the inputs
  handed back, its repeat the oracle made again into a fresh folder; a transcription task's answers are
  made by code too (:mod:`pytest_overdub.transcribe.answers`), its baseline no notes, its repeat the oracle
  made and matched again;
* the bench as a whole: at least 12 tasks, every family at least twice, every task with an oracle file, at least
  :data:`MIN_CHEATS` cheats and :data:`MIN_ALTERNATIVES` alternative, every answer file named for a task.
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
from .layout import ALT, CHEAT
from .tasks import TRANSCRIPTION, Bench, candidate_song, score_task, start_song

ORACLE_MIN = 0.9
MISS_MAX = 0.5
MIN_CHEATS = 2  # per task: near_misses/<task>.cheat-<what>.json
MIN_ALTERNATIVES = 1  # per task: oracles/<task>.alt-<what>.json
MIN_TASKS = 12
FAMILIES = ("mix", "writing", "device", "editing", "mastering", "mixdown", "transcription")


@dataclass(frozen=True)
class Verdict:
    """One validity rule on one task: did it hold, and the result it was judged on."""

    task: str
    rule: str  # "oracle" | "baseline" | "alt:<what>" | "near:<what>" | "cheat:<what>" | "repeat"
    ok: bool
    message: str
    result: TaskResult | None = None


def load_answer(path: Path, *, task_id: str, kind: str) -> tuple[Submission, dict[str, Any]]:
    """An answer file (oracle, alternative, near miss, cheat): ``{task, why, ops, fails?}`` read as a
    submission; near misses and cheats must name the checks they fail."""
    data = read_json(path, error=TaskError)
    if not isinstance(data, dict) or not ("ops" in data or "make" in data) or "why" not in data:
        raise TaskError(f"{path}: a {kind} file is {{\"task\", \"why\", \"ops\"}} (a transcription task's: "
                        f"{{\"task\", \"why\", \"make\"}})")
    if data.get("task") != task_id:
        raise TaskError(f"{path}: task = {data.get('task')!r}: must be {task_id!r}")
    if kind in ("near miss", "cheat") and not (isinstance(data.get("fails"), list) and data["fails"]):
        raise TaskError(f"{path}: a {kind} names the checks it must fail in \"fails\": [check ids]")
    if "make" in data and "ops" not in data:  # a transcription answer, made from the truth when scored
        from ..transcribe.answers import made_from_data

        if not task_id.startswith("transcribe-"):
            raise TaskError(f"{path}: \"make\" answers only a transcription task (transcribe-*); give \"ops\"")
        return made_from_data(data, source=str(path)), data
    return submission_from_data(data["ops"], source=str(path)), data


def _score_file(task: Task, path: Path, bench: Bench, *, kind: str,
                trusted: bool | None) -> tuple[TaskResult, dict[str, Any]]:
    """An answer file scored on its task: ops for a song task, made by code for an audio or a transcription
    task."""
    if task.is_audio:
        from .audio.validity import score_answer_file

        return score_answer_file(task, path, bench, kind=kind)
    sub, data = load_answer(path, task_id=task.id, kind=kind)
    return score_task(task, sub, bench=bench, trusted=trusted), data


def check_oracle(task: Task, bench: Bench, *, trusted: bool | None = None) -> Verdict:
    r, _ = _score_file(task, bench.oracle_path(task.id), bench, kind="oracle", trusted=trusted)
    ok = r.score >= ORACLE_MIN
    return Verdict(task.id, "oracle", ok, f"oracle scores {r.score:.3f} (want >= {ORACLE_MIN})", r)


def check_baseline(task: Task, bench: Bench, *, trusted: bool | None = None) -> Verdict:
    if task.is_audio:
        from .audio.validity import score_made

        r = score_made(task, "do-nothing", bench)
    else:
        r = score_task(task, None, bench=bench, trusted=trusted)
    ok = r.score < MISS_MAX
    return Verdict(task.id, "baseline", ok, f"doing nothing scores {r.score:.3f} (want < {MISS_MAX})", r)


def answer_name(task_id: str, path: Path) -> str:
    """``<what>`` of ``<task>.<what>.json`` (``cheat-…`` and ``alt-…`` keep their prefix)."""
    return path.name[len(task_id) + 1:-len(".json")]


def check_alternative(task: Task, path: Path, bench: Bench, *, trusted: bool | None = None) -> Verdict:
    """Another correct answer, done another way: it must score like the oracle."""
    r, _ = _score_file(task, path, bench, kind="alternative", trusted=trusted)
    what = answer_name(task.id, path)[len(ALT):]
    ok = r.score >= ORACLE_MIN
    return Verdict(task.id, f"alt:{what}", ok, f"alternative scores {r.score:.3f} (want >= {ORACLE_MIN})", r)


def check_cheat(task: Task, path: Path, bench: Bench, *, trusted: bool | None = None) -> Verdict:
    """An answer that games the checks: held to the near-miss rule."""
    return check_near_miss(task, path, bench, trusted=trusted, kind="cheat")


def check_near_miss(task: Task, path: Path, bench: Bench, *, trusted: bool | None = None,
                    kind: str = "near miss") -> Verdict:
    r, data = _score_file(task, path, bench, kind=kind, trusted=trusted)
    what = answer_name(task.id, path)
    rule = f"cheat:{what[len(CHEAT):]}" if kind == "cheat" else f"near:{what}"
    ids = {c.id for c in r.checks}
    unknown = [c for c in data["fails"] if c not in ids]
    held = [c for c in data["fails"] if c in ids and r.check(c).score >= 1.0]
    problems = []
    if unknown:  # still scored, so the table shows how the answer fares on the checks there are
        problems.append(f"fails names {', '.join(unknown)}, not checks of {task.id} ({', '.join(sorted(ids))})")
    if r.score >= MISS_MAX:
        problems.append(f"scores {r.score:.3f} (want < {MISS_MAX})")
    if held:
        problems.append(f"passes {', '.join(held)} which it should fail")
    msg = "; ".join(problems) or f"scores {r.score:.3f} and fails {', '.join(data['fails'])}"
    return Verdict(task.id, rule, not problems, msg, r)


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
    from .context import clear_process_caches

    if first is None:
        first, _ = _score_file(task, bench.oracle_path(task.id), bench, kind="oracle", trusted=trusted)
    if task.is_audio:
        from ..measure.kept import clear as clear_kept
        from .audio.validity import repeat

        clear_kept()  # the inputs' figures and masters measured and made afresh too
        second = repeat(task, bench)
    elif task.family == TRANSCRIPTION:  # no song is rendered: the answer is made and matched again
        second, _ = _score_file(task, bench.oracle_path(task.id), bench, kind="oracle", trusted=trusted)
    else:
        sub, _ = load_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
        start = start_song(task, bench=bench)
        song = scramble_new_ids(candidate_song(start, sub), start=start, seed=len(task.id) * 7919)
        clear_process_caches()
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
    if len(paths) < MIN_TASKS:
        problems.append(f"{len(paths)} tasks (want at least {MIN_TASKS})")
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
        if task.is_audio:
            continue
        try:
            if task.family == TRANSCRIPTION:
                from ..transcribe.truth import reference

                reference(task, bench.song(task.song))  # its parts name heard tracks of its song
            else:
                from .scope import check_declaration

                check_declaration(task.scope, start_song(task, bench=bench))
        except TaskError as exc:
            problems.append(f"{task.id}: {exc}" if str(exc).startswith("scope.") else str(exc))
    for fam in FAMILIES:
        if families.get(fam, 0) < 2:
            problems.append(f"family {fam}: {families.get(fam, 0)} task(s) (want at least 2)")
    ids = [p.stem for p in paths]
    return problems + stray_answers(bench, ids) + adversarial_set(bench, ids)


def adversarial_set(bench: Bench, task_ids: list[str]) -> list[str]:
    """Tasks without their own adversarial set: at least :data:`MIN_CHEATS` cheats and
    :data:`MIN_ALTERNATIVES` alternative answer, so each task's checks are shown to catch gaming and to
    accept a right answer done another way."""
    problems = []
    for t in task_ids:
        cheats, alts = len(bench.cheat_paths(t)), len(bench.alternative_paths(t))
        if cheats < MIN_CHEATS:
            problems.append(f"{t}: {cheats} cheat(s) (want at least {MIN_CHEATS}: "
                            f"near_misses/{t}.cheat-<what>.json)")
        if alts < MIN_ALTERNATIVES:
            problems.append(f"{t}: {alts} alternative answer(s) (want at least {MIN_ALTERNATIVES}: "
                            f"oracles/{t}.alt-<what>.json)")
    return problems


def stray_answers(bench: Bench, task_ids: list[str]) -> list[str]:
    """Answer files no rule would read: a misnamed alternative or cheat must not drop out silently."""
    problems = []
    for folder, allowed in (("oracles", "<task>.json or <task>.alt-<what>.json"),
                            ("near_misses", "<task>.<what>.json or <task>.cheat-<what>.json")):
        read = set()
        for t in task_ids:
            read.update(bench.alternative_paths(t) if folder == "oracles" else
                        bench.near_miss_paths(t) + bench.cheat_paths(t))
            if folder == "oracles":
                read.add(bench.oracle_path(t))
        for path in sorted((bench.root / folder).glob("*")):
            if path not in read and not path.name.startswith("."):
                problems.append(f"{path}: not an answer file of any task (want {allowed}, <task> one of the "
                                f"task ids)")
    return problems
