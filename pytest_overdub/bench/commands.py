"""``overdub list``, ``overdub start`` and ``overdub score``: the scorer without pytest."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

from .tasks import Bench, bundled_bench


def _bench(path: Path | None) -> Bench:
    return Bench(path.resolve()) if path else bundled_bench()


def list_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="overdub list", description="List the tasks and their instructions.",
                                     epilog="example: overdub list --bench ../my-tasks")
    parser.add_argument("--bench", type=Path, help="a directory with tasks/ and songs/")
    args = parser.parse_args(argv)
    bench = _bench(args.bench)
    for tid in bench.task_ids():
        task = bench.task(tid)
        print(f"{task.id}  [{task.family}]  {task.title}")
        print(textwrap.indent(textwrap.fill(task.instruction, 96), "    "))
    return 0


def start_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="overdub start",
                                     description="Write the song an agent is handed for a task (setup applied).",
                                     epilog="example: overdub start mix-chorus-lift --out start.json")
    parser.add_argument("task")
    parser.add_argument("--out", type=Path, help="where to write the song (default: print it)")
    parser.add_argument("--bench", type=Path)
    args = parser.parse_args(argv)
    from ..song.model import dumps_song
    from .tasks import start_song

    bench = _bench(args.bench)
    text = dumps_song(start_song(bench.task(args.task), bench=bench))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


def score_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="overdub score",
        description="Score a submission (ops, {ops}, transactions, a tool-call log or a whole song) on a "
                    "task. Exit 0 when the score reaches --pass.",
        epilog="example: overdub score mix-chorus-lift ops.json --json")
    parser.add_argument("task")
    parser.add_argument("submission", type=Path)
    parser.add_argument("--bench", type=Path)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--pass", dest="pass_line", type=float, default=0.9)
    parser.add_argument("--trust-kernels", action="store_true",
                        help="run song-defined devices in-process instead of the sandbox")
    parser.add_argument("--weak-sandbox", action="store_true",
                        help="run untrusted kernels even where a required sandbox layer cannot be applied "
                             "(also OVERDUB_WEAK_SANDBOX=1); the result says which layers ran")
    args = parser.parse_args(argv)
    from ..song.submission import load_submission
    from .report import result_to_dict

    if args.weak_sandbox:
        from ..render.trust import allow_weak_sandbox

        allow_weak_sandbox()
    from .tasks import score_task

    bench = _bench(args.bench)
    task = bench.task(args.task)
    submission = load_submission(args.submission)  # a file that cannot be read is an error (exit 2)
    result = score_task(task, submission, bench=bench, trusted=True if args.trust_kernels else None)
    if args.json:
        print(json.dumps(result_to_dict(result), indent=2))
    else:
        print(result.text())
    return 0 if result.score >= args.pass_line else 1
