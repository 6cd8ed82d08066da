"""The C library as the sandbox reaches it (``ctypes``), and ``prctl`` with the options it uses.

Constants are from linux/prctl.h and linux/sched.h.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.restype = ctypes.c_int

PR_SET_PDEATHSIG = 1
PR_SET_KEEPCAPS = 8
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000


def prctl(option: int, arg2: int = 0, arg3: Any = 0) -> None:
    """``prctl(option, arg2, arg3, 0, 0)``; raises OSError with the errno on failure."""
    if libc.prctl(option, ctypes.c_ulong(arg2) if isinstance(arg2, int) else arg2, arg3, 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"prctl({option}): {os.strerror(e)}")
