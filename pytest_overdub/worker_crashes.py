"""An xdist worker that dies while scoring a task: the task is reported as faulted, not dropped, and is
not handed from one fresh worker to the next until xdist's restart limit ends the whole run.

The controller gives every worker a folder (``workerinput["overdub_crash_dir"]``, made by
:func:`crash_dir`). A worker writes ``<task id>.pid`` there while it scores a task (:func:`crash_guard`)
and removes it when the scoring returns or raises; a worker that dies leaves it behind. xdist reruns the
item that was running on a fresh worker (and, with ``loadscope``, the rest of the task), which finds the
marker of a dead process and refuses to score the task again. The controller hears of the crash
(``pytest_handlecrashitem``) and the plugin's report gives the task score 0 with an error naming it.

Imports only the standard library (the plugin module is loaded by every pytest).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

KEY = "overdub_crash_dir"


class ScoredBefore(Exception):
    """A task whose scoring killed the worker that ran it; the text says which process."""


def task_of_nodeid(nodeid: str) -> str | None:
    """The task id in an overdub task item's node id (``<dir>/<id>.json::<id>::<item>``), else None."""
    parts = nodeid.split("::")
    if len(parts) == 3 and parts[0].rpartition("/")[2] == f"{parts[1]}.json":
        return parts[1]
    return None


def crash_dir(made: list[str]) -> str:
    """The controller's folder for the workers' markers, made once (its path is kept in ``made``)."""
    if not made:
        made.append(tempfile.mkdtemp(prefix="overdub-scoring-"))
    return made[0]


def remove_crash_dir(made: list[str]) -> None:
    for path in made:
        shutil.rmtree(path, ignore_errors=True)
    made.clear()


@contextlib.contextmanager
def crash_guard(workerinput: dict[str, Any] | None, task_id: str) -> Iterator[None]:
    """Mark ``task_id`` as being scored by this process for the duration of the block (under xdist;
    elsewhere a no-op). Raises :class:`ScoredBefore` instead when a process that died was scoring it."""
    folder = (workerinput or {}).get(KEY)
    if not folder:
        yield
        return
    marker = Path(folder) / f"{task_id}.pid"
    try:
        pid = int(marker.read_text(encoding="ascii"))
    except (OSError, ValueError):
        pid = None
    if pid is not None and pid != os.getpid() and not _alive(pid):
        raise ScoredBefore(f"the worker that was scoring it (pid {pid}) died; it is not scored again")
    marker.write_text(str(os.getpid()), encoding="ascii")
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, a dead worker its controller has not reaped yet, does
    not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
