"""The check kinds: one class per kind, registered once, each computing its own value (docs/checks.md)."""

from __future__ import annotations

from typing import Literal, get_args

import pytest

from pytest_overdub.bench.model import CHECK_CLASSES, CHECK_KINDS, Check, CheckBase, kind_of
from pytest_overdub.bench.tasks import bundled_bench

from freshimports import modules_loaded


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _subclasses(sub)
    return out


def test_every_kind_is_one_registered_class_with_its_own_value():
    assert len(set(CHECK_KINDS)) == len(CHECK_KINDS) == len(CHECK_CLASSES)
    assert CHECK_KINDS == tuple(kind_of(c) for c in CHECK_CLASSES)
    assert [c.__name__ for c in CHECK_CLASSES if "value" not in vars(c)] == []


def test_the_union_is_the_registry_and_no_kind_class_is_left_out():
    assert get_args(get_args(Check)[0]) == CHECK_CLASSES
    declared = {c for c in _subclasses(CheckBase) if "kind" in c.model_fields and c.__module__ == CheckBase.__module__}
    assert declared == set(CHECK_CLASSES)


def test_a_class_declaring_two_kinds_is_refused():
    class Two(CheckBase):
        kind: Literal["a", "b"]

    with pytest.raises(TypeError, match="exactly one"):
        kind_of(Two)


def test_every_bundled_check_is_read_as_its_kinds_class():
    bench = bundled_bench()
    # a transcription task's checks are not read from its file: they are derived, the same figures for every
    # part (pytest_overdub/transcribe/task.py), so they are no kind a task file can name
    tasks = [bench.task(t) for t in bench.task_ids()]
    wrong = [f"{t.id}::{c.id}" for t in tasks if t.family != "transcription" for c in t.checks
             if type(c) not in CHECK_CLASSES or kind_of(type(c)) != c.kind]
    assert wrong == []


def test_reading_every_task_loads_no_numpy():
    """The check classes carry their value code; loading the tasks (the plugin collects them) must still
    import nothing heavy: the audio and probe machinery load when a value is computed."""
    statements = ("from pytest_overdub.bench.tasks import bundled_bench; b = bundled_bench(); "
                  "[b.task(t) for t in b.task_ids()]; import pytest_overdub.bench.checks")
    assert modules_loaded(statements, roots=("numpy", "scipy", "numba")) == []
