"""How long collecting every train variant takes (issue 18): ``pytest tasks --overdub-self-check
--overdub-variants=all`` (2673 variants, 19959 items) collected and nothing run: serially with
``--collect-only``, and with ``-n 2`` and a ``-k`` that selects no item (xdist turns itself off under
``--collect-only``; here each worker collects every item, as in a real run), this code and, with
``--against REV``, REV's, one after the other in the same minutes.

Collecting a variant builds nothing (its items come from its template's declaration); before, it built the
variant (generated its song and ran the template's build, which renders for three templates), once per
collecting process. Each line prints the wall and CPU seconds of a fresh ``pytest`` (its processes' user +
system time: the fairer figure on a loaded machine) and the load average before and after.
Run from the checkout: ``python bench/collect_speed.py [--against REV] [--workers N] [--variants N]
[--serial-only]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from variants_speed import ROOT, _export, _time


def _collect(code: Path, workers: int, variants: str) -> list[str]:
    how = ["-n", str(workers), "-k", "no_such_item"] if workers else ["--collect-only"]
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(code / "tasks"),
            "--overdub-self-check", f"--overdub-variants={variants}", *how]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", help="also time the collection on the code of this revision")
    parser.add_argument("--workers", type=int, default=2, help="xdist workers of the second run (default 2)")
    parser.add_argument("--variants", default="all", help="--overdub-variants: N per template or all (default)")
    parser.add_argument("--serial-only", action="store_true", help="only the serial --collect-only run")
    args = parser.parse_args()
    trees = [("this code", ROOT)] + ([(args.against, _export(args.against))] if args.against else [])
    for label, code in trees:
        for workers in (0,) if args.serial_only else (0, args.workers):
            how = "serially" if not workers else f"-n {workers}"
            _time(f"collect {args.variants}, {how}, {label}", _collect(code, workers, args.variants), code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
