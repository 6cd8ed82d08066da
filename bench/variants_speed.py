"""How long the self-check takes with its default draw of variants, and with the fixed sample per template
(issue 18: the bare ``pytest tasks --overdub-self-check -n 2`` under 60 s, and ``--overdub-variants=all``
under 15 minutes on 2 cores).

Times, each a fresh ``pytest tasks --overdub-self-check -n WORKERS``, with the CPU seconds it took (its
processes' user + system time: the fairer figure on a loaded machine):

1. the reference, measured in the same run: the published tasks alone (``--overdub-variants=0``);
2. the bare self-check: the published tasks and the default draw of K variant ids across every template
   (``bench/variant_sample.py``, ``SELF_CHECK_DRAW``);
3. the fixed sample of N train variants of each template (``--overdub-variants=N``, ``--sample N``,
   default 1), and from it ``--overdub-variants=all``, projected: published + (sample - published) * 99 / N,
   the sample being a fixed draw from the 99 seeds of each template (sha256 order), so its mean cost per
   variant is the whole split's, give or take its spread (the draw of K is too few to project from);
4. with ``--against REV``: command 3 on the code of git revision REV (exported to a folder named by its
   commit, reused by later runs), so a change's gain is a ratio measured in the same minutes;
5. with ``--all``: ``--overdub-variants=all`` for real, instead of the projection.

``--serial --against REV`` instead runs every rule of each variant of the sample of N (``--sample``)
serially in one scorer process (no pytest, no workers), this code and REV's, and prints each variant's
wall and CPU seconds in both and whether every check value is bit-identical (a digest of them).

Each line prints the load average (1 minute) before and after: on the shared 2-core machine a figure
measured at a load above 2 is slowed by other work, and the ratio of two lines is fair only at like loads.
Run from the checkout: ``python bench/variants_speed.py [--sample N] [--against REV] [--all]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRAIN_SEEDS = 99


def _self_check(code: Path, variants: str | None, workers: int) -> list[str]:
    """The self-check's command; ``variants`` None: the bare command (its default draw)."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(code / "tasks"),
            "--overdub-self-check", *([] if variants is None else [f"--overdub-variants={variants}"]),
            "-n", str(workers)]


def _time(label: str, cmd: list[str], code: Path) -> float:
    import resource

    env = dict(os.environ, PYTHONPATH=str(code))
    before = os.getloadavg()[0]
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    tail = (out.stdout.strip().splitlines() or [""])[-1]
    print(f"{label:<44} {seconds:7.1f} s  CPU {cpu:6.1f} s  load {before:4.1f} -> {os.getloadavg()[0]:4.1f}  "
          f"exit {out.returncode}  {tail}", flush=True)
    return seconds


# A child in one code tree: every rule of each variant, serially (scorer runtime entered), timed per
# variant, with a digest of every check value, so two trees' runs show their speed and that the values agree.
_RULES = """
import hashlib, json, sys, time
from pytest_overdub import runtime
runtime.enter("bench")
from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.bench.variant_rules import variant_rules, variant_verdict
bench, out = bundled_bench(), {}
for vid in sys.argv[1:]:
    t0, c0, first, h = time.perf_counter(), time.process_time(), None, hashlib.sha256()
    for rule in variant_rules(vid):
        v = variant_verdict(vid, rule, bench, first=first)
        first = v.result if rule == "oracle" else first
        h.update(repr([(rule, c.id, c.value, c.score) for c in v.result.checks] + [v.result.score]).encode())
    out[vid] = (time.perf_counter() - t0, h.hexdigest(), time.process_time() - c0)
print(json.dumps(out))
"""


def _rules(code: Path, ids: list[str]) -> dict[str, tuple[float, str]]:
    env = dict(os.environ, PYTHONPATH=str(code))
    out = subprocess.run([sys.executable, "-c", _RULES, *ids], cwd=code, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"the rules run in {code} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _serial(rev: str, n: int) -> None:
    from pytest_overdub.bench.variant_sample import sample_ids

    ids = sample_ids(n)
    old_code = _export(rev)
    before = os.getloadavg()[0]
    new, old = _rules(ROOT, ids), _rules(old_code, ids)
    print(f"every rule of {len(ids)} variants, serially; load {before:.1f} -> {os.getloadavg()[0]:.1f}; "
          "seconds of wall time, then of CPU (the fairer figure on a loaded machine)")
    print(f"{'variant':<34} {'this code':>10} {rev:>10}  ratio  {'CPU this':>9} {'CPU ' + rev:>10}  ratio  values")
    for vid in ids:
        same = "identical" if new[vid][1] == old[vid][1] else "DIFFER"
        (w1, _, c1), (w0, _, c0) = new[vid], old[vid]
        print(f"{vid:<34} {w1:9.1f}s {w0:9.1f}s {w0 / w1:5.1f}x  {c1:8.1f}s {c0:9.1f}s {c0 / c1:5.1f}x  {same}")
    (w1, c1), (w0, c0) = ((sum(v[0] for v in t.values()), sum(v[2] for v in t.values())) for t in (new, old))
    print(f"{'all':<34} {w1:9.1f}s {w0:9.1f}s {w0 / w1:5.1f}x  {c1:8.1f}s {c0:9.1f}s {c0 / c1:5.1f}x")


def _export(rev: str) -> Path:
    """REV's tree in a folder named by its commit, reused by later runs (numba compiles the DSP loops of a
    new folder once, which would otherwise land in the first variant's time)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", f"{rev}^{{commit}}"], capture_output=True,
                         text=True, check=True).stdout.strip()
    where = Path(tempfile.gettempdir()) / f"overdub-against-{sha}"
    if (where / ".exported").exists():
        return where
    where.mkdir(exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    (where / ".exported").write_text(sha + "\n")
    return where


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from pytest_overdub.bench.variant_sample import SELF_CHECK_DRAW

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=1, help="variants per template of command 3 (default 1)")
    parser.add_argument("--workers", type=int, default=2, help="xdist workers (default 2)")
    parser.add_argument("--against", metavar="REV", help="also time the sample on the code of this git revision")
    parser.add_argument("--all", action="store_true", help="time --overdub-variants=all for real (long)")
    parser.add_argument("--serial", action="store_true",
                        help="instead: every rule of the sample's variants run serially, this code against "
                             "--against REV's (default HEAD), per variant, with whether every check value agrees")
    args = parser.parse_args()
    n = args.sample
    if args.serial:
        _serial(args.against or "HEAD", n)
        return 0
    print(f"pytest tasks --overdub-self-check -n {args.workers}, {os.cpu_count()} cores")
    published = _time("published tasks (reference)", _self_check(ROOT, "0", args.workers), ROOT)
    bare = _time(f"the bare self-check (+ a draw of {SELF_CHECK_DRAW})", _self_check(ROOT, None, args.workers), ROOT)
    print(f"{'':<44} {bare / published:7.2f}x the reference; {bare - published:.1f} s for the drawn variants")
    sampled = _time(f"+ the sample of {n} per template", _self_check(ROOT, str(n), args.workers), ROOT)
    print(f"{'':<44} {sampled / published:7.2f}x the reference; {sampled - published:.1f} s for the variants")
    if args.against:
        code = _export(args.against)
        old = _time(f"+ the sample of {n}, code of {args.against}", _self_check(code, str(n), args.workers), code)
        print(f"{'':<44} this code takes {sampled / old:.2f}x the time of {args.against}'s")
    if args.all:
        every = _time("+ every train variant (all)", _self_check(ROOT, "all", args.workers), ROOT)
        print(f"{'':<44} {every / 60:.1f} minutes")
    else:
        projected = published + (sampled - published) * TRAIN_SEEDS / n
        print(f"{'every train variant (all), projected':<44} {projected:7.1f} s = {projected / 60:.1f} minutes "
              f"(published + variants x {TRAIN_SEEDS}/{n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
