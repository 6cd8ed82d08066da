"""Figures of read-only arrays kept by identity in a scorer process (measure/kept.py): kept only for an
array none of whose memory can change, only in the scorer runtime, and a kept figure is the fresh one."""

import numpy as np
import pytest

from pytest_overdub import runtime
from pytest_overdub.measure import kept as kept_module
from pytest_overdub.measure.kept import clear, kept


@pytest.fixture
def scorer(monkeypatch):
    monkeypatch.setattr(runtime, "active", lambda: True)
    clear()
    yield
    clear()


def _counting():
    calls = []

    def compute():
        calls.append(1)
        return np.arange(3.0)
    return calls, compute


def _frozen(x: np.ndarray) -> np.ndarray:
    x.setflags(write=False)
    return x


def test_a_read_only_array_keeps_its_figure_by_name(scorer):
    x = _frozen(np.ones((2, 10)))
    calls, compute = _counting()
    first = kept(x, "f 48000", compute)
    assert kept(x, "f 48000", compute) is first and len(calls) == 1
    assert not first.flags.writeable  # a kept array cannot be changed by a reader
    kept(x, "f 44100", compute)  # another name is another figure
    assert len(calls) == 2
    kept(_frozen(np.ones((2, 10))), "f 48000", compute)  # equal samples, another array: computed
    assert len(calls) == 3
    clear()
    kept(x, "f 48000", compute)
    assert len(calls) == 4


def test_nothing_is_kept_for_memory_that_can_change_or_outside_the_scorer(scorer, monkeypatch):
    calls, compute = _counting()
    writable = np.ones((2, 10))
    base = np.ones((2, 10))
    view = base[:, 2:]
    view.setflags(write=False)  # read-only, but its base can still be written
    for x in (writable, writable, view, view, [1.0, 2.0], [1.0, 2.0]):
        kept(x, "f", compute)
    assert len(calls) == 6
    monkeypatch.setattr(runtime, "active", lambda: False)
    x = _frozen(np.ones(4))
    kept(x, "f", compute)
    kept(x, "f", compute)
    assert len(calls) == 8


def test_a_freed_arrays_figure_is_never_found_by_another(scorer):
    calls, compute = _counting()
    for _ in range(20):  # ids of freed arrays are reused: the weak reference tells them apart
        kept(_frozen(np.ones(5)), "f", compute)
    assert len(calls) == 20


def test_the_latency_read_with_the_sources_kept_fft_is_the_fresh_one(scorer):
    from pytest_overdub.measure.compare import latency_samples

    rng = np.random.default_rng(2)
    source = _frozen(rng.standard_normal((2, 30000)))
    answers = [np.concatenate([np.zeros((2, lag)), 0.7 * source[:, :30000 - lag]], axis=1) for lag in (37, 5, 0)]
    fresh = [latency_samples(a, source.copy(), sr=48000) for a in answers]  # a writable copy: computed
    assert fresh == [37, 5, 0]  # a late answer reads a positive lag
    assert [latency_samples(a, source, sr=48000) for a in answers] == fresh
    assert len(kept_module._KEPT) == 1  # one FFT of the source served the three answers
