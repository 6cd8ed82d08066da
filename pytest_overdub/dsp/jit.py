"""numba's ``njit`` for the package's compiled loops, and the one notice that they are being compiled.

Every module with a compiled loop takes ``njit`` from here. The loops are compiled with ``cache=True``:
the first scoring after an install (or a numba upgrade) compiles them, which takes a while, and later
processes load the machine code from numba's cache. In a process that entered the scorer runtime
(:mod:`pytest_overdub.runtime`), the first real compilation of one of our loops, not a load from the
cache, prints one line on stderr saying so; a library user sees nothing.
"""

from __future__ import annotations

import sys
import threading

from numba import njit
from numba.core import event

__all__ = ["njit", "NOTICE"]

#: The line printed on stderr before the first compilation in a scorer.
NOTICE = ("overdub: compiling the DSP loops with numba, once after an install or a numba upgrade "
          "(about 15 s of CPU; later runs load them from numba's cache)")


class _FirstCompile(event.Listener):
    """Prints :data:`NOTICE` when numba starts compiling (not loading) one of our loops, once a process."""

    def __init__(self) -> None:
        self.said = False
        self._lock = threading.Lock()

    def on_start(self, ev: event.Event) -> None:
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if self.said or not module.startswith("pytest_overdub."):
            return
        from .. import runtime

        if not runtime.active():
            return
        with self._lock:
            if not self.said:
                self.said = True
                print(NOTICE, file=sys.stderr, flush=True)

    def on_end(self, ev: event.Event) -> None:
        pass


LISTENER = _FirstCompile()
event.register("numba:compile", LISTENER)
