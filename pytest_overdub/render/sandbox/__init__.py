"""The sandbox song-defined kernels run in (docs/devices.md, "Where your kernel runs").

Shape: a **fork server**. The first sandboxed device starts one warm server process (a fresh
``python -c``, never a fork of the scorer, which may hold threads, started with an **empty environment**
plus what Python needs, so no variable of the scorer's can reach a kernel, not even in the initial
environment block a process keeps in memory) that imports numpy, scipy and the dsp stdlib, builds the
children's Landlock ruleset once and then waits. A device built for a track gets a **child**, forked from
the server; the child serves the device while it lives (its kernel keeps ``ctx.state`` between calls) and
talks to the scorer over its own Unix socket. Inside a **kernel session** (:func:`kernel_session`: one
scoring of one submission, or one render) a closed device leaves its child idle, and the next device of
the session takes it: the child drops the old kernel's namespace, state and timers, renews its limits, and
exits instead when it cannot (a fault, a rebound shared name, its limits' headroom used up). Outside a
session every device gets a fresh child. **Nothing outlives its scoring**: the server SIGKILLs a child when
its device closes outside a session, when it faults, and when its session ends (idle children too), so no
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
where that is not permitted, through the pool. The scorer enforces a wall-clock timeout and checks the
output's shape and finiteness itself.

Every channel from the child is hostile (a kernel runs in the child's interpreter and can rewrite what it
sends). The pool memfds are sealed at their size before any child sees them (no shrink, no grow, no
further seals), so a truncation cannot turn the scorer's next touch of its mapping into a SIGBUS
(seccomp also kills ``ftruncate``/``fallocate``). The scorer reads a child's messages with a 1 MB cap
(a longer length prefix is refused unread) and no passed fds, checks every field of every reply with
bounds before using or allocating anything from it (:mod:`.replies`), and sends with the wall-clock
limit as timeout. A malformed reply ends the child, which is never reused, and is the device's fault.

Speed: each child is forked ahead of need, hardened and warmed (a pre-faulted heap, the build and call
paths run once) at nice 19 when the scorer is idle (a session's end; 30-40 ms of CPU that would slow
whatever ran beside it), and the scorer claims it one device ahead (the server's answer arrives while
the current device runs), so a device costs the scorer the kernel's build and two copies of its audio;
the next devices of a session also skip the fresh process's first-call costs.

Faults are :class:`~pytest_overdub.errors.KernelError` with a reason: the kernel's traceback, "CPU time
limit of 2 s exceeded", "wall-clock timeout of 3 s", "stopped by the sandbox: forbidden system call
(the kernel called os.system)", "sent a malformed reply while loading: latency_frames 60000000 is
outside 0..480000", ...

Layout: :mod:`.limits` (SandboxLimits), :mod:`.layers` (fd hygiene and layers 2-6, applied in order by
``harden``), :mod:`.readset` (what Landlock lets a child read), :mod:`.seccomp` (the BPF filter, layer 7),
:mod:`.audit` (the notes hook), :mod:`.framing` (socket messages), :mod:`.replies` (the scorer's checks of a
child's messages), :mod:`.transport` (the memfd pool and ``process_vm_readv``), :mod:`.child` (the child's
loop), :mod:`.server` (the fork server's process), :mod:`.handle` (the scorer's handle on it) and
:mod:`.client` (:class:`SandboxedKernel`, what :mod:`..kernels` calls).
"""

from __future__ import annotations

from .client import SandboxedKernel, kernel_session, probe_layers
from .handle import ForkServer, fork_server, prestart, shutdown
from .limits import DEFAULT_LIMITS, SandboxLimits

__all__ = ["SandboxLimits", "DEFAULT_LIMITS", "SandboxedKernel", "ForkServer", "fork_server", "shutdown",
           "probe_layers", "kernel_session", "prestart"]
