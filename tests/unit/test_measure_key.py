"""Key detection: tonic-weighted progressions in all 24 keys (rendered with house instruments, and
synthesised), the bench songs, and the tonic step on hand-made chroma. The relative major/minor is wrong."""

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_overdub.errors import TooShortError
from pytest_overdub.measure import detect_key
from pytest_overdub.measure.key import MAJOR_PROFILE, MINOR_PROFILE, PITCH_CLASSES, key_from_chroma, peak_chroma

SR = 22050  # key detection needs nothing above 4.2 kHz; a lower rate keeps the tests fast
SONGS = Path(__file__).resolve().parents[2] / "songs"

# ------------------------------------------------------------------ rendered progressions

#: Per bar: (semitones above the tonic, "M" major or "m" minor triad). Each starts and ends on the tonic.
PROGRESSIONS = {
    "major": {"I-IV-V-I": ((0, "M"), (5, "M"), (7, "M"), (0, "M")),
              "I-vi-IV-V-I": ((0, "M"), (9, "m"), (5, "M"), (7, "M"), (0, "M")),
              "I-V-vi-IV-I": ((0, "M"), (7, "M"), (9, "m"), (5, "M"), (0, "M"))},
    "minor": {"i-iv-v-i": ((0, "m"), (5, "m"), (7, "m"), (0, "m")),  # natural minor: the relative major's notes
              "i-iv-V-i": ((0, "m"), (5, "m"), (7, "M"), (0, "m"))},
}
INSTRUMENTS = (("core.keys", "core.bass"), ("core.pad", "core.bass"), ("core.poly", "core.pluck"))


def progression_song(tonic_pc: int, bars, chords_device: str, bass_device: str, drums: bool) -> dict:
    """Block triads (root between G3 and F#4) on the chords track, the root twice a bar on the bass (C2-B2),
    and optionally a kick-snare-hats groove; 4/4 at 120 bpm."""
    chords, bass, kit = [], [], []
    for bar, (degree, quality) in enumerate(bars):
        pc = (tonic_pc + degree) % 12
        root = 60 + pc if pc < 7 else 48 + pc
        t = 4.0 * bar
        chords += [{"p": p, "t": t, "d": 3.9, "v": 0.7} for p in (root, root + (4 if quality == "M" else 3), root + 7)]
        bass += [{"p": 36 + pc, "t": t + b, "d": 1.9, "v": 0.8} for b in (0.0, 2.0)]
        kit += [{"p": 42, "t": t + b / 2, "d": 0.2, "v": 0.6} for b in range(8)]
        kit += [{"p": 36 if b % 2 == 0 else 38, "t": t + b, "d": 0.5, "v": 0.9} for b in range(4)]

    def track(i: int, name: str, device: str, notes: list) -> dict:
        clip = {"id": f"c{i}", "kind": "notes", "start": 0.0, "length": 4.0 * len(bars), "notes": notes}
        return {"id": f"t{i}", "name": name, "kind": "instrument", "instrument": {"device": device}, "clips": [clip]}

    tracks = [track(0, "Chords", chords_device, chords), track(1, "Bass", bass_device, bass)]
    if drums:
        tracks.append(track(2, "Drums", "core.drums", kit))
    return {"format": "overdub/0", "id": "progression", "title": "progression", "tempo": 120.0, "tracks": tracks}


KEYS = [(pc, scale) for scale in ("major", "minor") for pc in range(12)]


@pytest.mark.parametrize(("pc", "scale"), KEYS, ids=[f"{PITCH_CLASSES[pc]}-{s}" for pc, s in KEYS])
def test_rendered_progression_reads_exactly_its_key(pc, scale):
    """Every key once, progressions, instruments and drums varied across keys."""
    from pytest_overdub.render import render

    name, bars = list(PROGRESSIONS[scale].items())[pc % len(PROGRESSIONS[scale])]
    chords, bass = INSTRUMENTS[(pc // 2) % 3]
    drums = pc % 4 >= 2
    mix = render(progression_song(pc, bars, chords, bass, drums), sr=SR).mix
    k = detect_key(mix, sr=SR)
    assert k.name == f"{PITCH_CLASSES[pc]} {scale}", (name, chords, bass, drums, k)


# ------------------------------------------------------------------ synthesised progressions

def tone(midis, seconds):
    t = np.arange(int(seconds * SR)) / SR
    y = np.zeros_like(t)
    for m in midis:
        f = 440.0 * 2 ** ((m - 69) / 12)
        for h in range(1, 5):  # simple additive tone: four harmonics at 1/h
            y += np.sin(2 * np.pi * f * h * t) / h
    env = np.minimum(1.0, np.minimum(t / 0.01, (seconds - t) / 0.05))
    return 0.05 * y * env


def progression(root_pc, minor):
    """I-IV-V or i-iv-v (natural minor: all minor triads), the root doubled an octave below."""
    third = 3 if minor else 4
    chords = []
    for degree in (0, 5, 7):
        r = 48 + (root_pc + degree) % 12
        chords.append(tone([r - 12, r + 12, r + 12 + third, r + 19], 2.0))
    return np.concatenate(chords)


def test_synthesised_progressions_read_exactly_their_key_in_all_24_keys():
    wrong = []
    for minor in (False, True):
        for root_pc in range(12):
            k = detect_key(progression(root_pc, minor), sr=SR)
            want = f"{PITCH_CLASSES[root_pc]} {'minor' if minor else 'major'}"
            if k.name != want:
                wrong.append(f"{want} read {k.name}")
    assert wrong == []


def test_a_minor_progression_reads_a_minor_with_a_runner_up():
    k = detect_key(progression(9, True), sr=SR)
    assert k.name == "A minor"
    assert 0 < k.runner_up_confidence < k.confidence <= 1
    assert k.runner_up != k.name


# ------------------------------------------------------------------ the bench songs

def _render_song(data: dict):
    from pytest_overdub.render import render
    from pytest_overdub.song.model import song_from_data

    return render(song_from_data(data), sr=48000)


def _song(name: str) -> dict:
    return json.loads((SONGS / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "key"), [("night-shift", "A minor"), ("loose-groove", "E minor"), ("lab", "C major")])
def test_bench_song_reads_its_key(name, key):
    data = _song(name)
    assert f"{data['key']['root']} {data['key']['scale']}" == key  # what the song says it is in
    assert detect_key(_render_song(data).mix, sr=48000).name == key


def test_night_shift_chorus_reads_a_minor_and_a_whole_step_up_b_minor():
    """The chorus alone (what edit-chorus-up-a-step's key check hears), as written and transposed up 2."""
    data = _song("night-shift")
    spb = 60.0 / data["tempo"]
    a, b = int(round(16 * spb * 48000)), int(round(32 * spb * 48000))
    assert detect_key(_render_song(data).mix[:, a:b], sr=48000).name == "A minor"
    for track in data["tracks"]:
        if track["instrument"]["device"] != "core.drums":
            for clip in track["clips"]:
                for note in clip["notes"]:
                    note["p"] += 2
    assert detect_key(_render_song(data).mix[:, a:b], sr=48000).name == "B minor"


# ------------------------------------------------------------------ the tonic step and the peak chroma

DIATONIC_C = np.array([1.0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1])  # the notes of C major and of A minor, equally


def _evidence(pc: int) -> np.ndarray:
    e = np.zeros(12)
    e[pc] = 1.0
    return e


def test_tonic_step_chooses_between_relative_keys_by_the_bass():
    assert key_from_chroma(DIATONIC_C, _evidence(9)).name == "A minor"
    assert key_from_chroma(DIATONIC_C, _evidence(0)).name == "C major"
    # evidence for neither candidate's tonic (E) leaves the profile's choice
    assert key_from_chroma(DIATONIC_C, _evidence(4)).name == key_from_chroma(DIATONIC_C, None).name


def test_confidence_is_the_chosen_keys_own_correlation():
    for tonic, profile in ((9, np.roll(MINOR_PROFILE, 9)), (0, np.array(MAJOR_PROFILE))):
        k = key_from_chroma(DIATONIC_C, _evidence(tonic))
        assert k.confidence == pytest.approx(np.corrcoef(DIATONIC_C, profile)[0, 1], abs=1e-12)
        assert k.runner_up != k.name


@pytest.mark.parametrize("midi", range(23, 35))  # B0 (30.9 Hz) to A#1 (58.3 Hz): under 2 bins a semitone at 48 kHz
def test_a_low_bass_note_lands_in_its_pitch_class(midi):
    """A bin's centre frequency can lie nearer the neighbouring semitone down here; the peak's interpolated
    frequency does not (B0 and D1 read C and D# by their nearest bin)."""
    sr = 48000
    t = np.arange(2 * sr) / sr
    x = np.sin(2 * np.pi * 440.0 * 2 ** ((midi - 69) / 12) * t).astype(np.float32)
    bass = peak_chroma(x, sr=sr).bass.sum(axis=0)
    assert int(np.argmax(bass)) == midi % 12


def test_silence_has_zero_confidence():
    k = detect_key(np.zeros(3 * SR), sr=SR)
    assert k.confidence == 0.0


@pytest.mark.parametrize("pc", [0, 7])
def test_single_major_triad_reads_its_major_key(pc):
    k = detect_key(tone([60 + pc, 64 + pc, 67 + pc], 3.0), sr=SR)
    assert (k.root, k.scale) == (PITCH_CLASSES[pc], "major")


def test_under_two_seconds_is_refused():
    with pytest.raises(TooShortError, match=r"^too short for the key: 1.9 s, needs 2 s$"):
        detect_key(tone([60, 64, 67], 1.9), sr=SR)
