"""What a listener hears, one rule for the engine and the checks; caches by content; frames by the song
timing's rounding (docs/rendering.md, docs/checks.md "Scopes and selections")."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pytest_overdub.bench.checks import measure_scope
from pytest_overdub.bench.context import Context, clear_process_caches, span_frames
from pytest_overdub.bench.model import Scope
from pytest_overdub.bench.tasks import bundled_bench, score_task
from pytest_overdub.bench.validity import load_answer
from pytest_overdub.render import StemCache, render
from pytest_overdub.render.heard import heard_tracks
from pytest_overdub.song.model import song_from_data
from pytest_overdub.song.submission import submission_from_data
from pytest_overdub.song.timing import timeline

FLOOR = -120.0


def _track(tid: str, pitch: int, **flags) -> dict:
    return {"id": tid, "name": tid.upper(), "instrument": {"device": "core.keys"}, **flags,
            "clips": [{"id": f"c_{tid}", "start": 0, "length": 4, "notes": [{"p": pitch, "t": 0, "d": 2, "v": 0.8}]}]}


def _song(*tracks: dict, **kw):
    return song_from_data({"format": "overdub/0", "id": "s", "tempo": 120, "tracks": list(tracks), **kw})


def _heard(song, among=None) -> list[str]:
    return [t.id for _, t in heard_tracks(song, among)]


# --- the rule ----------------------------------------------------------------------------------

def test_mute_wins_over_solo_and_a_solo_silences_the_rest():
    a, b, c = _track("a", 60), _track("b", 64), _track("c", 67)
    assert _heard(_song(a, b, c)) == ["a", "b", "c"]
    assert _heard(_song(a, dict(b, mute=True), c)) == ["a", "c"]
    assert _heard(_song(a, dict(b, solo=True), c)) == ["b"]
    # soloed and muted: silent, and its solo still silences the others, so nothing plays
    assert _heard(_song(dict(a, solo=True, mute=True), b, c)) == []
    assert _heard(_song(dict(a, solo=True, mute=True), dict(b, solo=True), c)) == ["b"]


def test_a_named_part_hears_only_what_plays():
    a, b = _track("a", 60), _track("b", 64)
    assert _heard(_song(a, dict(b, mute=True)), ["a", "b"]) == ["a"]
    assert _heard(_song(a, dict(b, mute=True)), ["b"]) == []
    assert _heard(_song(dict(a, solo=True), b), ["b"]) == []  # soloed away


# --- the engine and the checks agree -------------------------------------------------------------

def test_for_every_mute_and_solo_a_scope_hears_exactly_what_the_engine_plays():
    cache = StemCache()  # mute and solo are not in a stem's key: three stems serve all 64 songs
    base = [_track("a", 60), _track("b", 64), _track("c", 67)]
    for flags in itertools.product((False, True), repeat=6):
        tracks = [dict(t, mute=flags[2 * i], solo=flags[2 * i + 1]) for i, t in enumerate(base)]
        song = _song(*tracks)
        played = set(render(song, sr=8000, cache=cache, trust_kernels=True).stems)
        ctx = _ctx(song)
        assert set(ctx.heard_ids(song, None)) == played, flags
        for t in ("A", "B", "C"):
            assert ctx.heard_ids(song, [t]) == ((t.lower(),) if t.lower() in played else ()), (flags, t)


def _ctx(song) -> Context:
    return Context(start=song, song=song, trusted=True)


def _peak(ctx: Context, song, tracks) -> float:
    return measure_scope(ctx, song, Scope(tracks=tracks), "peak")


def test_a_track_soloed_and_muted_is_silent_in_the_engine_and_in_the_checks():
    song = _song(dict(_track("a", 60), solo=True, mute=True), _track("b", 64))
    r = render(song, cache=StemCache(), trust_kernels=True)
    assert r.stems == {} and not np.any(r.mix)
    ctx = _ctx(song)
    assert _peak(ctx, song, None) == FLOOR
    assert _peak(ctx, song, ["A"]) == FLOOR   # the checks used to measure the soloed track
    assert _peak(ctx, song, ["B"]) == FLOOR


def test_a_scope_reads_the_heard_part_of_what_it_names():
    song = _song(_track("a", 60), dict(_track("b", 64), mute=True))
    ctx = _ctx(song)
    whole = render(song, cache=StemCache(), trust_kernels=True)
    assert set(whole.stems) == {"a"}
    a_alone = _peak(ctx, song, ["A"])
    assert a_alone > -20.0
    assert _peak(ctx, song, ["A", "B"]) == a_alone == _peak(ctx, song, None)
    assert _peak(ctx, song, ["B"]) == FLOOR


@pytest.fixture(scope="module")
def counter_melody():
    bench = bundled_bench()
    task = bench.task("write-counter-melody")
    sub, data = load_answer(bench.oracle_path(task.id), task_id=task.id, kind="oracle")
    return bench, task, data["ops"]


def test_a_muted_new_track_fails_the_heard_check(counter_melody):
    bench, task, ops = counter_melody
    played = score_task(task, submission_from_data(ops), bench=bench, trusted=True)
    assert played.check("heard").score == 1.0
    muted = ops + [{"type": "track.set", "track": "Counter", "patch": {"mute": True}}]
    silent = score_task(task, submission_from_data(muted), bench=bench, trusted=True)
    assert silent.check("heard").value == FLOOR and silent.check("heard").score == 0.0


def test_a_relative_figure_on_a_muted_named_track_reads_it_silent():
    bench = bundled_bench()
    task = bench.task("mix-bass-under-kick")
    muted = [{"type": "track.set", "track": "Bass", "patch": {"mute": True}}]
    r = score_task(task, submission_from_data(muted), bench=bench, trusted=True)
    gap = r.check("gap").value  # silence minus the kick's low end: far below the -4..-2 dB target
    assert gap < -60.0


# --- caches by content ---------------------------------------------------------------------------

@pytest.fixture
def fresh_process_memo():
    """In a scorer process (the runtime entered by an earlier test) a context's values may come from the
    process memo: these tests count what one context renders, so they start from an empty one."""
    clear_process_caches()


def test_equal_songs_built_separately_share_a_render_and_a_value(fresh_process_memo):
    one, two = _song(_track("a", 60), _track("b", 64)), _song(_track("a", 60), _track("b", 64))
    assert one is not two
    ctx = Context(start=one, song=two, trusted=True)
    assert _peak(ctx, one, ["A"]) == _peak(ctx, two, ["A"])
    assert (len(ctx._renders), len(ctx._values)) == (1, 1)


def test_a_changed_song_gets_its_own_entry_and_a_change_outside_the_scope_does_not(fresh_process_memo):
    start = _song(_track("a", 60), _track("b", 64))
    louder = _song(dict(_track("a", 60), gain=-6.0), _track("b", 64))
    other = _song(_track("a", 60), _track("b", 65))
    ctx = Context(start=start, song=louder, trusted=True)
    before = _peak(ctx, start, ["A"])
    assert _peak(ctx, louder, ["A"]) == pytest.approx(before - 6.0, abs=1e-9)
    assert len(ctx._renders) == 2
    assert _peak(ctx, other, ["A"]) == before  # only B changed: A's render is shared
    assert len(ctx._renders) == 2
    _peak(ctx, other, None)
    _peak(ctx, start, None)
    assert len(ctx._renders) == 4  # the whole mixes differ in B


# --- frames --------------------------------------------------------------------------------------

def test_span_frames_round_half_up_as_the_song_timing_does():
    tl = timeline(_song(_track("a", 60)), sr=2)  # 120 bpm at 2 Hz: one beat is exactly one frame
    # 0.5 and 2.5 beats fall on half frames: half up gives 1 and 3 (Python's round() gives 0 and 2)
    assert span_frames(tl, 0.5, 2.5) == (1, 3)
    assert span_frames(tl, None, None) == (0, tl.n_frames)
    assert span_frames(tl, 3.0, 1e6) == (3, tl.n_frames)  # clamped to the render
    assert span_frames(tl, 2.0, 1.0) == (2, 2)
