"""``overdub mcp --task T`` on a file task (audio in, or transcription): there is no song to edit.

The session writes the task's inputs into a folder (``--inputs DIR``; by default ``<log>-inputs/`` beside
``--log``, or a fresh temporary folder) when it opens; ``get_task`` answers the id, the instruction, each
input file's absolute path and the files to hand back (a transcription task also ``oracle_run`` and
``given``: what an oracle run gives besides the mix, :mod:`pytest_overdub.transcribe.handover`). Every
other tool is refused with one line saying the task is answered with files, not with ops.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable

from ..errors import OverdubError, StudioError


class FileTaskSession:
    """The studio's tools on a file task: ``get_task`` answers, the song tools are refused."""

    def __init__(self, task: Any, inputs: dict[str, Path], *, given: dict[str, Any] | None = None):
        self._task = task
        self._inputs = inputs
        self._given = given  # a transcription task: what it gives besides the mix ({} when blind)

    @classmethod
    def open(cls, task: Any, *, bench: Any, inputs_dir: Path | None, log_path: Path | None) -> "FileTaskSession":
        from ..bench.handoff import write_inputs

        if inputs_dir is None:
            inputs_dir = (log_path.with_name(log_path.stem + "-inputs") if log_path is not None
                          else Path(tempfile.mkdtemp(prefix=f"overdub-{task.id}-")))
        try:
            written = write_inputs(task, bench, inputs_dir, keep_existing=True)
        except OSError as exc:
            raise StudioError(f"--inputs {inputs_dir}: cannot write the task's input files: {exc.strerror}") from None
        given = None
        if task.family == "transcription":
            from ..transcribe.handover import given_facts

            given = given_facts(task, bench.song(task.song))
        return cls(task, {name: path.resolve() for name, path in written.items()}, given=given)

    def get_task(self) -> dict[str, Any]:
        from ..bench.handoff import hand_back

        extra = {} if self._given is None else {"oracle_run": self._task.oracle_run, "given": self._given}
        return {"id": self._task.id, "instruction": self._task.instruction,
                "inputs": [{"name": n, "path": str(p)} for n, p in self._inputs.items()],
                "hand_back": hand_back(self._task), **extra,
                "how": "this task is answered with files, not with the studio's song tools: process the inputs "
                       "with your own tools and write the files to hand back into one folder (in an overdub "
                       "eval workspace, the folder answer/)"}

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def refused(**_: Any) -> Any:
            raise StudioError(f"{name}: task {self._task.id} is answered with files, not with ops on a song; "
                              "there is no song in this session (get_task names the input files and what to "
                              "hand back)")
        return refused


def open_file_task(task_id: str, *, bench: Any, inputs_dir: Path | None, log_path: Path | None) -> Any:
    """A :class:`FileTaskSession` when ``task_id`` is a file task, else None."""
    from ..bench.handoff import is_file_task
    from ..bench.tasks import bundled_bench

    bench = bench or bundled_bench()
    try:
        task = bench.task(task_id)
    except OverdubError as exc:
        raise StudioError(str(exc)) from None
    if not is_file_task(task):
        return None
    return FileTaskSession.open(task, bench=bench, inputs_dir=inputs_dir, log_path=log_path)
