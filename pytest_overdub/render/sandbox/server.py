"""The warm fork server: its own process (a fresh ``python -c``, never a fork of the scorer, which may
hold threads) that imports numpy, scipy and the dsp stdlib once and then forks one sandbox child per
device on request.

It answers the scorer's requests on its control socket (:class:`.handle.ForkServer` is the other end):
``spawn`` hands the scorer's socket to a warm spare (or a fresh child if the limits differ) and forks the
next spare once the scorer says it is ``idle`` (or asks anything else, or ``spare_after_s`` has passed);
``end`` kills a child, or waits for it to exit, and reports how it ended; ``kill`` (no answer) kills
children the scorer is done with (a device closed outside a kernel session, a session's idle children), so
no child's exit depends on its own good behaviour; ``pool`` records the scorer's transfer pool so spares
map it before they are needed; ``idle`` has no answer. It dies with the scorer (``PR_SET_PDEATHSIG``,
and it exits at once if the scorer is already gone) and its children die with it. Before it forks it
builds the children's Landlock ruleset once (:func:`.layers.prepare_landlock`).
"""

from __future__ import annotations

import gc
import os
import select
import signal
import socket
import time

from .child import child_main
from .framing import recv, send
from .layers import prepare_landlock
from .libc import PR_SET_PDEATHSIG, prctl
from .limits import SandboxLimits

#: How long after a hand-over the server waits (unless asked something) before forking the next spare;
#: a ``spawn`` may say otherwise (``spare_after_s``: a kernel session asks for its end, see :mod:`.handle`).
SPARE_DELAY_S = 0.02
_PREIMPORT = ("numpy", "numpy.fft", "numpy.random", "numpy.linalg", "numpy.polynomial", "scipy",
              "scipy.signal", "scipy.fft", "scipy.special", "scipy.interpolate", "scipy.ndimage",
              "math", "cmath", "random", "itertools", "functools", "collections", "dataclasses",
              "statistics", "fractions", "bisect", "heapq", "json", "traceback", "linecache",
              "typing", "time", "os", "subprocess", "socket", "ctypes", "tempfile", "shutil",
              "resource", "encodings.idna", "pytest_overdub.render.kernels", "pytest_overdub.dsp.stdlib")


def serve(fd: int, parent_pid: int | None = None) -> None:
    """The fork server's main loop (runs in its own process); ``parent_pid``: the scorer's pid."""
    ctrl = socket.socket(fileno=fd)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(0)  # the scorer died before the death signal was set
    _preimport()
    try:
        prepare_landlock()
    except Exception:  # noqa: BLE001 - each child tries again, and reports the layer missing if it fails
        pass
    statuses: dict[int, dict] = {}
    spare: tuple[int, socket.socket, SandboxLimits] | None = None
    send(ctrl, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            msg, fds = recv(ctrl)
        except (EOFError, OSError):
            os._exit(0)
        _reap(statuses)
        if msg["op"] == "spawn":
            limits = SandboxLimits(**msg["limits"])
            pid = _hand_over(ctrl, spare, limits, fds[0])
            for f in fds:
                os.close(f)
            send(ctrl, {"pid": pid})
            # The spare is used or gone: the next device finds a fresh hardened child waiting. Making it
            # (a fork, the hardening and a pre-faulted heap: 30-40 ms of CPU here, much of it the kernel
            # zeroing pages) slows whatever else runs then, so it waits until the scorer is idle (the end
            # of a kernel session), asks for something else, or ``spare_after_s`` has passed.
            select.select([ctrl], [], [], float(msg.get("spare_after_s", SPARE_DELAY_S)))
            spare = _fork_child(ctrl, limits, low_priority=True)
        elif msg["op"] == "idle":  # it woke the wait above; nothing to answer
            pass
        elif msg["op"] == "kill":  # no answer
            for pid in msg["pids"]:
                if pid in _LIVE:
                    os.kill(pid, signal.SIGKILL)
        elif msg["op"] == "end":
            send(ctrl, _end_child(msg["pid"], statuses, kill=msg["kill"], grace_s=msg.get("grace_s", 1.0)))
        elif msg["op"] == "pool":  # the scorer's transfer pool, mapped by spares before they are needed
            if _POOL.get("fd") is not None:
                os.close(_POOL["fd"])
            _POOL.update(fd=fds[0], pool=msg["pool"], size=msg["size"])
            send(ctrl, {"ok": True})


def _preimport() -> None:
    """Import what kernels may use, and build the dsp stdlib, once before any fork: every child shares
    them instead of paying for the imports on its device's first call."""
    from importlib import import_module

    for name in _PREIMPORT:
        try:
            import_module(name)
        except ImportError:
            pass
    from ...dsp.stdlib import stdlib

    stdlib()
    # Every object so far goes to the permanent generation: a child's garbage collections then never
    # touch (and so never copy) the server's pages.
    gc.freeze()


_POOL: dict = {}
#: The server's children not yet reaped: only these may be killed on the scorer's word.
_LIVE: set[int] = set()


def _fork_child(ctrl: socket.socket, limits: SandboxLimits, *,
                low_priority: bool = False) -> tuple[int, socket.socket, SandboxLimits]:
    """Fork a child that hardens itself and waits for its scorer socket; returns (pid, socket, limits)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server_pid = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            ctrl.close()
            ours.close()
            child_main(theirs, limits, dict(_POOL) if _POOL.get("fd") is not None else None,
                       parent_pid=server_pid)
        except BaseException:  # noqa: BLE001 - the child never returns into the server
            code = 70
        os._exit(code)
    _LIVE.add(pid)
    theirs.close()
    if low_priority and os.geteuid() == 0:
        # Warm up at nice 19, set from here (the hand-over restores 0, which only root may, and always
        # comes after this); not root, a spare keeps the scorer's priority.
        try:
            os.setpriority(os.PRIO_PROCESS, pid, 19)
        except OSError:
            pass
    return pid, ours, limits


def _hand_over(ctrl, spare, limits: SandboxLimits, chan_fd: int) -> int:
    """Give ``chan_fd`` to the warm spare when its limits match (else kill the spare and give it to a
    fresh child). Returns the child's pid; the spare is spent either way."""
    if spare is not None:
        pid, sock, spare_limits = spare
        try:
            if spare_limits == limits:
                try:
                    os.setpriority(os.PRIO_PROCESS, pid, 0)
                except OSError:
                    pass
                send(sock, {"go": True}, (chan_fd,))
                return pid
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        finally:
            sock.close()
    pid, sock, _ = _fork_child(ctrl, limits)
    try:
        send(sock, {"go": True}, (chan_fd,))
    finally:
        sock.close()
    return pid


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
        _LIVE.discard(pid)
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
                _LIVE.discard(pid)
                return _status(code)
            time.sleep(0.002)
    if pid not in _LIVE:
        return {"exit": None}  # not a child of this server (or already reaped)
    os.kill(pid, signal.SIGKILL)
    try:
        _, code = os.waitpid(pid, 0)
    except ChildProcessError:
        return {"exit": None}
    _LIVE.discard(pid)
    st = _status(code)
    st["killed"] = True
    return st

