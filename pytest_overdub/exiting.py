"""Ending a scoring process without walking its whole heap again (a cold-start cost, not a feature).

A process that has scored a task holds ~150 000 long-lived objects (numba's typing and lowering
registries, pydantic's validators). Three things then walk all of them with the cyclic garbage collector
although almost none is garbage: pytest's unraisable-exception check collects five times when it
unconfigures, and the interpreter collects again while it shuts down. Measured on mix-chorus-lift
(pytest, 2 cores): 0.79 s from ``pytest_unconfigure`` to the end of the process; 0.06 s after
:func:`freeze_heap`.

:func:`freeze_heap` collects once, so the garbage that exists now is finalised as usual (and an exception
in a ``__del__`` still reaches pytest's report), then moves every survivor to the permanent generation
(:func:`gc.freeze`), which later collections skip. Only for a process that is about to end: frozen objects
that later become cyclic garbage stay in memory. :func:`thaw_heap` undoes it, for a program that goes on
(a second ``pytest.main`` in one process thaws at its start). Both touch only what this module froze.
"""

from __future__ import annotations

import atexit
import gc

_frozen = False
_at_exit = False


def freeze_heap() -> None:
    """Collect once, then exclude every object alive now from later garbage collections."""
    global _frozen
    gc.collect()
    gc.freeze()
    _frozen = True


def thaw_heap() -> None:
    """Give the objects :func:`freeze_heap` froze back to the collector (no-op when nothing was frozen)."""
    global _frozen
    if _frozen:
        gc.unfreeze()
        _frozen = False


def freeze_heap_at_exit() -> None:
    """Run :func:`freeze_heap` when the interpreter exits (atexit runs before its shutdown collections).

    Safe to call from code that may run in a longer-lived program: nothing happens until that program ends.
    """
    global _at_exit
    if not _at_exit:
        atexit.register(freeze_heap)
        _at_exit = True
