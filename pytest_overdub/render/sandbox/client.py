"""The scorer's side of one sandboxed device: :class:`SandboxedKernel`, the backend
:func:`~pytest_overdub.render.kernels.build_kernel_device` uses when kernels are not trusted, and
:func:`kernel_session`, the scope of one scoring: its time budget, its fault latch and its determinism
checks.

Each device gets a fresh child (no child serves two devices, so nothing one kernel does to the
interpreter reaches another). The scorer holds every exchange to a budget of **kernel time**: the child's
CPU time plus the time it sleeps by its own choice, read from its ``/proc/<pid>/stat``
(:mod:`.kerneltime`), never the time it waits for a core, so a busy machine does not change a verdict
(:mod:`.limits`: 5 s for a build, the larger of 5 s and twice the audio's duration for a call, 15 s for a
whole scoring). While it waits for a reply it samples the child every :data:`~.kerneltime.SLICE_S` (a
reply that comes sooner costs no read at all). A wall-clock backstop, far more generous, holds what that
accounting cannot see: ``wall_s`` (120 s) per exchange, 8 times the scoring's budget per scoring. Where
``/proc/<pid>/stat`` cannot be read, a child is charged wall time, and its faults and the session's
:meth:`_Session.confinement` (``"kernel_time": "wall"``) say so. The scorer checks the output's shape and
finiteness itself; everything the child reports is treated as untrusted: each reply is bounded and
checked field by field before it is used (:mod:`.replies`), and a malformed one ends the child.

Faults are :class:`~pytest_overdub.errors.KernelError` with a ``reason``: the kernel's traceback, "CPU
time limit of 2 s exceeded", "kernel time budget of 5 s exceeded while running (...): 5.0 s of CPU and
0.0 s asleep", "wall-clock backstop of 120 s exceeded while running (...), with 0.3 s of CPU and 0.0 s
asleep charged", "the scoring's kernel time budget of 15 s is used up", "not deterministic: ...",
"stopped by the sandbox: a forbidden system call; the kernel called os.system ...", "sent a malformed
reply while loading: latency_frames 60000000 is outside 0..480000", ...
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import select
import signal
import time
import weakref
from dataclasses import dataclass, field

from ...errors import KernelError
from ..trust import weak_sandbox_allowed
from .framing import BadMessage, recv, send
from .handle import fork_server
from .kerneltime import SLICE_S, Charge, KernelClock, read_stat
from .limits import DEFAULT_LIMITS, SCORING_BACKSTOP_FACTOR, SCORING_KERNEL_S, SandboxLimits
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
class _Session:
    """One scoring's kernel session: the kernel time its kernels may spend (``budget_s``) and have spent
    (:mod:`.kerneltime`), the wall time they may hold it (``backstop_s``) and have, the faults of its
    devices (by :func:`device_key`: a device that faults is not built again), the devices whose
    determinism was checked, and the fork server it claimed children from."""

    budget_s: float = SCORING_KERNEL_S
    spent_s: float = 0.0
    backstop_s: float = SCORING_BACKSTOP_FACTOR * SCORING_KERNEL_S
    wall_s: float = 0.0
    clocks: weakref.WeakSet = field(default_factory=weakref.WeakSet)  # its live children's clocks
    wall_why: list = field(default_factory=list)  # why a child of it was charged wall time, if one was
    counted: bool = False  # whether a child of it had its counters read
    faults: dict = field(default_factory=dict)
    checked: set = field(default_factory=set)
    server: object = None
    layers: list = field(default_factory=list)  # what this session's children reported, in order seen
    missing: list = field(default_factory=list)

    def saw(self, layers, missing) -> None:
        self.layers.extend(n for n in layers if n not in self.layers)
        self.missing.extend(m for m in missing if m not in self.missing)

    def confinement(self) -> dict:
        """What confined this session's kernels: the layers and missing layers its children reported (or,
        when every stem came from the cache, the last ones this process saw), whether an untrusted
        kernel was allowed to run without a required layer (the weak-sandbox opt-out), and what its time
        budgets counted: ``"kernel_time": "cpu"`` (:mod:`.kerneltime`), or ``"wall"`` with
        ``"kernel_time_why"`` when a child's counters could not be read (or, with no child, when this
        process's own cannot)."""
        layers, missing = self.layers, self.missing
        if not layers and not missing and _LAST_SEEN:
            layers, missing = list(_LAST_SEEN[0]), list(_LAST_SEEN[1])
        record = {"kernels": "sandboxed", "layers": list(layers), "missing": list(missing),
                  "weak_sandbox_allowed": weak_sandbox_allowed(), "kernel_time": "cpu"}
        why = self.wall_why[0] if self.wall_why else None if self.counted else _kernel_time_fallback()
        if why is not None:
            record.update(kernel_time="wall", kernel_time_why=why)
        return record

    def left_s(self) -> float:
        return self.budget_s - self.spent_s

    def charge(self, seconds: float) -> None:
        """Add ``seconds`` of kernel time (negative: a refund of provisional charges) to what it spent."""
        self.spent_s += seconds

    def settle(self) -> None:
        """Settle every live child's provisional charges (:meth:`.kerneltime.KernelClock.settle`)."""
        for clock in list(self.clocks):
            clock.settle()

    def used_up(self, defn) -> KernelError:
        what = "CPU time and sleep" if not self.wall_why else f"wall time ({self.wall_why[0]})"
        return _fault(defn, f"the scoring's kernel time budget of {self.budget_s:g} s is used up "
                            f"({what} in kernels, over all the song's devices)")

    def backstop_used_up(self, defn) -> KernelError:
        return _fault(defn, f"the scoring's wall-clock backstop of {self.backstop_s:g} s in kernels is used "
                            f"up (with {self.spent_s:.1f} s of kernel time charged)")


def _kernel_time_fallback() -> str | None:
    """Why this process's kernels would be charged wall time (its own ``/proc/<pid>/stat`` cannot be
    read), or None: what a session that started no child reports."""
    if read_stat(os.getpid()) is None:
        return f"/proc/{os.getpid()}/stat could not be read"
    return None


#: The layers and missing layers the last child this process used reported.
_LAST_SEEN: list = []

_SESSION: contextvars.ContextVar[_Session | None] = contextvars.ContextVar("overdub_kernel_session",
                                                                          default=None)


@contextlib.contextmanager
def kernel_session(*, budget_s: float = SCORING_KERNEL_S):
    """The scope of one scoring of one submission (:func:`~pytest_overdub.bench.tasks.score_task` opens
    it; so does each :func:`~pytest_overdub.render.render`). Inside it:

    * the kernels' builds and calls together get ``budget_s`` of kernel time (default
      :data:`~.limits.SCORING_KERNEL_S`; CPU time and sleep, :mod:`.kerneltime`); after that every kernel
      device faults at once, naming the budget. :data:`~.limits.SCORING_BACKSTOP_FACTOR` times as much
      wall time is the backstop for what that accounting cannot see;
    * a device that faults is never built again: a later device with the same definition on the same
      track (the next render of a probe, say) faults at once with the first fault's reason, so a hung
      kernel costs one timeout per scoring, not one per render;
    * each device (definition and track) is checked for determinism once, when first built
      (:meth:`SandboxedKernel.check_determinism`).

    A nested session joins the one around it. At its end the fork server is told the scorer is idle (it
    makes its next spare child then). Yields the session (the one around it, when nested): its
    :meth:`_Session.confinement` says what confined its kernels."""
    if _SESSION.get() is not None:
        yield _SESSION.get()
        return
    session = _Session(budget_s=float(budget_s), backstop_s=SCORING_BACKSTOP_FACTOR * float(budget_s))
    token = _SESSION.set(session)
    try:
        yield session
    finally:
        _SESSION.reset(token)
        if session.server is not None and session.server.alive():
            try:
                session.server.idle()
            except KernelError:
                pass


def device_key(defn, seed: int) -> str:
    """What identifies a device within a scoring: its definition's content and its seed (which is derived
    from the device id and the track)."""
    body = json.dumps(defn.to_json(), sort_keys=True, separators=(",", ":")).encode()
    return f"{hashlib.sha256(body).hexdigest()}|{int(seed)}"


def _fault(defn, why: str) -> KernelError:
    err = KernelError(f"kernel {defn.id} faulted in the sandbox: {why}")
    err.reason = why
    return err


#: The determinism check's probe: 0.2 s at 48 kHz (an effect may count on 8192 frames per call).
PROBE_FRAMES = 9600


class SandboxedKernel:
    """One kernel in its own sandbox child: built once, then ``process``/``render`` calls carrying state.

    ``check``: inside a kernel session, run the determinism check when this device (definition and
    track) is first built in it (the check's own second run passes False)."""

    def __init__(self, defn, *, sr: int, tempo_bpm: float, seed: int, limits: SandboxLimits | None = None,
                 check: bool = True):
        self.defn = defn
        self.sr = int(sr)
        self.limits = limits or DEFAULT_LIMITS
        self.notes: list[str] = []
        self.pid = None
        self.sock = None
        self.clock = KernelClock(None, parent_pid=None)
        self.vm_read, self.layers, self.missing = False, (), ()
        self._session = _SESSION.get()
        self.key = device_key(defn, seed)
        self._build_msg = {"op": "build", "defn": defn.to_json(), "sr": sr, "tempo_bpm": tempo_bpm,
                           "seed": seed, "weak": weak_sandbox_allowed()}
        session = self._session
        if session is not None:
            if self.key in session.faults:
                raise _fault(defn, f"faulted earlier in this scoring and is not run again: "
                                   f"{session.faults[self.key]}")
            if session.left_s() <= 0:
                raise self._latched(session.used_up(defn))
        self.server = fork_server()
        if session is not None:
            session.server = self.server
        self.pid, self.sock = self.server.claim(self.limits)
        try:
            self._build()
            if check and session is not None and self.key not in session.checked:
                session.checked.add(self.key)
                self.check_determinism()
        except KernelError as e:
            self.close()  # a kernel that fails to load ends its child now, not when collected
            raise self._latched(e) from None
        except BaseException:
            self.close()
            raise

    def _latched(self, err: KernelError) -> KernelError:
        """Record ``err`` as this device's fault for the rest of the kernel session; returns it."""
        if self._session is not None:
            self._session.faults.setdefault(self.key, getattr(err, "reason", str(err)))
        return err

    def _build(self) -> None:
        # Kernel code (here its module body) only ever runs under the pool lock: no child can touch the
        # shared pool while another child's call is using it.
        with self.server.pool_lock:
            # Pipelined: the build request waits in the socket while the child says it is ready.
            self._send(self._build_msg)
            ready = self._reply(self._readable_by(time.monotonic() + self.limits.wall_s), "starting", "ready")
            self._start_clock()
            probe = bytearray(len(VM_PROBE))
            self.vm_read = vm_read(self.pid, ready["probe"], probe) and bytes(probe) == VM_PROBE
            self.layers = tuple(printable(s) for s in ready["layers"])
            self.missing = tuple(printable(s) for s in ready["missing"])
            _LAST_SEEN[:] = [self.layers, self.missing]
            if self._session is not None:
                self._session.saw(self.layers, self.missing)
            self._built(self._timed("loading", min(self.limits.build_s, self.limits.wall_s),
                                    "a module body's budget", "built"))

    def _rebuild(self) -> None:
        """Build the kernel again in the same child (a fresh namespace, ``ctx.state`` and seeded globals)."""
        with self.server.pool_lock:
            self._send(self._build_msg)
            self._built(self._timed("loading", min(self.limits.build_s, self.limits.wall_s),
                                    "a module body's budget", "built"))

    def _start_clock(self) -> None:
        """The child's kernel time from here on (:mod:`.kerneltime`): its baseline read now, charged to
        the session; a child whose counters cannot be read is charged wall time, and the session says so."""
        # The clock holds the session, never this kernel: no cycle delays __del__ (which ends the child).
        charge = self._session.charge if self._session is not None else None
        self.clock = KernelClock(self.pid, parent_pid=self.server.pid, charge=charge)
        self.clock.start()
        if self._session is not None:
            self._session.clocks.add(self.clock)
            if self.clock.why_wall is None:
                self._session.counted = True
            elif self.clock.why_wall not in self._session.wall_why:
                self._session.wall_why.append(self.clock.why_wall)

    def _built(self, built: dict) -> None:
        self.tail_s = float(built["tail_s"])
        self.latency_frames = int(built["latency_frames"])

    # -- the determinism check

    def check_determinism(self) -> None:
        """Run a fixed 0.2 s probe through this kernel, freshly built, in this child and in a second fresh
        child, and fault it when the two outputs differ in any bit; then build it afresh for its real use.
        Two children, so a kernel cannot carry a reading over from one run to the other. The probe: for
        an effect, a 440 Hz sine, a click and seeded noise at the declared defaults; for an instrument,
        three notes at the declared defaults."""
        import numpy as np

        first = self._probe()
        self._rebuild()
        other = SandboxedKernel(self.defn, sr=self.sr, tempo_bpm=self._build_msg["tempo_bpm"],
                                seed=self._build_msg["seed"], limits=self.limits, check=False)
        try:
            second = other._probe()
        finally:
            other.close()
        if np.array_equal(first, second):
            return
        ch, frame = (int(i[0]) for i in np.nonzero(first != second))
        raise _fault(self.defn, f"not deterministic: two runs on the same {PROBE_FRAMES / self.sr:g} s probe "
                                f"differ (first at channel {ch}, frame {frame}: {float(first[ch, frame])!r} then "
                                f"{float(second[ch, frame])!r}); a kernel may not read a clock or unseeded "
                                f"randomness: use ctx.rng(...)")

    def _probe(self):
        import numpy as np

        defaults = self.defn.spec.defaults()
        n = PROBE_FRAMES
        if self.defn.kind == "effect":
            t = np.arange(n) / self.sr
            x = 0.25 * np.sin(2 * np.pi * 440.0 * t) + 0.05 * np.random.default_rng(7).standard_normal(n)
            x[0] += 0.5
            return self.process(np.vstack([x, x[::-1].copy()]), defaults)
        notes = {"pitch": [60, 64, 67], "velocity": [0.8, 0.6, 1.0], "start_s": [0.0, 0.02, 0.05],
                 "dur_s": [0.05, 0.03, 0.04], "index": [0, 1, 2],
                 "params": {k: [v, v, v] for k, v in defaults.items()}}
        return self.render(notes, defaults, n)

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
        try:
            return self._exchange(msg, out_off=out_off, inputs=inputs)
        except KernelError as e:
            raise self._latched(e) from None

    def _exchange(self, msg: dict, *, out_off: int, inputs: list):
        import numpy as np

        from ..kernels import check_output

        n = msg["n"]
        self._check_session()
        size = max(out_off if self.vm_read else out_off + 16 * n, 8)
        with self.server.pool(size) as (key, fd, mm):
            for off, arr in inputs:
                view = np.frombuffer(mm, dtype=np.float64, count=arr.size, offset=off).reshape(arr.shape)
                view[...] = arr
                del view
            out = "vm" if self.vm_read else out_off
            self._send({**msg, "pool": key, "size": len(mm), "out": out}, (fd,))
            y = _faulted_in((2, n))  # while the child runs: the copy below then lands on mapped pages
            audio_s = n / self.sr
            budget = self.limits.call_budget_s(audio_s)
            self._timed("running", budget, f"a call's budget: the larger of {self.limits.call_floor_s:g} s and "
                                           f"{self.limits.call_per_audio_s:g} x its {audio_s:.2f} s of audio, "
                                           f"at most {self.limits.wall_s:g} s", "called")
            if self.vm_read:
                if not vm_read(self.pid, self._last_reply["addr"], y):
                    raise self._died("returning its output (its memory could not be read)", kill=True)
            else:
                y[...] = np.frombuffer(mm, dtype=np.float64, count=2 * n, offset=out_off).reshape(2, n)
            return check_output(self.defn, y, n)

    # -- plumbing

    def _check_session(self) -> None:
        """Fault (ending the child) when the session's kernel time or wall-clock backstop is used up;
        provisional charges are settled before the kernel time is judged."""
        session = self._session
        if session is None:
            return
        if session.left_s() <= 0:
            session.settle()
        if session.left_s() <= 0:
            self._end(kill=True)
            raise session.used_up(self.defn)
        if session.wall_s >= session.backstop_s:
            self._end(kill=True)
            raise session.backstop_used_up(self.defn)

    def _timed(self, doing: str, budget_s: float, what: str, kind: str) -> dict:
        """The child's reply to a build or call, within ``budget_s`` of kernel time (:mod:`.kerneltime`)
        and what is left of the kernel session's, and within the wall-clock backstops (``wall_s`` for this
        exchange, the session's); the kernel time is the session's, and so is the wall time. Returns the
        reply."""
        session = self._session
        t0 = time.monotonic()
        wall_s = self.limits.wall_s
        by_session = session is not None and session.backstop_s - session.wall_s < wall_s
        if by_session:
            wall_s = max(session.backstop_s - session.wall_s, 0.0)
        wait = self.clock.wait(t0)
        over = (doing, budget_s, what, t0 + wall_s, by_session)
        try:
            self._last_reply = self._reply(lambda: self._await(wait, over), doing, kind)
        finally:
            wait.done()
            if session is not None:
                session.wall_s += time.monotonic() - t0
        return self._last_reply

    def _await(self, wait, over: tuple) -> float:
        """Wait until the child's socket is readable, sampling its kernel time every
        :data:`~.kerneltime.SLICE_S`; fault (ending the child) when the charge passes the exchange's
        budget or the session's, or the wall-clock backstop passes. Returns the deadline for the rest of
        a message once its first bytes are there (what is left of the budget, at least a slice: an
        honest child writes a reply at once)."""
        doing, budget_s, what, backstop, by_session = over
        session = self._session
        while True:
            left_s = budget_s - wait.charge.total_s
            session_left_s = session.left_s() if session is not None else left_s
            wall_left_s = backstop - time.monotonic()
            if left_s <= 0:
                raise self._overrun(f"kernel time budget of {budget_s:g} s exceeded while {doing} ({what}): "
                                    f"{self._charged(wait.charge)}")
            if session_left_s <= 0:
                session.settle()  # the other children's provisional charges first
                session_left_s = session.left_s()
                if session_left_s <= 0:
                    self._end(kill=True)
                    raise session.used_up(self.defn)
            if wall_left_s <= 0:
                if by_session:
                    self._end(kill=True)
                    raise session.backstop_used_up(self.defn)
                raise self._overrun(f"wall-clock backstop of {self.limits.wall_s:g} s exceeded while {doing} "
                                    f"({what}), with {self._charged(wait.charge)} charged")
            if _readable(self.sock, min(SLICE_S, left_s, session_left_s, wall_left_s)):
                return time.monotonic() + min(max(left_s, SLICE_S), wall_left_s)
            wait.sample()

    def _charged(self, charge: Charge) -> str:
        """What a fault says was charged: "5.0 s of CPU and 0.0 s asleep", or wall time and why."""
        why = self.clock.why_wall
        return charge.describe() + (f" ({why}: wall time charged)" if why is not None else "")

    def _overrun(self, why: str) -> KernelError:
        """A kernel past a budget: its child ended, the fault naming what was exceeded."""
        self._end(kill=True)
        if self.notes:
            why += f"; the kernel {self.notes[-1]}"
        return _fault(self.defn, why)

    def _readable_by(self, deadline: float):
        """A ``ready`` for :meth:`_reply`: readable by ``deadline`` (wall), else TimeoutError."""
        def ready() -> float:
            if not _readable(self.sock, max(deadline - time.monotonic(), 0.0)):
                raise TimeoutError
            return deadline
        return ready

    def _send(self, msg: dict, fds: tuple[int, ...] = ()) -> None:
        if self.sock is None:
            raise KernelError(f"kernel {self.defn.id}: its sandbox child has ended")
        try:
            # A child that stops reading (its kernel replaced the child's loop) fills the socket: the
            # request then waits at most the wall-clock limit, never a previous reply's leftover.
            self.sock.settimeout(self.limits.wall_s)
            send(self.sock, msg, fds)
        except TimeoutError:
            raise self._died("receiving its input", timed_out=True, budget_s=self.limits.wall_s) from None
        except OSError:
            raise self._died("receiving its input") from None

    def _reply(self, ready, doing: str, kind: str) -> dict:
        """The child's reply of ``kind`` (``ready``, ``built`` or ``called``), after any notes (kept).
        Before each message ``ready()`` waits until the socket is readable (it faults, or raises
        TimeoutError, when it is not in time) and returns the deadline for the rest of the message: a wait
        can only time out before a message's first byte, and a message is never read in part. Every
        message is bounded and checked field by field (:mod:`.replies`) before it is used; a malformed one
        ends the child and is the device's fault, and so is a reply stopped part-way; a fault when the
        child dies or answers ``"ok": False``."""
        while True:
            try:
                msg, _fds = recv(self.sock, ready(), max_bytes=MAX_REPLY_BYTES, max_fds=0)
                got = reply_kind(msg, kind)
                check_reply(msg, got, sr=self.sr, vm=self.vm_read)
            except TimeoutError:
                if doing == "starting":
                    raise self._died(doing, timed_out=True, budget_s=self.limits.wall_s) from None
                raise self._overrun(f"its reply stopped part-way while {doing}") from None
            except (BadMessage, BadReply) as e:
                raise self._malformed(doing, str(e)) from None
            except (EOFError, OSError):
                raise self._died(doing, kill=True) from None
            if got == "note":
                if len(self.notes) >= MAX_NOTES:
                    raise self._malformed(doing, f"more than {MAX_NOTES} notes")
                self.notes.append(printable(msg["note"]))
                continue
            if got == "fault":
                err = KernelError(printable(msg["error"]))
                err.reason = printable(msg["reason"])
                raise err
            return msg

    def _malformed(self, doing: str, what: str) -> KernelError:
        """A child that sent what its code never sends (the kernel forged it): ended, and the device's
        fault."""
        self._end(kill=True)
        return _fault(self.defn, f"sent a malformed reply while {doing}: {printable(what)}")

    def _died(self, doing: str, *, timed_out: bool = False, kill: bool = False,
              budget_s: float | None = None) -> KernelError:
        status = self._end(kill=timed_out or kill)
        sig = status.get("signal")
        if timed_out:
            why = f"wall-clock timeout of {budget_s:g} s while {doing}"
        elif sig is not None:
            why = _SIGNAL_WHY.get(sig, f"killed by signal {sig}").format(cpu=self.limits.cpu_s)
            why += f" while {doing}"
        else:
            why = f"its process exited (status {status.get('exit')}) while {doing}"
        if self.notes:
            why += f"; the kernel {self.notes[-1]}"
        return _fault(self.defn, why)

    def _retire_clock(self) -> None:
        """Settle the child's provisional charges while it is still there to read, and stop counting it
        among the session's live children."""
        self.clock.settle()
        if self._session is not None:
            self._session.clocks.discard(self.clock)

    def _end(self, *, kill: bool) -> dict:
        if self.pid is not None:
            self._retire_clock()
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
        """End the child: the server kills it (no child is left to exit by itself, whatever its kernel
        did to its own loop) and reaps it."""
        if self.pid is not None:
            self._retire_clock()
        sock, self.sock = self.sock, None
        pid, self.pid = self.pid, None
        if pid is not None:
            try:
                self.server.kill([pid])
            except KernelError:
                pass
        if sock is not None:
            sock.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


def _readable(sock, timeout_s: float) -> bool:
    """Whether ``sock`` becomes readable (a message's first bytes, or its end) within ``timeout_s``.
    ``poll``, not ``select``: a scorer may hold more than ``FD_SETSIZE`` descriptors."""
    waiter = select.poll()
    waiter.register(sock, select.POLLIN)
    return bool(waiter.poll(max(timeout_s, 0.0) * 1000.0))


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

