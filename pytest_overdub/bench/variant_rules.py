"""One validity rule on one variant, as the self-check's items run them: ``oracle`` (>= 0.9), ``baseline``
(doing nothing < 0.5), ``near:<what>`` / ``cheat:<what>`` (< 0.5, under 1 on every check it names) and
``repeat`` (the oracle scored again with fresh renders and fresh ids gives the same values). The rules are
those of :func:`.variant_checks.check_variant`, one at a time so each is its own pytest item."""

from __future__ import annotations

from ..song.submission import submission_from_data
from ..errors import TaskError
from .scoring import TaskResult
from .tasks import Bench, candidate_song, score_task, start_song
from .validity import MISS_MAX, ORACLE_MIN, Verdict, _same, scramble_new_ids
from .templates.base import Answer
from .variants import variant


def variant_rules(variant_id: str) -> list[str]:
    """The rules a variant is held to, in the order the self-check runs them."""
    return ["oracle", "baseline", *map(_rule, variant(variant_id).near_misses), "repeat"]


def _rule(miss: Answer) -> str:
    """``near:<name>`` or ``cheat:<what>`` (a cheat's name is ``cheat-<what>``)."""
    return f"cheat:{miss.name.removeprefix('cheat-')}" if miss.cheat else f"near:{miss.name}"


def variant_verdict(variant_id: str, rule: str, bench: Bench, *, trusted: bool | None = None,
                    first: TaskResult | None = None) -> Verdict:
    """Run ``rule`` on the variant (``first``: the oracle's result, for ``repeat``)."""
    v = variant(variant_id)
    start = start_song(v.task, bench=bench)
    if rule == "baseline":
        r = score_task(v.task, None, bench=bench, trusted=trusted, start=start)
        return Verdict(v.id, rule, r.score < MISS_MAX, f"doing nothing scores {r.score:.3f} (want < {MISS_MAX})", r)
    oracle = submission_from_data(v.oracle.ops, source=f"{v.id} oracle")
    if rule == "oracle":
        r = score_task(v.task, oracle, bench=bench, trusted=trusted, start=start)
        return Verdict(v.id, rule, r.score >= ORACLE_MIN, f"oracle scores {r.score:.3f} (want >= {ORACLE_MIN})", r)
    if rule == "repeat":
        from ..render.stems import PROCESS_CACHE

        if first is None:
            first = score_task(v.task, oracle, bench=bench, trusted=trusted, start=start)
        song = scramble_new_ids(candidate_song(start, oracle), start=start, seed=len(v.id) * 7919)
        PROCESS_CACHE.clear()
        second = score_task(v.task, song, bench=bench, trusted=trusted, start=start)
        diffs = [f"{a.id}: {a.value!r} then {b.value!r}" for a, b in zip(first.checks, second.checks)
                 if not _same(a.value, b.value)]
        ok = not diffs and first.score == second.score
        return Verdict(v.id, rule, ok, "every check repeats exactly" if ok else "values changed: " + "; ".join(diffs),
                       second)
    miss = next((m for m in v.near_misses if _rule(m) == rule), None)
    if miss is None:
        raise TaskError(f"variant {v.id}: no rule {rule!r} (rules: {', '.join(variant_rules(v.id))})")
    r = score_task(v.task, submission_from_data(miss.ops, source=f"{v.id} {miss.name}"), bench=bench,
                   trusted=trusted, start=start)
    held = [c for c in miss.fails if r.check(c).score >= 1.0]
    msg = f"{miss.name} scores {r.score:.3f} (want < {MISS_MAX})" + (f"; passes {', '.join(held)}" if held else "")
    return Verdict(v.id, rule, r.score < MISS_MAX and not held, msg, r)
