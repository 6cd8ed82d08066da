"""Which variants a run takes: the fixed train sample, and ``<task>@A-B`` seed ranges.

Conventions:

* The sample of N train variants of a template is the first N of its train seeds (1-99) ordered by
  ``sha256("<task>@<seed>")``: a fixed list, the same on every machine and in every run, so everyone's
  "sample of 10" is the same ten variants, and a larger sample holds every smaller one. ``all`` is every
  train seed (ordered the same way).
* The self-check's default is a **draw** instead (:class:`Draw`): the first K of every train id of the
  bench's templates ordered by ``sha256("<task>@<seed>")`` (the same order as the per-template sample, so
  the ids drawn from a template are the first of its own sample). Cheap and costly templates are drawn
  alike, whatever their number, and the draw is the same on every machine and in every run.
* ``<task>@A-B`` names seeds A to B inclusive (``write-bassline@1000-1009``); each id is checked as a
  variant id (its template known, every seed in one split).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..errors import UsageError
from .variants import TRAIN_SEEDS, parse_variant_id, templates

#: The sample a run takes when not told otherwise (``--overdub-variants`` and ``overdub eval --variants``
#: override it): an agent's answers (a folder, ``overdub eval`` of the bench or a family) meet the fixed
#: sample of 10 train variants of each template; one answer file can answer no variant.
ANSWERS_SAMPLE = 10
#: The self-check's default: a draw of this many variant ids across every template (:class:`Draw`), the
#: largest that keeps ``pytest tasks --overdub-self-check -n 2`` under a minute on the 2-core development
#: machine with headroom (README, "Speed": the published tasks' CPU seconds plus the drawn variants',
#: over 2 workers).
SELF_CHECK_DRAW = 5


@dataclass(frozen=True)
class Draw:
    """``count`` variant ids drawn across every template (:func:`drawn_ids`), not ``count`` per template."""

    count: int


def default_count(*, self_check: bool = False, answers_folder: bool = False) -> int | Draw:
    """The sample a pytest run collects by default: the draw of :data:`SELF_CHECK_DRAW` ids in the
    self-check, :data:`ANSWERS_SAMPLE` per template for a folder of answers, none for one answer file."""
    if self_check:
        return Draw(SELF_CHECK_DRAW)
    return ANSWERS_SAMPLE if answers_folder else 0


def eval_default_count(tasks: str | None, *, split: str, families: tuple[str, ...]) -> int:
    """``overdub eval``'s sample per template when ``--variants`` is not given: :data:`ANSWERS_SAMPLE` when
    ``--tasks`` is ``all`` or a family on a split holding train seeds, none when it names ids (the run is
    what they name) or on the test split (never sampled)."""
    whole = tasks in (None, "all") or tasks in families
    return ANSWERS_SAMPLE if whole and split != "test" else 0


SEED_RANGE = re.compile(r"^(?P<task>[a-z0-9][a-z0-9-]*)@(?P<first>[0-9]{1,18})-(?P<last>[0-9]{1,18})$")
MAX_RANGE = 10_000


def sample_seeds(task: str, count: int | None) -> list[int]:
    """The first ``count`` train seeds of ``task`` in sha256 order (``None``: all 99)."""
    order = sorted(TRAIN_SEEDS, key=lambda s: _rank(f"{task}@{s}"))
    return order if count is None else order[:count]


def sample_ids(count: int | None, tasks: list[str] | None = None) -> list[str]:
    """The fixed sample's variant ids, ``count`` per template (of ``tasks``, else of every template)."""
    names = sorted(templates()) if tasks is None else [t for t in sorted(tasks) if t in templates()]
    return [f"{name}@{seed}" for name in names for seed in sample_seeds(name, count)]


def drawn_ids(count: int, tasks: list[str] | None = None) -> list[str]:
    """The draw: the first ``count`` of every train id of the templates (of ``tasks``, else every template)
    in ``sha256("<task>@<seed>")`` order, listed by template, then in that order."""
    names = sorted(templates()) if tasks is None else [t for t in sorted(tasks) if t in templates()]
    ids = sorted((f"{name}@{seed}" for name in names for seed in TRAIN_SEEDS), key=_rank)[:count]
    return sorted(ids, key=lambda vid: (vid.split("@")[0], _rank(vid)))


def run_ids(sample: int | Draw | None, tasks: list[str] | None = None) -> list[str]:
    """The ids a run collects for ``sample``: a :class:`Draw`, else that many per template (None: all)."""
    return drawn_ids(sample.count, tasks) if isinstance(sample, Draw) else sample_ids(sample, tasks)


def _rank(variant_id: str) -> str:
    return hashlib.sha256(variant_id.encode()).hexdigest()


def variant_count(text: str, *, what: str) -> int | None:
    """``N`` (0-99) or ``all`` (None), as ``--variants`` and ``--overdub-variants`` take it."""
    if text == "all":
        return None
    if text.isdigit() and int(text) <= len(TRAIN_SEEDS):
        return int(text)
    raise UsageError(f"{what}={text}: want a number of variants per template, 0-{len(TRAIN_SEEDS)}, or all")


def expand_ids(text: str) -> list[str]:
    """``<task>@A-B`` -> its variant ids; any other text -> itself (one id, checked by the caller)."""
    m = SEED_RANGE.match(text)
    if m is None:
        return [text]
    first, last = int(m.group("first")), int(m.group("last"))
    if last < first or last - first >= MAX_RANGE:
        raise UsageError(f"{text}: want <task>@FIRST-LAST with FIRST <= LAST and at most {MAX_RANGE} seeds")
    ids = [f"{m.group('task')}@{seed}" for seed in range(first, last + 1)]
    for vid in ids:
        parse_variant_id(vid)
    return ids
