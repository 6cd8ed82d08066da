"""A sandbox child: forked from the fork server, it hardens itself, waits as a warm spare, then serves
the scorer over its own socket: one device (``build``, then ``process``/``render`` calls), and, inside a
kernel session, the next devices of the same scoring one after another (``release`` between them).

Speed: the child is forked ahead of need, hardened and warmed (a pre-faulted heap, the transfer pool
mapped, the build and call paths run once) at nice 19 when the scorer is idle, and is claimed
by the scorer one device ahead, so a device costs the scorer the kernel's build and two copies of its audio.
A child reused for the next device of a scoring costs no fork, hardening or warm-up at all, and its heap
and the pages it has copied from the server are already its own.

Between two devices (``release``) the child drops the kernel's namespace and ``ctx.state``, its output,
its timers and its notes, and gives the next device its full limits again (CPU seconds and address space
counted from now). It exits instead (the scorer then takes a fresh child) when it cannot: it has used more
CPU or kept more memory than the headroom its hard limits leave, or the kernel rebound a name in a module
every kernel shares (numpy, math, builtins, the dsp stdlib and its classes).

Everything the child sends is untrusted by the scorer, which checks every field of every reply
(:mod:`.replies`); it reports ``cpu_ms`` (its CPU time since the hand-over) and ``timing_ms`` (pool +
input copy, kernel, output write) as diagnostics only, and clips a fault's texts to the sizes the scorer
accepts.
"""

from __future__ import annotations

import gc
import json
import math
import os
import signal
import socket
import sys
import time

from ..heap import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, MMAP_THRESHOLD_BYTES
from .audit import install_audit_notes
from .framing import recv, send
from .layers import harden, weak_refusal
from .libc import libc
from .limits import SandboxLimits
from .replies import MAX_TEXT_CHARS, clip
from .transport import VM_PROBE, child_pool, make_private

#: Heap a child pre-faults while it waits as a spare (glibc keeps it: see :func:`_warm_heap`).
WARM_HEAP_MB = 32
_CPU0: list = [0.0]
#: An fd on /proc/self/statm, for the address space a next device's limit is counted from.
_STATM: list = [None]
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
    _STATM[0] = os.open("/proc/self/statm", os.O_RDONLY)  # opened before Landlock shuts /proc
    keep = (_STATM[0], pool["fd"]) if pool else (_STATM[0],)
    layers, missing, unmet = harden(spare.fileno(), limits, keep=keep, parent_pid=parent_pid)
    from .. import kernels  # imported by the server before the fork: no file access here

    if pool:
        _map_pool(pool)
    _warm_paths(kernels)
    shared = _shared_fingerprint()  # before any kernel runs (and its page copies taken while a spare)

    try:
        _msg, fds = recv(spare)
    except (EOFError, OSError):
        return
    spare.close()
    _CPU0[0] = _cpu_ms()
    chan = socket.socket(fileno=fds[0])
    reset_notes = install_audit_notes(chan)
    import numpy as np

    # The probe's bytes stay alive (a local here) while the scorer reads them.
    probe = np.frombuffer(VM_PROBE, dtype=np.uint8).copy()
    send(chan, {"ready": True, "pid": os.getpid(), "layers": layers, "missing": missing,
                "probe": probe.ctypes.data})
    _serve_device(chan, kernels, limits, reset_notes, shared, unmet)


def _map_pool(pool: dict) -> None:
    """Map the scorer's transfer pool now (while a spare), so the first call finds it mapped."""
    try:
        child_pool(pool, [pool["fd"]])
    except (OSError, ValueError):
        pass
    os.close(pool["fd"])


def _serve_device(chan: socket.socket, kernels, limits: SandboxLimits, reset_notes, shared: int,
                  unmet: list[str] = ()) -> None:
    """Answer the scorer's ``build``, call and ``release`` messages until it closes the socket. A
    kernel's fault and a failure of the child's own side are both replies (``"ok": False``); the loop goes
    on. ``release`` has no reply: the next message is the next device's ``build``. With required layers
    ``unmet``, a build is refused before the kernel's source is read, unless it says ``"weak"``."""
    runtime = None
    while True:
        try:
            msg, fds = recv(chan)
        except (EOFError, OSError):
            return
        if msg["op"] == "release":
            _release(runtime, limits, shared)
            runtime = None
            reset_notes()
            continue
        try:
            if msg["op"] == "build":
                d = kernels.validate_definition(msg["defn"])
                if unmet and not msg.get("weak"):
                    raise kernels.KernelError(f"kernel {d.id} {weak_refusal(unmet)}")
                runtime = kernels.KernelRuntime(d, sr=msg["sr"], tempo_bpm=msg["tempo_bpm"], seed=msg["seed"])
                send(chan, {"ok": True, "tail_s": runtime.tail_s, "latency_frames": runtime.latency_frames,
                            "cpu_ms": _cpu_ms() - _CPU0[0]})
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


def _release(runtime, limits: SandboxLimits, shared: int) -> None:
    """Make this child ready for the next device of the scoring, or exit when it cannot be."""
    try:
        if runtime is not None:
            runtime.close()
        _KEEP[0] = None
        for timer in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
            signal.setitimer(timer, 0.0)
        gc.collect()  # cheap: the server froze its objects (gc.freeze) before forking
        if _shared_fingerprint() != shared or not _renew_limits(limits):
            os._exit(0)
        _CPU0[0] = _cpu_ms()
    except BaseException:  # noqa: BLE001 - a child that cannot reset itself is not reused
        os._exit(0)


def _renew_limits(limits: SandboxLimits) -> bool:
    """Give the next device ``cpu_s`` CPU seconds and ``mem_mb`` of address space from now, within the
    hard limits :func:`.layers.layer_rlimits` set; False when the headroom is used up."""
    import resource

    cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    as_hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if cpu_hard == resource.RLIM_INFINITY or as_hard == resource.RLIM_INFINITY:
        return True  # the rlimit layer is missing: nothing to renew
    t = os.times()
    cpu = math.ceil(t.user + t.system) + max(1, int(limits.cpu_s))
    address_space = _vm_bytes() + int(limits.mem_mb) * 1024 * 1024
    if cpu >= cpu_hard or address_space > as_hard:
        return False
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu_hard))
    resource.setrlimit(resource.RLIMIT_AS, (address_space, as_hard))
    return True


def _vm_bytes() -> int:
    """This process's mapped address space (``VmSize``) in bytes."""
    return int(os.pread(_STATM[0], 256, 0).split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _shared_fingerprint() -> int:
    """A hash of what every kernel shares in this process: the objects bound in numpy, math, cmath,
    builtins and the dsp modules, the attributes of the dsp stdlib's classes, numpy's error state and the
    interpreter's trace hooks. A kernel that rebinds any of them leaves a child that is not reused."""
    import builtins
    import cmath

    import numpy as np

    from ...dsp import stdlib as dsp_stdlib

    lib = dsp_stdlib.stdlib()
    spaces = [builtins, math, cmath, np, np.random, np.fft, np.linalg, dsp_stdlib]
    spaces += [sys.modules[m] for m in sorted(sys.modules) if m.startswith("pytest_overdub.dsp.")]
    ids = [id(v) for space in spaces for v in vars(space).values()]
    for name in sorted(dir(lib)):
        value = getattr(lib, name)
        ids.append(id(value))
        if isinstance(value, type):
            ids.extend(id(v) for v in vars(value).values())
    ids.extend(id(v) for v in (sys.gettrace(), sys.getprofile()))
    return hash((tuple(ids), tuple(sorted(np.geterr().items())), sys.getrecursionlimit()))


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

    t0 = time.perf_counter()
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
        t1 = time.perf_counter()
        y = runtime.process(whole.reshape(2, n), params, check_finite=False)  # the scorer checks
    else:
        t1 = time.perf_counter()
        y = runtime.render(Notes(msg["notes"]), msg["params"], n, check_finite=False)
    t2 = time.perf_counter()
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
    t3 = time.perf_counter()
    reply["cpu_ms"] = _cpu_ms() - _CPU0[0]
    reply["timing_ms"] = [round(1e3 * (t1 - t0), 2), round(1e3 * (t2 - t1), 2), round(1e3 * (t3 - t2), 2)]
    send(chan, reply)


def _cpu_ms() -> float:
    """This process's CPU time (user + system) in ms; a device's cost is counted from its hand-over."""
    t = os.times()
    return 1e3 * (t.user + t.system)


def _warm_paths(kernels) -> None:
    """Run a trivial kernel through the build and call paths once, so the copy-on-write faults of the
    pages those paths touch are taken now (at the spare's low priority), not on the first real call."""
    import numpy as np

    try:
        runtime = kernels.KernelRuntime(kernels.validate_definition(_WARM_KERNEL), sr=48000,
                                        tempo_bpm=120.0, seed=0)
        y = runtime.process(np.zeros((2, 4096)), {}, check_finite=False)
        kernels.check_output(runtime.defn, y, 4096, check_finite=False)
        json.loads(json.dumps({"ok": True, "timing_ms": [0.0]}))
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        pass
