"""The answer of a file task (audio or transcription, :mod:`pytest_overdub.bench.handoff`) in an eval.

The agent writes the folder ``answer/`` in its workspace, holding the files the instruction names (an
audio task's files; a transcription task's ``notes.json`` or ``notes.mid``). The trial copies it to
``answer/`` in the trial folder (regular files only: a symlink or any other kind of entry makes the answer
invalid; at most :data:`MAX_FILES` files and :data:`MAX_BYTES` bytes) and scores the copy, as
``overdub score TASK FOLDER`` does. ``answer_sha256`` is :func:`folder_sha256` of the copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from ..errors import SubmissionError

ANSWER_DIR = "answer"
#: ``answer_source`` of a trial whose answer is a folder.
SOURCE = "answer/"
MAX_FILES = 256
MAX_BYTES = 4 * 1024 ** 3


def copy_answer(src: Path, dest: Path) -> None:
    """Copy the answer folder ``src`` to ``dest`` (which must not exist), regular files only."""
    if src.is_symlink() or not src.is_dir():
        raise SubmissionError(f"{ANSWER_DIR}: want a folder holding the answer's files, not a "
                              f"{'symlink' if src.is_symlink() else 'file'}")
    files, total = [], 0
    for root, dirs, names in os.walk(src):
        for name in sorted(dirs + names):
            path = Path(root) / name
            rel = path.relative_to(src).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise SubmissionError(f"{ANSWER_DIR}/{rel}: not a regular file (a symlink or special file); "
                                      "hand back plain files")
            files.append(rel)
            total += path.lstat().st_size
            if len(files) > MAX_FILES or total > MAX_BYTES:
                raise SubmissionError(f"{ANSWER_DIR}: more than {MAX_FILES} files or {MAX_BYTES} bytes; "
                                      "hand back only the files the instruction names")
    dest.mkdir(parents=True)
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dest / rel, follow_symlinks=False)


def folder_sha256(folder: Path) -> str:
    """sha256 over the folder's files in sorted order of their relative paths: for each file, its path
    (``/``-separated, UTF-8), a newline, the hex sha256 of its bytes, a newline."""
    digest = hashlib.sha256()
    rels = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    for rel in rels:
        h = hashlib.sha256()
        with open(folder / rel, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        digest.update(f"{rel}\n{h.hexdigest()}\n".encode("utf-8"))
    return digest.hexdigest()


def score_folder(task: Any, folder: Path, *, bench: Any) -> Any:
    """The task's result for the answer in ``folder``; an unreadable answer is a result with ``error`` set
    (audio) or a :class:`~pytest_overdub.errors.SubmissionError` (a transcription answer)."""
    from ..bench.tasks import TRANSCRIPTION, score_task

    if task.family == TRANSCRIPTION:
        from ..transcribe.answer import read_answer

        return score_task(task, read_answer(folder, parts=task.parts), bench=bench)
    from ..bench.audio.score import score_audio_task

    return score_audio_task(task, folder, bench=bench)
