"""mix-hook-in-front variants: the setup puts every seed on one fixed rough mix (what makes one computed
move solve every variant), and a chorus-only automation of that move passes where the same move in the
verse fails."""

from __future__ import annotations

from pytest_overdub.bench.tasks import bundled_bench, score_task, start_song
from pytest_overdub.bench.templates import hook_in_front as H
from pytest_overdub.bench.variants import variant
from pytest_overdub.song.submission import submission_from_data

# seeds 1-4 draw all four hook and chords devices: pluck/keys, pluck/pad, poly/pad, poly/keys
SEEDS = (1, 2, 3, 4)


def _mix(song) -> list:
    """What the setup fixes: each track's name, instrument, fader and inserts (the hook's fader, its delay's
    drawn division and the drawn pans left out)."""
    out = []
    for t in song.tracks:
        inserts = [(i.device, {k: v for k, v in i.params.items() if not (i.device == "core.delay" and k == "div")})
                   for i in t.inserts]
        out.append((t.name, t.instrument.device, dict(t.instrument.params), None if t.name == "Hook" else t.gain,
                    inserts))
    return out


def test_every_seed_starts_from_one_fixed_rough_mix_with_the_hook_buried():
    bench = bundled_bench()
    made = [variant(f"mix-hook-in-front@{s}").made for s in SEEDS]
    drawn = {(m.truth.part("lead").device, m.truth.part("chords").device) for m in made}
    assert len(drawn) == 4  # the generated songs differ in both devices
    songs = [start_song(variant(f"mix-hook-in-front@{s}").task, bench=bench) for s in SEEDS]
    starts = [_mix(song) for song in songs]
    assert all(s == starts[0] for s in starts[1:])
    names = [row[0] for row in starts[0]]
    assert names == ["Kick", "Kit", "Bass", "Keys", "Hook"]
    assert starts[0][names.index("Hook")][1:3] == ("core.poly", H.HOOK)
    assert starts[0][names.index("Keys")][1:3] == ("core.keys", H.KEYS)
    # the hook's fader: -10.5 dB, 0.13 dB up per semitone its chorus notes average under 75 (seed 1: 2786
    # over 38 notes, 73.3; seed 4: 2180 over 32, 68.1; seeds 2 and 3 average 75 and 76.1)
    assert [song.track("Hook").gain for song in songs] == [-10.28, -10.5, -10.5, -9.61]


def test_the_move_automated_in_the_chorus_passes_and_in_the_verse_fails():
    bench = bundled_bench()
    v = variant("mix-hook-in-front@4")  # the most buried hook of seeds 1-12 (front -2.7 LU at the start)
    chorus = v.made.truth.section("Chorus")
    moves = {"Hook": H.HOOK_UP_DB, **{n: H.TRIM_DB for n in H.OTHERS}}
    ops = H._automated(chorus.start_beats, chorus.end_beats, moves)
    start = start_song(v.task, bench=bench)
    r = score_task(v.task, submission_from_data(ops), bench=bench, trusted=True, start=start)
    assert r.score >= 0.9 and r.check("front").value >= 2.0, r.text()
    verse = next(m for m in v.near_misses if m.name == "verse-automation")
    r = score_task(v.task, submission_from_data(verse.ops), bench=bench, trusted=True, start=start)
    assert r.check("front").score == 0.0 and r.check("mix").score == 1.0
