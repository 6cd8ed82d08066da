"""The confinement layers a sandbox child applies to itself before it reads any kernel source.

Each ``layer_*`` function applies one layer and returns its name as reported in ``layers`` (for
example ``"landlock(abi 6)"``), or raises ``OSError`` saying why it could not (not root, old kernel,
another architecture); :func:`harden` applies them all in order and collects both lists. The order
matters: the network namespace comes before the uid drop (``unshare`` needs root's CAP_SYS_ADMIN, or a
user namespace otherwise), no_new_privs before Landlock and seccomp (both need it when not root), Landlock
before the uid drop (which keeps CAP_DAC_READ_SEARCH only under Landlock), seccomp last (it would kill the
``unshare`` call), and the parent-death signal after the uid drop (which clears it).
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
import sys

from .libc import (CLONE_NEWNET, CLONE_NEWUSER, PR_SET_KEEPCAPS, PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG, libc,
                   prctl)
from .limits import REUSE_HEADROOM_MB, SandboxLimits
from .readset import needs_read_search, read_set, rules
from .seccomp import layer_seccomp

#: As root each child runs as uid (and gid) ``UID_BASE + pid``: unused by any user, below 2**31.
UID_BASE = 0x7A000000
_SYS_CAPSET = 126  # x86_64
_CAP_V3 = 0x20080522
_CAP_DAC_READ_SEARCH = 2


def layer_rlimits(limits: SandboxLimits) -> str:
    """CPU seconds, address space (``mem_mb`` on top of what the process already maps), file size 0,
    open files, processes 0, and no core dumps. The hard CPU and address-space limits leave the headroom
    a reused child renews its next device's soft limits from (:class:`.limits.SandboxLimits`)."""
    import resource

    vm_kb = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                vm_kb = int(line.split()[1])
    cpu = max(1, int(limits.cpu_s))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, 2 * cpu + 1))
    address_space = vm_kb * 1024 + int(limits.mem_mb) * 1024 * 1024
    headroom = REUSE_HEADROOM_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space + headroom))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.nofile, limits.nofile))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    return "rlimit"


def layer_netns() -> str:
    """A new, empty network namespace (no interfaces, not even loopback); inside a new user namespace
    when not root."""
    if libc.unshare(CLONE_NEWNET) == 0:
        return "netns"
    first = ctypes.get_errno()
    if os.geteuid() != 0 and libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0:
        return "netns(userns)"
    raise OSError(first, f"unshare(CLONE_NEWNET): {os.strerror(first)}")


def layer_no_new_privs() -> str:
    """No set-uid or file-capability gains from here on (and the precondition for unprivileged
    Landlock and seccomp)."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    return "no_new_privs"


# Landlock (linux/landlock.h); x86_64, aarch64 and most arches share these syscall numbers.
_LL_CREATE, _LL_ADD_RULE, _LL_RESTRICT = 444, 445, 446
_LL_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1,
                 5: (1 << 16) - 1}


#: The Landlock ruleset a fork server builds once (:func:`prepare_landlock`); its children inherit the fd.
_PREPARED: list = [None]
#: Whether a child keeps CAP_DAC_READ_SEARCH when it drops its uid (:func:`layer_uid`).
_READ_SEARCH: list = [False]
#: ``sys.path`` in a child: the entries inside the read set (an unreadable site-packages would turn a
#: library's optional ``import`` into a PermissionError instead of an ImportError).
_SYS_PATH: list = []


def prepare_landlock() -> None:
    """Build the read set's Landlock ruleset once, in the fork server before it forks: a child then only
    calls ``landlock_restrict_self`` with the inherited fd. A no-op where Landlock is unavailable."""
    abi = libc.syscall(_LL_CREATE, None, 0, 1)
    if abi < 1 or _PREPARED[0] is not None:
        return
    ruleset = _landlock_ruleset(abi)
    try:
        roots, never = read_set()
        for path, access in rules(roots, never):
            _landlock_allow(ruleset, path, access)
    except OSError:
        os.close(ruleset)
        raise
    _PREPARED[0] = (ruleset, abi)
    _READ_SEARCH[0] = needs_read_search(roots)
    inside = lambda p: any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots) and p not in never
    _SYS_PATH[:] = [p for p in sys.path if p and inside(os.path.realpath(p))]


def layer_landlock() -> str:
    """Read-only access to the read set (:func:`.readset.read_set`) and nothing else; no writes anywhere, no exec,
    no TCP bind/connect (ABI 4), no signals or abstract sockets outside the sandbox (ABI 6). ``sys.path``
    keeps only its entries inside the read set."""
    if _PREPARED[0] is None:
        abi = libc.syscall(_LL_CREATE, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
        if abi < 1:
            e = ctypes.get_errno()
            raise OSError(e, f"Landlock unavailable: {os.strerror(e)}")
        prepare_landlock()
    ruleset, abi = _PREPARED[0]
    _PREPARED[0] = None
    try:
        if libc.syscall(_LL_RESTRICT, ctypes.c_int(ruleset), 0) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"landlock_restrict_self: {os.strerror(e)}")
    finally:
        os.close(ruleset)
    sys.path[:] = _SYS_PATH
    return f"landlock(abi {abi})"


def _landlock_ruleset(abi: int) -> int:
    """A ruleset fd handling every access right ``abi`` knows (so all are denied but those a rule
    grants)."""
    fs = _LL_FS_BY_ABI.get(abi, (1 << 16) - 1)
    fields = [fs]
    if abi >= 4:
        fields.append(0b11)  # BIND_TCP | CONNECT_TCP, with no rule allowing either
    if abi >= 6:
        fields.append(0b11)  # scoped: ABSTRACT_UNIX_SOCKET | SIGNAL
    attr = struct.pack(f"<{len(fields)}Q", *fields)
    ruleset = libc.syscall(_LL_CREATE, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"landlock_create_ruleset: {os.strerror(e)}")
    return ruleset


def _landlock_allow(ruleset: int, path: str, access: int) -> None:
    """Add a rule to ``ruleset``: ``access`` (reading files, and listing directories) beneath ``path``."""
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = struct.pack("<Qi", access, fd)  # landlock_path_beneath_attr, packed
        if libc.syscall(_LL_ADD_RULE, ctypes.c_int(ruleset), 1, ctypes.c_char_p(rule), 0) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"landlock_add_rule({path}): {os.strerror(e)}")
    finally:
        os.close(fd)


def layer_uid(*, read_search: bool = False) -> str:
    """When running as root, drop to a uid (and gid) of this child's own, :data:`UID_BASE` + its pid, with
    no supplementary groups and no capabilities: the kernel's own permission checks then keep a child
    away from every other process, other children included. ``read_search`` keeps CAP_DAC_READ_SEARCH
    alone (only ever with Landlock active: Landlock then decides alone what the child reads), for an
    interpreter installed where ``nobody`` cannot reach (a private home)."""
    if os.geteuid() != 0:
        raise OSError(0, "not running as root: stays as uid %d" % os.geteuid())
    uid = UID_BASE + os.getpid()
    if read_search:
        prctl(PR_SET_KEEPCAPS, 1)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if not read_search:
        return "uid(per-child)"
    header = struct.pack("<Ii", _CAP_V3, 0)
    keep = 1 << _CAP_DAC_READ_SEARCH
    data = struct.pack("<6I", keep, keep, 0, 0, 0, 0)  # effective, permitted, inheritable (x2)
    if libc.syscall(_SYS_CAPSET, ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        os._exit(70)  # it would keep root's permitted capabilities: this child must not run anything
    prctl(PR_SET_KEEPCAPS, 0)
    return "uid(per-child, read-search)"


#: The layers an untrusted kernel needs (``uid`` too when running as root); see :func:`harden`.
REQUIRED = ("rlimit", "no_new_privs", "landlock", "seccomp")


def harden(chan_fd: int, limits: SandboxLimits, keep: tuple[int, ...] = (), *,
           parent_pid: int | None = None) -> tuple[list[str], list[str], list[str]]:
    """fd hygiene (every descriptor but ``chan_fd`` and ``keep`` closed, stdio on ``/dev/null``, cwd
    ``/``), then every layer in order, then death with the server (``parent_pid``; set after the uid
    drop, which clears it, and the child exits if the server is already gone). Returns ``(layers,
    missing, unmet)``: the active layers' names, ``"name: why"`` for each one that could not be applied,
    and those of :data:`REQUIRED` (and ``uid`` as root) among them."""
    parent = os.getppid() if parent_pid is None else parent_pid
    root = os.geteuid() == 0
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    layers, missing = [], []
    devnull = os.open("/dev/null", os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    prepared = (_PREPARED[0][0],) if _PREPARED[0] is not None else ()
    keep = sorted({0, 1, 2, chan_fd, *keep, *prepared})
    for lo, hi in zip(keep, keep[1:] + [65536]):
        os.closerange(lo + 1, hi)
    os.chdir("/")
    sys.dont_write_bytecode = True
    read_search = _READ_SEARCH[0]
    steps = (("rlimit", lambda: layer_rlimits(limits)), ("netns", layer_netns),
             ("no_new_privs", layer_no_new_privs), ("landlock", layer_landlock),
             ("uid", lambda: layer_uid(read_search=read_search and any(n.startswith("landlock") for n in layers))),
             ("seccomp", layer_seccomp))
    for name, step in steps:
        try:
            layers.append(step())
        except (OSError, ValueError) as e:
            missing.append(f"{name}: {e}")
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the uid drop cleared it
    if os.getppid() != parent:
        os._exit(0)
    required = REQUIRED + (("uid",) if root else ())
    return layers, missing, [m for m in missing if m.split(":", 1)[0] in required]


def weak_refusal(unmet: list[str]) -> str:
    """The fault an untrusted kernel gets when required layers could not be applied."""
    return (f"refused: the sandbox could not apply {'; '.join(unmet)}; an untrusted kernel runs only with "
            "every required layer (rlimit, no_new_privs, landlock, seccomp, and uid when root). "
            "Pass --overdub-weak-sandbox (or set OVERDUB_WEAK_SANDBOX=1) to run it with the layers that "
            "could be applied, or --overdub-trust-kernels for your own code")
