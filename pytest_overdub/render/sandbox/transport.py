"""How audio crosses between the scorer and a sandbox child: a shared ``memfd`` pool and
``process_vm_readv``.

Input: the scorer copies it into a ``memfd`` pool it keeps mapped (pages allocated once, not per call;
spares map it before they are needed) and passes the fd over the socket; the kernel reads it in place,
and if it keeps a view of its input in ``ctx.state`` those pages are made private
(:func:`make_private`) before the pool is reused. Output: the scorer copies it straight out of the
child's memory with :func:`vm_read` (one copy into the scorer's own memory, which the child can never
touch again), or, where that is not permitted, through the pool. Whether it is permitted is learnt once
per child by reading :data:`VM_PROBE` from the child.

Every memfd is sealed at its size before any child can see it (:func:`new_memfd`): a kernel can reach
the fd during a call, and a truncated file would fault the scorer's mapping (SIGBUS) on its next touch.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
from typing import Any

from .libc import libc

#: The largest transfer pool kept between calls (bigger transfers use a one-off memfd).
POOL_MAX_BYTES = 256 * 1024 * 1024
#: Bytes the scorer reads once to learn whether it may read this child's memory.
VM_PROBE = b"overdub-vm-probe"


#: The seals every transfer memfd carries before any child can see it: its size is fixed for good.
POOL_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL


def new_memfd(name: str, size: int) -> tuple[int, mmap.mmap]:
    """A fresh ``memfd`` of ``size`` bytes (close-on-exec), sealed with :data:`POOL_SEALS`, and a
    shared mapping of it.

    The fd is handed to children, so what a kernel could do with it is bounded by the seals:
    ``ftruncate`` and growing ``fallocate``/``write`` fail with EPERM (a shrunk file would make the
    scorer's next touch of the mapping a SIGBUS), and no further seal can be added (``F_SEAL_SEAL``:
    a ``F_SEAL_FUTURE_WRITE`` would stop later children from mapping the pool). What remains is
    writing or hole-punching the pages' contents, which the child may do anyway (it writes its output
    there): a punched page reads back as zeros, never as a fault, and the scorer checks the output.
    The child's own ``mmap``/``munmap``/``mremap`` reach only its own address space."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, POOL_SEALS)
        return fd, mmap.mmap(fd, size)
    except BaseException:
        os.close(fd)
        raise


# --------------------------------------------------------------------------------------------------
# The child's side of the pool

_CHILD_POOL: dict = {}


def child_pool(msg: dict, fds: list[int]) -> mmap.mmap:
    """The scorer's transfer pool mapped in this child (mapped once per pool generation)."""
    if _CHILD_POOL.get("key") != msg["pool"]:
        old = _CHILD_POOL.pop("mm", None)
        if old is not None:
            try:
                old.close()
            except BufferError:
                pass
        populate = getattr(mmap, "MAP_POPULATE", 0)
        _CHILD_POOL["mm"] = mmap.mmap(fds[0], msg["size"], flags=mmap.MAP_SHARED | populate)
        _CHILD_POOL["key"] = msg["pool"]
    return _CHILD_POOL["mm"]


_PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FIXED = 0x10


def make_private(arr) -> None:
    """Replace the pages under ``arr`` (a view at the start of the pool mapping) by private anonymous
    memory holding the same bytes, so the views a kernel kept stay valid and unchanged after the
    scorer writes the next call's input. The pool is mapped afresh for the next call."""
    import numpy as np

    saved = arr.copy()
    length = -(-arr.nbytes // mmap.PAGESIZE) * mmap.PAGESIZE
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    addr = arr.ctypes.data
    got = libc.mmap(addr, length, _PROT_RW, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED, -1, 0)
    if got != addr:
        raise OSError(ctypes.get_errno(), "could not make the kernel's input private")
    np.copyto(arr, saved)
    _CHILD_POOL.clear()


# --------------------------------------------------------------------------------------------------
# The scorer's read of a child's output


class _IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


def vm_read(pid: int | None, addr: Any, dest) -> bool:
    """Copy ``len(dest)`` bytes from ``addr`` in process ``pid`` into the writable buffer ``dest``
    with ``process_vm_readv`` (one copy, straight into our memory). False if not allowed or not all
    bytes could be read; the child chooses ``addr``, so at worst we read its own garbage."""
    if pid is None or not isinstance(addr, int) or addr <= 0:
        return False
    buf = (ctypes.c_char * len(memoryview(dest).cast("B"))).from_buffer(dest)
    total, done = len(buf), 0
    fn = libc.process_vm_readv
    fn.restype = ctypes.c_ssize_t
    while done < total:
        local = _IoVec(ctypes.addressof(buf) + done, total - done)
        remote = _IoVec(addr + done, total - done)
        got = fn(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if got <= 0:
            return False
        done += got
    return True
