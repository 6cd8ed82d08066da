"""The mix-master-loudness template's own target: what a clean master of the starting mix reaches, so the
answers a mastering engineer would give pass (tests/unit/test_variants.py holds the validity rules)."""

from __future__ import annotations

import pytest

from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.bench.templates.base import Answer
from pytest_overdub.bench.templates.master_loudness import CEILING_DBTP, limiter_ops
from pytest_overdub.bench.variant_rules import score_answer
from pytest_overdub.bench.variants import variant

VID = "mix-master-loudness@4"
BUS_COMP = {"type": "insert.add", "track": "master",
            "insert": {"device": "core.comp", "params": {"threshold": -10, "ratio": 1.5, "attack": 30, "release": 200}}}


def _drive(v) -> float:
    return v.oracle.ops[-1]["insert"]["params"]["gain"]


def test_the_target_is_stated_and_is_the_solved_masters_loudness():
    v = variant(VID)
    lo, hi = next(c for c in v.task.checks if c.id == "lufs").target
    assert hi - lo == 2 and f"about {(lo + hi) / 2:g} LUFS" in v.task.instruction
    assert -19 <= lo + 1 <= -12  # quieter than the published -11: the generated mix's drums peak high


@pytest.mark.parametrize("name, ops", [
    ("gentle bus compressor then a limiter", lambda d: limiter_ops(d + 0.6, before=[BUS_COMP])),
    ("a limiter into -1 dBTP, a little harder", lambda d: [
        {"type": "master.set", "patch": {"gain": 0}},
        {"type": "insert.add", "track": "master",
         "insert": {"device": "core.limiter", "params": {"gain": d + 0.5, "ceiling": CEILING_DBTP + 0.2}}}]),
])
def test_a_mastering_engineers_answers_pass(name, ops):
    v = variant(VID)
    r = score_answer(v, Answer("alt", name, ops(_drive(v))), bundled_bench(), trusted=True)
    assert r.score >= 0.9, [c.line() for c in r.checks]
