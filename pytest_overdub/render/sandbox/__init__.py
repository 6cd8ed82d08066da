"""The sandbox song-defined kernels run in (docs/devices.md, "Where your kernel runs").

Shape: a **fork server**. The first sandboxed device starts one warm server process (a fresh
``python -c``, never a fork of the scorer, which may hold threads, started with an **empty environment**
plus what Python needs, so no variable of the scorer's can reach a kernel, not even in the initial
environment block a process keeps in memory) that imports numpy, scipy and the dsp stdlib, builds the
children's Landlock ruleset once and then waits. Each device built for a track gets a **fresh child**,
forked from the server; the child serves that device alone while it lives (its kernel keeps
``ctx.state`` between calls) and talks to the scorer over its own Unix socket. No child serves two
devices: whatever a kernel does to the interpreter (a patched function's ``__code__``, a rebound numpy
name, raw memory) ends with its device. A **kernel session** (:func:`kernel_session`: one scoring of one
submission, or one render) holds the scoring's time budget, its fault latch and its determinism checks.
**Nothing outlives its scoring**: the server SIGKILLs a child when its device closes or faults, so no
child's end depends on its kernel; the server dies with the scorer and every child with the server
(``PR_SET_PDEATHSIG``, set after the uid drop, which clears it). Before it reads any kernel source the
child applies, in order:

1. fd hygiene: every descriptor but its socket closed, stdin/stdout/stderr on ``/dev/null``;
2. ``rlimit``: CPU seconds, address space, file size 0, open files, processes, no core dumps;
3. ``netns``: a new, empty network namespace (no interfaces, not even loopback);
4. ``no_new_privs``;
5. ``landlock``: read-only access to exactly the **read set** (:mod:`.readset`: the stdlib,
   numpy, scipy and their bundled libraries, the ``pytest_overdub`` package and the system's shared
   libraries; never the checkout, the submission, home, ``/proc`` or other site-packages, even where they
   lie beneath one of those); no writes anywhere, no exec, no TCP bind/connect, and, from ABI 6, no
   signals or abstract sockets outside the sandbox; ``sys.path`` keeps only its entries in the read set;
6. ``uid``: as root, a uid and gid of the child's own (``0x7A000000`` + its pid), so the kernel's own
   permission checks keep children apart; no capabilities, but CAP_DAC_READ_SEARCH where the interpreter
   lives where ``nobody`` cannot enter (then Landlock alone decides what the child reads);
7. ``seccomp``: a BPF filter that **kills** the child on execve, fork/clone (threads too), socket,
   connect/bind/listen/accept, ptrace, process_vm_*, SysV IPC, io_uring, mount/namespace calls, any
   open/openat with a write, create or truncate flag, and every call aimed at another process (kill and
   friends, prlimit64, get/setpriority, ioprio_*, sched_*, migrate/move_pages: the child's own pid or 0
   only; see :mod:`.seccomp`).

A layer that is unavailable here (not root, old kernel, another architecture) is skipped; the child
reports ``layers`` (what is active) and ``missing`` (what is not, and why) and the device exposes them;
a kernel session collects them for the scoring's report (``confinement``). Where a **required** layer
(rlimit, no_new_privs, landlock, seccomp, and uid when root) is missing, the child refuses every build
before reading the kernel's source, unless the scorer allows a weak sandbox (``--overdub-weak-sandbox``,
``OVERDUB_WEAK_SANDBOX=1``). Kernel code may import only the allow-list of
:mod:`~pytest_overdub.render.kernel_imports` (a contract checked at import time, not a boundary).
Audit hooks are *not* a boundary either (numpy can write raw memory); the child uses one only to send a
note ("the kernel called os.system") before a forbidden call, so the fault message can say what was tried.

Audio crosses once per call. Input: the scorer copies it into a ``memfd`` pool it keeps mapped (pages
allocated once, not per call; spares map it before they are needed) and passes the fd over the socket;
the kernel reads it in place, and if it keeps a view of its input in ``ctx.state`` those pages are made
private before the pool is reused. Output: the scorer copies it straight out of the child's memory with
``process_vm_readv`` (one copy into the scorer's own memory, which the child can never touch again), or,
where that is not permitted, through the pool. The scorer enforces the time budgets and checks the
output's shape and finiteness itself.

Every channel from the child is hostile (a kernel runs in the child's interpreter and can rewrite what it
sends). The pool memfds are sealed at their size before any child sees them (no shrink, no grow, no
further seals), so a truncation cannot turn the scorer's next touch of its mapping into a SIGBUS
(seccomp also kills ``ftruncate``/``fallocate``). The scorer reads a child's messages with a 1 MB cap
(a longer length prefix is refused unread) and no passed fds, checks every field of every reply with
bounds before using or allocating anything from it (:mod:`.replies`), and sends with the wall-clock
limit as timeout. A malformed reply ends the child and is the device's fault.

Time (:mod:`.limits`), in kernel time (:mod:`.kerneltime`: the child's CPU time from its
``/proc/<pid>/stat`` plus the time it sleeps by its own choice, never the time it waits for a core, so the
machine's load does not change a verdict): a kernel's module body gets 5 s, a call the larger of 5 s and
twice the duration of its audio (at most ``wall_s``, 120 s), a whole scoring 15 s, after which every
later device faults at once. A device that faults is latched for the rest of its session (keyed by its
definition's content and its seed, so by track): later renders fault at once instead of building it
again, so a hung kernel costs its scoring one call's budget. A scoring with any number of hung kernels
spends at most about 15 s of kernel time; wall-clock backstops (``wall_s`` per exchange, 8 times the
budget per scoring) hold what the accounting cannot see.

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
limit of 2 s exceeded", "kernel time budget of 5 s exceeded while running (...): 5.0 s of CPU and 0.0 s
asleep", "the scoring's kernel time budget
of 15 s is used up ...", "not deterministic: ...", "stopped by the sandbox: forbidden system call (the
kernel called os.system)", "sent a malformed reply while loading: latency_frames 60000000 is outside
0..480000", ...

Layout: :mod:`.limits` (SandboxLimits and the time budgets), :mod:`.kerneltime` (what a child is charged),
:mod:`.layers` (fd hygiene and layers 2-6, applied in order by ``harden``), :mod:`.readset` (what Landlock
lets a child read), :mod:`.seccomp` (the BPF filter, layer 7), :mod:`.audit` (the notes hook),
:mod:`.framing` (socket messages), :mod:`.replies` (the scorer's checks of a child's messages),
:mod:`.transport` (the memfd pool and ``process_vm_readv``), :mod:`.determinism` (no clock, no entropy,
seeded generators), :mod:`.child` (the child's loop), :mod:`.server` (the fork server's process),
:mod:`.handle` (the scorer's handle on it) and :mod:`.client` (:class:`SandboxedKernel` and
:func:`kernel_session`, what :mod:`..kernels` and the engine call).
"""

from __future__ import annotations

from .client import SandboxedKernel, kernel_session, probe_layers
from .handle import ForkServer, fork_server, prestart, shutdown
from .limits import DEFAULT_LIMITS, SandboxLimits

__all__ = ["SandboxLimits", "DEFAULT_LIMITS", "SandboxedKernel", "ForkServer", "fork_server", "shutdown",
           "probe_layers", "kernel_session", "prestart"]
