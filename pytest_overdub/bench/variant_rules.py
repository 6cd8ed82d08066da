"""One validity rule on one variant, as the self-check's items run them: ``oracle`` (>= 0.9), ``baseline``
(doing nothing < 0.5), ``near:<what>`` / ``cheat:<what>`` (< 0.5, under 1 on every check it names) and
``repeat`` (the oracle scored again with fresh renders and fresh ids gives the same values). The rules are
those of :func:`.variant_checks.check_variant`, one at a time so each is its own pytest item."""

from __future__ import annotations

from ..song.submission import submission_from_data
from ..errors import TaskError
from .scoring import TaskResult
from .tasks import TRANSCRIPTION, Bench, candidate_song, score_task, start_song
from .validity import MISS_MAX, ORACLE_MIN, Verdict, _same, scramble_new_ids
from .templates.base import Answer
from .variants import Variant, parse_variant_id, templates, variant


def variant_rules(variant_id: str) -> list[str]:
    """The rules a variant is held to, in the order the self-check runs them: from its template's declared
    near misses and cheats, so listing them builds nothing (the build is held to the declaration)."""
    name, _ = parse_variant_id(variant_id)
    return ["oracle", "baseline", *map(_rule_of, templates()[name].misses), "repeat"]


def _rule(miss: Answer) -> str:
    return _rule_of(miss.name)


def _rule_of(name: str) -> str:
    """``near:<name>`` or ``cheat:<what>`` (a cheat's name is ``cheat-<what>``, as ``Answer.cheat`` says)."""
    return f"cheat:{name.removeprefix('cheat-')}" if name.startswith("cheat-") else f"near:{name}"


def variant_verdict(variant_id: str, rule: str, bench: Bench, *, trusted: bool | None = None,
                    first: TaskResult | None = None) -> Verdict:
    """Run ``rule`` on the variant (``first``: the oracle's result, for ``repeat``)."""
    v = variant(variant_id)
    if rule == "baseline":
        r = score_answer(v, None, bench, trusted=trusted)
        return Verdict(v.id, rule, r.score < MISS_MAX, f"doing nothing scores {r.score:.3f} (want < {MISS_MAX})", r)
    if rule == "oracle":
        r = score_answer(v, v.oracle, bench, trusted=trusted)
        return Verdict(v.id, rule, r.score >= ORACLE_MIN, f"oracle scores {r.score:.3f} (want >= {ORACLE_MIN})", r)
    if rule == "repeat":
        if first is None:
            first = score_answer(v, v.oracle, bench, trusted=trusted)
        second = _again(v, bench, trusted=trusted)
        diffs = [f"{a.id}: {a.value!r} then {b.value!r}" for a, b in zip(first.checks, second.checks)
                 if not _same(a.value, b.value)]
        ok = not diffs and first.score == second.score
        return Verdict(v.id, rule, ok, "every check repeats exactly" if ok else "values changed: " + "; ".join(diffs),
                       second)
    miss = next((m for m in v.near_misses if _rule(m) == rule), None)
    if miss is None:
        raise TaskError(f"variant {v.id}: no rule {rule!r} (rules: {', '.join(variant_rules(v.id))})")
    r = score_answer(v, miss, bench, trusted=trusted)
    held = [c for c in miss.fails if r.check(c).score >= 1.0]
    msg = f"{miss.name} scores {r.score:.3f} (want < {MISS_MAX})" + (f"; passes {', '.join(held)}" if held else "")
    return Verdict(v.id, rule, r.score < MISS_MAX and not held, msg, r)


def score_answer(v: Variant, answer: Answer | None, bench: Bench, *, trusted: bool | None = None) -> TaskResult:
    """One of the variant's answers scored on it (None: doing nothing): ops on a song task; made by code
    (``answer.make``) on an audio or a transcription task, as a published task's made answer is."""
    task = v.task
    if task.is_audio:
        from .audio.validity import score_made

        return score_made(task, "do-nothing" if answer is None else _make(v, answer), bench)
    if task.family == TRANSCRIPTION:
        from ..transcribe.answers import made_from_data

        made = None if answer is None else made_from_data({"make": _make(v, answer)}, source=f"{v.id} {answer.name}")
        return score_task(task, made, bench=bench)
    if answer is not None and answer.make is not None:
        raise TaskError(f"variant {v.id}: {answer.name}: a song task's answer is ops, not make={answer.make!r}")
    start = start_song(task, bench=bench)
    sub = None if answer is None else submission_from_data(answer.ops, source=f"{v.id} {answer.name}")
    return score_task(task, sub, bench=bench, trusted=trusted, start=start)


def _make(v: Variant, answer: Answer) -> str:
    if answer.make is None:
        raise TaskError(f"variant {v.id}: {answer.name}: an audio or transcription task's answer is made by code "
                        "(make), not ops")
    return answer.make


def _again(v: Variant, bench: Bench, *, trusted: bool | None) -> TaskResult:
    """The oracle scored again from scratch: song tasks with fresh renders and fresh random ids; an audio
    task's files made again (in memory); a transcription task's notes made and matched again."""
    if v.task.is_audio:
        from ..measure.kept import clear as clear_kept
        from .audio.validity import score_made

        clear_kept()  # the inputs' figures measured afresh too
        return score_made(v.task, _make(v, v.oracle), bench, fresh=True)
    if v.task.family == TRANSCRIPTION:
        return score_answer(v, v.oracle, bench, trusted=trusted)
    from .context import clear_process_caches

    start = start_song(v.task, bench=bench)
    oracle = submission_from_data(v.oracle.ops, source=f"{v.id} oracle")
    song = scramble_new_ids(candidate_song(start, oracle), start=start, seed=len(v.id) * 7919)
    clear_process_caches()
    return score_task(v.task, song, bench=bench, trusted=trusted, start=start)
