"""Mix checks read what the instruction means: the keys on their own track (not through a master EQ), and
the music's crest factor (silence appended to the song never counts)."""

import pytest

from pytest_overdub.bench.checks import Context, measure_value
from pytest_overdub.bench.model import MeasureCheck
from pytest_overdub.bench.tasks import bundled_bench, start_song
from pytest_overdub.song.ops import apply_ops

BENCH = bundled_bench()


def _check(metric: str, **scope) -> MeasureCheck:
    return MeasureCheck(id="c", label="c", kind="measure", metric=metric, target=(None, None), relative=True,
                        **scope)


def test_a_stem_scope_reads_the_track_before_the_master():
    start = start_song(BENCH.task("mix-darken-keys"), bench=BENCH)
    shelf = {"device": "core.eq", "params": {"highf": 5000, "high": -6}}
    song = apply_ops(start, [
        {"type": "insert.add", "track": "master", "insert": shelf},
        {"type": "track.set", "track": "Keys", "patch": {"gain": start.track("Keys").gain + 0.5}},
    ])
    ctx = Context(start=start, song=song, trusted=True)
    # on its own track the keys are only 0.5 dB louder: the fader is linear, the master shelf is not theirs
    assert measure_value(ctx, _check("band.presence", tracks=["Keys"], stem=True)) == pytest.approx(0.5, abs=1e-6)
    assert measure_value(ctx, _check("lufs", tracks=["Keys"], stem=True)) == pytest.approx(0.5, abs=1e-6)
    # through the master the shelf darkens them: what the task used to count as an EQ on the keys
    assert measure_value(ctx, _check("band.presence", tracks=["Keys"])) < -2


def test_silence_appended_to_the_song_does_not_change_the_gated_crest():
    start = start_song(BENCH.task("mix-master-loudness"), bench=BENCH)
    squash = [{"type": "master.set", "patch": {"gain": 0}},
              {"type": "insert.add", "track": "master",
               "insert": {"device": "core.limiter", "params": {"gain": 9, "ceiling": -1.2}}}]
    plain = Context(start=start, song=apply_ops(start, squash), trusted=True)
    padded = Context(start=start, trusted=True, song=apply_ops(start, squash + [
        {"type": "section.add", "section": {"name": "Outro", "start": 32, "length": 96}}]))
    gated, whole = _check("crestGated"), _check("crest")
    assert measure_value(padded, whole) - measure_value(plain, whole) > 3  # the old reading, fooled
    assert measure_value(padded, gated) == pytest.approx(measure_value(plain, gated), abs=0.05)
    assert measure_value(plain, gated) < -6  # the squash itself fails the task's limit
