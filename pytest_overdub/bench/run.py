"""``overdub run``: the bench's own table, every task's oracle, baseline and near misses.

Tasks are scored in parallel worker processes (``-j``, default: the number of cores, at most 4);
each worker renders its tasks with its own stem cache. Exit status 0 when every validity rule holds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ..cliargs import Parser, arg, int_in
from .commands import BENCH_HELP, bench_dir
from .tasks import Bench, bundled_bench


def _task_rows(root: str, task_id: str, repeat: bool) -> dict:
    from .validity import check_baseline, check_near_miss, check_oracle, check_repeat

    bench = Bench(Path(root))
    task = bench.task(task_id)
    t0 = time.perf_counter()
    oracle = check_oracle(task, bench)
    verdicts = [oracle, check_baseline(task, bench)]
    verdicts += [check_near_miss(task, p, bench) for p in bench.near_miss_paths(task_id)]
    if repeat:
        verdicts.append(check_repeat(task, bench, first=oracle.result))
    return {
        "task": task_id, "family": task.family, "seconds": round(time.perf_counter() - t0, 2),
        "verdicts": [{"rule": v.rule, "ok": v.ok, "message": v.message,
                      "score": v.result.score if v.result else None} for v in verdicts],
    }


def _table(rows: list[dict]) -> str:
    head = f"{'task':<28} {'oracle':>7} {'baseline':>9}  near misses"
    lines = [head, "-" * len(head)]
    cols: dict[str, list[float]] = {"oracle": [], "baseline": [], "near": []}
    for row in rows:
        by = {v["rule"]: v for v in row["verdicts"]}
        near = [v for v in row["verdicts"] if v["rule"].startswith("near:")]
        cols["oracle"].append(by["oracle"]["score"])
        cols["baseline"].append(by["baseline"]["score"])
        cols["near"] += [v["score"] for v in near]
        flag = "" if all(v["ok"] for v in row["verdicts"]) else "  <-- " + "; ".join(
            f"{v['rule']}: {v['message']}" for v in row["verdicts"] if not v["ok"])
        nm = ", ".join(f"{v['rule'][5:]} {v['score']:.3f}" for v in near) or "-"
        lines.append(f"{row['task']:<28} {by['oracle']['score']:>7.3f} {by['baseline']['score']:>9.3f}  {nm}{flag}")
    mean = lambda xs: f"{sum(xs) / len(xs):.3f}" if xs else "-"  # noqa: E731
    lines.append("-" * len(head))
    lines.append(f"{'mean':<28} {mean(cols['oracle']):>7} {mean(cols['baseline']):>9}  "
                 f"{mean(cols['near'])} over {len(cols['near'])}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = Parser(
        prog="overdub run",
        description="Score every task's oracle, do-nothing baseline and near misses, check that scores "
                    "repeat, and print the table. Exit 1 if a validity rule fails.",
        epilog="example: overdub run            # the bundled bench\n"
               "         overdub run --bench ../my-tasks -j 2 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tasks", nargs="*", help="task ids (default: all)")
    parser.add_argument("--bench", type=arg(bench_dir), help=BENCH_HELP)
    parser.add_argument("-j", "--jobs", type=arg(int_in, lo=1, what="a number of worker processes"),
                        default=min(4, os.cpu_count() or 1),
                        help="worker processes, at most one per task (default: cores, at most 4)")
    parser.add_argument("--no-repeat", action="store_true", help="skip the repeatability rescoring")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    bench = args.bench or bundled_bench()
    ids = args.tasks or bench.task_ids()
    for t in ids:
        bench.task(t)  # a clear error for an unknown id before any work starts
    t0 = time.perf_counter()
    if args.jobs > 1 and len(ids) > 1:
        with ProcessPoolExecutor(max_workers=min(args.jobs, len(ids))) as pool:
            rows = list(pool.map(_task_rows, [str(bench.root)] * len(ids), ids, [not args.no_repeat] * len(ids)))
    else:
        rows = [_task_rows(str(bench.root), t, not args.no_repeat) for t in ids]
    wall = time.perf_counter() - t0
    if args.json:
        from .report import dumps_json

        print(dumps_json({"rows": rows, "seconds": round(wall, 2)}))
    else:
        print(_table(rows))
        print(f"\n{len(ids)} tasks in {wall:.1f} s")
    from .validity import check_bench

    problems = check_bench(bench) if not args.tasks else []
    for p in problems:
        print(f"bench: {p}", file=sys.stderr)
    ok = not problems and all(v["ok"] for r in rows for v in r["verdicts"])
    return 0 if ok else 1
