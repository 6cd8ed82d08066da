"""``overdub check-changed FILES...``: the self-check for the tasks a commit touches (the pre-commit hook).

Paths map to task ids: ``tasks/<id>.json``, ``oracles/<id>.json``, ``oracles/<id>.alt-<what>.json`` and
``near_misses/<id>.<what>.json`` (near misses and cheats) name their task; ``songs/<name>.json`` names every task whose ``song`` (or an audio input's) is that name. A deleted task file counts
too (the bench rule then reports it missing). Other files are ignored. The bench root is the directory
holding ``tasks/`` above the first matching path (default: the current directory). The chosen tasks run
through ``overdub run`` (oracle, baseline, alternatives, near misses, cheats, repeat); the exit status is
its.
"""

from __future__ import annotations

import json
from pathlib import Path

BENCH_DIRS = ("tasks", "songs", "oracles", "near_misses")


def bench_root(paths: list[Path]) -> Path:
    """The bench directory a list of changed files lives in (the parent of their tasks/, songs/... dir)."""
    for p in paths:
        parent = p.resolve().parent
        if parent.name in BENCH_DIRS and (parent.parent / "tasks").is_dir():
            return parent.parent
    return Path.cwd().resolve()


def task_ids_for(paths: list[Path], *, root: Path) -> list[str]:
    """The ids of the tasks whose self-check the changed ``paths`` can affect, sorted."""
    known = {p.stem for p in (root / "tasks").glob("*.json")}
    ids: set[str] = set()
    for p in paths:
        kind, name = p.resolve().parent.name, p.name
        if not name.endswith(".json") or kind not in BENCH_DIRS:
            continue
        stem = name[:-len(".json")]
        if kind == "tasks":
            ids.add(stem)
        elif kind in ("oracles", "near_misses"):  # <id>.json (an oracle), <id>.<what>.json (any other answer)
            ids.update(t for t in known if stem == t or stem.startswith(t + "."))
        else:
            ids.update(t for t in known if stem in _songs_of(root / "tasks" / f"{t}.json"))
    return sorted(i for i in ids if i in known)


def _songs_of(task_path: Path) -> set[str]:
    """The songs a task reads: its ``song`` and, for an audio task, every input's."""
    try:
        data = json.loads(task_path.read_text(encoding="utf-8"))
        return {data.get("song")} | {i.get("song") for i in data.get("inputs") or []}
    except (OSError, ValueError, AttributeError, TypeError):
        return set()


def main(argv: list[str]) -> int:
    from ..cliargs import Parser, arg, int_in

    parser = Parser(
        prog="overdub check-changed",
        description="Run the bench's self-check for the tasks that changed files touch (tasks, songs, oracles, "
                    "near misses). Used by the pre-commit hook `overdub-self-check`.",
        epilog="example: overdub check-changed tasks/mix-chorus-lift.json songs/night-shift.json")
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("-j", "--jobs", type=arg(int_in, lo=1, what="a number of worker processes"),
                        default=None, help="worker processes (default: overdub run's)")
    args = parser.parse_args(argv)
    root = bench_root(args.files)
    ids = task_ids_for(args.files, root=root)
    if not ids:
        print("overdub check-changed: no task touched")
        return 0
    print(f"overdub check-changed: {', '.join(ids)}")
    from .run import main as run_main

    extra = ["-j", str(args.jobs)] if args.jobs else []
    return run_main([*ids, "--bench", str(root), *extra])
