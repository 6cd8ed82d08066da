"""The published device tasks' answers, carried onto a variant's track (the device templates reuse the
published kernels, so a variant's oracle and cheats are the very devices the published task holds to the
rules). An answer's ops name the published task's track; :func:`published_answers` renames it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..layout import BenchLayout, bundled_root
from .base import Answer


def _renamed(ops: list[dict[str, Any]], *, old: str, new: str) -> list[dict[str, Any]]:
    return [{**o, "track": new} if o.get("track") == old else o for o in ops]


def _answer(path: Path, name: str, *, old: str, new: str) -> Answer:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Answer(name, data["why"], _renamed(data["ops"], old=old, new=new), tuple(data.get("fails", ())))


def published_answers(task_id: str, *, old: str, new: str) -> tuple[Answer, tuple[Answer, ...]]:
    """(oracle, near misses and cheats) of the published task ``task_id``, track ``old`` renamed ``new``."""
    bench = BenchLayout(bundled_root())
    oracle = _answer(bench.oracle_path(task_id), "oracle", old=old, new=new)
    misses = tuple(_answer(p, p.stem.split(".", 1)[1], old=old, new=new)
                   for p in bench.near_miss_paths(task_id) + bench.cheat_paths(task_id))
    return oracle, misses


def published_checks(task_id: str, *, old: str, new: str) -> list[dict[str, Any]]:
    """The published task's checks, their ``track`` and the track's name in their labels renamed ``new``."""
    data = json.loads((BenchLayout(bundled_root()).tasks_dir / f"{task_id}.json").read_text(encoding="utf-8"))
    return [{**c, "track": new, "label": c["label"].replace(old, new)} if c.get("track") == old else dict(c)
            for c in data["checks"]]
