"""The validity rules on a variant (docs/validity.md), as the self-check holds a task file to them:
oracle at least 0.9, doing nothing and every near miss or cheat under 0.5, each near miss under 1 on every
check it names. Its own module, so that ``variants`` (which ``tasks`` reads) imports neither."""

from __future__ import annotations

from typing import Any

from .tasks import bundled_bench
from .variant_rules import variant_rules, variant_verdict


def check_variant(variant_id: str, *, trusted: bool | None = None,
                  rules: tuple[str, ...] | None = None) -> list[tuple[str, bool, str, Any]]:
    """The validity rules on one variant: (rule, held, message, result) for the oracle (>= 0.9), doing
    nothing (< 0.5), and each near miss and cheat (< 0.5, under 1 on every check it names); the repeat
    rule is the self-check's (:func:`.variant_rules.variant_verdict`). ``rules``: only these (as
    :func:`~.variant_rules.variant_rules` names them)."""
    bench = bundled_bench()
    out = []
    for rule in variant_rules(variant_id):
        if rule == "repeat" or (rules is not None and rule not in rules):
            continue
        v = variant_verdict(variant_id, rule, bench, trusted=trusted)
        out.append((rule, v.ok, v.message, v.result))
    return out
