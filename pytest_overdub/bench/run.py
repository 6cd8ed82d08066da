"""``overdub run``: the bench's own table, every task's oracle, baseline, alternatives, near misses and cheats.

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
from typing import Any

from ..cliargs import Parser, arg, int_in
from .commands import BENCH_HELP, bench_dir
from .tasks import Bench, bundled_bench

#: ``overdub run --variants`` without N: train variants per template.
RUN_SAMPLE = 10


def _task_rows(root: str, task_id: str, repeat: bool) -> dict:
    from .validity import check_alternative, check_baseline, check_cheat, check_near_miss, check_oracle, check_repeat

    bench = Bench(Path(root))
    task = bench.task(task_id)
    t0 = time.perf_counter()
    oracle = check_oracle(task, bench)
    verdicts = [oracle, check_baseline(task, bench)]
    for kind, check, paths in (("alt", check_alternative, bench.alternative_paths(task_id)),
                               ("near", check_near_miss, bench.near_miss_paths(task_id)),
                               ("cheat", check_cheat, bench.cheat_paths(task_id))):
        verdicts += [_answer(check, task, p, bench, kind=kind) for p in paths]
    if repeat:
        verdicts.append(check_repeat(task, bench, first=oracle.result))
    return {
        "task": task_id, "family": task.family, "seconds": round(time.perf_counter() - t0, 2),
        "verdicts": [{"rule": v.rule, "ok": v.ok, "message": v.message,
                      "score": v.result.score if v.result else None} for v in verdicts],
    }


def _answer(check, task, path: Path, bench: Bench, *, kind: str):
    """One answer file's verdict; a file that cannot be read fails its rule with the reason (the other
    answers still run)."""
    from ..errors import OverdubError
    from .validity import Verdict, answer_name

    try:
        return check(task, path, bench)
    except OverdubError as exc:
        what = answer_name(task.id, path)
        return Verdict(task.id, f"{kind}:{what if kind == 'near' else what[len(kind) + 1:]}", False, str(exc))


# the answer columns: (rule prefix, heading, the extreme that matters: lowest alternative, highest miss)
_ANSWERS = (("alt", "alternatives (min)", min), ("near", "near misses (max)", max), ("cheat", "cheats (max)", max))


def _answers(row: dict, prefix: str) -> list[tuple[str, float | None]]:
    """(name, score) of a task's answers of one kind; the score is None when the file could not be read."""
    return [(v["rule"].split(":", 1)[1], v["score"]) for v in row["verdicts"] if v["rule"].startswith(prefix + ":")]


def _extreme(scored: list[tuple[str, float | None]], pick) -> str:
    """The answer nearest the line (its score and name), or the first that could not be scored, and how
    many more there are."""
    if not scored:
        return "-"
    broken = [a for a in scored if a[1] is None]
    name, score = broken[0] if broken else pick(scored, key=lambda a: a[1])
    more = f" +{len(scored) - 1}" if len(scored) > 1 else ""
    return f"{'error' if score is None else f'{score:.3f}'} {name}{more}"


def _table(rows: list[dict]) -> str:
    """One row per task: oracle, baseline, and for alternatives, near misses and cheats the one nearest its
    line (the lowest alternative, the highest near miss or cheat) with its name and ``+N`` others."""
    cells = [[row["task"], *(f"{_by(row, r):.3f}" for r in ("oracle", "baseline")),
              *(_extreme(_answers(row, p), pick) for p, _, pick in _ANSWERS)] for row in rows]
    heads = ["task", "oracle", "baseline", *(h for _, h, _ in _ANSWERS)]
    width = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(heads)]

    def line(values: list[str]) -> str:
        parts = [f"{values[0]:<{width[0]}}"] + [f"{v:>{width[i]}}" if i < 3 else f"{v:<{width[i]}}"
                                                for i, v in enumerate(values) if i]
        return "  ".join(parts).rstrip()

    head = line(heads)
    lines = [head, "-" * len(head)]
    for row, c in zip(rows, cells):
        flag = "" if all(v["ok"] for v in row["verdicts"]) else "  <-- " + "; ".join(
            f"{v['rule']}: {v['message']}" for v in row["verdicts"] if not v["ok"])
        lines.append(line(c) + flag)
    fixed = {r: [_by(row, r) for row in rows] for r in ("oracle", "baseline")}
    answers = {p: [s for row in rows for _, s in _answers(row, p) if s is not None] for p, _, _ in _ANSWERS}
    mean = lambda xs: f"{sum(xs) / len(xs):.3f}" if xs else "-"  # noqa: E731
    lines.append("-" * len(head))
    lines.append(line(["mean", *(mean(fixed[r]) for r in fixed),
                       *(f"{mean(answers[p])} over {len(answers[p])}" for p, _, _ in _ANSWERS)]))
    return "\n".join(lines)


def _variant_rows(variant_id: str, repeat: bool) -> dict:
    """Every validity rule on one variant (:mod:`.variant_rules`), as :func:`_task_rows` gives a task's."""
    from .variant_rules import variant_rules, variant_verdict

    bench = bundled_bench()
    t0 = time.perf_counter()
    verdicts, first = [], None
    for rule in variant_rules(variant_id):
        if rule == "repeat" and not repeat:
            continue
        v = variant_verdict(variant_id, rule, bench, first=first)
        first = v.result if rule == "oracle" else first
        verdicts.append(v)
    return {"task": variant_id, "family": bench.task(variant_id).family,
            "seconds": round(time.perf_counter() - t0, 2),
            "verdicts": [{"rule": v.rule, "ok": v.ok, "message": v.message,
                          "score": v.result.score if v.result else None} for v in verdicts]}


def _variant_table(rows: list[dict]) -> str:
    """One row per template over its variants: oracle min and mean (want >= 0.9), baseline, near-miss and
    cheat max (want < 0.5), each marked ok or FAIL, the repeats, and seconds per variant; then each failed
    rule on its own line."""
    from .validity import MISS_MAX, ORACLE_MIN

    by_template: dict[str, list[dict]] = {}
    for row in rows:
        by_template.setdefault(row["task"].split("@")[0], []).append(row)

    heads = ["template", "variants", "oracle min", "oracle mean", "baseline max", "near max", "cheat max",
             "repeat", "s/variant"]
    cells, failed = [], []
    for name, group in sorted(by_template.items()):
        got = {p: [v["score"] for r in group for v in r["verdicts"]
                   if (v["rule"] == p or v["rule"].startswith(p + ":")) and v["score"] is not None]
               for p in ("oracle", "baseline", "near", "cheat")}
        repeats = [v["ok"] for r in group for v in r["verdicts"] if v["rule"] == "repeat"]
        failed += [f"  {r['task']} {v['rule']}: {v['message']}"
                   for r in group for v in r["verdicts"] if not v["ok"]]
        top = {p: _marked(max(got[p]), max(got[p]) < MISS_MAX) if got[p] else "-"
               for p in ("baseline", "near", "cheat")}
        low = _marked(min(got["oracle"]), min(got["oracle"]) >= ORACLE_MIN) if got["oracle"] else "-"
        mean = f"{sum(got['oracle']) / len(got['oracle']):.3f}" if got["oracle"] else "-"
        cells.append([name, str(len(group)), low, mean, top["baseline"], top["near"], top["cheat"],
                      "-" if not repeats else ("ok" if all(repeats) else "FAIL"),
                      f"{sum(r['seconds'] for r in group) / len(group):.1f}"])
    width = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(heads)]

    def line(values: list[str]) -> str:
        return "  ".join(f"{v:<{width[i]}}" if i == 0 else f"{v:>{width[i]}}" for i, v in enumerate(values))

    head = line(heads)
    return "\n".join([head, "-" * len(head), *map(line, cells), *(["failed:"] + failed if failed else [])])


def _marked(score: float, ok: bool) -> str:
    return f"{score:.3f} {'ok' if ok else 'FAIL'}"


def _run_variants(args: argparse.Namespace) -> int:
    """``overdub run --variants``: every rule on the fixed sample of each template's train variants."""
    from .variant_sample import sample_ids, variant_count
    from .variants import templates

    if args.bench is not None:
        print("overdub run: --variants checks the bundled templates; --bench does not apply", file=sys.stderr)
        return 2
    for t in args.tasks:
        if t not in templates():
            print(f"overdub run: {t}: no template (templates: {', '.join(sorted(templates()))})", file=sys.stderr)
            return 2
    ids = sample_ids(variant_count(args.variants, what="--variants"), args.tasks or None)
    rows = _rows(_variant_rows, ids, [not args.no_repeat] * len(ids), jobs=args.jobs, json=args.json,
                 table=_variant_table, noun="variants")
    return 0 if all(v["ok"] for r in rows for v in r["verdicts"]) else 1


def _rows(fn: Any, *columns: list, jobs: int, json: bool, table: Any, noun: str) -> list[dict]:
    """``fn`` over the zipped ``columns`` (in ``jobs`` worker processes when there are several), printed
    as JSON or as ``table`` with the count and the wall time; the rows."""
    n = len(columns[0])
    t0 = time.perf_counter()
    if jobs > 1 and n > 1:
        with ProcessPoolExecutor(max_workers=min(jobs, n)) as pool:
            rows = list(pool.map(fn, *columns))
    else:
        rows = [fn(*a) for a in zip(*columns)]
    wall = time.perf_counter() - t0
    if json:
        from .report import dumps_json

        print(dumps_json({"rows": rows, "seconds": round(wall, 2)}))
    else:
        print(table(rows))
        print(f"\n{n} {noun} in {wall:.1f} s")
    return rows


def _by(row: dict, rule: str) -> float:
    return next(v["score"] for v in row["verdicts"] if v["rule"] == rule)


def main(argv: list[str]) -> int:
    parser = Parser(
        prog="overdub run",
        description="Score every task's oracle, do-nothing baseline, alternative answers, near misses and "
                    "cheats, check that scores repeat, and print the table. Exit 1 if a validity rule fails.",
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
    parser.add_argument("--variants", metavar="N|all", nargs="?", const=str(RUN_SAMPLE), default=None,
                        help=f"instead, the per-template summary over the fixed sample of N train variants of each "
                             f"template (task ids pick templates; default N: {RUN_SAMPLE}; all: seeds 1-99)")
    args = parser.parse_args(argv)
    if args.variants is not None:
        return _run_variants(args)
    bench = args.bench or bundled_bench()
    ids = args.tasks or bench.task_ids()
    for t in ids:
        bench.task(t)  # a clear error for an unknown id before any work starts
    rows = _rows(_task_rows, [str(bench.root)] * len(ids), ids, [not args.no_repeat] * len(ids), jobs=args.jobs,
                 json=args.json, table=_table, noun="tasks")
    from .validity import check_bench

    problems = check_bench(bench) if not args.tasks else []
    for p in problems:
        print(f"bench: {p}", file=sys.stderr)
    ok = not problems and all(v["ok"] for r in rows for v in r["verdicts"])
    return 0 if ok else 1
