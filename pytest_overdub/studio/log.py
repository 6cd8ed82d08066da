"""The session log: every call that changed the song, as a submission (docs/formats.md, the ``calls`` form).

``{"calls": [{"tool": "apply_ops" | "define_device" | "undo", "input": {...}}, ...]}``, rewritten whole
after each successful ``apply_ops``, ``define_device`` and ``undo``: written to a temporary file in the
same folder, flushed to disk, then moved over the log with :func:`os.replace`, so a reader (or a session
killed mid-write) sees the previous log or the new one, never half of one. ``overdub score TASK log.json``
replays it (``undo`` drops the last call still applied) to the song the session ended with. A call that
would take the log over a submission's limits (:mod:`pytest_overdub.song.limits`: ``file_bytes``; the
session checks ``ops`` and ``transactions``) is refused, so the log always stays one the scorer reads.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..errors import StudioError


class CallLog:
    """The calls so far and, when ``path`` is given, their file (checked writable when the log opens)."""

    def __init__(self, path: str | Path | None):
        self.path = None if path is None else Path(path)
        self.calls: list[dict[str, Any]] = []
        if self.path is not None:
            self._write()  # an unwritable place is refused before the session starts, not after an edit

    def append(self, tool: str, tool_input: dict[str, Any]) -> None:
        """Record one successful call and rewrite the file. The input is stored as JSON data (a copy)."""
        try:
            stored = json.loads(json.dumps(tool_input, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise StudioError(f"{tool}: the input is not JSON data ({exc}); the log holds JSON only") from None
        self.calls.append({"tool": tool, "input": stored})
        try:
            self._write()
        except StudioError:
            self.calls.pop()
            raise

    def _text(self) -> str:
        """The log's JSON text; StudioError when it would be over the submission file limit (``file_bytes``),
        since a log the scorer refuses to read is no answer."""
        from ..song import limits

        text = json.dumps(self.data(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
        size = len(text.encode("utf-8"))
        if size > limits.LIMITS.file_bytes:
            raise StudioError(f"log: {size} bytes with this call, over the limit file_bytes = "
                              f"{limits.LIMITS.file_bytes} of a submission the scorer reads")
        return text

    def data(self) -> dict[str, Any]:
        return {"calls": list(self.calls)}

    def _write(self) -> None:
        text = self._text()
        if self.path is None:
            return
        folder = self.path.parent
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            tmp = None
        except OSError as exc:
            raise StudioError(f"log {self.path}: cannot write: {exc.strerror or exc}") from None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
