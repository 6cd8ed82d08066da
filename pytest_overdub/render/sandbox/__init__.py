"""The sandbox song-defined kernels run in (SPEC section 10, DESIGN.md "The sandbox").

Shape: a **fork server**. The first sandboxed device starts one warm server process (a fresh
``python -c``, never a fork of the scorer, which may hold threads) that imports numpy, scipy and the dsp
stdlib and then waits. Each device built for a track gets a **fresh child**, forked from the server; the
child serves that device alone while it lives (its kernel keeps ``ctx.state`` between calls) and talks
to the scorer over its own Unix socket. No child serves two devices: whatever a kernel does to the
interpreter (a patched function's ``__code__``, a rebound numpy name, raw memory) ends with its device.
A **kernel session** (:func:`kernel_session`: one scoring of one submission, or one render) holds the
scoring's time budget, its fault latch and its determinism checks. Before it reads any kernel source the
child applies, in order:

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
where that is not permitted, through the pool. The scorer enforces the wall-clock budgets and checks the
output's shape and finiteness itself; everything the child reports is treated as untrusted.

Time (:mod:`.limits`): a kernel's module body gets 5 s of wall clock, a call the larger of 5 s and twice
the duration of its audio (at most ``wall_s``, 120 s), a whole scoring 15 s of wall time in kernels, after
which every later device faults at once. A device that faults is latched for the rest of its session
(keyed by its definition's content and its seed, so by track): later renders fault at once instead of
building it again, so a hung kernel costs its scoring one timeout. A scoring with any number of hung
kernels ends after about 15 s plus the scorer's own work.

Determinism (:mod:`.determinism`): the child refuses every clock, its pid and system entropy (wherever a
loaded module binds them) and seeds numpy's and Python's global generators from the device's seed before
each build; the session runs each new device's 0.2 s probe twice, in two fresh children, and faults the
device when the outputs differ in any bit.

Speed: each child is forked ahead of need, hardened and warmed (a pre-faulted heap, the build and call
paths run once) at nice 19, and the scorer claims it one device ahead (the server's answer arrives while
the current device runs), so a device costs the scorer the kernel's build and two copies of its audio,
plus the wait for a spare when devices come faster than the server warms them. ``bench/sandbox_speed.py``
prints what each part costs.

Faults are :class:`~pytest_overdub.errors.KernelError` with a reason: the kernel's traceback, "CPU time
limit of 2 s exceeded", "wall-clock timeout of 5 s while running (...)", "the scoring's kernel time budget
of 15 s is used up ...", "not deterministic: ...", "stopped by the sandbox: forbidden system call (the
kernel called os.system)", ...

Layout: :mod:`.limits` (SandboxLimits and the time budgets), :mod:`.layers` (fd hygiene and layers 2-6,
applied in order by ``harden``), :mod:`.seccomp` (the BPF filter, layer 7), :mod:`.audit` (the notes
hook), :mod:`.framing` (socket messages), :mod:`.transport` (the memfd pool and ``process_vm_readv``),
:mod:`.determinism` (no clock, no entropy, seeded generators), :mod:`.child` (the child's loop),
:mod:`.server` (the fork server's process), :mod:`.handle` (the scorer's handle on it) and :mod:`.client`
(:class:`SandboxedKernel` and :func:`kernel_session`, what :mod:`..kernels` and the engine call).
"""

from __future__ import annotations

from .client import SandboxedKernel, kernel_session, probe_layers
from .handle import ForkServer, fork_server, prestart, shutdown
from .limits import DEFAULT_LIMITS, SandboxLimits

__all__ = ["SandboxLimits", "DEFAULT_LIMITS", "SandboxedKernel", "ForkServer", "fork_server", "shutdown",
           "probe_layers", "kernel_session", "prestart"]
