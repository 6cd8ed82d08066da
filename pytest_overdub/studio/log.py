"""The session log: every call that changed the song, as a submission (docs/formats.md, the ``calls`` form).

``{"calls": [{"tool": "apply_ops" | "define_device" | "undo", "input": {...}}, ...]}``, rewritten whole
after each successful ``apply_ops``, ``define_device`` and ``undo``: written to a temporary file in the
same folder, flushed to disk, then moved over the log with :func:`os.replace`, so a reader (or a session
killed mid-write) sees the previous log or the new one, never half of one. ``overdub score TASK log.json``
replays it (``undo`` drops the last call still applied) to the song the session ended with.
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

    def data(self) -> dict[str, Any]:
        return {"calls": list(self.calls)}

    def _write(self) -> None:
        if self.path is None:
            return
        folder = self.path.parent
        text = json.dumps(self.data(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
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
