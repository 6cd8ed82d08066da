"""Where a bench keeps its files (docs/formats.md): ``tasks/``, ``songs/``, ``oracles/`` and ``near_misses/``.

Answer files, by name: ``oracles/<task>.json`` (the oracle), ``oracles/<task>.alt-<what>.json``
(alternative correct answers), ``near_misses/<task>.cheat-<what>.json`` (cheats: answers that game the
checks) and every other ``near_misses/<task>.<what>.json`` (near misses). This module reads no task: the
templates read the published answers through it without importing the task loader (which resolves
variants through the templates).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ALT = "alt-"  # oracles/<task>.alt-<what>.json
CHEAT = "cheat-"  # near_misses/<task>.cheat-<what>.json


def bundled_root() -> Path:
    """The bench shipped with the package: the checkout's directories, else the wheel's data copy."""
    here = Path(__file__).resolve().parent.parent
    checkout = here.parent
    if (checkout / "tasks").is_dir() and (checkout / "songs").is_dir():
        return checkout
    return here / "data"


@dataclass(frozen=True)
class BenchLayout:
    """A bench directory's files."""

    root: Path

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    def task_paths(self) -> list[Path]:
        return sorted(self.tasks_dir.glob("*.json"))

    def task_ids(self) -> list[str]:
        return [p.stem for p in self.task_paths()]

    def oracle_path(self, task_id: str) -> Path:
        return self.root / "oracles" / f"{task_id}.json"

    def alternative_paths(self, task_id: str) -> list[Path]:
        """Other correct answers: ``oracles/<task>.alt-<what>.json``."""
        return sorted((self.root / "oracles").glob(f"{task_id}.{ALT}*.json"))

    def near_miss_paths(self, task_id: str) -> list[Path]:
        """Plausible wrong answers: ``near_misses/<task>.<what>.json``, cheats excepted."""
        return [p for p in sorted((self.root / "near_misses").glob(f"{task_id}.*.json"))
                if not p.name.startswith(f"{task_id}.{CHEAT}")]

    def cheat_paths(self, task_id: str) -> list[Path]:
        """Answers that game the checks: ``near_misses/<task>.cheat-<what>.json``."""
        return sorted((self.root / "near_misses").glob(f"{task_id}.{CHEAT}*.json"))
