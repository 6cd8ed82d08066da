"""The marker that keeps a task whose scoring killed its xdist worker from killing the next one."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pytest_overdub.worker_crashes import KEY, ScoredBefore, crash_guard, task_of_nodeid


def test_a_task_marked_by_a_dead_process_is_refused(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    pid = int(dead.stdout)  # exited and reaped
    (tmp_path / "mix-x.pid").write_text(str(pid))
    with pytest.raises(ScoredBefore, match=rf"the worker that was scoring it \(pid {pid}\) died"):
        with crash_guard({KEY: str(tmp_path)}, "mix-x"):
            pytest.fail("scored again")


def test_a_zombie_counts_as_dead(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
        (tmp_path / "mix-x.pid").write_text(str(proc.pid))
        with pytest.raises(ScoredBefore):
            with crash_guard({KEY: str(tmp_path)}, "mix-x"):
                pass
    finally:
        proc.wait()


def test_a_scoring_marks_its_task_while_it_runs_and_clears_it_after(tmp_path):
    marker = tmp_path / "mix-x.pid"
    (tmp_path / "mix-y.pid").write_text(str(os.getppid()))  # another task, scored by a live process
    with pytest.raises(RuntimeError):
        with crash_guard({KEY: str(tmp_path)}, "mix-x"):
            assert marker.read_text() == str(os.getpid())
            raise RuntimeError("the scoring raised")
    assert not marker.exists()
    with crash_guard({KEY: str(tmp_path)}, "mix-y"):  # a live process's marker does not stop it
        pass
    with crash_guard(None, "mix-x"):  # not under xdist: nothing to mark
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("nodeid, task", [
    ("tasks/mix-x.json::mix-x::clean", "mix-x"),
    ("bench/tasks/mix-x.json::mix-x::score", "mix-x"),
    ("tasks/mix-x.json::mix-y::clean", None),
    ("tests/test_a.py::test_b", None),
    ("tasks::bench", None),
])
def test_task_of_nodeid(nodeid, task):
    assert task_of_nodeid(nodeid) == task
