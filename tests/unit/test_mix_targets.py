"""Mix checks read what the instruction means: the keys on their own track (not through a master EQ), the
music's crest factor (silence appended to the song never counts), the mono fold-down's loudness (a part out
of phase cancels), the share of a part its loudness reads (what it skips counts), and the part cut most."""

import numpy as np
import pytest
from pydantic import ValidationError

from pytest_overdub.measure import measure_metric

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


SR = 48000


def test_the_mono_fold_down_reads_a_centred_part_as_it_is_and_cancels_one_out_of_phase():
    t = np.arange(2 * SR) / SR
    tone = 0.1 * np.sin(2 * np.pi * 1000 * t)
    centred, flipped = np.vstack([tone, tone]), np.vstack([tone, -tone])
    assert measure_metric(centred, sr=SR, metric="lufsMono") == pytest.approx(
        measure_metric(centred, sr=SR, metric="lufs"), abs=1e-9)
    assert measure_metric(flipped, sr=SR, metric="lufs") == pytest.approx(
        measure_metric(centred, sr=SR, metric="lufs"), abs=1e-9)  # stereo loudness cannot tell them apart
    assert measure_metric(flipped, sr=SR, metric="lufsMono") == -120.0
    # one side only: the fold-down halves it, 6 dB, played on both channels, +3 dB: 3 LU under the stereo read
    one = np.vstack([tone, 0 * tone])
    assert measure_metric(one, sr=SR, metric="lufsMono") == pytest.approx(
        measure_metric(one, sr=SR, metric="lufs") - 10 * np.log10(2), abs=1e-6)


def test_the_share_counts_the_blocks_loudness_skips():
    t = np.arange(4 * SR) / SR
    tone = 0.1 * np.sin(2 * np.pi * 1000 * t)
    assert measure_metric(np.vstack([tone, tone]), sr=SR, metric="lufsShare") == 1.0
    # the first two seconds only, the rest 60 dB down (under the -70 LUFS gate): of the 37 blocks (400 ms on a
    # 100 ms hop), the 20 that start in the first two seconds hold 4, 3, 2 or 1 tenths of the tone, the last
    # 6 dB under the rest, inside the -10 LU relative gate; the other 17 are skipped
    chopped = tone * np.where(t < 2, 1.0, 1e-3)
    assert measure_metric(np.vstack([chopped, chopped]), sr=SR, metric="lufsShare") == pytest.approx(20 / 37)
    assert measure_metric(np.vstack([chopped, chopped]), sr=SR, metric="lufs") == pytest.approx(
        measure_metric(np.vstack([tone, tone]), sr=SR, metric="lufs"), abs=0.5)  # what the loudness reads


def _least(**kw) -> MeasureCheck:
    return MeasureCheck(id="c", label="c", kind="measure", metric="lufs", target=(None, None), relative=True,
                        least=True, **kw)


def test_least_reads_the_part_cut_most_each_alone():
    start = start_song(BENCH.task("mix-hook-in-front"), bench=BENCH)
    song = apply_ops(start, [{"type": "track.set", "track": "Kick", "patch": {"gain": start.track("Kick").gain - 6}},
                             {"type": "track.set", "track": "Keys", "patch": {"gain": start.track("Keys").gain - 1}}])
    ctx = Context(start=start, song=song, trusted=True)
    # on their own faders the kick is 6 dB down and the keys 1: the lowest change is the kick's (within the few
    # hundredths the -70 LUFS gate moves by, dropping the quietest blocks of its tails)
    assert measure_value(ctx, _least(tracks=["Kick", "Keys", "Bass"], stem=True)) == pytest.approx(-6, abs=0.05)
    # the four together hardly show it (the kick is one part of four)
    together = MeasureCheck(id="c", label="c", kind="measure", metric="lufs", target=(None, None), relative=True,
                            stem=True, tracks=["Kick", "Kit", "Bass", "Keys"])
    assert measure_value(ctx, together) > -3


def test_least_needs_a_list_of_tracks_and_no_minus():
    with pytest.raises(ValidationError, match="least reads each of a list of tracks alone"):
        _least()
    with pytest.raises(ValidationError, match="least reads each of a list of tracks alone"):
        _least(tracks=["Kick"], minus={"section": "Verse"})
