"""What a scorer process reuses between scorings (a variant's rules all render and measure the same starting
song and read the same audio inputs) is keyed by content, never by a name: two songs or inputs that share an
id but differ get their own values, the repeat rule starts from nothing, and the shortcut in the scope gate's
music test gives numpy's own medians, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_overdub import runtime
from pytest_overdub.bench.checks import measure_scope
from pytest_overdub.bench.context import PROCESS_MEMO, Context, clear_process_caches
from pytest_overdub.bench.scope import sliding_medians
from pytest_overdub.song.model import song_from_data


def test_sliding_medians_are_numpys_medians_bit_for_bit():
    rng = np.random.default_rng(7)
    f = np.arange(8193) * 48000 / 16384
    idx = np.flatnonzero((f >= 40) & (f <= 12000))
    lo = np.searchsorted(f, f[idx] * 2 ** (-1 / 3))
    hi = np.searchsorted(f, f[idx] * 2 ** (1 / 3), side="right")
    for p in (rng.random(8193) ** 4, np.round(rng.random(8193) * 4) / 4, np.zeros(8193)):  # spread, ties, flat
        want = np.array([np.median(p[a:b]) for a, b in zip(lo, hi)])
        assert sliding_medians(p, lo, hi).tobytes() == want.tobytes()
    # even and odd windows, windows that jump past each other, and one holding a NaN (numpy's own path)
    p = rng.random(50)
    lo, hi = np.array([0, 0, 1, 3, 20, 20]), np.array([1, 4, 4, 9, 25, 50])
    want = np.array([np.median(p[a:b]) for a, b in zip(lo, hi)])
    assert sliding_medians(p, lo, hi).tobytes() == want.tobytes()
    p[21] = np.nan
    assert np.isnan(sliding_medians(p, lo, hi)[4:]).all() and not np.isnan(sliding_medians(p, lo, hi)[:4]).any()


def _song(velocity: float):
    """A one-bar song; every song here has the same id, track id and name, and differs in one velocity."""
    notes = [{"p": 48, "t": t, "d": 0.5, "v": velocity} for t in range(4)]
    return song_from_data({"format": "overdub/0", "id": "same-name", "tempo": 120, "tracks": [
        {"id": "t_bass", "name": "Bass", "instrument": {"device": "core.bass"},
         "clips": [{"id": "c1", "start": 0, "length": 4, "notes": notes}]}]})


class _Scope:
    tracks = None


@pytest.fixture
def scorer(monkeypatch):
    monkeypatch.setattr(runtime, "active", lambda: True)
    clear_process_caches()
    yield
    clear_process_caches()


def test_the_process_memo_reuses_a_render_and_value_only_for_the_same_content(scorer, monkeypatch):
    loud, soft = _song(1.0), _song(0.25)
    first = measure_scope(Context(start=loud, song=loud), loud, _Scope(), "lufs")
    other = measure_scope(Context(start=soft, song=soft), soft, _Scope(), "lufs")
    assert other < first - 6.0  # the same id and names, another song: its own render and value
    from pytest_overdub import render as render_pkg

    monkeypatch.setattr(render_pkg, "render", lambda *a, **k: pytest.fail("rendered again"))
    again = _song(1.0)  # equal content built separately: the memo's render and value
    ctx = Context(start=again, song=again)
    assert measure_scope(ctx, again, _Scope(), "lufs") == first
    r = ctx.render(again, ("t_bass",))
    assert not r.mix.flags.writeable  # a reader cannot change what the next context reads
    clear_process_caches()  # the repeat rule: nothing kept, so the next scoring renders afresh
    with pytest.raises(pytest.fail.Exception, match="rendered again"):
        measure_scope(Context(start=again, song=again), again, _Scope(), "lufs")


def test_the_process_memo_keeps_the_values_kept_last_when_full(scorer):
    # a long scoring with no repeat rule to empty it (a folder of answers) kept nothing new once full
    from pytest_overdub.bench.context import ProcessMemo

    memo = ProcessMemo(max_values=2)
    for i in range(3):
        memo.keep_value(("v", i), float(i))
    assert [memo.value(("v", i)) for i in range(3)] == [None, 1.0, 2.0]


def test_a_library_call_keeps_nothing(monkeypatch):
    monkeypatch.setattr(runtime, "active", lambda: False)
    clear_process_caches()
    song = _song(1.0)
    measure_scope(Context(start=song, song=song), song, _Scope(), "lufs")
    assert PROCESS_MEMO.render(Context(start=song, song=song).render_key(song, ("t_bass",))) is None
    assert PROCESS_MEMO.value(next(iter(Context(start=song, song=song)._values), ("none",))) is None


def test_an_audio_input_is_remembered_by_its_content_key_not_its_song_id(tmp_path, monkeypatch):
    from pytest_overdub.bench.audio import inputs
    from pytest_overdub.bench.model import AudioInput

    inp = AudioInput.model_validate({"name": "mix.wav", "song": "same-name"})
    assert inputs.input_key(inp, _song(1.0)) != inputs.input_key(inp, _song(0.25))  # same id, other samples
    monkeypatch.setattr(runtime, "active", lambda: True)
    monkeypatch.setattr(inputs, "INPUT_MEMO", {})
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    inputs.write_wav(a, np.full((2, 10), 0.5))
    inputs.write_wav(b, np.full((2, 10), -0.25))

    def read(path):
        return inputs._remembered([("x.wav", path.name, lambda: inputs.read_wav(path))])["x.wav"]

    x, y = read(a), read(b)
    assert x[0, 0] == 0.5 and y[0, 0] == -0.25 and not x.flags.writeable
    assert read(a) is x  # read once


def test_the_input_memo_keeps_every_input_of_the_task_just_loaded(monkeypatch):
    """A variant's stems are 50 MB each and made by rendering: a memo that dropped the first of them while
    loading the fourth would render it again in every rule."""
    from pytest_overdub.bench.audio import inputs

    monkeypatch.setattr(runtime, "active", lambda: True)
    monkeypatch.setattr(inputs, "INPUT_MEMO", {})
    monkeypatch.setattr(inputs, "INPUT_MEMO_BYTES", 2500)  # two of the 1600-byte arrays below would not fit
    made = []

    def load(*keys):
        return inputs._remembered([(k, k, lambda k=k: made.append(k) or np.full((2, 100), 0.5)) for k in keys])

    first = load("a", "b", "c")
    assert list(inputs.INPUT_MEMO) == ["a", "b", "c"] and made == ["a", "b", "c"]
    again = load("a", "b", "c")  # each rule reads them again: nothing made again
    assert all(again[k] is first[k] for k in first) and made == ["a", "b", "c"]
    load("d")
    assert list(inputs.INPUT_MEMO) == ["d"]  # the oldest dropped first, once they are not the task's
