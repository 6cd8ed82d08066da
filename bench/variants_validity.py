"""The validity rules on every train variant of each template (issue 18, "Done when"), and the time taken.

    python3 bench/variants_validity.py                      # seeds 1-99 of every template
    python3 bench/variants_validity.py --seeds 1 20 --templates write-bassline

Per template: oracle min and mean (want >= 0.9), doing nothing max, near-miss and cheat max (want < 0.5),
the variants where a rule failed, and seconds per variant (each scores 5-6 answers in one process, renders
of the starting song cached between them). A benchmark reads the clock; the scores do not.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_overdub.bench.variant_checks import check_variant  # noqa: E402
from pytest_overdub.bench.variants import templates  # noqa: E402
from pytest_overdub.runtime import enter  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs=2, type=int, default=(1, 99), metavar=("FIRST", "LAST"))
    parser.add_argument("--templates", nargs="+", default=sorted(templates()))
    args = parser.parse_args()
    enter("variants-validity")  # the scorer's stem cache, as the plugin and `overdub` have it
    first, last = args.seeds
    for name in args.templates:
        oracle, base, miss, failed, seconds = [], [], [], [], []
        for seed in range(first, last + 1):
            t0 = time.perf_counter()
            rows = check_variant(f"{name}@{seed}", trusted=True)
            seconds.append(time.perf_counter() - t0)
            for rule, ok, msg, result in rows:
                (oracle if rule == "oracle" else base if rule == "baseline" else miss).append(result.score)
                if not ok:
                    failed.append(f"{name}@{seed} {rule}: {msg}")
        print(f"{name}: seeds {first}-{last}: oracle min {min(oracle):.3f} mean {sum(oracle) / len(oracle):.3f}, "
              f"baseline max {max(base):.3f}, near miss/cheat max {max(miss):.3f}, "
              f"{len(failed)} rules failed, {sum(seconds) / len(seconds):.1f} s per variant", flush=True)
        for line in failed:
            print("  " + line)


if __name__ == "__main__":
    main()
