"""Per-child resource limits of the kernel sandbox (docs/devices.md), their defaults, and the time budgets.

Plain data: the scorer sends them to the fork server as a dict (:func:`dataclasses.asdict`), the child
applies ``cpu_s``, ``mem_mb`` and ``nofile`` as rlimits (:func:`.layers.layer_rlimits`), and the scorer
enforces the time budgets itself (:mod:`.client`).

The time budgets are **kernel time** (:mod:`.kerneltime`): the child's CPU time, read from its
``/proc/<pid>/stat``, plus the wall time it spends asleep by its own choice. The time a child waits for a
core is not charged, so the same kernel gets the same verdict on an idle machine and on a loaded one: with
wall-clock budgets ``device-rumble-filter@13``'s ``cheat:notch-comb`` (5.8 s of kernel time in its
scoring) read 0 faulting renders near idle and 0 to 22 at loads of 8 to 14 on 2 cores; in kernel time it
reads 0 at both. The figures, and why:

* a **build** (the kernel's module body) gets :attr:`SandboxLimits.build_s` = 5 s. A module body defines
  functions and constants; the bundled oracles' take well under 1 ms.
* a **call** (one ``process`` or ``render``) gets ``max(call_floor_s, call_per_audio_s * seconds of
  audio it processes)`` = the larger of 5 s and twice the audio's duration, capped at ``wall_s``. The
  oracles' kernels run 100 to 1,000 times faster than real time (the dotted echo does 20 s of stereo in
  70-80 ms of a loaded 2-core machine), so an honest kernel stays some 500 times inside its budget; even a
  Python loop over samples (a few microseconds each) fits.
* a **scoring** (one kernel session, :func:`.client.kernel_session`) has :data:`SCORING_KERNEL_S` = 15 s
  of kernel time (every build and call of every device it builds, the determinism check's runs
  included); when it is used up, the call running is stopped and every later device faults at once with a
  message naming the budget. The device tasks' oracles spend 0.02-0.4 s of it. Together with the fault
  latch (a device that faults is not built again in the same scoring) this holds a scoring with hung
  kernels, however many, to 15 s of kernel time plus the scorer's own work: a mix task with a hung kernel
  on each of its five tracks took 28 s in all with a 20 s budget on a loaded machine, hence 15.

The **wall-clock backstops** hold what the accounting cannot see (a child in an uninterruptible disk
wait, a reply stopped part-way) and, where ``/proc/<pid>/stat`` cannot be read, the budgets themselves
are wall time (the faults and the session's ``confinement()`` say so):

* an **exchange** (one build or call, and the sending of its input) may take ``wall_s`` = 120 s of wall
  time. A call's budget is capped at the same figure, so only a call on 60 s of audio or more can meet
  the backstop before its budget, and within a scoring the 15 s of kernel time come first anyway.
* a **scoring** may spend :data:`SCORING_BACKSTOP_FACTOR` = 8 times its budget, 120 s, of wall time in
  kernels. Why 8: at the loads seen on the 2-core machine the bench is developed on (8 to 14), a kernel
  gets a quarter to a seventh of a core, so an honest scoring that uses most of its 15 s of kernel time
  takes 60 to 105 s of wall time and still passes; a scoring is never held longer than 120 s by kernels.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxLimits:
    """Per-device limits: CPU seconds (from the device's build), address space added on top of what the
    child maps when the device is built, open files, and the kernel time budgets: ``build_s`` for the
    module body, ``max(call_floor_s, call_per_audio_s * seconds of audio)`` per call, never more than
    ``wall_s``, which is also each exchange's wall-clock backstop.

    The rlimits hold ``cpu_s`` (hard: one second more) and ``mem_mb`` (hard: the same), see
    :func:`.layers.layer_rlimits`; the scorer's kernel time and wall-clock backstop hold whatever a kernel
    does."""

    cpu_s: int = 60
    mem_mb: int = 4096
    wall_s: float = 120.0
    nofile: int = 32
    build_s: float = 5.0
    call_floor_s: float = 5.0
    call_per_audio_s: float = 2.0

    def call_budget_s(self, audio_s: float) -> float:
        """The kernel time budget of one call that processes (or renders) ``audio_s`` seconds of audio."""
        return min(self.wall_s, max(self.call_floor_s, self.call_per_audio_s * max(audio_s, 0.0)))


DEFAULT_LIMITS = SandboxLimits()
#: Kernel time (CPU time and sleep, :mod:`.kerneltime`) one scoring (one kernel session) may spend in
#: kernels: builds and calls of all its devices.
SCORING_KERNEL_S = 15.0
#: The session's wall-clock backstop, as a multiple of its kernel time budget (8 x 15 s = 120 s).
SCORING_BACKSTOP_FACTOR = 8
