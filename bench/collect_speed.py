"""How long collecting every train variant takes (issue 18): ``pytest tasks --overdub-self-check
--overdub-variants=all --collect-only`` (2673 variants), serially and with ``-n 2`` (each xdist worker
collects every item), this code and, with ``--against REV``, REV's, one after the other in the same minutes.

Collecting a variant builds nothing (its items come from its template's declaration); before, it built the
variant (generated its song and ran the template's build, which renders for three templates), once per
collecting process. Each line prints the wall and CPU seconds of a fresh ``pytest`` (its processes' user +
system time: the fairer figure on a loaded machine) and the load average before and after.
Run from the checkout: ``python bench/collect_speed.py [--against REV] [--workers N]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from variants_speed import ROOT, _export, _time


def _collect(code: Path, workers: int) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(code / "tasks"),
            "--overdub-self-check", "--overdub-variants=all", "--collect-only",
            *(["-n", str(workers)] if workers else [])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", help="also time the collection on the code of this revision")
    parser.add_argument("--workers", type=int, default=2, help="xdist workers of the second run (default 2)")
    args = parser.parse_args()
    trees = [("this code", ROOT)] + ([(args.against, _export(args.against))] if args.against else [])
    for label, code in trees:
        for workers in (0, args.workers):
            how = "serially" if not workers else f"-n {workers}"
            _time(f"collect all, {how}, {label}", _collect(code, workers), code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
