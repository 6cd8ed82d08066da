"""Scoring: the soft fall-off, goals times gates, rounding, and results that explain themselves."""

import math

import pytest

from pytest_overdub.bench.scoring import CheckResult, check_score, task_score


@pytest.mark.parametrize("value, target, soft, want", [
    (2.0, (1.5, 3.0), 1.5, 1.0),       # inside
    (1.5, (1.5, 3.0), 1.5, 1.0),       # on the edge is inside
    (0.75, (1.5, 3.0), 1.5, 0.5),      # half the soft width below
    (4.5, (1.5, 3.0), 1.5, 0.0),       # a full soft width above
    (9.0, (1.5, 3.0), 1.5, 0.0),       # far outside never goes negative
    (-0.6, (None, -0.5), 1.5, 1.0),    # open below
    (-0.4, (None, -0.5), 1.5, 1 - 0.1 / 1.5),
    (0.25, (None, -0.5), 1.5, 0.5),
    (1.0, (0.0, 0.0), None, 0.0),      # pass/fail without soft
    (0.0, (0.0, 0.0), None, 1.0),
    (math.inf, (0.0, 18.0), 6.0, 0.0),  # not finite scores 0
    (math.nan, (None, None), None, 0.0),
])
def test_check_score(value, target, soft, want):
    assert check_score(value, target, soft) == pytest.approx(want)


def _r(id, score, *, weight=None, gate=False, value=0.0):
    return CheckResult(id=id, label=id, kind="measure", value=value, unit="dB", target=(0, 1), soft=1,
                       weight=weight, gate=gate, score=score)


def test_goals_are_weighted_and_gates_multiply():
    # (3 x 1 + 2 x 0.5) / 5 = 0.8, times gates 0.5 and 1 -> 0.4
    results = [_r("a", 1.0, weight=3), _r("b", 0.5, weight=2), _r("g", 0.5, gate=True), _r("h", 1.0, gate=True)]
    assert task_score(results) == 0.4


def test_a_failed_gate_zeroes_the_task_and_scores_round_to_three_decimals():
    assert task_score([_r("a", 1.0, weight=1), _r("g", 0.0, gate=True)]) == 0.0
    assert task_score([_r("a", 1.0, weight=2), _r("b", 0.0, weight=1)]) == 0.667


def test_a_result_line_reads_like_the_spec():
    r = CheckResult(id="lift", label="Chorus loudness minus verse loudness", kind="measure", value=2.12,
                    unit="LU", target=(1.5, 3.0), soft=1.5, weight=3.0, gate=False, score=1.0)
    assert r.line() == "1.00 w3    Chorus loudness minus verse loudness: 2.12 LU (want [1.5, 3] ±1.5)"
    g = CheckResult(id="peaks", label="True peak of the mix", kind="measure", value=-0.61, unit="dBTP",
                    target=(None, -0.5), soft=1.5, weight=None, gate=True, score=1.0)
    assert g.line() == "1.00 gate  True peak of the mix: -0.61 dBTP (want […, -0.5] ±1.5)"
