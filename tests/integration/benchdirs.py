"""Small benches for the plugin's runs under pytester: one task copied out of the bundled bench."""

import shutil
from pathlib import Path

import pytest


def copy_one_task_bench(dest: Path, task: str, *, alternatives: bool = False) -> Path:
    """``dest`` made a bench of ``task`` alone, copied from the bundled one: its task file, its song, its
    oracle (and its alternatives when asked), its near misses and cheats."""
    from pytest_overdub.bench.tasks import bundled_bench

    src = bundled_bench()
    for name in ("tasks", "songs", "oracles", "near_misses"):
        (dest / name).mkdir()
    shutil.copy(src.tasks_dir / f"{task}.json", dest / "tasks")
    shutil.copy(src.root / "songs" / f"{src.task(task).song}.json", dest / "songs")
    for p in [src.oracle_path(task), *(src.alternative_paths(task) if alternatives else [])]:
        shutil.copy(p, dest / "oracles")
    for p in src.near_miss_paths(task) + src.cheat_paths(task):
        shutil.copy(p, dest / "near_misses")
    return dest


def run_quiet(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """The plugin in a subprocess, with no cache provider and every outcome in the short summary."""
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", *args)
