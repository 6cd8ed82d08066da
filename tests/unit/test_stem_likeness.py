"""stemLikeness: a part keeps its own shape through a level, an EQ or a compressor, and loses it in a fully
wet reverb (mix-hook-in-front's `dry` gate)."""

import pytest

from pytest_overdub.bench.context import Context
from pytest_overdub.bench.tasks import bundled_bench, candidate_song, start_song
from pytest_overdub.song.submission import submission_from_data

BENCH = bundled_bench()
TASK = BENCH.task("mix-hook-in-front")
START = start_song(TASK, bench=BENCH)
DRY = next(c for c in TASK.checks if c.id == "dry")


def likeness(ops):
    return DRY.value(Context(start=START, song=candidate_song(START, submission_from_data(ops))))


def hook(device, params, gain_db):
    return [{"type": "insert.add", "track": "Hook", "insert": {"device": device, "params": params}},
            {"type": "track.set", "track": "Hook", "patch": {"gain": gain_db}}]


def test_a_level_change_keeps_the_shape_exactly():
    assert likeness([{"type": "track.set", "track": "Hook", "patch": {"gain": 6}}]) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("device, params, low", [("core.comp", {"threshold": -30, "ratio": 4}, 0.85),
                                                 ("core.verb", {"mix": 0.3}, 0.95)])
def test_a_compressor_or_some_reverb_keeps_the_hook_s_shape(device, params, low):
    assert likeness(hook(device, params, 4)) > low


def test_a_fully_wet_long_reverb_is_a_wash_of_the_hook():
    assert likeness(hook("core.verb", {"mix": 1, "decay": 12, "predelay": 250}, 10)) < 0.2
