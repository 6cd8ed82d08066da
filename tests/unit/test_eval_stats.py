"""The statistics of an evaluation run against hand-computed and published values, and their invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_overdub.evaluate.stats import (
    Z95, bootstrap_mean_ci, paired_bootstrap_diff_ci, pass_hat_k, seed_from, sign_test, wilson_interval,
)


@pytest.mark.parametrize("c, n, low, high", [
    # Newcombe (1998), Statistics in Medicine 17:857, table I, method 3 (Wilson score), and by hand:
    # 0/10: high = z²/n / (1 + z²/n) = 0.38415 / 1.38415.
    (0, 10, 0.0, 0.2775),
    (5, 10, 0.2366, 0.7634),
    (10, 10, 0.7225, 1.0),
    (81, 263, 0.2553, 0.3662),
])
def test_wilson_interval_matches_published_values(c, n, low, high):
    lo, hi = wilson_interval(c, n)
    assert lo == pytest.approx(low, abs=5e-5) and hi == pytest.approx(high, abs=5e-5)


def test_wilson_ends_are_exact_at_zero_and_all_successes():
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 10)[1] == pytest.approx((Z95 ** 2 / 10) / (1 + Z95 ** 2 / 10), rel=1e-12)


@pytest.mark.parametrize("c, n", [(0, 0), (3, 2), (-1, 4)])
def test_wilson_refuses_no_trials_and_impossible_counts(c, n):
    with pytest.raises(ValueError):
        wilson_interval(c, n)


@given(n=st.integers(1, 500), data=st.data())
def test_wilson_interval_holds_the_proportion_inside_zero_one(n, data):
    c = data.draw(st.integers(0, n))
    lo, hi = wilson_interval(c, n)
    assert 0.0 <= lo <= c / n <= hi <= 1.0


def test_pass_hat_k_by_hand():
    # C(3,k)/C(5,k): 3/5, 3/10, 1/10, 0, 0
    assert pass_hat_k(3, 5) == {1: 0.6, 2: 0.3, 3: 0.1, 4: 0.0, 5: 0.0}
    # C(4,k)/C(5,k): 4/5, 6/10, 4/10, 1/5, 0
    assert pass_hat_k(4, 5) == pytest.approx({1: 0.8, 2: 0.6, 3: 0.4, 4: 0.2, 5: 0.0})
    assert pass_hat_k(2, 2) == {1: 1.0, 2: 1.0}
    assert pass_hat_k(0, 0) == {}


@given(n=st.integers(1, 40), data=st.data())
def test_pass_hat_k_starts_at_c_over_n_and_never_rises(n, data):
    c = data.draw(st.integers(0, n))
    values = list(pass_hat_k(c, n).values())
    assert values[0] == pytest.approx(c / n)
    assert all(b <= a for a, b in zip(values, values[1:]))
    assert values[-1] == (1.0 if c == n else 0.0)


def test_sign_test_nine_of_ten():
    # 2 · (C(10,0) + C(10,1)) / 2^10 = 22/1024
    assert sign_test([1.0] * 9 + [-0.5]) == (0.021484375, 9, 1, 0)


def test_sign_test_drops_ties_and_is_one_without_differences():
    assert sign_test([0.2, 0.0, 0.0, -0.1]) == (1.0, 1, 1, 2)
    assert sign_test([0.0, 0.0]) == (1.0, 0, 0, 2)
    assert sign_test([]) == (1.0, 0, 0, 0)
    assert sign_test([0.1] * 5)[0] == 0.0625  # 5 of 5 never reaches 0.05


@given(pos=st.integers(0, 60), neg=st.integers(0, 60))
def test_sign_test_agrees_with_scipy_binomtest(pos, neg):
    from scipy.stats import binomtest

    p = sign_test([1.0] * pos + [-1.0] * neg)[0]
    assert p == sign_test([1.0] * neg + [-1.0] * pos)[0]
    if pos + neg:
        assert p == pytest.approx(binomtest(pos, pos + neg, 0.5).pvalue, rel=1e-9)


def test_bootstrap_of_constant_scores_is_that_constant():
    # 0.75 is exact in binary, so every resampled mean is exactly 0.75
    assert bootstrap_mean_ci([[0.75, 0.75, 0.75], [0.75]], seed=1) == (0.75, 0.75)
    assert bootstrap_mean_ci([[0.7, 0.7, 0.7]], seed=1) == pytest.approx((0.7, 0.7), abs=1e-15)


def test_bootstrap_resamples_tasks():
    # two tasks of one trial each, 0 and 1: resampled means are 0, 1/2, 1 with chances 1/4, 1/2, 1/4, so
    # the 2.5th and 97.5th percentiles are exactly 0 and 1 (resampling trials only would give [0.5, 0.5]).
    assert bootstrap_mean_ci([[0.0], [1.0]], seed=7) == (0.0, 1.0)


def test_bootstrap_resamples_trials_within_a_task():
    # one task, trials 0 and 1: the task is always itself, its resampled mean is 0, 1/2 or 1 (resampling
    # tasks only would give [0.5, 0.5]).
    assert bootstrap_mean_ci([[0.0, 1.0]], seed=7) == (0.0, 1.0)


def test_bootstrap_is_seeded_and_near_the_normal_interval():
    tasks = [[0.1 * ((i * 7 + j * 3) % 10) for j in range(5)] for i in range(30)]
    a = bootstrap_mean_ci(tasks, seed=seed_from("x"))
    assert a == bootstrap_mean_ci(tasks, seed=seed_from("x"))
    means = [sum(t) / len(t) for t in tasks]
    mean = sum(means) / len(means)
    assert a[0] < mean < a[1]
    # the two-stage bootstrap is at least as wide as the tasks-only normal interval (it adds trial noise)
    se = math.sqrt(sum((m - mean) ** 2 for m in means) / (len(means) - 1) / len(means))
    assert a[1] - a[0] >= 0.9 * 2 * 1.96 * se


def test_seed_from_is_stable():
    assert seed_from("mean_score", "mix-chorus-lift") == seed_from("mean_score", "mix-chorus-lift")
    assert seed_from("a", "b") == 9086284064639102403  # sha256("a\nb")[:8], big-endian: fixed forever


def test_paired_bootstrap_of_a_shift_is_that_shift():
    a = [[0.5, 0.6, 0.9], [0.2, 0.3]]
    b = [[x - 0.1 for x in t] for t in a]
    lo, hi = paired_bootstrap_diff_ci(list(zip(a, b)), seed=3)
    assert lo == pytest.approx(0.1) and hi == pytest.approx(0.1)


def test_paired_bootstrap_refuses_unequal_pairs():
    with pytest.raises(ValueError):
        paired_bootstrap_diff_ci([([0.1, 0.2], [0.1])], seed=0)


scores = st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]), min_size=1, max_size=4), min_size=1,
                  max_size=6)


@given(tasks=scores, seed=st.integers(0, 2 ** 32))
def test_bootstrap_interval_lies_between_the_extreme_task_values(tasks, seed):
    lo, hi = bootstrap_mean_ci(tasks, seed=seed, resamples=500)
    assert min(min(t) for t in tasks) <= lo <= hi <= max(max(t) for t in tasks)


@given(tasks=scores, shift=st.sampled_from([-0.5, -0.1, 0.0, 0.3]), seed=st.integers(0, 2 ** 32))
def test_paired_bootstrap_swapped_is_negated(tasks, shift, seed):
    other = [[min(1.0, max(0.0, x + shift * (i % 2))) for i, x in enumerate(t)] for t in tasks]
    ab = paired_bootstrap_diff_ci(list(zip(tasks, other)), seed=seed, resamples=500)
    ba = paired_bootstrap_diff_ci(list(zip(other, tasks)), seed=seed, resamples=500)
    assert ab == pytest.approx((-ba[1], -ba[0]), abs=1e-12)
