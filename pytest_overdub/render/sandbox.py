"""The sandbox song-defined kernels run in (SPEC section 10, DESIGN.md "The sandbox").

Shape: a **fork server**. The first sandboxed device starts one warm server process (a fresh
``python -c``, never a fork of the scorer, which may hold threads) that imports numpy, scipy and the dsp
stdlib and then waits. Each device built for a track gets its own **child**, forked from the server;
the child lives while the device object lives (its kernel keeps ``ctx.state`` between calls) and talks
to the scorer over its own Unix socket. Before it reads any kernel source the child applies, in order:

1. fd hygiene: every descriptor but its socket closed, stdin/stdout/stderr on ``/dev/null``;
2. ``rlimit``: CPU seconds, address space, file size 0, open files, processes, no core dumps;
3. ``netns``: a new, empty network namespace (no interfaces, not even loopback);
4. ``no_new_privs``;
5. ``landlock``: read-only access beneath the Python install and the package (no writes anywhere, no
   exec, no TCP bind/connect, and, from ABI 6, no signals or abstract sockets outside the sandbox);
6. ``uid``: drops to ``nobody`` when running as root (all capabilities go with it);
7. ``seccomp``: a BPF filter that **kills** the child on execve, fork/clone (threads too), socket,
   connect/bind/listen/accept, ptrace, process_vm_*, kill/tkill/tgkill of any other pid, SysV IPC,
   io_uring, mount/namespace calls, and any open/openat with a write, create or truncate flag.

A layer that is unavailable here (not root, old kernel, another architecture) is skipped; the child
reports ``layers`` (what is active) and ``missing`` (what is not, and why) and the device exposes them.
Audit hooks are *not* a boundary (numpy can write raw memory); the child uses one only to send a note
("the kernel called os.system") before a forbidden call, so the fault message can say what was tried.

Audio crosses once per call. Input: the scorer copies it into a ``memfd`` pool it keeps mapped (pages
allocated once, not per call; spares map it before they are needed) and passes the fd over the socket;
the kernel reads it in place, and if it keeps a view of its input in ``ctx.state`` those pages are made
private before the pool is reused. Output: the scorer copies it straight out of the child's memory with
``process_vm_readv`` (one copy into the scorer's own memory, which the child can never touch again), or,
where that is not permitted, through the pool. The scorer enforces a wall-clock timeout and checks the
output's shape and finiteness itself; everything the child reports is treated as untrusted.

Speed: each child is forked ahead of need, hardened and warmed (a pre-faulted heap, the build and call
paths run once) at nice 19 while the previous device renders, so a device costs the scorer one hand-over,
the kernel's build, and two copies of its audio.

Faults are :class:`~pytest_overdub.errors.KernelError` with a reason: the kernel's traceback, "CPU time
limit of 2 s exceeded", "wall-clock timeout of 3 s", "stopped by the sandbox: forbidden system call
(the kernel called os.system)", ...
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import os
import platform
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import KernelError

NOBODY_UID = 65534
_HDR = struct.Struct("<I")
_MAX_MSG = 64 * 1024 * 1024
#: The largest transfer pool kept between calls (bigger transfers use a one-off memfd).
POOL_MAX_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class SandboxLimits:
    """Per-child limits: CPU seconds (over the child's life), address space added on top of the warm
    server's, wall clock per call (build or one process/render), and open files."""

    cpu_s: int = 60
    mem_mb: int = 4096
    wall_s: float = 120.0
    nofile: int = 32


DEFAULT_LIMITS = SandboxLimits()


# --------------------------------------------------------------------------------------------------
# Framing: a 4-byte length and a JSON body; fds ride on the first bytes of a message.


def _send(sock: socket.socket, obj: Any, fds: tuple[int, ...] = ()) -> None:
    body = json.dumps(obj, allow_nan=True).encode("utf-8")
    buf = _HDR.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [buf], list(fds))
        buf = buf[sent:]
    if buf:
        sock.sendall(buf)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None, fds: list[int]) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
        else:
            sock.settimeout(None)
        data, new_fds, _flags, _addr = socket.recv_fds(sock, n - got, 4)
        fds.extend(new_fds)
        if not data:
            raise EOFError
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def _recv(sock: socket.socket, deadline: float | None = None) -> tuple[Any, list[int]]:
    fds: list[int] = []
    (n,) = _HDR.unpack(_recv_exact(sock, 4, deadline, fds))
    if n > _MAX_MSG:
        raise EOFError
    return json.loads(_recv_exact(sock, n, deadline, fds)), fds


# --------------------------------------------------------------------------------------------------
# The layers, applied inside the child. Each returns a layer name or raises OSError with the reason.

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000


def _prctl(option: int, arg2: int = 0, arg3: Any = 0) -> None:
    if _libc.prctl(option, ctypes.c_ulong(arg2) if isinstance(arg2, int) else arg2, arg3, 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"prctl({option}): {os.strerror(e)}")


def _layer_rlimits(limits: SandboxLimits) -> str:
    import resource

    vm_kb = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                vm_kb = int(line.split()[1])
    cpu = max(1, int(limits.cpu_s))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    address_space = vm_kb * 1024 + int(limits.mem_mb) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.nofile, limits.nofile))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    return "rlimit"


def _layer_netns() -> str:
    if _libc.unshare(CLONE_NEWNET) == 0:
        return "netns"
    first = ctypes.get_errno()
    if os.geteuid() != 0 and _libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        return "netns(userns)"
    raise OSError(first, f"unshare(CLONE_NEWNET): {os.strerror(first)}")


def _layer_no_new_privs() -> str:
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    return "no_new_privs"


# Landlock (linux/landlock.h); x86_64, aarch64 and most arches share these syscall numbers.
_LL_CREATE, _LL_ADD_RULE, _LL_RESTRICT = 444, 445, 446
_LL_READ = (1 << 2) | (1 << 3)  # READ_FILE | READ_DIR
_LL_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1,
                 5: (1 << 16) - 1}


def _landlock_paths() -> list[str]:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the pytest_overdub package
    paths = {here, sys.prefix, sys.base_prefix, sys.exec_prefix}
    paths.update(p for p in sys.path if p and os.path.isdir(p) and not os.path.samefile(p, os.getcwd()))
    paths.update(("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib"))
    return sorted(p for p in paths if os.path.isdir(p))


def _layer_landlock() -> str:
    abi = _libc.syscall(_LL_CREATE, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        e = ctypes.get_errno()
        raise OSError(e, f"Landlock unavailable: {os.strerror(e)}")
    fs = _LL_FS_BY_ABI.get(abi, (1 << 16) - 1)
    fields = [fs]
    if abi >= 4:
        fields.append(0b11)  # BIND_TCP | CONNECT_TCP, with no rule allowing either
    if abi >= 6:
        fields.append(0b11)  # scoped: ABSTRACT_UNIX_SOCKET | SIGNAL
    attr = struct.pack(f"<{len(fields)}Q", *fields)
    ruleset = _libc.syscall(_LL_CREATE, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"landlock_create_ruleset: {os.strerror(e)}")
    try:
        for path in _landlock_paths():
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = struct.pack("<Qi", _LL_READ, fd)  # landlock_path_beneath_attr, packed
                if _libc.syscall(_LL_ADD_RULE, ctypes.c_int(ruleset), 1, ctypes.c_char_p(rule), 0) != 0:
                    e = ctypes.get_errno()
                    raise OSError(e, f"landlock_add_rule({path}): {os.strerror(e)}")
            finally:
                os.close(fd)
        if _libc.syscall(_LL_RESTRICT, ctypes.c_int(ruleset), 0) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"landlock_restrict_self: {os.strerror(e)}")
    finally:
        os.close(ruleset)
    return f"landlock(abi {abi})"


def _layer_uid() -> str:
    if os.geteuid() != 0:
        raise OSError(0, "not running as root: stays as uid %d" % os.geteuid())
    os.setgroups([])
    os.setgid(NOBODY_UID)
    os.setuid(NOBODY_UID)
    return "uid(nobody)"


# seccomp (linux/seccomp.h, linux/filter.h); x86_64 syscall numbers.
_AUDIT_ARCH_X86_64 = 0xC000003E
_RET_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_X86_64_KILL = {
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
}
_X86_64_ERRNO = {437: ("openat2", 38)}  # ENOSYS: callers fall back to openat, which is checked
_X86_64_OPEN_FLAGS = {2: ("open", 1), 257: ("openat", 2)}  # syscall -> (name, index of the flags arg)
_X86_64_SELF_ONLY = {62: ("kill", 0), 200: ("tkill", 0), 234: ("tgkill", 0)}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC
_TIOCSTI = 0x5412


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
        prog += [_bpf(_JEQ, 0, 4, nr), _bpf(_LD_W_ABS, 0, 0, arg(i)), _bpf(_JSET, 0, 1, _WRITE_FLAGS),
                 _bpf(_RET, 0, 0, _RET_KILL), _bpf(_LD_W_ABS, 0, 0, 0)]
    for nr, (_name, i) in sorted(_X86_64_SELF_ONLY.items()):
        prog += [_bpf(_JEQ, 0, 4, nr), _bpf(_LD_W_ABS, 0, 0, arg(i)), _bpf(_JEQ, 1, 0, my_pid),
                 _bpf(_RET, 0, 0, _RET_KILL), _bpf(_LD_W_ABS, 0, 0, 0)]
    # ioctl(fd, TIOCSTI, ...) would push keystrokes into a terminal.
    prog += [_bpf(_JEQ, 0, 4, 16), _bpf(_LD_W_ABS, 0, 0, arg(1)), _bpf(_JEQ, 0, 1, _TIOCSTI),
             _bpf(_RET, 0, 0, _RET_KILL), _bpf(_LD_W_ABS, 0, 0, 0)]
    prog.append(_bpf(_RET, 0, 0, _RET_ALLOW))
    return prog


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _layer_seccomp() -> str:
    if platform.machine() != "x86_64":
        raise OSError(0, f"seccomp filter written for x86_64 only, this is {platform.machine()}")
    prog = _seccomp_program(os.getpid())
    arr = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), arr)
    _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog))
    return "seccomp"


# --------------------------------------------------------------------------------------------------
# Friendlier messages (not a boundary): an audit hook notes what the kernel tried before it is stopped.

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


def _install_audit_notes(chan: socket.socket) -> None:
    busy = [False]
    sent = [0]

    def hook(event: str, args: tuple) -> None:
        if busy[0] or sent[0] >= 16:
            return
        what = _AUDIT_WHAT.get(event)
        if event == "open":
            path, mode, flags = (args + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & _WRITE_FLAGS)
            what = f"opened {path!r} for writing (file writes are not allowed)" if writing else \
                f"opened {path!r}"
        elif event == "ctypes.dlsym" and len(args) > 1:
            what = f"looked up the C function {args[1]!r} with ctypes"
        if what is None:
            return
        busy[0] = True
        try:
            sent[0] += 1
            _send(chan, {"note": what})
        except OSError:
            pass
        finally:
            busy[0] = False

    sys.addaudithook(hook)


# --------------------------------------------------------------------------------------------------
# The child


def _harden(chan_fd: int, limits: SandboxLimits, keep: tuple[int, ...] = ()) -> tuple[list[str], list[str]]:
    layers, missing = [], []
    devnull = os.open("/dev/null", os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    keep = sorted({0, 1, 2, chan_fd, *keep})
    for lo, hi in zip(keep, keep[1:] + [65536]):
        os.closerange(lo + 1, hi)
    os.chdir("/")
    sys.dont_write_bytecode = True
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    steps = (("rlimit", lambda: _layer_rlimits(limits)), ("netns", _layer_netns),
             ("no_new_privs", _layer_no_new_privs), ("landlock", _layer_landlock),
             ("uid", _layer_uid), ("seccomp", _layer_seccomp))
    for name, step in steps:
        try:
            layers.append(step())
        except (OSError, ValueError) as e:
            missing.append(f"{name}: {e}")
    return layers, missing


def _child_main(spare: socket.socket, limits: SandboxLimits, pool: dict | None = None, *,
                low_priority: bool = False) -> None:
    """A child: harden first, then wait (as a warm spare) for the scorer's socket, then serve it.

    While it waits it also does the per-process work that would otherwise land on the first call:
    a pre-faulted malloc heap and the scorer's transfer pool mapped. A spare forked ahead of need does
    this at nice 19 (so it never slows the kernel running meanwhile); the server restores its priority
    when it hands it a device."""
    if low_priority:
        os.nice(19)
    _warm_heap(WARM_HEAP_MB)
    layers, missing = _harden(spare.fileno(), limits, keep=(pool["fd"],) if pool else ())
    from . import kernels  # imported by the server before the fork: no file access here

    if pool:
        try:
            _child_pool(pool, [pool["fd"]])
        except (OSError, ValueError):
            pass
        os.close(pool["fd"])
    _warm_paths(kernels)

    try:
        _msg, fds = _recv(spare)
    except (EOFError, OSError):
        return
    spare.close()
    _CPU0[0] = _cpu_ms()
    chan = socket.socket(fileno=fds[0])
    _install_audit_notes(chan)
    import numpy as np

    probe = np.frombuffer(_PROBE, dtype=np.uint8).copy()
    _send(chan, {"ready": True, "pid": os.getpid(), "layers": layers, "missing": missing,
                 "probe": probe.ctypes.data})
    runtime = None
    while True:
        try:
            msg, fds = _recv(chan)
        except (EOFError, OSError):
            return
        try:
            if msg["op"] == "build":
                d = kernels.validate_definition(msg["defn"])
                runtime = kernels.KernelRuntime(d, sr=msg["sr"], tempo_bpm=msg["tempo_bpm"], seed=msg["seed"])
                _send(chan, {"ok": True, "tail_s": runtime.tail_s, "latency_frames": runtime.latency_frames,
                             "cpu_ms": _cpu_ms() - _CPU0[0]})
            else:
                _child_call(chan, runtime, msg, fds)
        except kernels.KernelError as e:
            _send(chan, {"ok": False, "error": str(e), "reason": getattr(e, "reason", str(e))})
        except Exception as e:  # noqa: BLE001 - the host side of the child failed (e.g. a limit hit)
            why = f"the sandbox child failed: {type(e).__name__}: {e}"
            _send(chan, {"ok": False, "error": why, "reason": why})
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass


_CHILD_POOL: dict = {}
#: Heap a child pre-faults while it waits as a spare (glibc keeps it: see :func:`_warm_heap`).
WARM_HEAP_MB = 32


def _warm_heap(mb: int) -> None:
    """Make large numpy temporaries come from a heap that is already faulted in: raise glibc's mmap and
    trim thresholds (so freed blocks stay in the heap), then touch ``mb`` MB once and free it. A fresh
    process otherwise pays a page fault per 4 KB on every new array."""
    try:
        mallopt = _libc.mallopt
    except AttributeError:
        return
    import numpy as np

    mallopt(-3, 32 * 1024 * 1024)  # M_MMAP_THRESHOLD (the largest glibc allows on 64-bit)
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    blocks = [np.ones(16 * 1024 * 1024 // 8) for _ in range(max(0, mb // 16))]
    del blocks


def _child_pool(msg: dict, fds: list[int]) -> mmap.mmap:
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


def _child_call(chan, runtime, msg: dict, fds: list[int]) -> None:
    import numpy as np

    from .kernels import Notes, check_output

    t0 = time.perf_counter()
    mm = _child_pool(msg, fds)
    n = msg["n"]
    whole = None
    if msg["op"] == "process":
        # The kernel reads its input straight from the pool; if it keeps a view of it (in ctx.state),
        # that stretch of memory is made private below, before the scorer reuses the pool.
        whole = np.frombuffer(mm, dtype=np.float64, count=2 * n)
        params = dict(msg["params"])
        for key, off in msg["arrays"].items():
            params[key] = np.frombuffer(mm, dtype=np.float64, count=n, offset=off).copy()
        t1 = time.perf_counter()
        y = runtime.process(whole.reshape(2, n), params)
    else:
        t1 = time.perf_counter()
        y = runtime.render(Notes(msg["notes"]), msg["params"], n)
    t2 = time.perf_counter()
    y = check_output(runtime.defn, y, n, check_finite=False)
    reply: dict = {"ok": True}
    if msg["out"] == "vm":  # the scorer reads y from this process's memory (one copy, into its own)
        if whole is not None and np.may_share_memory(y, whole):
            y = y.copy()
        _KEEP[0] = y = np.ascontiguousarray(y)
        reply["addr"] = y.ctypes.data
    else:
        out = np.frombuffer(mm, dtype=np.float64, count=2 * n, offset=msg["out"]).reshape(2, n)
        out[...] = y
        del out
    del y
    if whole is not None and sys.getrefcount(whole) > 2:  # ours + getrefcount's argument
        _make_private(whole)
    t3 = time.perf_counter()
    reply["cpu_ms"] = _cpu_ms() - _CPU0[0]
    reply["timing_ms"] = [round(1e3 * (t1 - t0), 2), round(1e3 * (t2 - t1), 2), round(1e3 * (t3 - t2), 2)]
    _send(chan, reply)


_CPU0: list = [0.0]


def _cpu_ms() -> float:
    """This process's CPU time (user + system) in ms; a device's cost is counted from its hand-over."""
    t = os.times()
    return 1e3 * (t.user + t.system)


#: The last output, kept alive until the next message so the scorer can read it (``"out": "vm"``).
_KEEP: list = [None]
#: Bytes the scorer reads once to learn whether it may read this child's memory.
_PROBE = b"overdub-vm-probe"


_WARM_KERNEL = {"id": "sandbox.warm-up", "kind": "effect", "version": 1, "params": [], "kernel":
                "def process(x, params, ctx):\n    return np.concatenate([x[:, :1], x[:, 1:]], axis=1)\n"}


def _warm_paths(kernels) -> None:
    """Run a trivial kernel through the build and call paths once, so the copy-on-write faults of the
    pages those paths touch are taken now (at the spare's low priority), not on the first real call."""
    import numpy as np

    try:
        runtime = kernels.KernelRuntime(kernels.validate_definition(_WARM_KERNEL), sr=48000,
                                        tempo_bpm=120.0, seed=0)
        y = runtime.process(np.zeros((2, 4096)), {})
        kernels.check_output(runtime.defn, y, 4096)
        json.loads(json.dumps({"ok": True, "timing_ms": [0.0]}))
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        pass


_PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_FIXED = 0x10


def _make_private(arr) -> None:
    """Replace the pages under ``arr`` (a view at the start of the pool mapping) by private anonymous
    memory holding the same bytes, so the views a kernel kept stay valid and unchanged after the
    scorer writes the next call's input. The pool is mapped afresh for the next call."""
    import numpy as np

    saved = arr.copy()
    length = -(-arr.nbytes // mmap.PAGESIZE) * mmap.PAGESIZE
    _libc.mmap.restype = ctypes.c_void_p
    _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                           ctypes.c_long]
    addr = arr.ctypes.data
    got = _libc.mmap(addr, length, _PROT_RW, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED, -1, 0)
    if got != addr:
        raise OSError(ctypes.get_errno(), "could not make the kernel's input private")
    np.copyto(arr, saved)
    _CHILD_POOL.clear()


# --------------------------------------------------------------------------------------------------
# The server


_PREIMPORT = ("numpy", "numpy.fft", "numpy.random", "numpy.linalg", "numpy.polynomial", "scipy",
              "scipy.signal", "scipy.fft", "scipy.special", "scipy.interpolate", "scipy.ndimage",
              "math", "cmath", "random", "itertools", "functools", "collections", "dataclasses",
              "statistics", "fractions", "bisect", "heapq", "json", "traceback", "linecache",
              "typing", "time", "os", "subprocess", "socket", "ctypes", "tempfile", "shutil",
              "resource", "encodings.idna", "pytest_overdub.render.kernels", "pytest_overdub.dsp.stdlib")


def _serve(fd: int) -> None:
    """The fork server's main loop (runs in its own process)."""
    from importlib import import_module

    ctrl = socket.socket(fileno=fd)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for name in _PREIMPORT:
        try:
            import_module(name)
        except ImportError:
            pass
    from ..dsp.stdlib import stdlib

    stdlib()
    statuses: dict[int, dict] = {}
    spare: tuple[int, socket.socket, SandboxLimits] | None = None
    _send(ctrl, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            msg, fds = _recv(ctrl)
        except (EOFError, OSError):
            os._exit(0)
        _reap(statuses)
        if msg["op"] == "spawn":
            limits = SandboxLimits(**msg["limits"])
            pid, spare = _hand_over(ctrl, spare, limits, fds[0])
            for f in fds:
                os.close(f)
            _send(ctrl, {"pid": pid})
            if spare is None:  # the next device finds a hardened child waiting
                spare = _fork_child(ctrl, limits, low_priority=True)
        elif msg["op"] == "end":
            _send(ctrl, _end_child(msg["pid"], statuses, kill=msg["kill"], grace_s=msg.get("grace_s", 1.0)))
        elif msg["op"] == "pool":  # the scorer's transfer pool, mapped by spares before they are needed
            if _POOL.get("fd") is not None:
                os.close(_POOL["fd"])
            _POOL.update(fd=fds[0], pool=msg["pool"], size=msg["size"])
            _send(ctrl, {"ok": True})


_POOL: dict = {}


def _fork_child(ctrl: socket.socket, limits: SandboxLimits, *,
                low_priority: bool = False) -> tuple[int, socket.socket, SandboxLimits]:
    """Fork a child that hardens itself and waits for its scorer socket; returns (pid, socket, limits)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            ctrl.close()
            ours.close()
            _child_main(theirs, limits, dict(_POOL) if _POOL.get("fd") is not None else None,
                        low_priority=low_priority)
        except BaseException:  # noqa: BLE001 - the child never returns into the server
            code = 70
        os._exit(code)
    theirs.close()
    return pid, ours, limits


def _hand_over(ctrl, spare, limits: SandboxLimits, chan_fd: int):
    """Give ``chan_fd`` to the warm spare when its limits match (else to a fresh child).
    Returns (the child's pid, the spare left over or None)."""
    if spare is not None:
        pid, sock, spare_limits = spare
        try:
            if spare_limits == limits:
                try:
                    os.setpriority(os.PRIO_PROCESS, pid, 0)
                except OSError:
                    pass  # not root: the spare keeps nice 19
                _send(sock, {"go": True}, (chan_fd,))
                return pid, None
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        finally:
            sock.close()
    pid, sock, _ = _fork_child(ctrl, limits)
    try:
        _send(sock, {"go": True}, (chan_fd,))
    finally:
        sock.close()
    return pid, None


def _status(code: int) -> dict:
    if os.WIFSIGNALED(code):
        return {"signal": os.WTERMSIG(code)}
    return {"exit": os.WEXITSTATUS(code)}


def _reap(statuses: dict[int, dict]) -> None:
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = _status(code)
        if len(statuses) > 256:
            statuses.pop(next(iter(statuses)))


def _end_child(pid: int, statuses: dict, *, kill: bool, grace_s: float) -> dict:
    """Kill (or wait up to ``grace_s`` for) a child and return how it ended."""
    if pid in statuses:
        return statuses.pop(pid)
    if not kill:
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            try:
                got, code = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return {"exit": None}
            if got:
                return _status(code)
            time.sleep(0.002)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        _, code = os.waitpid(pid, 0)
    except ChildProcessError:
        return {"exit": None}
    st = _status(code)
    st["killed"] = True
    return st


class ForkServer:
    """The scorer's handle on the warm server process; one per scorer process (:func:`fork_server`)."""

    def __init__(self):
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.pool_lock = threading.RLock()
        self._pool = None
        self._generation = 0
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
            env[var] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        code = f"from pytest_overdub.render.sandbox import _serve; _serve({theirs.fileno()})"
        t0 = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-c", code],
                                     pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                     cwd="/")
        theirs.close()
        self.sock = ours
        try:
            msg, _ = _recv(ours, time.monotonic() + 120.0)
        except (EOFError, TimeoutError, OSError) as e:
            self.close()
            raise KernelError(f"the kernel sandbox could not start ({type(e).__name__}); "
                              f"set OVERDUB_TRUST_KERNELS=1 to run your own kernels in-process") from None
        self.pid = msg["pid"]
        self.start_s = time.perf_counter() - t0

    def request(self, msg: dict, fds: tuple[int, ...] = (), timeout_s: float = 30.0) -> dict:
        with self.lock:
            try:
                _send(self.sock, msg, fds)
                reply, _ = _recv(self.sock, time.monotonic() + timeout_s)
                return reply
            except (EOFError, TimeoutError, OSError) as e:
                self.close()
                raise KernelError(f"the kernel sandbox server stopped responding ({type(e).__name__})") from None

    @contextlib.contextmanager
    def pool(self, size: int):
        """The transfer pool: one memfd kept mapped (its pages stay allocated, so no page faults per
        call), grown on demand; a transfer above :data:`POOL_MAX_BYTES` gets a one-off memfd instead.
        Yields ``(key, fd, mmap)``; calls hold :attr:`pool_lock`, so one transfer at a time."""
        with self.pool_lock:
            if size > POOL_MAX_BYTES:
                fd = os.memfd_create("overdub-kernel-once", os.MFD_CLOEXEC)
                os.ftruncate(fd, size)
                mm = mmap.mmap(fd, size)
                try:
                    yield f"once-{id(mm)}-{time.monotonic_ns()}", fd, mm
                finally:
                    mm.close()
                    os.close(fd)
                return
            if self._pool is None or len(self._pool[2]) < size:
                self._drop_pool()
                grown = max(size, 2 * len(self._pool[2]) if self._pool else 0, 1 << 20)
                grown = min(max(grown, size), POOL_MAX_BYTES)
                fd = os.memfd_create("overdub-kernel-pool", os.MFD_CLOEXEC)
                os.ftruncate(fd, grown)
                self._generation += 1
                self._pool = (f"{os.getpid()}-{self._generation}", fd, mmap.mmap(fd, grown))
                self.request({"op": "pool", "pool": self._pool[0], "size": grown}, (fd,))
            yield self._pool

    def _drop_pool(self) -> None:
        if self._pool is not None:
            _key, fd, mm = self._pool
            self._pool = None
            mm.close()
            os.close(fd)

    def alive(self) -> bool:
        return self.proc.poll() is None and self.owner == os.getpid()

    def close(self) -> None:
        try:
            self.sock.close()
            self._drop_pool()
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()


_SERVER: ForkServer | None = None
_SERVER_LOCK = threading.Lock()


def fork_server() -> ForkServer:
    """The process's warm fork server, started on first use (and again if it died)."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is None or not _SERVER.alive():
            _SERVER = ForkServer()
        return _SERVER


def shutdown() -> None:
    """Stop the fork server (its children die with it). Registered at exit."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is not None and _SERVER.owner == os.getpid():
            _SERVER.close()
        _SERVER = None


import atexit  # noqa: E402

atexit.register(shutdown)


# --------------------------------------------------------------------------------------------------
# The scorer's side of one sandboxed device


_SIGNAL_WHY = {
    signal.SIGXCPU: "CPU time limit of {cpu} s exceeded",
    signal.SIGSYS: "stopped by the sandbox: a forbidden system call",
    signal.SIGSEGV: "crashed (segmentation fault)",
    signal.SIGBUS: "crashed (bus error)",
    signal.SIGABRT: "aborted",
    signal.SIGKILL: "killed (a hard resource limit)",
}


class SandboxedKernel:
    """One kernel in one sandbox child: built once, then ``process``/``render`` calls carrying state."""

    def __init__(self, defn, *, sr: int, tempo_bpm: float, seed: int, limits: SandboxLimits | None = None):
        self.defn = defn
        self.limits = limits or DEFAULT_LIMITS
        self.server = fork_server()
        self.notes: list[str] = []
        self.child_cpu_ms = 0.0  # the child's CPU time since it was handed this device (diagnostic)
        self.pid = None
        self.sock = None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            reply = self.server.request({"op": "spawn", "limits": asdict(self.limits)}, (theirs.fileno(),))
        finally:
            theirs.close()
        self.pid, self.sock = reply["pid"], ours
        self.vm_read = False
        # Kernel code (here its module body) only ever runs under the pool lock: no child can touch the
        # shared pool while another child's call is using it.
        with self.server.pool_lock:
            # Pipelined: the build request waits in the socket while the child says it is ready.
            self._send({"op": "build", "defn": defn.to_json(), "sr": sr, "tempo_bpm": tempo_bpm,
                        "seed": seed})
            ready = self._reply(time.monotonic() + self.limits.wall_s, "starting")
            probe = bytearray(len(_PROBE))
            self.vm_read = _vm_read(self.pid, ready.get("probe"), probe) and bytes(probe) == _PROBE
            self.layers = tuple(ready.get("layers", ()))
            self.missing = tuple(ready.get("missing", ()))
            built = self._reply(time.monotonic() + self.limits.wall_s, "loading")
        self.tail_s = float(built.get("tail_s", 0.0))
        self.latency_frames = int(built.get("latency_frames", 0))

    # -- calls

    def process(self, x, params: dict):
        import numpy as np

        n = x.shape[1]
        arrays = {k: v for k, v in params.items() if isinstance(v, np.ndarray)}
        scalars = {k: float(v) for k, v in params.items() if k not in arrays}
        offsets, off = {}, 16 * n
        for k in arrays:
            offsets[k] = off
            off += 8 * n
        return self._call({"op": "process", "n": n, "params": scalars, "arrays": offsets},
                          out_off=off, inputs=[(0, x)] + [(offsets[k], arrays[k]) for k in arrays])

    def render(self, payload: dict, params: dict, n_frames: int):
        return self._call({"op": "render", "n": n_frames, "params": params, "notes": payload},
                          out_off=0, inputs=[])

    def _call(self, msg: dict, *, out_off: int, inputs: list):
        import numpy as np

        from .kernels import check_output

        n = msg["n"]
        size = max(out_off if self.vm_read else out_off + 16 * n, 8)
        with self.server.pool(size) as (key, fd, mm):
            for off, arr in inputs:
                view = np.frombuffer(mm, dtype=np.float64, count=arr.size, offset=off).reshape(arr.shape)
                view[...] = arr
                del view
            out = "vm" if self.vm_read else out_off
            self._send({**msg, "pool": key, "size": len(mm), "out": out}, (fd,))
            reply = self._reply(time.monotonic() + self.limits.wall_s, "running")
            self.last_timing_ms = reply.get("timing_ms")
            if self.vm_read:
                y = np.empty((2, n))
                if not _vm_read(self.pid, reply.get("addr"), y):
                    raise self._died("returning its output (its memory could not be read)", kill=True)
            else:
                y = np.frombuffer(mm, dtype=np.float64, count=2 * n, offset=out_off).reshape(2, n).copy()
        return check_output(self.defn, y, n)

    # -- plumbing

    def _send(self, msg: dict, fds: tuple[int, ...] = ()) -> None:
        if self.sock is None:
            raise KernelError(f"kernel {self.defn.id}: its sandbox child has ended")
        try:
            _send(self.sock, msg, fds)
        except OSError:
            raise self._died("while receiving its input") from None

    def _reply(self, deadline: float, doing: str) -> dict:
        while True:
            try:
                msg, fds = _recv(self.sock, deadline)
            except TimeoutError:
                raise self._died(doing, timed_out=True) from None
            except (EOFError, OSError):
                raise self._died(doing) from None
            for f in fds:
                os.close(f)
            if "note" in msg:
                self.notes.append(str(msg["note"]))
                continue
            if isinstance(msg.get("cpu_ms"), (int, float)):
                self.child_cpu_ms = float(msg["cpu_ms"])
            if msg.get("ok") is False:
                err = KernelError(str(msg.get("error")))
                err.reason = str(msg.get("reason"))
                raise err
            return msg

    def _died(self, doing: str, *, timed_out: bool = False, kill: bool = False) -> KernelError:
        status = self._end(kill=timed_out or kill)
        sig = status.get("signal")
        if timed_out:
            why = f"wall-clock timeout of {self.limits.wall_s:g} s while {doing}"
        elif sig is not None:
            why = _SIGNAL_WHY.get(sig, f"killed by signal {sig}").format(cpu=self.limits.cpu_s)
            why += f" while {doing}"
        else:
            why = f"its process exited (status {status.get('exit')}) while {doing}"
        if self.notes:
            why += f"; the kernel {self.notes[-1]}"
        err = KernelError(f"kernel {self.defn.id} faulted in the sandbox: {why}")
        err.reason = why
        return err

    def _end(self, *, kill: bool) -> dict:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.pid is None:
            return {}
        pid, self.pid = self.pid, None
        try:
            return self.server.request({"op": "end", "pid": pid, "kill": kill, "grace_s": 1.0})
        except KernelError:
            return {}

    def close(self) -> None:
        """End the child (it exits on EOF; the server reaps it)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.pid = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


class _IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


def _vm_read(pid: int | None, addr: Any, dest) -> bool:
    """Copy ``len(dest)`` bytes from ``addr`` in process ``pid`` into the writable buffer ``dest``
    with ``process_vm_readv`` (one copy, straight into our memory). False if not allowed or not all
    bytes could be read; the child chooses ``addr``, so at worst we read its own garbage."""
    if pid is None or not isinstance(addr, int) or addr <= 0:
        return False
    buf = (ctypes.c_char * len(memoryview(dest).cast("B"))).from_buffer(dest)
    total, done = len(buf), 0
    fn = _libc.process_vm_readv
    fn.restype = ctypes.c_ssize_t
    while done < total:
        local = _IoVec(ctypes.addressof(buf) + done, total - done)
        remote = _IoVec(addr + done, total - done)
        got = fn(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if got <= 0:
            return False
        done += got
    return True


def probe_layers(limits: SandboxLimits | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Start one child with a trivial kernel and return (active layers, missing layers with reasons)."""
    from .kernels import validate_definition

    d = validate_definition({"id": "probe.layers", "kind": "effect",
                             "kernel": "def process(x, params, ctx):\n    return x\n"})
    k = SandboxedKernel(d, sr=48000, tempo_bpm=120.0, seed=0, limits=limits)
    try:
        return k.layers, k.missing
    finally:
        k.close()


__all__ = ["SandboxLimits", "DEFAULT_LIMITS", "SandboxedKernel", "ForkServer", "fork_server", "shutdown",
           "probe_layers"]
