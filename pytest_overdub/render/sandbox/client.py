"""The scorer's side of one sandboxed device: :class:`SandboxedKernel`, the backend
:func:`~pytest_overdub.render.kernels.build_kernel_device` uses when kernels are not trusted.

The scorer enforces a wall-clock timeout and checks the output's shape and finiteness itself; everything
the child reports is treated as untrusted. Faults are :class:`~pytest_overdub.errors.KernelError` with a
``reason``: the kernel's traceback, "CPU time limit of 2 s exceeded", "wall-clock timeout of 3 s",
"stopped by the sandbox: a forbidden system call; the kernel called os.system ...", ...
"""

from __future__ import annotations

import os
import signal
import time

from ...errors import KernelError
from .framing import recv, send
from .handle import fork_server
from .limits import DEFAULT_LIMITS, SandboxLimits
from .transport import VM_PROBE, vm_read

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
        self.pid, self.sock = self.server.claim(self.limits)
        self.vm_read = False
        try:
            self._build(defn, sr=sr, tempo_bpm=tempo_bpm, seed=seed)
        except BaseException:
            self.close()  # a kernel that fails to load ends its child now, not when collected
            raise

    def _build(self, defn, *, sr: int, tempo_bpm: float, seed: int) -> None:
        # Kernel code (here its module body) only ever runs under the pool lock: no child can touch the
        # shared pool while another child's call is using it.
        with self.server.pool_lock:
            # Pipelined: the build request waits in the socket while the child says it is ready.
            self._send({"op": "build", "defn": defn.to_json(), "sr": sr, "tempo_bpm": tempo_bpm,
                        "seed": seed})
            ready = self._reply(time.monotonic() + self.limits.wall_s, "starting")
            probe = bytearray(len(VM_PROBE))
            self.vm_read = vm_read(self.pid, ready.get("probe"), probe) and bytes(probe) == VM_PROBE
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

        from ..kernels import check_output

        n = msg["n"]
        size = max(out_off if self.vm_read else out_off + 16 * n, 8)
        with self.server.pool(size) as (key, fd, mm):
            for off, arr in inputs:
                view = np.frombuffer(mm, dtype=np.float64, count=arr.size, offset=off).reshape(arr.shape)
                view[...] = arr
                del view
            out = "vm" if self.vm_read else out_off
            self._send({**msg, "pool": key, "size": len(mm), "out": out}, (fd,))
            y = _faulted_in((2, n))  # while the child runs: the copy below then lands on mapped pages
            reply = self._reply(time.monotonic() + self.limits.wall_s, "running")
            self.last_timing_ms = reply.get("timing_ms")
            if self.vm_read:
                if not vm_read(self.pid, reply.get("addr"), y):
                    raise self._died("returning its output (its memory could not be read)", kill=True)
            else:
                y[...] = np.frombuffer(mm, dtype=np.float64, count=2 * n, offset=out_off).reshape(2, n)
        return check_output(self.defn, y, n)

    # -- plumbing

    def _send(self, msg: dict, fds: tuple[int, ...] = ()) -> None:
        if self.sock is None:
            raise KernelError(f"kernel {self.defn.id}: its sandbox child has ended")
        try:
            send(self.sock, msg, fds)
        except OSError:
            raise self._died("while receiving its input") from None

    def _reply(self, deadline: float, doing: str) -> dict:
        while True:
            try:
                msg, fds = recv(self.sock, deadline)
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

