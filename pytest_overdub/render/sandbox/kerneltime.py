"""Kernel time: what a sandbox child's kernel spent, read by the scorer from the kernel's own accounting,
so a budget holds a kernel to what it does and not to how busy the machine is.

**Kernel time = the child's CPU time + the wall time it spends asleep by its own choice.**

* CPU time: ``/proc/<pid>/stat`` fields 14-17 (proc(5)): ``utime`` and ``stime`` (all the process's
  threads), ``cutime`` and ``cstime`` (its waited-for children: none in a full sandbox, which cannot fork;
  counted so a weak sandbox's waited children are charged too), in clock ticks of
  ``os.sysconf("SC_CLK_TCK")`` (100 a second on Linux: 10 ms). The scorer reads them; the child reports
  nothing, so a kernel cannot forge them. Time the child spends runnable but waiting for a core (what a
  busy machine adds) is in none of them.
* Asleep: field 3, the state. The wall time between two consecutive samples of one wait that both saw
  the child ``S`` (an interruptible sleep: ``time.sleep``, a blocked read, ``select``) or ``T``/``t``
  (stopped: nothing but the kernel itself stops a child, with a signal to its own pid; the scorer never
  does) is charged. ``D`` (an uninterruptible wait, in practice the disk or a page-in: what a busy machine
  imposes) and ``R`` (running or runnable) are not; the wall-clock backstop holds whatever the accounting
  cannot see. A sleep shorter than the sampling interval is not charged: it cannot hold the scorer long.
* The pid: the fork server's ``os.fork()`` answer, in the scorer's pid namespace (the server is the
  scorer's own subprocess, and no layer unshares the pid namespace); :meth:`KernelClock.start` checks that
  ``/proc/<pid>/stat`` names the fork server as the parent (field 4) before it trusts the entry.

Where ``/proc/<pid>/stat`` cannot be read (not Linux, ``hidepid``, another parent), a child's kernel time
is its wall time, and every fault and the session's ``confinement()`` say so.

A wait samples only when it lasts longer than :data:`SLICE_S`: a call answered within it is charged its
wall time for now (an upper bound of one thread's CPU), and the next sample of the same child (at least
every :data:`SETTLE_S` of such charges, at a slow call, and when the device closes) replaces those
charges by what the counters say.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

#: The longest a wait for a child's reply goes without sampling the child: a thread's CPU time cannot
#: advance faster than the wall clock, so a kernel overruns its budget by at most this much (per thread).
SLICE_S = 0.05
#: The most a child's provisional charges (replies that came within the first slice, charged their wall
#: time) may add up to before the scorer reads the child's counters and settles them.
SETTLE_S = 0.5
#: The states whose wall time (between two samples) is charged as asleep by the kernel's choice.
ASLEEP_STATES = frozenset("STt")
try:
    CLK_TCK = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):  # not POSIX: /proc is not there either
    CLK_TCK = 100


@dataclass(frozen=True)
class Sample:
    """One reading of ``/proc/<pid>/stat``: when (``time.monotonic()``), the state letter (field 3), the
    parent's pid (field 4) and utime + stime + cutime + cstime (fields 14-17) in clock ticks."""

    at_s: float
    state: str
    ppid: int
    cpu_ticks: int

    @property
    def cpu_s(self) -> float:
        return self.cpu_ticks / CLK_TCK


def read_stat(pid: int) -> Sample | None:
    """Read ``/proc/<pid>/stat`` (proc(5)); None when it cannot be read or parsed. The command name
    (field 2) is in parentheses and may hold spaces or parentheses itself: the fields after it are split
    from the last ``)``."""
    try:
        fd = os.open(f"/proc/{int(pid)}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    at_s = time.monotonic()
    try:
        rest = data[data.rindex(b")") + 2:].split()
        return Sample(at_s=at_s, state=rest[0].decode("ascii"), ppid=int(rest[1]),
                      cpu_ticks=sum(int(v) for v in rest[11:15]))
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


@dataclass
class Charge:
    """What one wait (a build or a call) has been charged so far: CPU seconds and seconds asleep, or
    wall seconds when the child's counters cannot be read."""

    cpu_s: float = 0.0
    asleep_s: float = 0.0
    wall_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.cpu_s + self.asleep_s + self.wall_s

    def describe(self) -> str:
        """E.g. "5.0 s of CPU and 0.0 s asleep", or "5.0 s of wall time" (the counters unreadable)."""
        counted = f"{self.cpu_s:.1f} s of CPU and {self.asleep_s:.1f} s asleep"
        if not self.wall_s:
            return counted
        wall = f"{self.wall_s:.1f} s of wall time"
        return wall if not (self.cpu_s or self.asleep_s) else f"{counted}, then {wall}"


class KernelClock:
    """The kernel time of one child, as the scorer charges it (see the module's docstring).

    ``charge`` is called with each amount charged (the session adds it to what the scoring spent; a
    settlement may pass a negative amount, a refund of provisional charges)."""

    def __init__(self, pid: int | None, *, parent_pid: int | None, charge=None):
        self.pid = pid
        self.parent_pid = parent_pid
        self._charge = charge or (lambda s: None)
        self.last: Sample | None = None
        self.provisional_s = 0.0  # wall time charged for replies that came before a sample
        self.why_wall: str | None = None

    @property
    def mode(self) -> str:
        """``"cpu"`` when the child's counters are read, ``"wall"`` when it is charged its wall time."""
        return "wall" if self.why_wall is not None else "cpu"

    def start(self) -> None:
        """Read the child's counters once, the baseline of all its charges (its warm-up before it was
        handed a device is not its kernel's); fall back to wall time when they cannot be read."""
        s = read_stat(self.pid) if self.pid is not None else None
        if s is None:
            self.why_wall = f"/proc/{self.pid}/stat could not be read"
        elif self.parent_pid is not None and s.ppid != self.parent_pid:
            self.why_wall = f"/proc/{self.pid}/stat names parent {s.ppid}, not the fork server"
        else:
            self.last = s

    def wait(self, t0_s: float) -> "Wait":
        """The accounting of one wait for a reply that started at ``t0_s`` (``time.monotonic()``)."""
        return Wait(self, t0_s)

    def settle(self) -> None:
        """Replace the provisional charges by what the counters say (a read of the child's stat)."""
        if self.last is None or not self.provisional_s:
            return
        s = read_stat(self.pid)
        if s is None:
            return
        self._add(s.cpu_s - self.last.cpu_s - self.provisional_s)
        self.last, self.provisional_s = s, 0.0

    def _add(self, seconds: float) -> None:
        self._charge(seconds)


class Wait:
    """One wait for a child's reply: :meth:`sample` while it lasts, :meth:`done` when the reply came.
    ``charge`` holds what the wait has been charged."""

    def __init__(self, clock: KernelClock, t0_s: float):
        self.clock = clock
        self.t0_s = t0_s
        self.charge = Charge()
        self._prev: Sample | None = None  # this wait's previous sample
        self._until_s = t0_s  # charged up to this time.monotonic() (the wall-time fallback's mark)

    def sample(self) -> Charge:
        """Sample the child now and charge what it did since the previous sample."""
        s = self._read()
        if s is None:
            return self.charge
        clock = self.clock
        if self._prev is None:
            # The first sample of a wait: the counters moved by this wait's first stretch and by any
            # replies charged provisionally since the last read. The session takes all of it; this wait
            # at most its own wall time (one thread's CPU cannot advance faster than the wall clock).
            moved_s = s.cpu_s - clock.last.cpu_s
            self.charge.cpu_s += min(moved_s, s.at_s - self.t0_s)
            clock._add(moved_s - clock.provisional_s)
            clock.provisional_s = 0.0
        else:
            cpu_s = s.cpu_s - self._prev.cpu_s
            both = {s.state, self._prev.state} <= ASLEEP_STATES
            asleep_s = s.at_s - self._prev.at_s if both else 0.0
            self.charge.cpu_s += cpu_s
            self.charge.asleep_s += asleep_s
            clock._add(cpu_s + asleep_s)
        self._prev = clock.last = s
        return self.charge

    def done(self) -> Charge:
        """The reply came: charge the rest. A wait that never sampled is charged its wall time for now
        (provisional, settled at a later read); one that did reads the counters once more (CPU only: the
        child is back waiting for its next message, which is not its kernel's sleep)."""
        clock = self.clock
        if self._prev is None and clock.last is not None:
            wall_s = time.monotonic() - self.t0_s
            self.charge.cpu_s += wall_s
            clock.provisional_s += wall_s
            clock._add(wall_s)
            if clock.provisional_s >= SETTLE_S:
                clock.settle()
            return self.charge
        s = self._read()
        if s is not None:
            cpu_s = s.cpu_s - self._prev.cpu_s
            self.charge.cpu_s += cpu_s
            clock._add(cpu_s)
            clock.last = s
        return self.charge

    def _read(self) -> Sample | None:
        """The child's counters now; None (after charging the wall time since the last charge) when they
        cannot be read: never readable (the clock's wall-time mode), or not any more (the child ended)."""
        clock = self.clock
        s = read_stat(clock.pid) if clock.last is not None else None
        if s is not None:
            self._until_s = s.at_s
            return s
        if clock.last is not None:
            clock.why_wall = f"/proc/{clock.pid}/stat could not be read any more"
            clock.last = None
        now = time.monotonic()
        step = max(now - self._until_s, 0.0)
        self._until_s = now
        self.charge.wall_s += step
        clock._add(step)
        return None
