"""The sandbox's last layer: a seccomp BPF filter (linux/seccomp.h, linux/filter.h), x86_64 only.

The filter **kills** the child (``SECCOMP_RET_KILL_PROCESS``, seen by the server as ``SIGSYS``) on:
another architecture or the x32 ABI; execve, fork/clone (threads too), socket, connect/bind/listen/accept,
ptrace, process_vm_*, pidfd calls, signals queued to others, file creation, removal, renaming, linking
and permission changes, mount/namespace calls, SysV IPC, POSIX message queues, io_uring, bpf, perf,
userfaultfd, keyrings, module loading, reboot, swap, personality, memfd_create, syslog, file handles and
process_madvise/process_mrelease; open/openat with a write, create or truncate flag; ``fcntl(F_SETOWN*)``
and ``ioctl`` with TIOCSTI, TIOCSPGRP, FIOSETOWN or SIOCSPGRP; and any call aimed at another process:
kill/tkill/tgkill of any pid but the child's own (not 0, its process group), and prlimit64,
get/setpriority (PRIO_PROCESS only), ioprio_get/set (IOPRIO_WHO_PROCESS only), the sched_* calls,
migrate_pages, move_pages, get_robust_list, getpgid, getsid and setpgid on any pid but 0 or its own.
There is no PID namespace: with this filter, a uid of the child's own (:func:`.layers.layer_uid`) and
Landlock keeping ``/proc`` shut, no call is left that reaches another process. ``openat2`` fails with
ENOSYS instead, so callers fall back to ``openat``, whose flags the filter can read (openat2 passes them
in a struct it cannot). Every other call is allowed: Landlock and the rlimits bound what they can reach.
``ftruncate`` and ``fallocate`` kill too: the only files a child holds open for writing are the scorer's
sealed transfer memfds, which refuse both anyway (:func:`.transport.new_memfd`).
"""

from __future__ import annotations

import ctypes
import os
import platform

from .libc import PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prctl

_AUDIT_ARCH_X86_64 = 0xC000003E
_RET_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_LD_W_ABS, _JA, _JEQ, _JGE, _JSET, _RET = 0x20, 0x05, 0x15, 0x35, 0x45, 0x06
# x86_64 syscall numbers.
_X86_64_KILL = {
    77: "ftruncate", 285: "fallocate",  # the transfer pool is sealed too (see .transport.new_memfd)
    59: "execve", 322: "execveat", 57: "fork", 58: "vfork", 56: "clone", 435: "clone3",
    41: "socket", 53: "socketpair", 42: "connect", 49: "bind", 50: "listen", 43: "accept",
    288: "accept4", 101: "ptrace", 310: "process_vm_readv", 311: "process_vm_writev", 312: "kcmp",
    424: "pidfd_send_signal", 434: "pidfd_open", 438: "pidfd_getfd", 129: "rt_sigqueueinfo",
    297: "rt_tgsigqueueinfo", 85: "creat", 76: "truncate", 87: "unlink", 263: "unlinkat", 82: "rename",
    264: "renameat", 316: "renameat2", 83: "mkdir", 258: "mkdirat", 84: "rmdir", 86: "link",
    265: "linkat", 88: "symlink", 266: "symlinkat", 90: "chmod", 268: "fchmodat", 92: "chown",
    94: "lchown", 260: "fchownat", 133: "mknod", 259: "mknodat", 165: "mount", 166: "umount2",
    155: "pivot_root", 161: "chroot", 308: "setns", 272: "unshare", 29: "shmget", 30: "shmat",
    31: "shmctl", 64: "semget", 65: "semop", 66: "semctl", 220: "semtimedop", 68: "msgget",
    69: "msgsnd", 70: "msgrcv", 71: "msgctl", 425: "io_uring_setup", 426: "io_uring_enter",
    427: "io_uring_register", 321: "bpf", 298: "perf_event_open", 323: "userfaultfd", 250: "keyctl",
    248: "add_key", 249: "request_key", 175: "init_module", 313: "finit_module", 246: "kexec_load",
    169: "reboot", 167: "swapon", 168: "swapoff", 135: "personality", 319: "memfd_create",
    440: "process_madvise", 448: "process_mrelease", 303: "name_to_handle_at", 304: "open_by_handle_at",
    103: "syslog", 240: "mq_open", 241: "mq_unlink", 242: "mq_timedsend", 243: "mq_timedreceive",
    244: "mq_notify", 245: "mq_getsetattr",
}
_X86_64_ERRNO = {437: ("openat2", 38)}  # ENOSYS: callers fall back to openat, which is checked
_X86_64_OPEN_FLAGS = {2: ("open", 1), 257: ("openat", 2)}  # syscall -> (name, index of the flags arg)
_SELF, _ZERO = "self", 0  # "self": the child's own pid (known when the filter is built)
#: Calls that act on another process, allowed only on the child itself: syscall -> (name, [(index of an
#: argument, the values it may have)]). Anything else kills the child. (kill(0) would signal the process
#: group; the others take 0 for "this process".)
_X86_64_SELF_ONLY = {
    62: ("kill", [(0, (_SELF,))]), 200: ("tkill", [(0, (_SELF,))]), 234: ("tgkill", [(0, (_SELF,))]),
    302: ("prlimit64", [(0, (_ZERO, _SELF))]),
    140: ("getpriority", [(0, (0,)), (1, (_ZERO, _SELF))]),  # PRIO_PROCESS only
    141: ("setpriority", [(0, (0,)), (1, (_ZERO, _SELF))]),
    251: ("ioprio_set", [(0, (1,)), (1, (_ZERO, _SELF))]),  # IOPRIO_WHO_PROCESS only
    252: ("ioprio_get", [(0, (1,)), (1, (_ZERO, _SELF))]),
    142: ("sched_setparam", [(0, (_ZERO, _SELF))]), 143: ("sched_getparam", [(0, (_ZERO, _SELF))]),
    144: ("sched_setscheduler", [(0, (_ZERO, _SELF))]), 145: ("sched_getscheduler", [(0, (_ZERO, _SELF))]),
    148: ("sched_rr_get_interval", [(0, (_ZERO, _SELF))]),
    203: ("sched_setaffinity", [(0, (_ZERO, _SELF))]), 204: ("sched_getaffinity", [(0, (_ZERO, _SELF))]),
    314: ("sched_setattr", [(0, (_ZERO, _SELF))]), 315: ("sched_getattr", [(0, (_ZERO, _SELF))]),
    256: ("migrate_pages", [(0, (_ZERO, _SELF))]), 279: ("move_pages", [(0, (_ZERO, _SELF))]),
    274: ("get_robust_list", [(0, (_ZERO, _SELF))]), 121: ("getpgid", [(0, (_ZERO, _SELF))]),
    124: ("getsid", [(0, (_ZERO, _SELF))]), 109: ("setpgid", [(0, (_ZERO, _SELF))]),
}
#: Calls killed for some values of one argument: syscall -> (name, index, the values).
_X86_64_KILL_ARG = {
    72: ("fcntl", 1, (8, 15)),  # F_SETOWN, F_SETOWN_EX: I/O signals sent to another process
    # TIOCSTI (keystrokes into a terminal), TIOCSPGRP, FIOSETOWN, SIOCSPGRP (signals to another process)
    16: ("ioctl", 1, (0x5412, 0x5410, 0x8901, 0x8902)),
}
#: open flags that mean writing: an open with any of them kills the child.
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC


def _bpf(code: int, jt: int, jf: int, k: int) -> tuple[int, int, int, int]:
    return (code, jt, jf, k & 0xFFFFFFFF)


def _seccomp_program(my_pid: int) -> list[tuple[int, int, int, int]]:
    arg = lambda i: 16 + 8 * i  # offset of args[i] (low 32 bits, little endian) in seccomp_data
    prog = [
        _bpf(_LD_W_ABS, 0, 0, 4),  # arch
        _bpf(_JEQ, 1, 0, _AUDIT_ARCH_X86_64),
        _bpf(_RET, 0, 0, _RET_KILL),
        _bpf(_LD_W_ABS, 0, 0, 0),  # nr
        _bpf(_JGE, 0, 1, 0x40000000),  # x32 ABI
        _bpf(_RET, 0, 0, _RET_KILL),
    ]
    for nr in sorted(_X86_64_KILL):
        prog += [_bpf(_JEQ, 0, 1, nr), _bpf(_RET, 0, 0, _RET_KILL)]
    for nr, (_name, errno) in sorted(_X86_64_ERRNO.items()):
        prog += [_bpf(_JEQ, 0, 1, nr), _bpf(_RET, 0, 0, _RET_ERRNO | errno)]
    for nr, (_name, i) in sorted(_X86_64_OPEN_FLAGS.items()):
        prog += [_bpf(_JEQ, 0, 4, nr), _bpf(_LD_W_ABS, 0, 0, arg(i)), _bpf(_JSET, 0, 1, WRITE_FLAGS),
                 _bpf(_RET, 0, 0, _RET_KILL), _bpf(_LD_W_ABS, 0, 0, 0)]
    for nr, (_name, checks) in sorted(_X86_64_SELF_ONLY.items()):
        body = []
        for i, values in checks:
            values = [my_pid if v == _SELF else v for v in values]
            body.append(_bpf(_LD_W_ABS, 0, 0, arg(i)))
            body += [_bpf(_JEQ, len(values) - k, 0, v) for k, v in enumerate(values)]  # match: skip the kill
            body.append(_bpf(_RET, 0, 0, _RET_KILL))
        body.append(_bpf(_LD_W_ABS, 0, 0, 0))
        prog += [_bpf(_JEQ, 0, len(body), nr)] + body
    for nr, (_name, i, values) in sorted(_X86_64_KILL_ARG.items()):
        body = [_bpf(_LD_W_ABS, 0, 0, arg(i))]
        body += [_bpf(_JEQ, len(values) - k, 0, v) for k, v in enumerate(values)]  # a match: to the kill
        body += [_bpf(_JA, 0, 0, 1), _bpf(_RET, 0, 0, _RET_KILL), _bpf(_LD_W_ABS, 0, 0, 0)]
        prog += [_bpf(_JEQ, 0, len(body), nr)] + body
    prog.append(_bpf(_RET, 0, 0, _RET_ALLOW))
    return prog


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def layer_seccomp() -> str:
    """Install the filter on this process (needs no_new_privs or root); returns the layer's name."""
    if platform.machine() != "x86_64":
        raise OSError(0, f"seccomp filter written for x86_64 only, this is {platform.machine()}")
    prog = _seccomp_program(os.getpid())
    arr = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), arr)
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog))
    return "seccomp"
