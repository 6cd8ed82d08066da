"""The statistics of an evaluation run: pure functions over counts and per-task score arrays.

Conventions:

* A *trial* is one run of the agent on one task; ``c`` of ``n`` trials succeeded (score at or over the
  pass line).
* Intervals are 95%: ``(low, high)`` floats in the units of the statistic.
* The bootstraps resample **tasks, then trials within each chosen task** (a two-stage, clustered
  bootstrap: tasks are the units the bench samples, trials the repeated measures on each), and take the
  statistic as the mean over the chosen tasks of each task's mean: the same "mean over tasks" the
  summary reports. :data:`RESAMPLES` resamples, the percentile interval, and a generator seeded by the
  caller from a stable id (:func:`seed_from`), so the same run gives the same interval on every machine.
* The sign test is exact (binomial with p = 1/2), two-sided, ties dropped.

numpy is imported here at module level: this module is loaded only by ``overdub report``/``compare``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

#: The two-sided 95% normal quantile, Φ⁻¹(0.975).
Z95 = 1.959963984540054
#: Resamples per bootstrap; fixed, so the interval of a run never changes.
RESAMPLES = 10_000
#: Resamples drawn per block (bounds the memory of one block to about 8 × this × tasks × trials bytes).
_BLOCK = 1000


def wilson_interval(successes: int, n: int, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for the proportion ``successes / n``.

    Raises ValueError when ``n`` is 0 (no trial: there is no proportion to bound) or the counts are
    impossible. At 0 successes the low end is exactly 0, at n exactly 1.
    """
    _check_counts(successes, n)
    if n == 0:
        raise ValueError("Wilson interval of 0 trials: there is no proportion to bound")
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def pass_hat_k(successes: int, n: int) -> dict[int, float]:
    """pass^k = C(c, k) / C(n, k) for k = 1..n, as tau-bench defines it: the chance that k trials drawn
    without replacement from the n all succeeded (pass^1 = c/n). Empty for n = 0."""
    _check_counts(successes, n)
    return {k: float(Fraction(math.comb(successes, k), math.comb(n, k))) for k in range(1, n + 1)}


def _check_counts(successes: int, n: int) -> None:
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"counts {successes} of {n}: need 0 <= successes <= n")


def seed_from(*parts: str) -> int:
    """A 64-bit seed from strings (e.g. the run's sorted task ids): stable across machines and runs."""
    return int.from_bytes(hashlib.sha256("\n".join(parts).encode()).digest()[:8], "big")


def bootstrap_mean_ci(per_task: Sequence[Sequence[float]], *, seed: int, resamples: int = RESAMPLES,
                      level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean over tasks of each task's mean value.

    ``per_task`` holds one array of trial values per task (tasks without trials must be left out). Each
    resample draws as many tasks as there are, with replacement, and for each drawn task as many of its
    trials as it has, with replacement.
    """
    arrays = [np.asarray(a, dtype=float) for a in per_task]
    if not arrays or any(a.size == 0 for a in arrays):
        raise ValueError("bootstrap needs at least one task, and at least one trial in each task")
    stats = _two_stage_means(arrays, seed=seed, resamples=resamples)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def _two_stage_means(arrays: list[np.ndarray], *, seed: int, resamples: int) -> np.ndarray:
    """``resamples`` bootstrap values of the mean over tasks of the per-task mean (see module docstring)."""
    n_tasks = len(arrays)
    counts = np.array([a.size for a in arrays])
    width = int(counts.max())
    padded = np.zeros((n_tasks, width))
    for i, a in enumerate(arrays):
        padded[i, :a.size] = a
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    for start in range(0, resamples, _BLOCK):
        b = min(_BLOCK, resamples - start)
        tasks = rng.integers(0, n_tasks, size=(b, n_tasks))  # the tasks drawn
        n = counts[tasks]  # each drawn task's trial count
        trials = np.floor(rng.random((b, n_tasks, width)) * n[..., None]).astype(np.int64)
        values = padded[tasks[..., None], trials]
        used = np.arange(width)[None, None, :] < n[..., None]
        task_means = np.where(used, values, 0.0).sum(axis=2) / n
        out[start:start + b] = task_means.mean(axis=1)
    return out


def paired_bootstrap_diff_ci(pairs: Sequence[tuple[Sequence[float], Sequence[float]]], *, seed: int,
                             resamples: int = RESAMPLES, level: float = 0.95) -> tuple[float, float]:
    """Bootstrap interval of mean(A) − mean(B) over tasks, on paired trials.

    ``pairs`` holds, per task, A's and B's values for the same trials in the same order. Tasks, then
    trial pairs within each task, are resampled together, so the interval is that of the mean over tasks
    of each task's mean paired difference.
    """
    diffs = []
    for a, b in pairs:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if a.shape != b.shape:
            raise ValueError(f"paired arrays differ in length: {a.size} and {b.size}")
        diffs.append(a - b)
    return bootstrap_mean_ci(diffs, seed=seed, resamples=resamples, level=level)


def sign_test(differences: Sequence[float]) -> tuple[float, int, int, int]:
    """The exact two-sided sign test that positive and negative differences are equally likely.

    Returns ``(p, positives, negatives, ties)``. Zero differences (ties) are dropped; with nothing left,
    p = 1. p = min(1, 2 · P(X ≤ min(positives, negatives))) for X ~ Binomial(positives + negatives, 1/2).
    """
    pos = sum(1 for d in differences if d > 0)
    neg = sum(1 for d in differences if d < 0)
    ties = len(differences) - pos - neg
    m = pos + neg
    if m == 0:
        return 1.0, pos, neg, ties
    tail = Fraction(sum(math.comb(m, i) for i in range(min(pos, neg) + 1)), 2 ** m)
    return float(min(Fraction(1), 2 * tail)), pos, neg, ties
