"""Per-child resource limits of the kernel sandbox (docs/devices.md) and their defaults.

Plain data: the scorer sends them to the fork server as a dict (:func:`dataclasses.asdict`), the child
applies them as rlimits (:func:`.layers.layer_rlimits`), and the scorer enforces ``wall_s`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxLimits:
    """Per-device limits: CPU seconds (from the device's build), address space added on top of what the
    child maps when the device is built, wall clock per call (build or one process/render), and open files.

    The soft rlimits hold these; the hard ones leave headroom (CPU: ``cpu_s`` more; address space:
    :data:`REUSE_HEADROOM_MB` more) so that a child reused for the next device of a scoring can give it
    full limits again. A kernel that raises its own soft limits reaches at most the hard ones; the scorer's
    wall clock holds whatever it does."""

    cpu_s: int = 60
    mem_mb: int = 4096
    wall_s: float = 120.0
    nofile: int = 32


DEFAULT_LIMITS = SandboxLimits()
#: Address space a child may keep (freed heap, a kernel's leftovers) and still serve another device.
REUSE_HEADROOM_MB = 256
