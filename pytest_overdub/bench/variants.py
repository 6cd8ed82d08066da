"""Task variants: a template instantiated on a generated song, with the id ``<task>@<seed>``.

Conventions:

* A variant id is ``<task>@<seed>`` (``write-bassline@17``): ``<task>`` a template's id (the published
  task it generalises) and ``<seed>`` a whole number. Seeds 1-99 are the public train split; seeds from
  1000 up are the test split, generated on demand and never written into the repository. Seed 0 and
  100-999 belong to no split and are refused, so a result always names its split.
* A variant is a function of its id alone: its song is ``generate(seed, template.tier)`` (the variant's
  ``task.song`` is the generated song's id, ``gen-t<tier>-<seed>``, which :class:`~.tasks.Bench` generates
  on demand), and its setup, checks, instruction, oracle and near misses are computed from that song's
  ground truth (:mod:`pytest_overdub.generate`).
* Near misses and cheats are held to the published rules (docs/validity.md): every variant's oracle
  scores at least 0.9, doing nothing and every near miss or cheat under 0.5, each failing the checks it
  names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..errors import TaskError
from ..generate.build import Generated
from ..song.model import Song
from .model import Task
from .templates import TEMPLATES
from .templates.base import Answer, Template

VARIANT_ID = re.compile(r"^(?P<task>[a-z0-9][a-z0-9-]*)@(?P<seed>[0-9]{1,18})$")
GENERATED_SONG = re.compile(r"^gen-t(?P<tier>[0-9])-(?P<seed>[0-9]{1,18})$")
TRAIN_SEEDS = range(1, 100)
TEST_FIRST_SEED = 1000


@dataclass(frozen=True)
class Variant:
    id: str
    seed: int
    split: str
    made: Generated
    task: Task
    oracle: Answer
    near_misses: tuple[Answer, ...]


def split_of(seed: int) -> str:
    """``"train"`` for seeds 1-99, ``"test"`` from 1000 up; any other seed is refused."""
    if seed in TRAIN_SEEDS:
        return "train"
    if seed >= TEST_FIRST_SEED:
        return "test"
    raise TaskError(f"seed {seed}: not in a split; train seeds are 1-99, test seeds 1000 and up")


def parse_variant_id(text: str) -> tuple[str, int]:
    """``"write-bassline@17"`` -> ``("write-bassline", 17)``, refusing unknown templates and stray seeds."""
    m = VARIANT_ID.match(text)
    if m is None:
        raise TaskError(f"variant {text!r}: expected <task>@<seed>, e.g. write-bassline@17")
    name, seed = m.group("task"), int(m.group("seed"))
    if name not in templates():
        raise TaskError(f"variant {text!r}: no template {name!r} (templates: {', '.join(templates())})")
    split_of(seed)
    return name, seed


def is_variant_id(text: str) -> bool:
    return "@" in text


def templates():
    """Template id -> :class:`~.templates.base.Template`."""
    return TEMPLATES


def train_ids(task: str | None = None) -> list[str]:
    """Every train variant id (of one template, or of all)."""
    names = [task] if task is not None else list(templates())
    return [f"{name}@{seed}" for name in names for seed in TRAIN_SEEDS]


@lru_cache(maxsize=64)
def variant(variant_id: str) -> Variant:
    """The variant ``<task>@<seed>``: its task, generated song and answers."""
    from ..generate import generate

    name, seed = parse_variant_id(variant_id)
    template = templates()[name]
    made = generate(seed, template.tier)
    fields, oracle, misses = template.build(made, variant_id)
    split = split_of(seed)
    model: Any = Task
    if fields.get("family") == "transcription":
        from ..transcribe.task import TranscriptionTask as model  # notes in, no song out
    task = model.model_validate({"id": variant_id, "song": made.song.id, **fields, "split": split})
    _as_declared(template, seed, task, misses)
    return Variant(id=variant_id, seed=seed, split=split, made=made, task=task, oracle=oracle,
                   near_misses=misses)


def _as_declared(template: Template, seed: int, task: Any, misses: tuple[Answer, ...]) -> None:
    """Refuse a build that is not what its template declares (what a run collected without building it)."""
    built = {"near misses and cheats": tuple(m.name for m in misses), "family": task.family,
             "answer files": tuple(a.name for a in task.answer) if task.is_audio else ()}
    declared = {"near misses and cheats": template.misses, "family": template.family,
                "answer files": template.answer}
    for what, value in built.items():
        if value != declared[what]:
            raise TaskError(f"template {template.id}, seed {seed}: built {what} {_listed(value)}; the template "
                            f"declares {_listed(declared[what])} (pytest_overdub/bench/templates/__init__.py)")


def _listed(value: str | tuple[str, ...]) -> str:
    return f"[{', '.join(value)}]" if isinstance(value, tuple) else repr(value)


def generated_song(name: str) -> Song | None:
    """The generated song named ``gen-t<tier>-<seed>``, or None for any other name."""
    m = GENERATED_SONG.match(name)
    if m is None:
        return None
    from ..generate import MAX_TIER, generate

    tier = int(m.group("tier"))
    if not 1 <= tier <= MAX_TIER:
        raise TaskError(f"song {name!r}: tier {tier} is not 1..{MAX_TIER}")
    return generate(int(m.group("seed")), tier).song

