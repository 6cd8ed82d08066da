"""The device templates' setups, read against the generated song's ground truth (no render): the hum
under the chords part, the claps on the Kit's snare hits, the bell's one held note a chorus bar."""

from __future__ import annotations

import pytest

from pytest_overdub.bench.tasks import bundled_bench, start_song
from pytest_overdub.bench.templates.rumble_filter import drone_pitches, hum_pitch
from pytest_overdub.generate.harmony import KeySig
from pytest_overdub.bench.variants import variant

SEEDS = (1, 2, 3, 1000)


@pytest.mark.parametrize("tonic_pc", range(12))
def test_the_hum_is_the_tonic_or_its_fifth_in_the_sub_band(tonic_pc):
    p = hum_pitch(tonic_pc)
    assert 28 <= p <= 34                                   # E1..A#1: 41.2-58.3 Hz, inside 40-60 Hz
    assert p % 12 in (tonic_pc, (tonic_pc + 7) % 12)
    assert 80 <= 2 * 440.0 * 2 ** ((p - 69) / 12) < 125    # its second partial in the 80-125 Hz band


@pytest.mark.parametrize("mode", ["major", "minor"])
@pytest.mark.parametrize("tonic_pc", range(12))
def test_the_drone_puts_two_tones_no_partial_of_the_hum_in_the_low_band(tonic_pc, mode):
    hum, a, b = drone_pitches(tonic_pc, mode)
    assert hum == hum_pitch(tonic_pc)
    hz = [440.0 * 2 ** ((p - 69) / 12) for p in (a, b)]
    assert all(80 <= f < 125 for f in hz)                                   # inside the 80-125 Hz band
    assert {a % 12, b % 12} <= set(KeySig(tonic_pc, mode).scale_pcs) and abs(a - b) >= 2
    f0 = 440.0 * 2 ** ((hum - 69) / 12)
    assert all(abs(f / (k * f0) - 1) > 0.04 for f in hz for k in (1, 2, 3))   # off the hum's partials


@pytest.mark.parametrize("seed", SEEDS)
def test_rumble_setup_leaves_the_chords_part_the_agents_chain_and_a_hum(seed):
    v = variant(f"device-rumble-filter@{seed}")
    chords = v.made.truth.part("chords")
    song = start_song(v.task, bench=bundled_bench())
    track = song.track(chords.track_id)
    assert track.inserts == () and list(v.task.scope.tracks) == [chords.name]
    hum = [n for c in track.clips for n in c.notes if n.p < 36]
    assert len(hum) == v.made.truth.length_beats // 4 and {n.p for n in hum} == {hum_pitch(v.made.truth.key.tonic_pc)}
    drone = [n for c in track.clips if c.name == "hum" for n in c.notes if n.p >= 36]
    assert len(drone) == 2 * len(hum)
    assert {n.p for n in drone} == set(drone_pitches(v.made.truth.key.tonic_pc, v.made.truth.key.mode)[1:])
    tracked = [c.track for c in v.task.checks if getattr(c, "track", None)]
    assert len(tracked) == 12 and set(tracked) == {chords.name}  # the published task's 12 device checks


@pytest.mark.parametrize("seed", SEEDS)
def test_the_claps_fall_on_the_truths_snare_hits(seed):
    v = variant(f"device-dotted-echo@{seed}")
    truth, made = v.made.truth, v.made.song
    tags = {n.id: n.tag for n in truth.notes}
    snares = sorted(c.start + n.t for c in made.track("Kit").clips for n in c.notes if tags[n.id] == "snare")
    song = start_song(v.task, bench=bundled_bench())
    claps = sorted(c.start + n.t for c in song.track("Clap").clips for n in c.notes)
    assert claps == snares and len(claps) >= 16
    assert {n.p for c in song.track("Clap").clips for n in c.notes} == {39}
    probed = [c for c in v.task.checks if getattr(c, "tempos", None)]
    assert probed and all(list(c.tempos) == [truth.tempo_bpm] for c in probed)
    assert f"{0.75 * 60000 / truth.tempo_bpm:.0f} ms" in v.task.instruction


@pytest.mark.parametrize("seed", SEEDS)
def test_the_bell_rings_the_hooks_downbeat_note_an_octave_up_each_chorus_bar(seed):
    v = variant(f"device-decaying-instrument@{seed}")
    truth, made = v.made.truth, v.made.song
    hook = sorted((c.start + n.t, n.p, n.d) for c in made.track("Hook").clips for n in c.notes)
    song = start_song(v.task, bench=bundled_bench())
    bell = sorted((c.start + n.t, n.p, n.d) for c in song.track("Bell").clips for n in c.notes)
    choruses = [s for s in truth.sections if s.name.startswith("Chorus")]
    assert len(bell) == sum(s.bars for s in choruses)
    for t, p, d in bell:
        assert t % 4 == 0 and d == 3.5 and any(s.start_beats <= t < s.end_beats for s in choruses)
        sounding = [q for s, q, dur in hook if s <= t < s + dur]
        assert sounding and p == sounding[0] + 12
    assert song.track("Bell").instrument.device == "core.pad" and song.track("Bell").inserts == ()
