"""The note kinds as a task reads them: the key is the task's, the tolerance is 30 ms; and the writing
tasks' `heard` gate hears the song as the engine plays it (mute and solo)."""

import json

import pytest

from pytest_overdub.bench.context import Context
from pytest_overdub.bench.tasks import bundled_bench, candidate_song, start_song
from pytest_overdub.song.submission import submission_from_data

BENCH = bundled_bench()
TASK = BENCH.task("write-bassline")
START = start_song(TASK, bench=BENCH)  # night-shift, A minor, 92 bpm, the bass removed


def check(check_id):
    return next(c for c in TASK.checks if c.id == check_id)


def ctx_for(ops):
    return Context(start=START, song=candidate_song(START, submission_from_data(ops)))


def bass_clip(notes):
    return [{"type": "clip.add", "track": "Bass", "clip": {"start": 0, "length": 16, "notes": notes}}]


ROOTS_AND_G_SHARP = "A1@0:2 G#1@2:2 F1@4:2 G#1@6:2 C2@8:2 G#1@10:2 G1@12:2 G#1@14:2"


def test_a_chromatic_key_in_the_answer_does_not_change_in_key():
    plain = ctx_for(bass_clip(ROOTS_AND_G_SHARP))
    chromatic = ctx_for([{"type": "project.set", "patch": {"key": {"root": "A", "scale": "chromatic"}}},
                         *bass_clip(ROOTS_AND_G_SHARP)])
    assert chromatic.song.key.scale == "chromatic"
    # four of eight notes are G#, not in A minor, whatever key the answer declares
    assert check("in-key").value(plain) == 0.5
    assert check("in-key").value(chromatic) == 0.5


def test_a_bassline_16_ms_behind_the_beat_keeps_its_roots():
    late = 0.016 * START.tempo / 60  # 0.0245 beats
    notes = [{"p": p, "t": t + late, "d": 1.5, "v": 0.8} for p, t in ((33, 0), (40, 2), (29, 4), (36, 6),
                                                                       (36, 8), (31, 10), (31, 12), (38, 14))]
    ctx = ctx_for(bass_clip(notes))
    assert check("roots").value(ctx) == 1.0
    assert check("chord-tones").value(ctx) == 1.0
    # 40 ms behind (0.061 beats at 92 bpm) is off the beat
    off = [{**x, "t": x["t"] - late + 0.04 * START.tempo / 60} for x in notes]
    assert check("roots").value(ctx_for(bass_clip(off))) == 0.0


ORACLE = json.loads(BENCH.oracle_path("write-bassline").read_text())["ops"]


@pytest.mark.parametrize("patch", [{"mute": True}, {"mute": True, "solo": True}])
def test_heard_honours_mute_and_mute_wins_over_solo(patch):
    ops = [*ORACLE, {"type": "track.set", "track": "Bass", "patch": patch}]
    assert check("heard").value(ctx_for(ops)) == -120.0


def test_heard_is_silent_when_another_track_is_soloed():
    ops = [*ORACLE, {"type": "track.set", "track": "Keys", "patch": {"solo": True}}]
    assert check("heard").value(ctx_for(ops)) == -120.0


def test_heard_reads_the_bass_the_mix_plays():
    loud = check("heard").value(ctx_for(ORACLE))
    soloed = check("heard").value(ctx_for([*ORACLE, {"type": "track.set", "track": "Bass",
                                                          "patch": {"solo": True}}]))
    assert -30 < loud < -10
    assert soloed == loud  # the same stem through the same master: solo only silences the others


# --- voiced: the notes as the track's instrument sounds them -----------------------------------------

def set_bass(device):
    return [{"type": "instrument.set", "track": "Bass", "device": device}]


@pytest.mark.parametrize("device, share", [("core.bass", 1.0), ("core.keys", 1.0), ("core.pad", 1.0),
                                           ("core.drums", 0.0)])
def test_voiced_reads_a_bassline_as_pitches_only_on_a_pitched_house_instrument(device, share):
    ctx = ctx_for(bass_clip(ROOTS_AND_G_SHARP) + set_bass(device))
    if share:
        assert check("roots").value(ctx) == 1.0
    else:  # the kit plays A1, F1 and G1 as silence, which no check hears; C2 is a kick, read as a C
        assert check("roots").value(ctx) == 0.25
    assert check("voiced").value(ctx) == share


def test_roots_a_gain_insert_silences_are_not_heard():
    """A gain insert automated to -60 dB over each bar's first beat and a half: the roots are written, played
    at full velocity, and nobody hears them (the stem reads 60 dB under the rest there). They scored 1.000."""
    auto = [{"t": float(b + dt), "v": v} for b in range(0, 16, 4)
            for dt, v in ((0.0, -60.0), (1.48, -60.0), (1.5, 0.0), (3.98, 0.0))]
    ops = bass_clip(ROOTS_AND_G_SHARP) + [
        {"type": "insert.add", "track": "Bass", "insert": {"device": "core.gain"}, "ref": "g"},
        {"type": "auto.write", "track": "Bass", "insert": "$g", "param": "gain", "points": auto}]
    assert check("roots").value(ctx_for(bass_clip(ROOTS_AND_G_SHARP))) == 1.0
    assert check("roots").value(ctx_for(ops)) == 0.0


def test_voiced_is_zero_for_an_empty_part():
    assert check("voiced").value(ctx_for([])) == 0.0


@pytest.mark.parametrize("device, p, voice, sounds", [
    ("core.drums", 36, "drums", True),     # kick
    ("core.drums", 82, "drums", True),     # shaker, the map's highest
    ("core.drums", 34, "drums", False),    # below the map: silent on the kit
    ("core.drums", 33, "pitched", False),  # A1 on the kit: silence, not a bass note
    ("core.drums", 38, "pitched", False),  # D2 on the kit: a snare, not a D
    ("core.keys", 36, "drums", False),     # a kick number on the piano is a C2
    ("core.poly", 60, "pitched", True),
    ("my.synth", 60, "pitched", False),    # a song-defined instrument is not taken on trust
    (None, 60, "pitched", False),
])
def test_sounds_as_written(device, p, voice, sounds):
    from pytest_overdub.notes.selection import sounds_as_written

    assert sounds_as_written(device, p, voice=voice) is sounds
