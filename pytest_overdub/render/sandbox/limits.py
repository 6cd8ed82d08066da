"""Per-child resource limits of the kernel sandbox (SPEC section 10) and their defaults.

Plain data: the scorer sends them to the fork server as a dict (:func:`dataclasses.asdict`), the child
applies them as rlimits (:func:`.layers.layer_rlimits`), and the scorer enforces ``wall_s`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxLimits:
    """Per-child limits: CPU seconds (over the child's life), address space added on top of the warm
    server's, wall clock per call (build or one process/render), and open files."""

    cpu_s: int = 60
    mem_mb: int = 4096
    wall_s: float = 120.0
    nofile: int = 32


DEFAULT_LIMITS = SandboxLimits()
