"""The report lists every task the run selected, even when an xdist worker dies while scoring one.

A conftest makes scoring one task kill its process (``os._exit``, as a fatal signal in the scorer
would); under ``-n 2`` that worker dies mid-task. The report must still list both tasks: the other one
scored as usual, the crashed one with score 0 and an error naming the crash.
"""

from __future__ import annotations

import json
import re
import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from pytest_overdub.bench.tasks import bundled_bench

pytest_plugins = ["pytester"]

QUANT, DRUMS = "edit-quantize-swing", "write-drum-groove"
PLUGIN = () if any(ep.name == "overdub" for ep in entry_points(group="pytest11")) else ("-p", "pytest_overdub.plugin")
CRASH = f"""
import os

import pytest_overdub.bench.tasks as tasks

_score_task = tasks.score_task


def _crash_on_one_task(task, *args, **kwargs):
    if task.id == {DRUMS!r}:
        os._exit(70)
    return _score_task(task, *args, **kwargs)


tasks.score_task = _crash_on_one_task
"""


def _make_bench(root: Path) -> None:
    src = bundled_bench()
    for name in ("tasks", "songs", "oracles", "near_misses"):
        (root / name).mkdir(exist_ok=True)
    for tid in (QUANT, DRUMS):
        task = src.task(tid)
        shutil.copy(src.tasks_dir / f"{tid}.json", root / "tasks")
        shutil.copy(src.root / "songs" / f"{task.song}.json", root / "songs")
        shutil.copy(src.oracle_path(tid), root / "oracles")


def test_a_task_whose_xdist_worker_crashed_is_reported_as_faulted(pytester, monkeypatch):
    pytest.importorskip("xdist")
    if PLUGIN:  # not installed: let the child processes import the package from this checkout
        import pytest_overdub

        monkeypatch.setenv("PYTHONPATH", str(Path(pytest_overdub.__file__).parent.parent))
    _make_bench(pytester.path)
    pytester.makeconftest(CRASH)
    sub = pytester.path / "ops.json"
    sub.write_text("[]", encoding="utf-8")
    path = pytester.path / "report.json"
    res = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", f"--overdub-submission={sub}",
                                        f"--overdub-report={path}", "-n", "2")
    out = res.stdout.str()
    # one crash: the fresh worker that gets the task's other items refuses to score it again
    assert out.count("crashed while running") == 1, out[-3000:]
    assert "maximum crashed workers reached" not in out
    report = json.loads(path.read_text())
    tasks = {t["id"]: t for t in report["tasks"]}
    assert sorted(tasks) == [QUANT, DRUMS]
    crashed = tasks[DRUMS]
    assert crashed["score"] == 0.0 and crashed["passed"] is False
    assert re.fullmatch(rf"not scored: worker 'gw\d+' crashed while running 'tasks/{DRUMS}.json::{DRUMS}::\w+'",
                        crashed["error"]), crashed["error"]
    assert tasks[QUANT]["error"] is None and tasks[QUANT]["score"] == 0.0  # the do-nothing answer's score
    assert report["mean"] == 0.0
    assert f"{DRUMS:<28}  0.000  FAIL" in out
    res.stdout.fnmatch_lines([f"*task {DRUMS}: the worker that was scoring it (pid *) died; it is not scored again*"])
