"""A sandbox child: forked from the fork server, it hardens itself, waits as a warm spare, then serves
the scorer over its own socket: **one device** (``build``, then ``process``/``render`` calls), and exits
when the scorer closes the socket. No child serves two devices: every device starts from the server's
image, so nothing one kernel does to the interpreter (a patched ``json.dumps.__code__``, a rebound numpy
name, a class attribute, raw memory) reaches another.

A ``build`` may come again on the same socket (the determinism check builds the kernel afresh after its
probe run): the previous kernel is dropped first. Before each build numpy's global generator and
``random`` are seeded from the device's seed, and before the child waits as a spare it replaces every
clock, its pid and system entropy with a refusal (:mod:`.determinism`).

Speed: the child is forked ahead of need, hardened and warmed (a pre-faulted heap, the transfer pool
mapped, the build and call paths run once) at nice 19 when the scorer is idle, and is claimed
by the scorer one device ahead, so a device costs the scorer the kernel's build and two copies of its audio.

Everything the child sends is untrusted by the scorer, which checks every field of every reply
(:mod:`.replies`); the child clips a fault's texts to the sizes the scorer accepts.
"""

from __future__ import annotations

import json
import os
import socket
import sys

from ..heap import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, MMAP_THRESHOLD_BYTES
from .audit import install_audit_notes
from .determinism import deny_clocks_and_entropy, seed_globals
from .framing import recv, send
from .layers import harden, weak_refusal
from .libc import libc
from .limits import SandboxLimits
from .replies import MAX_TEXT_CHARS, clip
from .transport import VM_PROBE, child_pool, make_private

#: Heap a child pre-faults while it waits as a spare (glibc keeps it: see :func:`_warm_heap`).
WARM_HEAP_MB = 32
#: The last output, kept alive until the next message so the scorer can read it (``"out": "vm"``).
_KEEP: list = [None]
_WARM_KERNEL = {"id": "sandbox.warm-up", "kind": "effect", "version": 1, "params": [], "kernel":
                "def process(x, params, ctx):\n    return np.concatenate([x[:, :1], x[:, 1:]], axis=1)\n"}


def child_main(spare: socket.socket, limits: SandboxLimits, pool: dict | None = None, *,
               parent_pid: int | None = None) -> None:
    """A child: harden first, then wait (as a warm spare) for the scorer's socket, then serve it.

    While it waits it also does the per-process work that would otherwise land on the first call:
    a pre-faulted malloc heap and the scorer's transfer pool mapped. A spare forked ahead of need does
    this at nice 19 when the server runs as root (it sets that, and restores 0 when it hands the spare a
    device)."""
    _warm_heap(WARM_HEAP_MB)
    layers, missing, unmet = harden(spare.fileno(), limits, keep=(pool["fd"],) if pool else (),
                                    parent_pid=parent_pid)
    from .. import kernels  # imported by the server before the fork: no file access here

    if pool:
        _map_pool(pool)
    _warm_paths(kernels)
    pid = os.getpid()
    deny_clocks_and_entropy()  # from here on no clock, pid or system entropy (nor for the child itself)

    try:
        _msg, fds = recv(spare)
    except (EOFError, OSError):
        return
    spare.close()
    chan = socket.socket(fileno=fds[0])
    install_audit_notes(chan, pid=pid)
    import numpy as np

    # The probe's bytes stay alive (a local here) while the scorer reads them.
    probe = np.frombuffer(VM_PROBE, dtype=np.uint8).copy()
    send(chan, {"ready": True, "pid": pid, "layers": layers, "missing": missing, "probe": probe.ctypes.data})
    _serve_device(chan, kernels, unmet)


def _map_pool(pool: dict) -> None:
    """Map the scorer's transfer pool now (while a spare), so the first call finds it mapped."""
    try:
        child_pool(pool, [pool["fd"]])
    except (OSError, ValueError):
        pass
    os.close(pool["fd"])


def _serve_device(chan: socket.socket, kernels, unmet: list[str] = ()) -> None:
    """Answer the scorer's ``build`` and call messages until it closes the socket. A kernel's fault and
    a failure of the child's own side are both replies (``"ok": False``); the loop goes on. With required
    layers ``unmet``, a build is refused before the kernel's source is read, unless it says ``"weak"``."""
    runtime = None
    while True:
        try:
            msg, fds = recv(chan)
        except (EOFError, OSError):
            return
        try:
            if msg["op"] == "build":
                if runtime is not None:
                    runtime.close()
                    runtime = None
                _KEEP[0] = None
                d = kernels.validate_definition(msg["defn"])
                if unmet and not msg.get("weak"):
                    raise kernels.KernelError(f"kernel {d.id} {weak_refusal(unmet)}")
                seed_globals(msg["seed"])
                runtime = kernels.KernelRuntime(d, sr=msg["sr"], tempo_bpm=msg["tempo_bpm"], seed=msg["seed"])
                send(chan, {"ok": True, "tail_s": runtime.tail_s, "latency_frames": runtime.latency_frames})
            else:
                _child_call(chan, runtime, msg, fds)
        except kernels.KernelError as e:
            _send_fault(chan, str(e), str(getattr(e, "reason", e)))
        except Exception as e:  # noqa: BLE001 - the host side of the child failed (e.g. a limit hit)
            why = f"the sandbox child failed: {type(e).__name__}: {e}"
            _send_fault(chan, why, why)
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass


def _send_fault(chan: socket.socket, error: str, reason: str) -> None:
    """A fault reply, its texts clipped to what the scorer accepts (a kernel's message may be huge)."""
    send(chan, {"ok": False, "error": clip(error, MAX_TEXT_CHARS), "reason": clip(reason, MAX_TEXT_CHARS)})


def _warm_heap(mb: int) -> None:
    """Make large numpy temporaries come from a heap that is already faulted in: raise glibc's mmap and
    trim thresholds (so freed blocks stay in the heap), then touch ``mb`` MB once and free it. A fresh
    process otherwise pays a page fault per 4 KB on every new array."""
    try:
        mallopt = libc.mallopt
    except AttributeError:
        return
    import numpy as np

    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)  # blocks up to 32 MB from the heap (glibc's ceiling)
    mallopt(M_TRIM_THRESHOLD, 1 << 30)  # a child lives for one device: it keeps all it frees
    blocks = [np.ones(16 * 1024 * 1024 // 8) for _ in range(max(0, mb // 16))]
    del blocks


def _child_call(chan, runtime, msg: dict, fds: list[int]) -> None:
    import numpy as np

    from ..kernels import Notes

    mm = child_pool(msg, fds)
    n = msg["n"]
    whole = None
    if msg["op"] == "process":
        # The kernel reads its input straight from the pool; if it keeps a view of it (in ctx.state),
        # that stretch of memory is made private below, before the scorer reuses the pool.
        whole = np.frombuffer(mm, dtype=np.float64, count=2 * n)
        params = dict(msg["params"])
        for key, off in msg["arrays"].items():
            params[key] = np.frombuffer(mm, dtype=np.float64, count=n, offset=off).copy()
        y = runtime.process(whole.reshape(2, n), params, check_finite=False)  # the scorer checks
    else:
        y = runtime.render(Notes(msg["notes"]), msg["params"], n, check_finite=False)
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
        make_private(whole)
    send(chan, reply)


def _warm_paths(kernels) -> None:
    """Run a trivial kernel through the build and call paths once, so the copy-on-write faults of the
    pages those paths touch are taken now (at the spare's low priority), not on the first real call."""
    import numpy as np

    try:
        runtime = kernels.KernelRuntime(kernels.validate_definition(_WARM_KERNEL), sr=48000,
                                        tempo_bpm=120.0, seed=0)
        y = runtime.process(np.zeros((2, 4096)), {}, check_finite=False)
        kernels.check_output(runtime.defn, y, 4096, check_finite=False)
        json.loads(json.dumps({"ok": True, "addr": 0}))
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        pass
