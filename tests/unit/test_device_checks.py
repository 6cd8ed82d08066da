"""Devices on the real track, probe families, a note's pitch and length (docs/checks.md, "Devices").

Each reading is checked on signals whose answer is known in closed form; the scoring tests pin the class
of answer each check exists to stop (a device that acts only on the bench's probes, a table of probe
tempos) and an honest answer done another way."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from pytest_overdub.bench import device_checks as dc
from pytest_overdub.bench.model import DecayTimeCheck, ToneGainCheck, TrackBandCheck
from pytest_overdub.bench.tasks import bundled_bench, score_path
from pytest_overdub.errors import TaskError
from pytest_overdub.song.model import load_song
from pytest_overdub.song.ops import apply_ops

ROOT = Path(__file__).resolve().parents[2]
SR = 48000
BENCH = bundled_bench()


def _stereo(x):
    return np.stack([x, x])


def _decaying(f_hz, *, t60_s=0.8, n_s=1.0, partials=((1.0, 1.0),)):
    t = np.arange(int(n_s * SR)) / SR
    env = 10 ** (-3 * t / t60_s)
    return sum(a * np.sin(2 * np.pi * r * f_hz * t) for r, a in partials) * env


# --- a note's pitch and length ----------------------------------------------------------------------

def test_a_sine_sounds_at_its_pitch_and_a_detuned_one_reads_its_cents():
    assert dc.partial_cents(_stereo(_decaying(440.0)), sr=SR, f0_hz=440.0) < 0.5
    off = dc.partial_cents(_stereo(_decaying(440.0 * 2 ** (20 / 1200))), sr=SR, f0_hz=440.0)
    assert off == pytest.approx(20.0, abs=0.5)


def test_a_bell_with_inharmonic_partials_and_a_hum_counts_one_without_its_fundamental_does_not():
    bell = ((0.5, 0.6), (1.0, 1.0), (1.183, 0.5), (1.506, 0.4), (2.0, 0.6), (2.662, 0.2))
    assert dc.partial_cents(_stereo(_decaying(262.0, partials=bell)), sr=SR, f0_hz=262.0) < 0.5
    hollow = tuple(p for p in bell if p[0] != 1.0)
    assert dc.partial_cents(_stereo(_decaying(262.0, partials=hollow)), sr=SR, f0_hz=262.0) == math.inf


def test_a_fundamental_more_than_15_db_under_the_loudest_partial_is_not_the_note():
    # a tone a fifth up with the note's own tone 25 dB (0.056) under it is heard at the fifth
    fifth = ((1.5, 1.0), (1.0, 0.056))
    assert dc.partial_cents(_stereo(_decaying(262.0, partials=fifth)), sr=SR, f0_hz=262.0) == math.inf
    # 12 dB (0.25) under it, the note's tone is still a clear part of the sound
    near = ((1.5, 1.0), (1.0, 0.25))
    assert dc.partial_cents(_stereo(_decaying(262.0, partials=near)), sr=SR, f0_hz=262.0) < 0.5


def test_a_click_and_a_noise_burst_have_no_pitch():
    click = np.zeros(SR // 2)
    click[:3] = 0.5
    assert dc.partial_cents(_stereo(click), sr=SR, f0_hz=262.0) == math.inf
    noise = np.random.default_rng(7).standard_normal(SR // 2) * np.exp(-np.arange(SR // 2) / (0.1 * SR))
    assert dc.partial_cents(_stereo(noise), sr=SR, f0_hz=262.0) == math.inf


def _plucked(f_hz, *, n_s=1.5, seed=3):
    """A Karplus-Strong string: a noise burst one period long through a damped averaging loop."""
    from scipy.signal import lfilter

    period = max(2, int(round(SR / f_hz - 0.5)))
    loop = np.zeros(period + 2)
    loop[0], loop[period], loop[period + 1] = 1.0, -0.4995, -0.4995
    burst = np.zeros(int(n_s * SR))
    burst[:period] = np.random.default_rng(seed).uniform(-1, 1, period)
    return lfilter([1.0], loop, burst)


def test_a_faint_tone_inside_a_noise_burst_is_no_note_at_its_pitch():
    # the tone is a clear spectral peak (the old reading passed it at under a cent) but 17 dB under the
    # noise: a crash with a whistle in it, not a note at that pitch
    n = int(1.2 * SR)
    t = np.arange(n) / SR
    crash = np.random.default_rng(7).uniform(-1, 1, n) * np.exp(-6.91 * t / 1.2)
    faint = _stereo(crash + 0.12 * np.sin(2 * np.pi * 392.0 * t) * (t < 0.5))
    assert dc.partial_cents(faint[:, : SR // 2], sr=SR, f0_hz=392.0) < 1.0
    assert dc.tonal_share(faint, sr=SR) < 0.1
    assert dc.note_pitch_cents(faint, sr=SR, f0_hz=392.0) == math.inf


@pytest.mark.parametrize("pitch", [43, 60, 84])
def test_struck_and_plucked_notes_hold_their_energy_in_partials(pitch):
    # the honest kinds at the probes' lowest pitch and the bell's register: a hum-and-prime bell, a sine,
    # a Karplus-Strong string (its attack is a noise burst) all read at their pitch (the string's integer
    # delay leaves it up to 14 cents flat up high); the lowest share, the bell's at G2, is 0.46
    f = 440.0 * 2 ** ((pitch - 69) / 12)
    bell = ((0.5, 0.5), (1.0, 0.6), (1.2, 0.4), (1.5, 0.25), (2.0, 0.5), (2.5, 0.2), (3.0, 0.15))
    for x in (_decaying(f, partials=bell, n_s=1.5), _decaying(f, n_s=1.5), _plucked(f)):
        assert dc.tonal_share(_stereo(x), sr=SR) > 0.4 > dc.TONAL_MIN
        assert dc.note_pitch_cents(_stereo(x), sr=SR, f0_hz=f) < 15.0


def test_sounding_time_is_where_the_envelope_falls_30_db():
    # -60 dB at 0.8 s: -30 dB at 0.4 s, read to the end of its 10 ms frame
    assert dc.sounding_s(_stereo(_decaying(440.0, t60_s=0.8)), sr=SR) == pytest.approx(0.40, abs=0.011)
    click = np.zeros(SR)
    click[:3] = 0.5
    assert dc.sounding_s(_stereo(click), sr=SR) == pytest.approx(0.01)


# --- the real-track readings -------------------------------------------------------------------------

def _snaps(n_s=6.0, every_s=1.2):
    x = np.zeros(int(n_s * SR))
    burst = np.random.default_rng(3).standard_normal(int(0.03 * SR)) * np.exp(-np.arange(int(0.03 * SR)) / 200)
    for k in range(int(n_s / every_s)):
        a = int(k * every_s * SR) + 100
        x[a:a + burst.size] += 0.3 * burst
    return _stereo(x)


def _echo(x, *, delay_s, gain, feedback):
    d = int(round(delay_s * SR))
    out, tap, g = x.copy(), x, gain
    for _ in range(12):
        tap = np.pad(tap, ((0, 0), (d, 0)))[:, : x.shape[1]]
        out += g * tap
        g *= feedback
    return out


FIRST_HIT = (100 / SR, 100 / SR + 0.1)


def test_cross_correlation_finds_the_first_repeat_even_with_heavy_feedback():
    dry = _snaps()
    assert dc.echo_lag_ms(dry, _echo(dry, delay_s=0.45, gain=0.5, feedback=0.35), sr=SR, hi_ms=900,
                          hit=FIRST_HIT) == pytest.approx(450.0, abs=0.03)
    # feedback 0.95: earlier snaps' later repeats land in the window too (the 9th at 3600 ms = 450 ms after
    # the third snap after); read from the first hit alone, none do, and the level is the first repeat's
    heavy = _echo(dry, delay_s=0.45, gain=0.5, feedback=0.95)
    assert dc.echo_repeat(dry, heavy, sr=SR, hi_ms=900, hit=FIRST_HIT) == \
        (pytest.approx(450.0, abs=0.03), pytest.approx(-6.02, abs=0.01))
    assert dc.echo_repeat(dry, heavy, sr=SR, hi_ms=900)[1] > -5.5  # every hit at once: biased up
    assert dc.echo_lag_ms(dry, dry.copy(), sr=SR, hit=FIRST_HIT) == math.inf
    lag, level = dc.echo_repeat(dry, _echo(dry, delay_s=0.45, gain=0.25, feedback=0.35), sr=SR, hi_ms=900,
                                hit=FIRST_HIT)
    assert (lag, level) == (pytest.approx(450.0, abs=0.03), pytest.approx(-12.04, abs=0.05))


def test_every_hit_must_repeat_not_only_the_first():
    dry = _snaps()
    hits = [(k * 1.2 + 100 / SR, k * 1.2 + 100 / SR + 0.1) for k in range(5)]
    every = _echo(dry, delay_s=0.45, gain=0.5, feedback=0.35)
    assert dc.repeat_levels_db(dry, every, sr=SR, hits=hits, lag_ms=450.0) == \
        [pytest.approx(-6.02, abs=0.01)] * 5
    first_only = dry.copy()
    first_only[:, : int(1.0 * SR)] = _echo(dry, delay_s=0.45, gain=0.5, feedback=0.0)[:, : int(1.0 * SR)]
    levels = dc.repeat_levels_db(dry, first_only, sr=SR, hits=hits, lag_ms=450.0)
    assert levels[0] == pytest.approx(-6.02, abs=0.01) and max(levels[1:]) == -120.0


def test_band_gain_and_hit_change_read_plain_gains():
    dry = _snaps()
    assert dc.band_gain_db(dry, 0.5 * dry, sr=SR, band=(1000, 3000)) == pytest.approx(-6.0206, abs=1e-3)
    with pytest.raises(TaskError, match="no energy in 20000-22000 Hz"):
        dc.band_gain_db(np.zeros((2, 4800)), np.zeros((2, 4800)), sr=SR, band=(20000, 22000))
    onsets = [k * 1.2 + 100 / SR for k in range(5)]
    assert dc.hit_change_db(dry, 0.5 * dry, sr=SR, onsets=onsets) == pytest.approx(6.0206, abs=1e-3)
    assert dc.hit_change_db(dry, _echo(dry, delay_s=0.45, gain=0.5, feedback=0.35), sr=SR,
                            onsets=onsets) < 0.01


def test_kept_spectra_give_the_figures_a_fresh_fft_gives(monkeypatch):
    """A scorer keeps the spectra of recent renders by their samples: every figure read through them is
    bit-identical to one computed afresh, and a changed sample is computed afresh."""
    from pytest_overdub import runtime

    dry = _snaps()
    wet = _echo(dry, delay_s=0.45, gain=0.5, feedback=0.35)

    def figures():
        return (dc.band_gain_db(dry, wet, sr=SR, band=(1000, 3000)), dc.band_gain_db(dry, wet, sr=SR, band=(0, 900)),
                dc.echo_repeat(dry, wet, sr=SR, hi_ms=900, hit=FIRST_HIT), dc.echo_repeat(dry, wet, sr=SR, hi_ms=900))

    fresh = figures()
    monkeypatch.setattr(runtime, "active", lambda: True)
    dc.SPECTRA.clear()
    assert figures() == fresh and figures() == fresh
    assert dc.SPECTRA.hits > dc.SPECTRA.misses > 0
    misses = dc.SPECTRA.misses
    other = wet.copy()
    other[1, 1234] += 1e-9
    assert dc.band_gain_db(dry, other, sr=SR, band=(1000, 3000)) != fresh[0]   # the spectrum changed
    assert dc.SPECTRA.misses == misses + 1
    kept = dc.SPECTRA.get(dry, "power", lambda a: np.abs(np.fft.rfft(a, axis=-1)) ** 2)
    with pytest.raises(ValueError):
        kept[0, 0] = 1.0
    dc.SPECTRA.clear()


def test_a_note_still_ringing_at_the_next_onset_reads_the_whole_gap():
    held = np.zeros((2, int(5 * SR)))
    held[:, : int(2.4 * SR)] = 0.1  # sounds at -20 dBFS until the next note strikes
    assert dc.note_decay_s(held, sr=SR, onsets=[0.0, 2.4], threshold_db=-60) == pytest.approx(2.4)


# --- seeds --------------------------------------------------------------------------------------------

def test_a_note_too_quiet_to_cross_the_threshold_must_still_die_40_db_under_its_peak():
    # an organ at -64 dBFS held for 2 s never crosses -60 dBFS; 40 dB under its own peak it holds 2 s
    t = np.arange(int(2.4 * SR)) / SR
    organ = _stereo(10 ** (-64 / 20) * np.sin(2 * np.pi * 262.0 * t) * (t < 2.0))
    assert dc.note_decay_s(organ, sr=SR, onsets=[0.0], threshold_db=-60) == 0.0
    assert dc.note_decay_s(organ, sr=SR, onsets=[0.0], threshold_db=-60, under_peak_db=40) == \
        pytest.approx(2.0, abs=0.01)
    # a loud note keeps the absolute threshold: T60 0.8 s from 0 dBFS falls under -60 dBFS at 0.8 s
    bell = _stereo(_decaying(262.0, t60_s=0.8, n_s=2.0))
    assert dc.note_decay_s(bell, sr=SR, onsets=[0.0], threshold_db=-60, under_peak_db=40) == \
        pytest.approx(0.8, abs=0.011)


def test_the_probe_seed_ignores_the_hash_seed_and_follows_the_kernel():
    script = ("from pytest_overdub.bench.device_checks import probe_seed;"
              "from pytest_overdub.song.model import load_song;"
              f"s = load_song({str(ROOT / 'songs' / 'lab.json')!r});"
              "print(probe_seed(s, s.tracks[0], salt='low'))")
    seeds = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONHASHSEED": h}).stdout for h in ("0", "1", "12345")}
    assert len(seeds) == 1
    lab = load_song(ROOT / "songs" / "lab.json")
    one = json.loads((ROOT / "oracles" / "device-rumble-filter.json").read_text())["ops"]
    other = json.loads(json.dumps(one).replace("250", "240"))
    a, b = apply_ops(lab, one), apply_ops(lab, other)
    room_a, room_b = a.track("Room"), b.track("Room")
    assert dc.probe_seed(a, room_a, salt="low") != dc.probe_seed(b, room_b, salt="low")
    assert dc.probe_seed(a, room_a, salt="low") != dc.probe_seed(a, room_a, salt="sub")


def test_family_ranges_and_real_track_fields_are_checked():
    with pytest.raises(ValidationError, match=r"velocities \[1.0, 0.5\] has lo > hi"):
        ToneGainCheck(id="t", label="t", kind="toneGain", target=(None, None), track="Room", pitch=43,
                  velocities=(1.0, 0.5))
    with pytest.raises(ValidationError, match="stretch"):
        DecayTimeCheck(id="d", label="d", kind="decayTime", target=(None, None), track="Bell",
                   notes=[{"p": 60, "d": 1}], stretch=(2, 1))
    with pytest.raises(ValidationError, match="trackBand needs band"):
        TrackBandCheck(id="b", label="b", kind="trackBand", target=(None, None), track="Room", band=(200, 100))


# --- the classes of answer the checks exist for -------------------------------------------------------

@pytest.mark.parametrize("name", ["device-dotted-echo.cheat-probe-only", "device-dotted-echo.cheat-tempo-table",
                                  "device-dotted-echo.cheat-first-hit-only",
                                  "device-decaying-instrument.cheat-clicks",
                                  "device-rumble-filter.cheat-silence",
                                  "device-rumble-filter.cheat-sine-detector"])
def test_a_device_that_answers_only_the_probes_fails(name):
    data = json.loads((ROOT / "near_misses" / f"{name}.json").read_text())
    r = score_path(BENCH.task(data["task"]), ROOT / "near_misses" / f"{name}.json", bench=BENCH, trusted=True)
    assert r.score < 0.5
    assert [c for c in data["fails"] if r.check(c).score >= 1.0] == []


@pytest.mark.parametrize("name", ["device-dotted-echo.alt-multitap", "device-decaying-instrument.alt-modal-bell",
                                  "device-rumble-filter.alt-fft"])
def test_an_honest_device_built_another_way_passes(name):
    task = BENCH.task(name.split(".")[0])
    assert score_path(task, ROOT / "oracles" / f"{name}.json", bench=BENCH, trusted=True).score >= 0.9
