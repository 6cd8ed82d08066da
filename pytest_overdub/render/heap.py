"""glibc's malloc tuned once for the scorer: blocks up to 32 MB from the heap, freed memory kept for reuse.

Why: scoring allocates and frees numpy arrays of a few MB over and over (a probe render's tracks, its
mix, every meter's temporaries). glibc serves a block above its mmap threshold with a fresh ``mmap``, and
the kernel zeroes every page of it on first touch; the threshold adapts upwards only as mmapped blocks are
freed, and the heap's free top is handed back above twice the threshold, so a process that does little
else keeps paying those page faults. Ten rounds of two 3 MB arrays cost 15 000 page faults in a fresh
process and 950 with this tuning (``tests/unit/test_heap.py``), and scoring all fifteen oracles on a cold
stem cache took 2-4% less time (5.61-5.72 s -> 5.50-5.51 s, best of 3, two runs each).

:func:`tune_malloc` sets ``M_MMAP_THRESHOLD`` to 32 MB and ``M_TRIM_THRESHOLD`` to 64 MB: the ceilings of
glibc's own adaptive rule on 64-bit (``DEFAULT_MMAP_THRESHOLD_MAX`` and twice it), where a numpy process
that frees a 32 MB array ends up anyway. At most 64 MB of freed memory stays with the process; larger
blocks are still mapped and unmapped as before. It runs once per process, at the first render; with any C
library but glibc it does nothing, and ``OVERDUB_MALLOC_TUNING=0`` turns it off. Samples never change.
"""

from __future__ import annotations

import ctypes
import os
import threading

# mallopt parameters (glibc malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit, and the trim threshold its adaptive rule pairs with it.
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
TRIM_THRESHOLD_BYTES = 2 * MMAP_THRESHOLD_BYTES

_lock = threading.Lock()
_done: list[bool] = []


def tune_malloc() -> bool:
    """Apply the tuning once per process; True when it is in effect (glibc, not turned off)."""
    with _lock:
        if not _done:
            _done.append(_apply())
        return _done[0]


def _apply() -> bool:
    if os.environ.get("OVERDUB_MALLOC_TUNING", "1").strip() == "0":
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (ValueError, OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
