"""Scoring throughput of ``overdub eval --agent replay``: every song task × 5 trials, serial against --parallel 2.

The answers replayed are the oracles (``oracles/<task>.json``'s ops, written as ``<task>.json`` into a
scratch folder), so every trial is scored and nothing waits on an agent: the figures are the scorer's own
throughput inside an eval. Each run is a fresh ``overdub eval`` in a child process (cold caches, numba
loading its compiled loops from its cache), timed from outside; the child reports its peak resident
memory and that of its largest child (``resource.getrusage``), so the serial run gives the memory of the
one process that scores, and the parallel run that of the largest worker process.

The trials of a task replay the same answer, so a process that scores a task's second trial finds its
renders in the stem cache: these figures are what replaying a run costs, and an optimistic bound for an
agent's trials (which differ). The serial run goes first, then the parallel run; both score the same
trials, and the script checks their scores are equal.

Run: ``python bench/eval_speed.py [--trials 5] [--tasks all] [--parallel 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _child(argv: list[str]) -> None:
    """Run ``overdub eval`` here, then print this process's and its largest child's peak RSS (MB)."""
    from pytest_overdub.cli import main

    code = main(["eval", *argv])
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"code": code, "self_mb": own.ru_maxrss / 1024, "children_mb": kids.ru_maxrss / 1024,
                      "cpu_s": own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime}))


def _answers(folder: Path, tasks: list[str]) -> None:
    from pytest_overdub.bench.tasks import bundled_bench

    bench = bundled_bench()
    for tid in tasks:
        ops = json.loads(bench.oracle_path(tid).read_text(encoding="utf-8"))["ops"]
        (folder / f"{tid}.json").write_text(json.dumps(ops), encoding="utf-8")


def _run(label: str, argv: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", *argv], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{label} run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**figures, "seconds": seconds}


def _scores(out: Path) -> dict[str, float | None]:
    return {str(p.parent.relative_to(out)): json.loads(p.read_text())["score"] for p in out.glob("*/*/result.json")}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    from pytest_overdub.bench.tasks import bundled_bench
    from pytest_overdub.evaluate.runner import select_tasks

    bench = bundled_bench()
    # the song tasks: their oracles are ops to replay (an audio or transcription task's oracle is files
    # made by code, which replay reads as a folder; not measured here)
    tasks = [t for t in select_tasks(bench, args.tasks, split="all")
             if bench.task(t).family != "transcription" and not bench.task(t).is_audio]
    n = len(tasks) * args.trials
    with tempfile.TemporaryDirectory(prefix="overdub-eval-speed-") as tmp:
        answers = Path(tmp) / "answers"
        answers.mkdir()
        _answers(answers, tasks)
        common = ["--agent", f"replay:{answers}", "--tasks", ",".join(tasks), "--split", "all",
                  "--trials", str(args.trials)]
        print(f"{len(tasks)} tasks x {args.trials} trials = {n} scorings (oracle replays), cpus: {os.cpu_count()}")
        runs = {}
        for label, extra in (("serial", ["--parallel", "1"]), (f"parallel {args.parallel}",
                                                               ["--parallel", str(args.parallel)])):
            out = Path(tmp) / label.replace(" ", "-")
            runs[label] = _run(label, [*common, *extra, "--out", str(out)])
            runs[label]["scores"] = _scores(out)
        serial, par = runs["serial"], runs[f"parallel {args.parallel}"]
        assert serial["scores"] == par["scores"], "the parallel run scored differently"
        print(f"{'run':<12} {'wall s':>8} {'trials/min':>11} {'s/trial':>8} {'CPU s':>8} "
              f"{'peak MB/scoring process':>24}")
        for label, r in runs.items():
            peak = r["self_mb"] if label == "serial" else r["children_mb"]
            print(f"{label:<12} {r['seconds']:>8.1f} {n / r['seconds'] * 60:>11.1f} {r['seconds'] / n:>8.2f} "
                  f"{r['cpu_s']:>8.1f} {peak:>24.0f}")
        print(f"speed-up with --parallel {args.parallel}: {serial['seconds'] / par['seconds']:.2f}x; "
              f"the parallel run's own process peaked at {par['self_mb']:.0f} MB (it only hands out trials)")
        mean = sum(serial["scores"].values()) / n
        print(f"every trial scored the same in both runs; mean oracle score {mean:.3f}")


if __name__ == "__main__":
    main()
