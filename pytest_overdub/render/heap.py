"""glibc's malloc tuned once for the scorer: every block from the heap, and freed memory kept for reuse.

Why: a render allocates and frees numpy arrays over and over: a probe render's tracks and its meters'
temporaries of a few MB, and on a long song whole-track arrays far above glibc's mmap threshold (a
3-minute stereo track is 139 MB). glibc serves a block above that threshold (at most 32 MB on 64-bit)
with a fresh ``mmap`` and unmaps it on ``free``, and the kernel zeroes every page of a fresh mapping on
first touch; below it, the heap's free top is handed back to the kernel above a trim threshold. So with
glibc's defaults a render pays to zero again memory it has just freed: the 3-minute bench song of
``bench/render_speed.py`` maps and zeroes 3.2 GB per render (35 mappings of 66-139 MB), 1.3-1.4 s of
kernel time in a 12 s render; with this tuning it takes none (10.7 s; ``python bench/render_speed.py``).

:func:`tune_malloc` sets ``M_MMAP_MAX`` to 0 (every block, however large, comes from the heap, so a
freed block is there for the next one) and ``M_TRIM_THRESHOLD`` to :data:`KEEP_FREE_BYTES` (2 GB, the
largest value ``mallopt`` takes): the process keeps up to that much freed memory instead of handing it
back. The cost is resident memory: a process's heap stays at about its peak after a big render (1.8 GB
after the 3-minute bench song, 0.2-0.4 GB after scoring the bench's tasks), until it exits or calls
:func:`release_memory`. It runs once per process; with any C library but glibc it
does nothing, and ``OVERDUB_MALLOC_TUNING=0`` turns it off. Samples never change.

Only the scorer runtime applies it (:func:`pytest_overdub.runtime.enter`, called by the ``overdub`` command
and the pytest plugin); ``render()`` used as a library leaves malloc as it found it.
"""

from __future__ import annotations

import ctypes
import os
import threading

# mallopt parameters (glibc malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_MMAP_MAX = -4
#: glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit (the sandbox child's setting: see its ``_warm_heap``).
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
#: Freed memory the process keeps for reuse: mallopt's int argument caps it just under 2 GB.
KEEP_FREE_BYTES = 2**31 - 1

_lock = threading.Lock()
_done: list[bool] = []


def _glibc():
    """The C library's handle when it is glibc (``mallopt`` and ``malloc_trim`` exist), else None."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
        libc = ctypes.CDLL(None)
        libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        libc.malloc_trim.argtypes = (ctypes.c_size_t,)
        return libc
    except (ValueError, OSError, AttributeError):
        return None


def tune_malloc() -> bool:
    """Apply the tuning once per process; True when it is in effect (glibc, not turned off)."""
    with _lock:
        if not _done:
            _done.append(_apply())
        return _done[0]


def tuned() -> bool:
    """True when this process has applied the tuning (a scorer that entered :mod:`pytest_overdub.runtime`)."""
    return bool(_done and _done[0])


def _apply() -> bool:
    if os.environ.get("OVERDUB_MALLOC_TUNING", "1").strip() == "0":
        return False
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, KEEP_FREE_BYTES))


def release_memory() -> bool:
    """Hand the heap's free memory back to the kernel now (glibc's ``malloc_trim(0)``): for a process
    that is done rendering but lives on. True when memory was released."""
    libc = _glibc()
    return bool(libc.malloc_trim(0)) if libc is not None else False
