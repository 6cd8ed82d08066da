"""The validity rules on a variant (docs/validity.md), as the self-check holds a task file to them:
oracle at least 0.9, doing nothing and every near miss or cheat under 0.5, each near miss under 1 on every
check it names. Its own module, so that ``variants`` (which ``tasks`` reads) imports neither."""

from __future__ import annotations

from typing import Any

from ..song.submission import submission_from_data
from .tasks import bundled_bench, score_task, start_song
from .validity import MISS_MAX, ORACLE_MIN
from .variants import variant


def check_variant(variant_id: str, *, trusted: bool | None = None) -> list[tuple[str, bool, str, Any]]:
    """The validity rules on one variant: (rule, held, message, result) for the oracle (>= 0.9), doing
    nothing (< 0.5), and each near miss and cheat (< 0.5, under 1 on every check it names)."""
    v = variant(variant_id)
    bench = bundled_bench()
    start = start_song(v.task, bench=bench)
    out = []
    r = score_task(v.task, submission_from_data(v.oracle.ops, source=f"{v.id} oracle"), bench=bench,
                   trusted=trusted, start=start)
    out.append(("oracle", r.score >= ORACLE_MIN, f"oracle scores {r.score:.3f} (want >= {ORACLE_MIN})", r))
    r = score_task(v.task, None, bench=bench, trusted=trusted, start=start)
    out.append(("baseline", r.score < MISS_MAX, f"doing nothing scores {r.score:.3f} (want < {MISS_MAX})", r))
    for miss in v.near_misses:
        r = score_task(v.task, submission_from_data(miss.ops, source=f"{v.id} {miss.name}"), bench=bench,
                       trusted=trusted, start=start)
        held = [c for c in miss.fails if r.check(c).score >= 1.0]
        ok = r.score < MISS_MAX and not held
        msg = f"{miss.name} scores {r.score:.3f} (want < {MISS_MAX})" + (f"; passes {', '.join(held)}" if held else "")
        out.append((f"{'cheat' if miss.cheat else 'near'}:{miss.name}", ok, msg, r))
    return out
