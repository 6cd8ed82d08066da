"""What a task template is (bench/variants.py instantiates them): no template imports the variants."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...generate.build import Generated


@dataclass(frozen=True)
class Answer:
    """An oracle, near miss or cheat of a variant: ``ops`` in any submission form, the checks it fails."""

    name: str
    why: str
    ops: list[Any]
    fails: tuple[str, ...] = ()

    @property
    def cheat(self) -> bool:
        return self.name.startswith("cheat-")


@dataclass(frozen=True)
class Template:
    """``build(made, variant_id)`` returns the task's fields (a dict the Task model reads) and its answers."""

    id: str
    tier: int
    build: Callable[[Generated, str], tuple[dict[str, Any], Answer, tuple[Answer, ...]]]
