"""Per-child resource limits of the kernel sandbox (docs/devices.md), their defaults, and the time budgets.

Plain data: the scorer sends them to the fork server as a dict (:func:`dataclasses.asdict`), the child
applies ``cpu_s``, ``mem_mb`` and ``nofile`` as rlimits (:func:`.layers.layer_rlimits`), and the scorer
enforces the wall-clock budgets itself (:mod:`.client`).

The time budgets, and why these figures (``docs/devices.md`` states them for authors):

* a **build** (the kernel's module body) gets :attr:`SandboxLimits.build_s` = 5 s. A module body defines
  functions and constants; the bundled oracles' take well under 1 ms.
* a **call** (one ``process`` or ``render``) gets ``max(call_floor_s, call_per_audio_s * seconds of
  audio it processes)`` = the larger of 5 s and twice the audio's duration, capped at ``wall_s``. The
  oracles' kernels run 100 to 1,000 times faster than real time (the dotted echo does 20 s of stereo in
  70-80 ms of a loaded 2-core machine), so an honest kernel stays some 500 times inside its budget; even a
  Python loop over samples (a few microseconds each) fits.
* a **scoring** (one kernel session, :func:`.client.kernel_session`) has :data:`SCORING_KERNEL_S` = 15 s
  of wall time in kernels (every build and call of every device it builds, the determinism check's runs
  included); when it is used up, the call running is stopped and every later device faults at once with a
  message naming the budget. The device tasks' oracles spend 0.02-0.4 s of it at a load of 5-9 on 2 cores.
  Together with the fault latch (a device that faults is not built again in the same scoring) this holds
  a scoring with hung kernels, however many, to about 15 s plus the scorer's own work: a mix task with a
  hung kernel on each of its five tracks took 28 s in all with a 20 s budget on a loaded machine, hence 15.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxLimits:
    """Per-device limits: CPU seconds (from the device's build), address space added on top of what the
    child maps when the device is built, open files, and the wall clock: ``build_s`` for the module body,
    ``max(call_floor_s, call_per_audio_s * seconds of audio)`` per call, never more than ``wall_s``.

    The rlimits hold ``cpu_s`` (hard: one second more) and ``mem_mb`` (hard: the same), see
    :func:`.layers.layer_rlimits`; the scorer's wall clock holds whatever a kernel does."""

    cpu_s: int = 60
    mem_mb: int = 4096
    wall_s: float = 120.0
    nofile: int = 32
    build_s: float = 5.0
    call_floor_s: float = 5.0
    call_per_audio_s: float = 2.0

    def call_budget_s(self, audio_s: float) -> float:
        """The wall-clock budget of one call that processes (or renders) ``audio_s`` seconds of audio."""
        return min(self.wall_s, max(self.call_floor_s, self.call_per_audio_s * max(audio_s, 0.0)))


DEFAULT_LIMITS = SandboxLimits()
#: Kernel time (CPU time and sleep, :mod:`.kerneltime`) one scoring (one kernel session) may spend in
#: kernels: builds and calls of all its devices.
SCORING_KERNEL_S = 15.0
#: The session's wall-clock backstop, as a multiple of its kernel time budget (8 x 15 s = 120 s).
SCORING_BACKSTOP_FACTOR = 8
