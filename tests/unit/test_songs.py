"""The three starting songs (docs/tasks.md): shape, harmony, hook, groove, ids, byte-stable files.

Expected figures are written out by hand (pitch classes C=0 .. B=11), not derived from the script.
Swing convention (the bench's): swing = mean lateness of odd 1/16 steps / 0.25 beat; the musician's
swing percent is (0.25 + lateness) / 0.5, so 55-62 % is a lateness of 0.025-0.06 beat.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import pytest

from pytest_overdub.song.model import dumps_song, load_song

ROOT = Path(__file__).resolve().parents[2]
SONGS = ROOT / "songs"
NAMES = ("night-shift", "lab", "loose-groove")

A_MINOR = {9, 11, 0, 2, 4, 5, 7}
E_MINOR = {4, 6, 7, 9, 11, 0, 2}
C_MAJOR = {0, 2, 4, 5, 7, 9, 11}
# Am = A C E, F = F A C, C = C E G, G7 = G B D F.
NIGHT_CHORD_PCS = ({9, 0, 4}, {5, 9, 0}, {0, 4, 7}, {7, 11, 2, 5})
NIGHT_ROOT_PCS = (9, 5, 0, 7)


def _song(name):
    return load_song(SONGS / f"{name}.json")


def _abs_notes(track):
    """(pitch, absolute start beat, duration, velocity) of every note, sorted by time."""
    out = [(n.p, c.start + n.t, n.d, n.v) for c in track.clips for n in c.notes]
    return sorted(out, key=lambda r: (r[1], r[0]))


@pytest.mark.parametrize("name", NAMES)
def test_song_loads_and_round_trips_byte_for_byte(name):
    path = SONGS / f"{name}.json"
    assert dumps_song(load_song(path)) == path.read_text(encoding="utf-8")


def test_files_are_what_the_script_builds():
    spec = importlib.util.spec_from_file_location("make_songs", ROOT / "tools" / "make_songs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, song in mod.build_songs().items():
        assert dumps_song(song) == (SONGS / f"{name}.json").read_text(encoding="utf-8"), name


_ID_PATTERNS = {"track": r"t_[a-z]+", "insert": r"fx_[a-z]+_[a-z]+", "clip": r"c_[a-z]+(_[a-z]+)?",
                "section": r"s_[a-z]+", "note": r"n_[a-z]+_\d{3}"}


@pytest.mark.parametrize("name", NAMES)
def test_ids_are_unique_and_readable(name):
    song = _song(name)
    ids = [("section", s.id) for s in song.sections]
    for tr in song.tracks:
        ids.append(("track", tr.id))
        ids += [("insert", i.id) for i in tr.inserts]
        for c in tr.clips:
            ids.append(("clip", c.id))
            ids += [("note", n.id) for n in c.notes]
    assert len({i for _, i in ids}) == len(ids)
    for kind, ident in ids:
        assert re.fullmatch(_ID_PATTERNS[kind], ident), (kind, ident)


# --- night-shift ----------------------------------------------------------------------------------

def test_night_shift_shape():
    song = _song("night-shift")
    assert (song.tempo, song.key.root, song.key.scale) == (92.0, "A", "minor")
    assert song.master.gain == -4.0  # headroom: the starting mix stays off the master clip
    assert [(s.id, s.name, s.start, s.length) for s in song.sections] == [
        ("s_verse", "Verse", 0.0, 16.0), ("s_chorus", "Chorus", 16.0, 16.0)]
    got = [(t.id, t.name, t.instrument.device, t.gain, t.pan, [(i.id, i.device) for i in t.inserts])
           for t in song.tracks]
    assert got == [
        ("t_kick", "Kick", "core.drums", 2.0, 0.0, []),
        ("t_kit", "Kit", "core.drums", 0.0, 0.0, []),
        ("t_bass", "Bass", "core.bass", -1.5, 0.0, []),
        ("t_keys", "Keys", "core.keys", -3.0, -0.15, [("fx_keys_verb", "core.verb")]),
        ("t_hook", "Hook", "core.pluck", 3.0, 0.15, [("fx_hook_delay", "core.delay")]),
    ]
    for tid in ("t_bass", "t_keys", "t_hook"):
        assert [(c.start, c.length) for c in song.track(tid).clips] == [(0.0, 16.0), (16.0, 16.0)]


def test_night_shift_drums():
    song = _song("night-shift")
    kick = _abs_notes(song.track("Kick"))
    assert {p for p, *_ in kick} == {36}
    on_beat = {t for _, t, *_ in kick if t % 1 == 0}
    assert on_beat == {4.0 * bar + b for bar in range(8) for b in (0.0, 2.0)}
    kit = _abs_notes(song.track("Kit"))
    assert 36 not in {p for p, *_ in kit}
    assert {t for p, t, *_ in kit if p == 38} == {4.0 * bar + b for bar in range(8) for b in (1.0, 3.0)}
    assert {t for p, t, *_ in kit if p in (42, 46)} == {0.5 * k for k in range(64)}


def test_night_shift_keys_play_am_f_c_g7_one_per_bar():
    notes = _abs_notes(_song("night-shift").track("Keys"))
    for bar in range(8):
        in_bar = [(p, t, d) for p, t, d, _ in notes if 4 * bar <= t < 4 * bar + 4]
        assert {p % 12 for p, *_ in in_bar} == NIGHT_CHORD_PCS[bar % 4], bar
        assert all(t == 4 * bar and d >= 3.5 for _, t, d in in_bar), bar
    assert all(55 <= p <= 72 for p, *_ in notes)


def test_night_shift_hook_in_range_in_key_and_on_chord_tones():
    notes = _abs_notes(_song("night-shift").track("Hook"))
    assert all(67 <= p <= 79 for p, *_ in notes)
    assert {p % 12 for p, *_ in notes} <= A_MINOR
    strong = [(p, t) for p, t, *_ in notes if t % 2 == 0]
    assert len(strong) == 16  # beats 1 and 3 of all 8 bars are played
    for p, t in strong:
        assert p % 12 in NIGHT_CHORD_PCS[int(t // 4) % 4], (p, t)


def test_night_shift_hook_chorus_repeats_the_verse_16_beats_later():
    notes = _abs_notes(_song("night-shift").track("Hook"))
    verse = [n for n in notes if n[1] < 16]
    chorus = [n for n in notes if n[1] >= 16]
    assert len(verse) >= 12
    assert [(p, t + 16, d, v) for p, t, d, v in verse] == chorus


def test_night_shift_bass_roots_and_range():
    notes = _abs_notes(_song("night-shift").track("Bass"))
    assert all(28 <= p <= 48 for p, *_ in notes)
    assert {p % 12 for p, *_ in notes} <= A_MINOR
    downbeats = [(t, p) for p, t, *_ in notes if t % 4 == 0]
    assert [p % 12 for _, p in downbeats] == list(NIGHT_ROOT_PCS) * 2


# --- lab ------------------------------------------------------------------------------------------

def test_lab_shape_and_parts():
    song = _song("lab")
    assert (song.tempo, song.key.root, song.key.scale, song.sections) == (100.0, "C", "major", ())
    assert [(t.id, t.name, t.instrument.device, t.gain) for t in song.tracks] == [
        ("t_snaps", "Snaps", "core.drums", -3.0), ("t_bell", "Bell", "core.pad", -4.0),
        ("t_room", "Room", "core.poly", -6.0)]
    claps = _abs_notes(song.track("Snaps"))
    assert [(p, t) for p, t, *_ in claps] == [(39, 4.0 * bar + b) for bar in range(4) for b in (1.0, 3.0)]
    bell = _abs_notes(song.track("Bell"))
    assert all(d >= 3 for *_, d, _ in bell) and {p % 12 for p, *_ in bell} <= C_MAJOR
    room = _abs_notes(song.track("Room"))
    # C, F, G, C triads in the C2-C3 region (MIDI 35..48).
    chords = [{p % 12 for p, t, *_ in room if t == 4 * bar} for bar in range(4)]
    assert chords == [{0, 4, 7}, {5, 9, 0}, {7, 11, 2}, {0, 4, 7}]
    assert all(35 <= p <= 48 for p, *_ in room)


# --- loose-groove ---------------------------------------------------------------------------------

def _groove():
    song = _song("loose-groove")
    return song, _abs_notes(song.track("Drums"))


def test_loose_groove_counts():
    song, hits = _groove()
    assert (song.tempo, song.key.root, song.key.scale) == (96.0, "E", "minor")
    assert len(hits) == 84
    assert sum(p in (36, 38) for p, *_ in hits) == 20
    assert sum(p == 42 for p, *_ in hits) == 64
    assert all(0 <= t < 16 for _, t, *_ in hits)


def test_loose_groove_is_swung_and_loose():
    _, hits = _groove()
    times = [t for _, t, *_ in hits]
    steps = [round(t / 0.25) for t in times]
    odd_late = [t - 0.25 * s for t, s in zip(times, steps) if s % 2]
    lateness = sum(odd_late) / len(odd_late)
    swing = lateness / 0.25
    assert 0.2 <= swing <= 0.48
    assert 0.55 <= (0.25 + lateness) / 0.5 <= 0.62
    errs = [t - 0.25 * s - (lateness if s % 2 else 0.0) for t, s in zip(times, steps)]
    rms_ms = math.sqrt(sum(e * e for e in errs) / len(errs)) * 60000 / 96
    assert 2.0 <= rms_ms <= 20.0
    # velocities are played, not programmed: many distinct values
    assert len({v for *_, v in hits}) >= 20


def test_loose_groove_drum_roles():
    _, hits = _groove()
    kicks = {round(t) for p, t, *_ in hits if p == 36 and abs(t - round(t)) < 0.05}
    assert {4 * bar + b for bar in range(4) for b in (0, 2)} <= kicks
    snares = sorted(round(t) for p, t, *_ in hits if p == 38)
    assert snares == [4 * bar + b for bar in range(4) for b in (1, 3)]


def test_loose_groove_bass_in_e_minor():
    song, _ = _groove()
    bass = song.track("Bass")
    assert bass.gain == -2.0 and bass.instrument.device == "core.bass"
    notes = _abs_notes(bass)
    assert len(notes) >= 12 and {p % 12 for p, *_ in notes} <= E_MINOR
    assert notes[0][0] % 12 == 4  # starts on E
