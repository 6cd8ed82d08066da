"""One trial's folder and the agent's surroundings: the workspace, the scrubbed environment, OVERDUB_MCP.

``OUT/<task>/<trial>/`` holds ``workspace/`` (``start.json``, the starting song, and ``instruction.md``; for an audio or
transcription task its input files and ``instruction.md``, the answer being the folder ``answer/``),
``home/`` (the agent's fresh ``HOME``) and, once the agent ran, ``agent.log``, ``calls.json`` (the MCP
session's log) and ``usage.jsonl``. The agent runs in ``workspace/`` with this environment and nothing
else from the host: ``PATH``, ``HOME`` (the fresh one), ``OVERDUB_TASK``, ``OVERDUB_TRIAL`` (0-based),
``OVERDUB_WORKSPACE``, ``OVERDUB_RUN_DIR`` (the trial folder), ``OVERDUB_MCP`` (a shell command that
starts ``overdub mcp`` on this task, logging into ``OVERDUB_RUN_DIR/calls.json``), plus each variable
named by ``--env-pass``, with the value it had where ``overdub eval`` was started.
"""

from __future__ import annotations

import os
import shlex
import shutil
import site
import stat
import sys
from pathlib import Path
from typing import Any

#: The variables the eval sets for the agent; ``--env-pass`` may not name them.
RESERVED = ("PATH", "HOME", "OVERDUB_TASK", "OVERDUB_TRIAL", "OVERDUB_WORKSPACE", "OVERDUB_RUN_DIR", "OVERDUB_MCP")
CALLS, USAGE, LOG, ANSWER = "calls.json", "usage.jsonl", "agent.log", "answer.json"


def trial_dir(out: Path, task_id: str, trial: int) -> Path:
    return out / task_id / str(trial)


def fresh_trial_dir(path: Path) -> None:
    """Empty the trial folder (what an interrupted attempt left) and make it again."""
    remove(path)
    path.mkdir(parents=True)


def remove(path: Path) -> None:
    """Remove ``path`` whatever an agent made of it: a folder (read-only parts made writable first), a file,
    or a symlink (removed itself; what it points to is never touched)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path, onerror=_writable_and_retry)


def _writable_and_retry(func: Any, name: str, exc_info: Any) -> None:
    """rmtree's error handler: make the parent (and a folder itself) writable and try again; a name already
    gone (removed by an earlier retry) is fine."""
    try:
        os.chmod(os.path.dirname(name), stat.S_IRWXU)
        if os.path.isdir(name) and not os.path.islink(name):
            os.chmod(name, stat.S_IRWXU)
            shutil.rmtree(name, onerror=_writable_and_retry)
        else:
            func(name)
    except FileNotFoundError:
        pass


def prepare_workspace(path: Path, task: Any, *, bench: Any) -> Path:
    """Make ``path/workspace`` (``start.json``, ``instruction.md``; for a file task its input files and
    ``instruction.md`` instead) and ``path/home``; returns the workspace."""
    from ..bench.handoff import is_file_task
    from ..bench.tasks import start_song
    from ..song.model import dumps_song

    for name in ("workspace", "home", CALLS, USAGE):
        remove(path / name)
    for name in ("workspace", "home"):
        (path / name).mkdir()
    work = path / "workspace"
    if is_file_task(task):
        _file_workspace(work, task, bench=bench)
        return work
    song = start_song(task, bench=bench)
    song = song.model_copy(update={"meta": {**song.meta, "task": task.id, "instruction": task.instruction}})
    (work / "start.json").write_text(dumps_song(song), encoding="utf-8")
    (work / "instruction.md").write_text(task.instruction.rstrip() + "\n", encoding="utf-8")
    return work


def _file_workspace(work: Path, task: Any, *, bench: Any) -> None:
    """A file task's workspace: its inputs (as ``overdub start --out`` writes them) and the instruction,
    which names the answer folder ``answer/``."""
    from ..bench.handoff import instruction, write_inputs

    write_inputs(task, bench, work)
    where = ("\n## Where\n\nWrite the files to hand back into the folder `answer/` of this workspace "
             "(make it); the trial scores what it holds when you exit.\n")
    (work / "instruction.md").write_text(instruction(task, bench=bench) + where, encoding="utf-8")


def agent_env(*, task_id: str, trial: int, run_dir: Path, passed: dict[str, str],
              file_task: bool = False) -> dict[str, str]:
    """The whole environment of the agent (see the module docstring)."""
    env = dict(passed)
    inputs = run_dir / "workspace" if file_task else None
    env.update(PATH=os.environ.get("PATH", os.defpath), HOME=str(run_dir / "home"), OVERDUB_TASK=task_id,
               OVERDUB_TRIAL=str(trial), OVERDUB_WORKSPACE=str(run_dir / "workspace"), OVERDUB_RUN_DIR=str(run_dir),
               OVERDUB_MCP=mcp_command(task_id, run_dir / CALLS, inputs=inputs))
    return env


def mcp_command(task_id: str, log: Path, *, inputs: Path | None = None) -> str:
    """``overdub mcp --task TASK --log LOG`` (and ``--inputs DIR`` for a file task) with this interpreter
    and this copy of the package (its folder is put on PYTHONPATH when a plain interpreter would not find
    it, as in a source checkout)."""
    extra = ["--inputs", str(inputs)] if inputs is not None else []
    cmd = shlex.join([sys.executable, "-m", "pytest_overdub.cli", "mcp", "--task", task_id, "--log", str(log),
                      *extra])
    root = str(Path(__file__).resolve().parent.parent.parent)
    installed = {str(Path(p).resolve()) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    return cmd if root in installed else f"PYTHONPATH={shlex.quote(root)} {cmd}"
