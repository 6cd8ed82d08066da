"""The scorer's side of one sandboxed device: :class:`SandboxedKernel`, the backend
:func:`~pytest_overdub.render.kernels.build_kernel_device` uses when kernels are not trusted, and
:func:`kernel_session`, the scope in which one child serves a scoring's devices one after another.

The scorer enforces a wall-clock timeout and checks the output's shape and finiteness itself; everything
the child reports is treated as untrusted: each reply is bounded and checked field by field before it is
used (:mod:`.replies`), and a malformed one ends the child. Faults are
:class:`~pytest_overdub.errors.KernelError` with a ``reason``: the kernel's traceback, "CPU time limit of
2 s exceeded", "wall-clock timeout of 3 s", "stopped by the sandbox: a forbidden system call; the kernel
called os.system ...", "sent a malformed reply while loading: latency_frames 60000000 is outside
0..480000", ...
"""

from __future__ import annotations

import contextlib
import contextvars
import signal
import time
from dataclasses import dataclass, field

from ...errors import KernelError
from ..trust import weak_sandbox_allowed
from .framing import BadMessage, recv, send
from .handle import fork_server
from .limits import DEFAULT_LIMITS, SandboxLimits
from .replies import MAX_NOTES, MAX_REPLY_BYTES, BadReply, check_reply, printable, reply_kind
from .transport import VM_PROBE, vm_read

_SIGNAL_WHY = {
    signal.SIGXCPU: "CPU time limit of {cpu} s exceeded",
    signal.SIGSYS: "stopped by the sandbox: a forbidden system call",
    signal.SIGSEGV: "crashed (segmentation fault)",
    signal.SIGBUS: "crashed (bus error)",
    signal.SIGABRT: "aborted",
    signal.SIGKILL: "killed (a hard resource limit)",
}


@dataclass
class _Child:
    """A sandbox child the scorer holds: its pid, our end of its socket, what it reported when handed
    over, and the limits it was hardened with."""

    pid: int
    sock: object
    limits: SandboxLimits
    vm_read: bool = False
    layers: tuple = ()
    missing: tuple = ()


#: How long the fork server may put off its next spare while a kernel session runs (it makes it when the
#: session ends, see :meth:`.handle.ForkServer.idle`).
SESSION_SPARE_WAIT_S = 5.0


@dataclass
class _Session:
    """The children of one kernel session that are idle between devices (most recent last), and the
    fork server it claimed children from (told when the session ends)."""

    idle: list = field(default_factory=list)
    server: object = None
    layers: list = field(default_factory=list)  # what this session's children reported, in order seen
    missing: list = field(default_factory=list)

    def saw(self, layers, missing) -> None:
        self.layers.extend(n for n in layers if n not in self.layers)
        self.missing.extend(m for m in missing if m not in self.missing)

    def confinement(self) -> dict:
        """What confined this session's kernels: the layers and missing layers its children reported (or,
        when every stem came from the cache, the last ones this process saw), and whether an untrusted
        kernel was allowed to run without a required layer (the weak-sandbox opt-out)."""
        layers, missing = self.layers, self.missing
        if not layers and not missing and _LAST_SEEN:
            layers, missing = list(_LAST_SEEN[0]), list(_LAST_SEEN[1])
        return {"kernels": "sandboxed", "layers": list(layers), "missing": list(missing),
                "weak_sandbox_allowed": weak_sandbox_allowed()}

    def take(self, limits: SandboxLimits) -> _Child | None:
        for i in range(len(self.idle) - 1, -1, -1):
            if self.idle[i].limits == limits:
                return self.idle.pop(i)
        return None


#: The layers and missing layers the last child this process used reported.
_LAST_SEEN: list = []

_SESSION: contextvars.ContextVar[_Session | None] = contextvars.ContextVar("overdub_kernel_session",
                                                                          default=None)


@contextlib.contextmanager
def kernel_session():
    """The scope in which sandboxed devices share children: a device built inside it takes the child
    the last closed device of the session left idle (same limits), instead of a fresh one. One scoring of
    one submission is one session (:func:`~pytest_overdub.bench.tasks.score_task` opens it; so does each
    :func:`~pytest_overdub.render.render`), so a child only ever runs one submission's kernels, one device
    at a time, in an order the scoring fixes. A nested session joins the one around it. At its end the
    idle children exit and the fork server makes its next spare child, which it puts off while the
    session runs (making one slows whatever runs meanwhile: 30-40 ms of CPU, mostly page zeroing).

    Between two devices the child resets what it can (:mod:`.child`), and is not reused after a fault or
    when its kernel rebound a shared module's name. What a kernel may still leave for the next device of
    the same submission (numpy's global random state, say) it would leave in-process too.

    Yields the session (the one around it, when nested): its :meth:`_Session.confinement` says what
    confined its kernels."""
    if _SESSION.get() is not None:
        yield _SESSION.get()
        return
    session = _Session()
    token = _SESSION.set(session)
    try:
        yield session
    finally:
        _SESSION.reset(token)
        if session.server is not None and session.server.alive():
            try:  # every child ends with its scoring, whatever its kernel did
                session.server.kill([child.pid for child in session.idle])
            except KernelError:
                pass
        for child in session.idle:
            child.sock.close()
        session.idle.clear()
        if session.server is not None and session.server.alive():
            try:
                session.server.idle()  # the next spare is made now, between scorings
            except KernelError:
                pass


class SandboxedKernel:
    """One kernel in a sandbox child: built once, then ``process``/``render`` calls carrying state."""

    def __init__(self, defn, *, sr: int, tempo_bpm: float, seed: int, limits: SandboxLimits | None = None):
        self.defn = defn
        self.sr = sr
        self.limits = limits or DEFAULT_LIMITS
        self.server = fork_server()
        self.notes: list[str] = []
        self.child_cpu_ms = 0.0  # the child's CPU time since it was handed this device (diagnostic)
        self.pid = None
        self.sock = None
        self.settled = False  # True between complete exchanges with no fault: the child may be reused
        self.reused = False
        self._session = _SESSION.get()
        build = {"op": "build", "defn": defn.to_json(), "sr": sr, "tempo_bpm": tempo_bpm, "seed": seed,
                 "weak": weak_sandbox_allowed()}
        child = self._session.take(self.limits) if self._session is not None else None
        if child is not None and self._build_on(child, build):
            return
        self._adopt(None)
        if self._session is None:
            self.pid, self.sock = self.server.claim(self.limits)
        else:
            self._session.server = self.server
            self.pid, self.sock = self.server.claim(self.limits, spare_after_s=SESSION_SPARE_WAIT_S)
        try:
            self._build(build)
        except BaseException:
            self.close()  # a kernel that fails to load ends its child now, not when collected
            raise

    def _adopt(self, child: _Child | None) -> None:
        self.pid, self.sock = (child.pid, child.sock) if child is not None else (None, None)
        self.vm_read = child.vm_read if child is not None else False
        self.layers = child.layers if child is not None else ()
        self.missing = child.missing if child is not None else ()

    def _build_on(self, child: _Child, build: dict) -> bool:
        """Build on a child a closed device of this session left idle. False when that child is gone (it
        exits when it cannot be reset, see :mod:`.child`) or dies while loading the kernel: the device
        then takes a fresh child, where a kernel that kills its child does so again and is reported."""
        self._adopt(child)
        self.reused = True
        try:
            with self.server.pool_lock, self._exchange():
                self._send(build)
                self._built(self._reply(time.monotonic() + self.limits.wall_s, "loading", "built"))
            return True
        except KernelError:
            if self.sock is not None:  # the child answered: the kernel itself failed to load
                self.close()
                raise
        self.notes.clear()
        self.reused = False
        return False

    def _build(self, build: dict) -> None:
        # Kernel code (here its module body) only ever runs under the pool lock: no child can touch the
        # shared pool while another child's call is using it.
        with self.server.pool_lock, self._exchange():
            # Pipelined: the build request waits in the socket while the child says it is ready.
            self._send(build)
            ready = self._reply(time.monotonic() + self.limits.wall_s, "starting", "ready")
            probe = bytearray(len(VM_PROBE))
            self.vm_read = vm_read(self.pid, ready["probe"], probe) and bytes(probe) == VM_PROBE
            self.layers = tuple(printable(s) for s in ready["layers"])
            self.missing = tuple(printable(s) for s in ready["missing"])
            _LAST_SEEN[:] = [self.layers, self.missing]
            if self._session is not None:
                self._session.saw(self.layers, self.missing)
            self._built(self._reply(time.monotonic() + self.limits.wall_s, "loading", "built"))

    def _built(self, built: dict) -> None:
        self.tail_s = float(built["tail_s"])
        self.latency_frames = int(built["latency_frames"])

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

        from ..kernels import check_output

        n = msg["n"]
        size = max(out_off if self.vm_read else out_off + 16 * n, 8)
        with self._exchange(), self.server.pool(size) as (key, fd, mm):
            for off, arr in inputs:
                view = np.frombuffer(mm, dtype=np.float64, count=arr.size, offset=off).reshape(arr.shape)
                view[...] = arr
                del view
            out = "vm" if self.vm_read else out_off
            self._send({**msg, "pool": key, "size": len(mm), "out": out}, (fd,))
            y = _faulted_in((2, n))  # while the child runs: the copy below then lands on mapped pages
            reply = self._reply(time.monotonic() + self.limits.wall_s, "running", "called")
            self.last_timing_ms = reply["timing_ms"]
            if self.vm_read:
                if not vm_read(self.pid, reply["addr"], y):
                    raise self._died("returning its output (its memory could not be read)", kill=True)
            else:
                y[...] = np.frombuffer(mm, dtype=np.float64, count=2 * n, offset=out_off).reshape(2, n)
            return check_output(self.defn, y, n)

    # -- plumbing

    @contextlib.contextmanager
    def _exchange(self):
        """A request and its reply. A device left in the middle of one (its kernel faulted, its output
        was refused, the scorer was interrupted) is not settled: its child is never reused, since its
        socket may still hold a reply meant for this device."""
        self.settled = False
        yield
        self.settled = True

    def _send(self, msg: dict, fds: tuple[int, ...] = ()) -> None:
        if self.sock is None:
            raise KernelError(f"kernel {self.defn.id}: its sandbox child has ended")
        try:
            # A child that stops reading (its kernel replaced the child's loop) fills the socket: the
            # request then waits at most the wall-clock limit, never a previous reply's leftover.
            self.sock.settimeout(self.limits.wall_s)
            send(self.sock, msg, fds)
        except TimeoutError:
            raise self._died("receiving its input", timed_out=True) from None
        except OSError:
            raise self._died("receiving its input") from None

    def _reply(self, deadline: float, doing: str, kind: str) -> dict:
        """The child's reply of ``kind`` (``ready``, ``built`` or ``called``), after any notes. Every
        message is bounded and checked field by field (:mod:`.replies`) before it is used; a malformed
        one ends the child and is the device's fault. A fault reply raises its KernelError."""
        while True:
            try:
                msg, _fds = recv(self.sock, deadline, max_bytes=MAX_REPLY_BYTES, max_fds=0)
                got = reply_kind(msg, kind)
                check_reply(msg, got, sr=self.sr, vm=self.vm_read)
            except TimeoutError:
                raise self._died(doing, timed_out=True) from None
            except (BadMessage, BadReply) as e:
                raise self._malformed(doing, str(e)) from None
            except (EOFError, OSError):
                raise self._died(doing) from None
            if got == "note":
                if len(self.notes) >= MAX_NOTES:
                    raise self._malformed(doing, f"more than {MAX_NOTES} notes")
                self.notes.append(printable(msg["note"]))
                continue
            if "cpu_ms" in msg:
                self.child_cpu_ms = float(msg["cpu_ms"])
            if got == "fault":
                err = KernelError(printable(msg["error"]))
                err.reason = printable(msg["reason"])
                raise err
            return msg

    def _malformed(self, doing: str, what: str) -> KernelError:
        """A child that sent what its code never sends (the kernel forged it): ended, never reused."""
        self._end(kill=True)
        why = f"sent a malformed reply while {doing}: {printable(what)}"
        err = KernelError(f"kernel {self.defn.id} faulted in the sandbox: {why}")
        err.reason = why
        return err

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
        """Leave the child idle for the next device of the kernel session this device was built in (it
        resets itself on ``release``; the session ends it with the scoring), or, outside a session or when
        it is not settled (a fault), end it: the server kills it (never left to exit by itself)."""
        sock, self.sock = self.sock, None
        pid, self.pid = self.pid, None
        if sock is None:
            return
        session = self._session
        if session is not None and self.settled and _SESSION.get() is session:
            try:
                send(sock, {"op": "release"})
            except OSError:
                pass
            else:
                session.idle.append(_Child(pid, sock, self.limits, self.vm_read, self.layers, self.missing))
                return
        try:
            self.server.kill([pid])  # the server ends it: no child is left to exit by itself
        except KernelError:
            pass
        sock.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


def _faulted_in(shape: tuple[int, int]):
    """A fresh float64 array whose pages are already mapped (one write per 4 KB page). The scorer makes
    its output array this way while the child computes, so the kernel's page faults (the first touch of a
    fresh page zeroes it: about 1 ms per 5 MB here) overlap the kernel instead of slowing the copy."""
    import numpy as np

    y = np.empty(shape)
    y.reshape(-1)[::512] = 0.0
    return y


def probe_layers(limits: SandboxLimits | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Start one child with a trivial kernel and return (active layers, missing layers with reasons)."""
    from ..kernels import validate_definition

    d = validate_definition({"id": "probe.layers", "kind": "effect",
                             "kernel": "def process(x, params, ctx):\n    return x\n"})
    k = SandboxedKernel(d, sr=48000, tempo_bpm=120.0, seed=0, limits=limits)
    try:
        return k.layers, k.missing
    finally:
        k.close()

