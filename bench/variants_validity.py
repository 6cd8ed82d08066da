"""The validity rules on every train variant of each template (issue 18, "Done when"), and the time taken.

    python3 bench/variants_validity.py                      # seeds 1-99 of every template
    python3 bench/variants_validity.py --seeds 1 20 --templates write-bassline
    python3 bench/variants_validity.py --sample 10          # the fixed sample the bench collects (10 each)
    python3 bench/variants_validity.py --seed-list 3 17 42 --templates mix-chorus-lift
    python3 bench/variants_validity.py --templates master-ep-sequence --rules cheat:crushed   # one rule

Per template: oracle min and mean (want >= 0.9), doing nothing max, near-miss and cheat max (want < 0.5),
the seeds where each extreme was found, the range of each of the oracle's check values (the margin to its
target), the variants where a rule failed, and seconds per variant (each
scores 5-6 answers in one process, renders of the starting song cached between them: the scorer runtime is
entered, as the plugin and ``overdub`` do). A benchmark reads the clock; the scores do not.

Memory: a sweep process keeps up to the stem cache (``OVERDUB_STEM_CACHE_MB``, default 1536) plus half as
much again in kept parts and the scorer's memos, about 3-4 GB over a long sweep. Running several sweeps at
once, set ``OVERDUB_STEM_CACHE_MB=512`` (or less) for each: the values do not change, only what is rendered
twice. Eight default-sized sweeps ran a 24 GB machine out of memory.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_overdub import runtime  # noqa: E402
from pytest_overdub.bench.variant_checks import check_variant  # noqa: E402
from pytest_overdub.bench.variant_sample import sample_seeds  # noqa: E402
from pytest_overdub.bench.variants import templates  # noqa: E402


def seeds_for(name: str, args: argparse.Namespace) -> list[int]:
    """The seeds a template is swept over: the fixed sample, a list, or a range (the default 1-99)."""
    if args.sample is not None:
        return sample_seeds(name, args.sample)
    if args.seed_list:
        return list(args.seed_list)
    first, last = args.seeds
    return list(range(first, last + 1))


def sweep(name: str, seeds: list[int], *, rules: tuple[str, ...] | None = None) -> None:
    """Check every variant of ``name`` over ``seeds`` (only ``rules``, when given) and print the template's
    summary and failed rules."""
    oracle, base, miss, failed, seconds = [], [], [], [], []
    values: dict[str, list[float]] = {}
    for seed in seeds:
        t0 = time.perf_counter()
        rows = check_variant(f"{name}@{seed}", trusted=True, rules=rules)
        seconds.append(time.perf_counter() - t0)
        for rule, ok, msg, result in rows:
            kind = oracle if rule == "oracle" else base if rule == "baseline" else miss
            kind.append((result.score, seed, rule))
            if rule == "oracle":
                for c in result.checks:
                    if isinstance(c.value, (int, float)):
                        values.setdefault(c.id, []).append(float(c.value))
            if not ok:
                failed.append(f"{name}@{seed} {rule}: {msg}")
    parts = []
    if oracle:
        low = min(oracle)
        parts.append(f"oracle min {low[0]:.3f} (@{low[1]}) mean {sum(s for s, _, _ in oracle) / len(oracle):.3f}")
    if base:
        parts.append(f"baseline max {max(base)[0]:.3f} (@{max(base)[1]})")
    if miss:
        high = max(miss)
        parts.append(f"near miss/cheat max {high[0]:.3f} ({high[2]}@{high[1]})")
    print(f"{name}: {len(seeds)} seeds: {', '.join(parts)}, {len(failed)} rules failed, "
          f"{sum(seconds) / len(seconds):.1f} s per variant", flush=True)
    print("  oracle's check values, min..max: " + ", ".join(f"{k} {min(v):.3g}..{max(v):.3g}"
                                                       for k, v in values.items()), flush=True)
    for line in failed:
        print("  " + line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs=2, type=int, default=(1, 99), metavar=("FIRST", "LAST"))
    parser.add_argument("--seed-list", nargs="+", type=int, metavar="SEED", help="these seeds instead of a range")
    parser.add_argument("--sample", type=int, metavar="N", help="the fixed sample: each template's first N seeds "
                        "in sha256 order, as the bench collects them")
    parser.add_argument("--templates", nargs="+", default=sorted(templates()))
    parser.add_argument("--rules", nargs="+", metavar="RULE",
                        help="only these rules (oracle, baseline, near:<name>, cheat:<what>), e.g. after a fix to one")
    args = parser.parse_args()
    runtime.enter("variants-validity")
    for name in args.templates:
        sweep(name, seeds_for(name, args), rules=tuple(args.rules) if args.rules else None)


if __name__ == "__main__":
    main()
