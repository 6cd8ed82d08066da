"""The confinement layers a sandbox child applies to itself before it reads any kernel source.

Each ``layer_*`` function applies one layer and returns its name as reported in ``layers`` (for
example ``"landlock(abi 6)"``), or raises ``OSError`` saying why it could not (not root, old kernel,
another architecture); :func:`harden` applies them all in order and collects both lists. The order
matters: the network namespace comes before the uid drop (``unshare`` needs root's CAP_SYS_ADMIN, or a
user namespace otherwise), no_new_privs before Landlock and seccomp (both need it when not root), and
seccomp last (it would kill the ``unshare`` call).
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
import sys

import pytest_overdub

from .libc import CLONE_NEWNET, CLONE_NEWUSER, PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG, libc, prctl
from .limits import REUSE_HEADROOM_MB, SandboxLimits
from .seccomp import layer_seccomp

NOBODY_UID = 65534


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
_LL_READ = (1 << 2) | (1 << 3)  # READ_FILE | READ_DIR
_LL_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1,
                 5: (1 << 16) - 1}


def _landlock_paths() -> list[str]:
    here = os.path.dirname(os.path.abspath(pytest_overdub.__file__))  # the pytest_overdub package
    paths = {here, sys.prefix, sys.base_prefix, sys.exec_prefix}
    paths.update(p for p in sys.path if p and os.path.isdir(p) and not os.path.samefile(p, os.getcwd()))
    paths.update(("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib"))
    return sorted(p for p in paths if os.path.isdir(p))


def layer_landlock() -> str:
    """Read-only access beneath the Python install and the package; no writes anywhere, no exec, no TCP
    bind/connect (ABI 4), no signals or abstract sockets outside the sandbox (ABI 6)."""
    abi = libc.syscall(_LL_CREATE, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        e = ctypes.get_errno()
        raise OSError(e, f"Landlock unavailable: {os.strerror(e)}")
    ruleset = _landlock_ruleset(abi)
    try:
        for path in _landlock_paths():
            _landlock_allow_read(ruleset, path)
        if libc.syscall(_LL_RESTRICT, ctypes.c_int(ruleset), 0) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"landlock_restrict_self: {os.strerror(e)}")
    finally:
        os.close(ruleset)
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


def _landlock_allow_read(ruleset: int, path: str) -> None:
    """Add a rule to ``ruleset``: reading files and directories beneath ``path`` is allowed."""
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = struct.pack("<Qi", _LL_READ, fd)  # landlock_path_beneath_attr, packed
        if libc.syscall(_LL_ADD_RULE, ctypes.c_int(ruleset), 1, ctypes.c_char_p(rule), 0) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"landlock_add_rule({path}): {os.strerror(e)}")
    finally:
        os.close(fd)


def layer_uid() -> str:
    """Drop to ``nobody`` (no supplementary groups) when running as root; all capabilities go with it."""
    if os.geteuid() != 0:
        raise OSError(0, "not running as root: stays as uid %d" % os.geteuid())
    os.setgroups([])
    os.setgid(NOBODY_UID)
    os.setuid(NOBODY_UID)
    return "uid(nobody)"


def harden(chan_fd: int, limits: SandboxLimits, keep: tuple[int, ...] = ()) -> tuple[list[str], list[str]]:
    """fd hygiene (every descriptor but ``chan_fd`` and ``keep`` closed, stdio on ``/dev/null``, cwd
    ``/``, death with the server), then every layer in order. Returns ``(layers, missing)``: the active
    layers' names and, for each one that could not be applied, ``"name: why"``."""
    layers, missing = [], []
    devnull = os.open("/dev/null", os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    keep = sorted({0, 1, 2, chan_fd, *keep})
    for lo, hi in zip(keep, keep[1:] + [65536]):
        os.closerange(lo + 1, hi)
    os.chdir("/")
    sys.dont_write_bytecode = True
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    steps = (("rlimit", lambda: layer_rlimits(limits)), ("netns", layer_netns),
             ("no_new_privs", layer_no_new_privs), ("landlock", layer_landlock),
             ("uid", layer_uid), ("seccomp", layer_seccomp))
    for name, step in steps:
        try:
            layers.append(step())
        except (OSError, ValueError) as e:
            missing.append(f"{name}: {e}")
    return layers, missing
