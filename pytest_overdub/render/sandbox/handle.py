"""The scorer's handle on the warm fork server (:mod:`.server`): starting it, its requests, and the
transfer pool (:mod:`.transport`) it shares with the children.

One server per scorer process, started on first use by :func:`fork_server` (and again if it died), or
earlier by :func:`prestart`, which does not wait for it; :func:`shutdown` stops it at exit, and its
children die with it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict

import pytest_overdub

from ...errors import KernelError
from .framing import recv, send
from .limits import SandboxLimits
from .transport import POOL_MAX_BYTES, new_memfd


class ForkServer:
    """The scorer's handle on the warm server process; one per scorer process (:func:`fork_server`)."""

    def __init__(self):
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.pool_lock = threading.RLock()
        self._pool = None
        self._generation = 0
        self._ahead: list | None = None  # [limits, pid (None until answered), our socket end]
        self._to_kill: list[int] = []  # children to end, sent with the next message (see kill)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        code = (f"from pytest_overdub.render.sandbox.server import serve; "
                f"serve({theirs.fileno()}, parent_pid={os.getpid()})")
        self._t0 = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-c", code],
                                     pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_server_env(),
                                     cwd="/")
        theirs.close()
        self.sock = ours
        self.pid: int | None = None  # the server's pid, once it has said it is ready
        self.start_s: float | None = None

    def wait_ready(self) -> None:
        """Wait (once) for the server's imports to finish and its "ready"."""
        with self.lock:
            if self.pid is not None:
                return
            try:
                msg, _ = recv(self.sock, time.monotonic() + 120.0)
            except (EOFError, TimeoutError, OSError) as e:
                failed = e
            else:
                self.pid = msg["pid"]
                self.start_s = time.perf_counter() - self._t0
                return
        self.close()
        raise KernelError(f"the kernel sandbox could not start ({type(failed).__name__}); "
                          f"set OVERDUB_TRUST_KERNELS=1 to run your own kernels in-process")

    def request(self, msg: dict, fds: tuple[int, ...] = (), timeout_s: float = 30.0) -> dict:
        with self.lock, self._answering():
            self._send_kills()
            self._settle_ahead(timeout_s)
            send(self.sock, msg, fds)
            reply, _ = recv(self.sock, time.monotonic() + timeout_s)
            return reply

    def claim(self, limits: SandboxLimits, timeout_s: float = 30.0, *,
              spare_after_s: float | None = None) -> tuple[int, socket.socket]:
        """A child for one device, as ``(pid, our end of its socket)``: the child claimed ahead when its
        limits match (its hand-over was answered while the previous device ran), else one handed over
        now. Then the next child is claimed ahead, without waiting for the answer: a device's build
        never waits on the server. A child claimed ahead and never used ends with the server.

        ``spare_after_s``: how long the server may wait, unless told :meth:`idle` or asked something,
        before it makes its next spare (None: its default, 20 ms)."""
        with self.lock, self._answering():
            self._send_kills()
            self._settle_ahead(timeout_s)
            ahead, self._ahead = self._ahead, None
            if ahead is not None and ahead[0] == limits:
                pid, sock = ahead[1], ahead[2]
            else:
                if ahead is not None:
                    ahead[2].close()  # a child whose socket closes exits; the server reaps it
                sock = self._send_spawn(limits)
                pid = recv(self.sock, time.monotonic() + timeout_s)[0]["pid"]
            self._ahead = [limits, None, self._send_spawn(limits, spare_after_s)]
            return pid, sock

    def idle(self) -> None:
        """Tell the server the scorer is idle (a kernel session ended): it makes its next spare now."""
        with self.lock, self._answering():
            self._send_kills()
            send(self.sock, {"op": "idle"})

    def kill(self, pids: list[int]) -> None:
        """Have the server SIGKILL these children of its (no answer awaited): the scorer is done with them,
        and no child's exit may depend on the child. Sent now when the handle is free, else with its next
        message (this may run from ``__del__`` while this thread holds the lock)."""
        self._to_kill.extend(p for p in pids if p is not None)
        if not self.lock.acquire(blocking=False):
            return
        try:
            with self._answering():
                self._send_kills()
        finally:
            self.lock.release()

    def _send_kills(self) -> None:
        pids = []
        while self._to_kill:
            pids.append(self._to_kill.pop())  # atomic: a pid added meanwhile waits for the next message
        if pids:
            send(self.sock, {"op": "kill", "pids": pids})

    def _send_spawn(self, limits: SandboxLimits, spare_after_s: float | None = None) -> socket.socket:
        """Ask the server to hand a child the far end of a new socket pair; returns our end."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        msg = {"op": "spawn", "limits": asdict(limits)}
        if spare_after_s is not None:
            msg["spare_after_s"] = float(spare_after_s)
        try:
            send(self.sock, msg, (theirs.fileno(),))
        finally:
            theirs.close()
        return ours

    def _settle_ahead(self, timeout_s: float) -> None:
        """Read the server's answer to the last claim-ahead (it comes before any later answer)."""
        if self._ahead is not None and self._ahead[1] is None:
            self._ahead[1] = recv(self.sock, time.monotonic() + timeout_s)[0]["pid"]

    @contextlib.contextmanager
    def _answering(self):
        try:
            yield
        except (EOFError, TimeoutError, OSError, KeyError, TypeError) as e:
            self.close()
            raise KernelError("the kernel sandbox server stopped responding "
                              f"({type(e).__name__})") from None

    @contextlib.contextmanager
    def pool(self, size: int):
        """The transfer pool: one memfd kept mapped (its pages stay allocated, so no page faults per
        call), grown on demand; a transfer above :data:`POOL_MAX_BYTES` gets a one-off memfd instead.
        Yields ``(key, fd, mmap)``; calls hold :attr:`pool_lock`, so one transfer at a time."""
        with self.pool_lock:
            if size > POOL_MAX_BYTES:
                fd, mm = new_memfd("overdub-kernel-once", size)
                try:
                    yield f"once-{id(mm)}-{time.monotonic_ns()}", fd, mm
                finally:
                    mm.close()
                    os.close(fd)
                return
            if self._pool is None or len(self._pool[2]) < size:
                self._drop_pool()
                grown = min(max(size, 1 << 20), POOL_MAX_BYTES)
                fd, mm = new_memfd("overdub-kernel-pool", grown)
                self._generation += 1
                self._pool = (f"{os.getpid()}-{self._generation}", fd, mm)
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
            if self._ahead is not None:
                self._ahead[2].close()
                self._ahead = None
            self.sock.close()
            self._drop_pool()
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()


def _server_env() -> dict[str, str]:
    """The server's environment, and so every child's: **none of the scorer's** (a kernel could carry a
    token or a key out in an exception; the initial environment block stays in a process's memory, so it
    is never given rather than scrubbed later), only what Python needs: the package importable from ``/``
    (then the scorer's own ``PYTHONPATH`` entries, paths only, where numpy may live), the scorer's
    ``PYTHONHOME`` and ``LD_LIBRARY_PATH`` if set (paths an interpreter may need to start), one
    BLAS/OpenMP/numba thread (the children may not start threads), no bytecode writes, a fixed hash seed
    and a C/UTF-8 locale."""
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(pytest_overdub.__file__)))
    theirs = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys([pkg_root] + theirs)), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONHASHSEED": "0", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    env.update((var, os.environ[var]) for var in ("PYTHONHOME", "LD_LIBRARY_PATH") if os.environ.get(var))
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = "1"
    return env


_SERVER: ForkServer | None = None
_SERVER_LOCK = threading.Lock()


def fork_server() -> ForkServer:
    """The process's warm fork server, started on first use (and again if it died), and ready."""
    server = prestart()
    server.wait_ready()
    return server


def prestart() -> ForkServer:
    """Start the process's fork server without waiting for it: it imports numpy, scipy and the dsp
    stdlib in a fresh process (about 2 s here), so a scorer that knows it will need it (a submission that
    defines devices) starts it early and its start overlaps the scorer's own imports and renders. A no-op
    when it runs already."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is None or not _SERVER.alive():
            if _SERVER is not None and _SERVER.owner == os.getpid():
                _SERVER.close()  # a dead server: its socket, pool and child claimed ahead go with it
            _SERVER = ForkServer()
        return _SERVER


def shutdown() -> None:
    """Stop the fork server (its children die with it). Registered at exit."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is not None and _SERVER.owner == os.getpid():
            _SERVER.close()
        _SERVER = None


atexit.register(shutdown)
