"""Friendlier fault messages (not a boundary): an audit hook in the child notes what a kernel tried.

Audit hooks cannot confine anything (numpy can write raw memory, ctypes can call libc directly); the hook
only sends a ``{"note": ...}`` message ("called os.system") before the forbidden call reaches the
layers that stop it, so the scorer's fault message can say what was tried. At most 16 notes per device.
"""

from __future__ import annotations

import socket
import sys

from .framing import send
from .replies import MAX_NOTE_CHARS, clip
from .seccomp import WRITE_FLAGS

_AUDIT_WHAT = {
    "os.system": "called os.system (starting programs is not allowed)",
    "subprocess.Popen": "started a subprocess (starting programs is not allowed)",
    "os.posix_spawn": "called os.posix_spawn (starting programs is not allowed)",
    "os.exec": "called os.exec* (starting programs is not allowed)",
    "os.fork": "called os.fork (forking is not allowed)",
    "os.forkpty": "called os.forkpty (forking is not allowed)",
    "os.kill": "sent a signal with os.kill (signalling other processes is not allowed)",
    "os.killpg": "sent a signal with os.killpg (signalling other processes is not allowed)",
    "socket.__new__": "created a socket (network access is not allowed)",
    "socket.connect": "connected a socket (network access is not allowed)",
    "socket.bind": "bound a socket (network access is not allowed)",
    "ctypes.dlsym": "looked up a C function with ctypes",
    "os.remove": "removed a file (file writes are not allowed)",
    "os.rename": "renamed a file (file writes are not allowed)",
    "os.mkdir": "made a directory (file writes are not allowed)",
    "os.truncate": "truncated a file (file writes are not allowed)",
    "_thread.start_new_thread": "started a thread (threads are not allowed)",
}


def install_audit_notes(chan: socket.socket, *, pid: int):
    """Add the audit hook that sends notes to the scorer on ``chan`` (for the rest of the process);
    ``pid`` is this process's own (read before :mod:`.determinism` refuses ``os.getpid`` to everyone).
    Returns a function that starts the count of notes again."""
    busy = [False]
    sent = [0]

    def hook(event: str, args: tuple) -> None:
        if busy[0] or sent[0] >= 16:
            return
        what = _AUDIT_WHAT.get(event)
        if event == "open":
            path, mode, flags = (args + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & WRITE_FLAGS)
            what = f"opened {path!r} for writing (file writes are not allowed)" if writing else \
                f"opened {path!r}"
        elif event == "resource.prlimit" and args and args[0] not in (0, pid):
            what = f"called resource.prlimit on pid {args[0]} (acting on another process is not allowed)"
        elif event == "ctypes.dlsym" and len(args) > 1:
            what = f"looked up the C function {args[1]!r} with ctypes"
        if what is None:
            return
        busy[0] = True
        try:
            sent[0] += 1
            send(chan, {"note": clip(what, MAX_NOTE_CHARS)})
        except OSError:
            pass
        finally:
            busy[0] = False

    sys.addaudithook(hook)

    def reset() -> None:
        sent[0] = 0

    return reset
