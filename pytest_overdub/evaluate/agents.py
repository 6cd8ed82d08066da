"""Running the agent's command for one trial: a shell in the workspace, a time limit, its process group.

The command runs as ``/bin/sh -c CMD`` in a new session (its own process group), with ``instruction.md``
on stdin and stdout and stderr appended to ``agent.log``. When it exits, times out or the eval is stopped,
the whole group is killed (SIGKILL), so nothing it started outlives its trial or writes into the run later.
Exit code 75 (EX_TEMPFAIL) means an infrastructure failure: the caller retries the trial.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

INFRA_EXIT = 75


@dataclass(frozen=True)
class AgentExit:
    """How one run of the agent ended: its exit code (None when killed at the time limit), its seconds."""

    exit_code: int | None
    timed_out: bool
    seconds: float


def run_agent(cmd: str, *, workspace: Path, env: dict[str, str], timeout_s: float, log: Path) -> AgentExit:
    """Run ``cmd`` once (see the module docstring)."""
    with open(workspace / "instruction.md", "rb") as stdin, open(log, "ab") as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, shell=True, cwd=workspace, env=env, stdin=stdin, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            code, timed_out = None, True
        finally:
            _kill_group(proc)
        return AgentExit(exit_code=code, timed_out=timed_out, seconds=round(time.monotonic() - t0, 3))


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the agent's process group (the shell and all it started), then reap the shell."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
    proc.wait()


def last_line(log: Path, *, limit: int = 200) -> str:
    """The last non-empty line of the agent's log (at most ``limit`` characters), or ''."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
            tail = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""


def stop_on_sigterm() -> None:
    """Make SIGTERM raise KeyboardInterrupt in this process, so a stopped eval (or pool worker) unwinds
    through :func:`run_agent`'s cleanup and kills the agent's group instead of leaving it running."""
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
