"""Holes in the audio tasks' checks, one class per test: the cheap answer that used to pass fails, the
honest one passes (docs/audio-tasks.md, "The tasks, and what each guards against"). Signals are synthetic
so the figures are analytic where they can be; thresholds are read from the task files, so a test fails
if a task's gate moves away from what it must separate."""

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_overdub.bench.audio import chains as ch
from pytest_overdub.bench.audio.readings import hit_change, sequence
from pytest_overdub.measure.compare import (block_crest_db, block_peak_db, dither_floor_db, hit_times_s,
                                            image_correlation, incoherent_db, latency_samples, polarity_blocks_low,
                                            polarity_correlation, unexplained_db)

SR = 48000
TASKS = Path(__file__).resolve().parents[2] / "tasks"
LSB16 = 2.0 ** -15


def _gate(task: str, check: str) -> tuple[list, float]:
    data = json.loads((TASKS / f"{task}.json").read_text(encoding="utf-8"))
    c = next(c for c in data["checks"] if c["id"] == check)
    assert c.get("gate"), f"{task}::{check} must be a gate"
    return c["target"], c["soft"]


# --- dither: the 16-bit copy's difference from the 24-bit master is dither everywhere ----------------

def _master(music_s: float = 3.0, tail_s: float = 1.0) -> np.ndarray:
    """Busy noise 'music' then digital silence, on the 24-bit grid."""
    x = 0.2 * np.random.default_rng(2).standard_normal((2, int(music_s * SR)))
    x = np.concatenate([x, np.zeros((2, int(tail_s * SR)))], axis=1)
    return np.round(x * 2.0 ** 23) / 2.0 ** 23


def _context(files: dict):
    """An audio task's context holding ``files`` by name (an answer file, or ``input:<name>``)."""
    from pytest_overdub.bench.audio.score import AudioContext

    return AudioContext(inputs={k[len("input:"):]: v for k, v in files.items() if k.startswith("input:")},
                        answer={k: v for k, v in files.items() if not k.startswith("input:")}, sr=SR)


def _as_float(q: np.ndarray) -> np.ndarray:
    return q.astype(np.float64) * LSB16


def test_tpdf_dither_reads_half_an_lsb_everywhere_and_tail_noise_over_rounding_reads_rounding():
    (lo, _), soft = _gate("master-streaming-single", "dither-throughout")
    m = _master()
    tpdf = dither_floor_db(_as_float(ch.dither16(m, seed=1)), m, sr=SR)
    assert tpdf == pytest.approx(20 * np.log10(0.5 * LSB16), abs=0.5)  # -96.3 dBFS: 0.5 LSB rms
    assert tpdf >= lo
    shaped = dither_floor_db(_as_float(ch.shaped_dither16(m, seed=2)), m, sr=SR)
    assert shaped > tpdf  # noise shaping adds error power
    assert dither_floor_db(_as_float(ch.truncate16(m)), m, sr=SR) == -120.0  # silence rounds to itself
    pasted = ch.truncate16(m)
    pasted[:, -SR:] = ch.dither16(m[:, -SR:], seed=1)  # dither noise in the silent tail only
    cheat = dither_floor_db(_as_float(pasted), m, sr=SR)
    assert cheat == pytest.approx(20 * np.log10(LSB16 / np.sqrt(12.0)), abs=0.3)  # -101.1: rounding's
    assert cheat < lo - soft  # scores 0 on the gate


def test_one_undithered_channel_or_truncation_sets_the_dither_floor():
    (lo, _), _soft = _gate("master-streaming-single", "dither-throughout")
    m = _master(tail_s=0.0)
    half = ch.dither16(m, seed=1)
    half[1] = ch.truncate16(m)[1]
    assert dither_floor_db(_as_float(half), m, sr=SR) < lo
    floor = np.floor(m / LSB16).astype(np.int16)  # truncation: error -0.5 LSB ± LSB/√12
    assert dither_floor_db(_as_float(floor), m, sr=SR) == pytest.approx(20 * np.log10(LSB16 / np.sqrt(12.0)),
                                                                        abs=0.3)


# --- parallel drums: the lifted body is the hits themselves, not a tail ------------------------------

def _drums(seconds: float = 4.0) -> np.ndarray:
    """A hit every 500 ms: a decaying 60 Hz thump and a decaying noise burst."""
    rng = np.random.default_rng(4)
    t = np.arange(int(0.3 * SR)) / SR
    x = np.zeros((2, int(seconds * SR)))
    for start in np.arange(0.25, seconds - 0.3, 0.5):
        a = int(start * SR)
        hit = 0.6 * np.sin(2 * np.pi * 60 * t) * np.exp(-t / 0.08) + 0.3 * rng.standard_normal(t.size) * np.exp(-t / 0.03)
        x[:, a: a + t.size] += hit
    return x


def test_incoherent_share_is_analytic_for_a_filter_and_for_independent_sound():
    s = np.random.default_rng(6).standard_normal((2, 4 * SR)) * 0.1
    assert incoherent_db(2.0 * s, s, sr=SR, start_s=0, stop_s=4) == -120.0
    lowpassed = ch.eq(s, lp=3000)  # a filter of the source: all of it explained
    assert incoherent_db(s + lowpassed, s, sr=SR, start_s=0, stop_s=4) < -30
    other = np.random.default_rng(7).standard_normal((2, 4 * SR)) * 0.1
    # an equal part of independent sound: half the power unexplained, 10 log10(1/2), less the estimate's
    # bias (about 1/(2 x 374 frames) of coherence)
    assert incoherent_db(s + other, s, sr=SR, start_s=0, stop_s=4) == pytest.approx(-3.01, abs=0.1)


def test_a_reverb_lifting_the_body_fails_and_parallel_compression_passes():
    (_, hi), soft = _gate("mixdown-parallel-drums", "body-source")
    from pytest_overdub.bench.audio.inputs import run_effect

    x = _drums()
    comp = dict(threshold=-40, ratio=20, attack=0.1, release=80, knee=0, makeup=0)
    honest = ch.parallel(x, wet_db=25.0, dry_db=-1.0, **comp)
    assert hit_change(honest, x, sr=SR, measure="body") > 3.0
    assert hit_change(honest, x, sr=SR, measure="incoherent") < hi  # the hits, gain-ridden
    late = np.concatenate([np.zeros((2, 240)), honest[:, :-240]], axis=1)  # a chain's 5 ms latency
    assert latency_samples(late, x, sr=SR) == 240
    assert hit_change(late, x, sr=SR, measure="incoherent") == hit_change(honest, x, sr=SR, measure="incoherent")
    # delivered in inverted polarity, late or not: still the hits (the lag is found either polarity)
    assert hit_change(-late, x, sr=SR, measure="incoherent") == hit_change(honest, x, sr=SR, measure="incoherent")
    verb = run_effect(x, "core.verb", {"mix": 1.0, "predelay": 0, "decay": 1.0, "size": 0.5, "lowcut": 20})
    cheat = x + ch.gain(verb, 10.0)
    assert hit_change(cheat, x, sr=SR, measure="body") > 3.0  # it lifts the body as much
    assert abs(hit_change(cheat, x, sr=SR, measure="transient")) < 1.0  # and keeps the transients
    assert hit_change(cheat, x, sr=SR, measure="incoherent") > hi + soft  # but it is not the hits
    echo = x + np.concatenate([np.zeros((2, int(0.055 * SR))), x], axis=1)[:, : x.shape[1]]
    assert hit_change(echo, x, sr=SR, measure="body") > 3.0
    assert hit_change(echo, x, sr=SR, measure="incoherent") > hi  # sound from 55 ms before


def _kit(seconds: float = 8.5) -> np.ndarray:
    """A kick every 500 ms from 250 ms (a decaying 60 Hz thump: a loud body) and a hat 250 ms after each (a
    short noise burst: its body is the kick's tail, about 14 dB quieter)."""
    rng = np.random.default_rng(4)
    x = np.zeros((2, int(seconds * SR)))
    for start in np.arange(0.25, seconds - 0.5, 0.5):
        a = int(start * SR)
        t = np.arange(x.shape[1] - a) / SR
        x[:, a:] += 0.6 * np.sin(2 * np.pi * 60 * t) * np.exp(-t / 0.08)
        b, n = a + int(0.25 * SR), int(0.2 * SR)
        x[:, b: b + n] += 0.3 * rng.standard_normal(n) * np.exp(-np.arange(n) / SR / 0.03)
    return x


def _ride(x: np.ndarray, times: np.ndarray, ridden: np.ndarray, gain_db: float) -> np.ndarray:
    """``x`` with its gain up ``gain_db`` from 30 ms after each ridden hit to 5 ms before the next hit (the
    transient untouched, the whole body window lifted by exactly ``gain_db``)."""
    y = x.copy()
    for i in np.flatnonzero(ridden):
        end = times[i + 1] - 0.005 if i + 1 < len(times) else x.shape[1] / SR
        y[:, int((times[i] + 0.03) * SR): int(end * SR)] *= 10 ** (gain_db / 20)
    return y


def test_half_the_hits_ridden_meets_the_median_and_fails_the_quiet_bodies():
    """Every other hit (here every kick) or the first half of the song ridden 8 dB: the median body of 16
    hits at 0 dB and 16 at 8 dB is (0 + 8) / 2 = 4.0 dB, in the target, while the quieter-bodied half (the 16
    hats) reads 0.0: every other hit leaves all of them at 0 dB, the first half of the song 8 of them, and
    four in five of them reach no lift. Every hit ridden 4 dB reads 4.0 on both; a compressed copy under the
    dry drums lifts the quiet bodies more than the median hit's."""
    from pytest_overdub.bench.model import HitsCheck

    data = json.loads((TASKS / "mixdown-parallel-drums.json").read_text(encoding="utf-8"))
    check = next(c for c in data["checks"] if c["id"] == "body-quiet")
    (lo, _), soft = _gate("mixdown-parallel-drums", "body-quiet")
    (body_lo, body_hi) = next(c for c in data["checks"] if c["id"] == "body")["target"]
    x = _kit()
    times = hit_times_s(x, sr=SR)
    assert len(times) == 32 and np.allclose(times, np.arange(0.25, 8.25, 0.25), atol=0.002)

    def quiet(y):
        return HitsCheck.model_validate(check).value(_context({"drums.wav": y, "input:drums.wav": x}))

    k = np.arange(times.size)
    for ridden in (k % 2 == 0, times < x.shape[1] / SR / 2):
        y = _ride(x, times, ridden, 8.0)
        assert hit_change(y, x, sr=SR, measure="body") == pytest.approx(4.0, abs=1e-9)
        assert body_lo <= 4.0 <= body_hi
        assert hit_change(y, x, sr=SR, measure="transient") == 0.0
        assert quiet(y) == pytest.approx(0.0, abs=1e-6)  # read in the audio band: the same to 1e-9 dB
        assert 0.0 <= lo - soft  # so the gate scores 0
    every = _ride(x, times, k >= 0, 4.0)
    assert quiet(every) == pytest.approx(4.0, abs=1e-6)
    comp = dict(threshold=-40, ratio=20, attack=0.1, release=80, knee=0, makeup=0)
    honest = ch.parallel(x, wet_db=20.0, dry_db=-1.0, **comp)
    body = hit_change(honest, x, sr=SR, measure="body")
    assert body_lo <= body <= body_hi and abs(hit_change(honest, x, sr=SR, measure="transient")) < 1.0
    assert quiet(honest) > max(body, lo)


# --- EP: level matched, not crushed ----------------------------------------------------------------

def test_block_crest_is_a_sine_s_3_db_whatever_its_gain():
    t = np.arange(2 * SR) / SR
    sine = 0.5 * np.sin(2 * np.pi * 500 * t)
    assert block_crest_db(np.stack([sine, sine]), sr=SR) == pytest.approx(10 * np.log10(2.0), abs=1e-6)
    assert block_crest_db(np.stack([sine, sine]) * 0.1, sr=SR) == pytest.approx(10 * np.log10(2.0), abs=1e-6)


def test_a_click_planted_in_every_block_does_not_restore_a_crushed_song_s_crest_factor():
    (_, hi), soft = _gate("master-ep-sequence", "dynamics")
    a = _drums(6.0) * 0.5
    crushed = ch.gain(ch.master_to(a, target_lufs=-9.0, ceiling_db=-1.5, release_ms=5), -6.0)
    assert block_crest_db(a, sr=SR) - block_crest_db(crushed, sr=SR) > hi + soft
    clicked = crushed.copy()
    clicked[:, :: int(0.4 * SR)] = 10 ** (-1.6 / 20)  # one sample, both channels, each 400 ms block
    # the largest sample of each block is the click's (it read the crest factor back to the input's)
    assert np.abs(clicked[:, : int(0.4 * SR)]).max() > np.abs(a[:, : int(0.4 * SR)]).max()
    assert block_crest_db(clicked, sr=SR) == pytest.approx(block_crest_db(crushed, sr=SR), abs=0.01)


@pytest.mark.parametrize("width", [2, 3, 5])
def test_a_short_burst_planted_in_every_block_does_not_restore_a_crushed_song_s_crest_factor(width):
    """A sample was held to 1.5 times its two nearest neighbours, so a click two samples wide vouched for
    itself and read the crushed song's crest factor back (a drop of 0.9 dB, passing the gate); each sample is
    held to the music 6 to 54 samples around it now."""
    (_, hi), soft = _gate("master-ep-sequence", "dynamics")
    a = _drums(6.0) * 0.5
    crushed = ch.gain(ch.master_to(a, target_lufs=-9.0, ceiling_db=-1.5, release_ms=5), -6.0)
    clicked = crushed.copy()
    for k in range(width):
        clicked[:, k:: int(0.4 * SR)] = 10 ** (-1.6 / 20)
    drop = block_crest_db(a, sr=SR) - block_crest_db(clicked, sr=SR)
    assert drop == pytest.approx(block_crest_db(a, sr=SR) - block_crest_db(crushed, sr=SR), abs=0.3)
    assert drop > hi + soft


def test_crushing_songs_to_equal_loudness_fails_and_gain_matching_passes():
    (_, hi), soft = _gate("master-ep-sequence", "dynamics")
    a, b = _drums(6.0) * 0.5, _drums(6.0) * 0.25
    gap = np.zeros((2, SR))
    lift = ch.lufs(a) - ch.lufs(b)
    honest = np.concatenate([a, gap, ch.gain(b, lift)], axis=1)  # level matched by gain
    assert sequence(honest, [a, b], sr=SR, gap_s=1.0, measure="crest") == pytest.approx(0.0, abs=1e-9)
    crushed = [ch.master_to(p, target_lufs=-14.0, ceiling_db=-1.5, release_ms=30) for p in (a, b)]
    crushed[1][:, SR] = 0.84  # a spike left in: the song's PLR is back, its blocks are not
    cheat = np.concatenate([crushed[0], gap, crushed[1]], axis=1)
    assert abs(sequence(cheat, [a, b], sr=SR, gap_s=1.0, measure="spread")) < 1.0  # equal loudness
    assert sequence(cheat, [a, b], sr=SR, gap_s=1.0, measure="crest") > hi + soft


# --- match reference: the answer is the mix EQ'd, nothing blended in ----------------------------------

def test_another_sound_blended_under_an_eq_shows_and_a_late_inverted_eq_does_not():
    (_, hi), soft = _gate("master-match-reference", "other")
    rng = np.random.default_rng(11)
    mix = _drums(6.0) + 0.05 * rng.standard_normal((2, 6 * SR))
    eqd = ch.eq(mix, low=9, high=-9, lowf=200, highf=3000)
    late = -np.concatenate([np.zeros((2, int(0.03 * SR))), eqd[:, : -int(0.03 * SR)]], axis=1)
    assert unexplained_db(eqd, mix, sr=SR) < hi - 10
    assert unexplained_db(late, mix, sr=SR) < hi - 10  # 30 ms late, inverted: still an EQ of the mix
    other = rng.standard_normal(mix.shape)
    other *= np.sqrt(np.mean(eqd ** 2) / np.mean(other ** 2)) * 10 ** (-10 / 20)  # 10 dB under the music
    # independent sound at a tenth of the power: 0.1 / 1.1 of the answer is unexplained (-10.4 dB)
    assert unexplained_db(eqd + other, mix, sr=SR) == pytest.approx(10 * np.log10(0.1 / 1.1), abs=0.5)
    assert unexplained_db(eqd + other, mix, sr=SR) > hi


# --- mid/side: the top's side made wider is the mix's own side, not noise ---------------------------------

def test_a_side_shelved_up_is_explained_and_noise_added_to_the_side_is_not():
    """Of the side above 4 kHz: the oracle's shelf (+3 dB through LR4 crossovers) is a filter of the mix's
    side; noise added there with the power the top already has is half the top's power: 10 log10(1/2)."""
    from pytest_overdub.bench.model import UnexplainedCheck

    (_, hi), soft = _gate("master-mid-side", "top-is-side")
    rng = np.random.default_rng(12)
    mid, side = rng.standard_normal(6 * SR), 0.3 * rng.standard_normal(6 * SR)
    mix = ch.left_right(mid, side)
    shelved = ch.ms_master(mix, mono_below_hz=120, wide_above_hz=4000, wide_db=3.0)
    top = ch.ms_master(mix, mono_below_hz=3999, wide_above_hz=4000, wide_db=0.0)  # the side above 4 kHz
    top_side = (top[0] - top[1]) / 2
    noise = ch.ms_master(ch.left_right(np.zeros(6 * SR), rng.standard_normal(6 * SR)), mono_below_hz=3999,
                         wide_above_hz=4000, wide_db=0.0)
    noise *= np.sqrt(np.mean(top_side ** 2) / np.mean(((noise[0] - noise[1]) / 2) ** 2))
    noisy = ch.ms_master(mix, mono_below_hz=120, wide_above_hz=4000, wide_db=0.0) + noise

    check = UnexplainedCheck.model_validate(next(c for c in json.loads(
        (TASKS / "master-mid-side.json").read_text(encoding="utf-8"))["checks"] if c["id"] == "top-is-side"))

    def ctx(answer):
        return _context({"master.wav": answer, "input:mix.wav": mix})

    assert check.value(ctx(shelved)) < hi - 10
    assert check.value(ctx(noisy)) == pytest.approx(10 * np.log10(0.5), abs=0.5)
    assert check.value(ctx(noisy)) > hi + soft  # the gate's score is 0
    assert check.value(ctx(mix[:1])) == -120.0  # one channel: no side, nothing to explain


# --- left and right: a swapped answer mirrors the image; EQ, delay, polarity and one-sided width do not --

def _panned(seconds: float) -> np.ndarray:
    """Two independent sounds panned left and right, over a little uncorrelated room."""
    rng = np.random.default_rng(5)
    n = int(seconds * SR)
    a, b, room = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal((2, n))
    return np.stack([0.9 * a + 0.3 * b, 0.3 * a + 0.9 * b]) + 0.2 * room


@pytest.mark.parametrize("task_id", ["master-mid-side", "master-streaming-single", "master-match-reference",
                                     "mixdown-clear-mud"])
def test_swapped_channels_read_minus_one_and_fail_the_image_gate(task_id):
    (lo, _), soft = _gate(task_id, "image")
    x = _panned(4.0)
    assert image_correlation(x, x, sr=SR) == pytest.approx(1.0)
    assert image_correlation(x[::-1], x, sr=SR) == pytest.approx(-1.0)
    assert image_correlation(x[::-1], x, sr=SR) < lo - soft  # scores 0


def test_the_image_survives_eq_delay_a_polarity_flip_and_side_gain_and_a_mono_input_has_none():
    x = _panned(4.0)
    late = np.concatenate([np.zeros((2, int(0.03 * SR))), x[:, : -int(0.03 * SR)]], axis=1)
    mid, side = x[0] + x[1], x[0] - x[1]
    wider = np.stack([mid + 2 * side, mid - 2 * side]) / 2  # the side 6 dB up
    assert image_correlation(-x, x, sr=SR) == pytest.approx(1.0)  # both channels inverted: the same image
    assert image_correlation(wider, x, sr=SR) == pytest.approx(1.0)
    # an EQ scales each bin's cross-spectrum by |G(f)|^2 >= 0: it reweights the bins, never flips one
    assert image_correlation(ch.eq(x, low=9, high=-9, lowf=200, highf=3000), x, sr=SR) > 0.3
    assert image_correlation(late, x, sr=SR) > 0.8  # 30 ms late: the answer's own cross-spectrum is unmoved
    mono = np.stack([x[0], x[0]])
    assert image_correlation(x[::-1], mono, sr=SR) == 1.0  # nothing to mirror
    assert image_correlation(x[:1], x, sr=SR) == 1.0  # one channel has no left and right


# --- clear mud: the cut must hold all through the song ------------------------------------------------

def test_a_cut_made_after_the_first_quarter_reads_no_cut_in_nine_frames_of_ten():
    from pytest_overdub.bench.model import BandChangeCheck

    check = BandChangeCheck.model_validate(next(c for c in json.loads(
        (TASKS / "mixdown-clear-mud.json").read_text(encoding="utf-8"))["checks"] if c["id"] == "mud-throughout"))
    (_, hi), soft = _gate("mixdown-clear-mud", "mud-throughout")
    x = _panned(8.0)
    cut = ch.gain(x, -6.0)  # a broadband 6 dB cut moves every band's level by exactly -6 dB
    late = np.concatenate([x[:, : x.shape[1] // 4], cut[:, x.shape[1] // 4:]], axis=1)

    def ctx(answer):
        return _context({"mix.wav": answer, "input:mix.wav": x})

    assert check.value(ctx(cut)) == pytest.approx(-6.0, abs=1e-6)  # the whole song cut: every frame -6
    assert check.value(ctx(late)) == pytest.approx(0.0, abs=1e-6)  # the first quarter untouched
    assert check.value(ctx(late)) > hi + soft  # fails the gate


# --- sidechain: the bass in its own polarity ------------------------------------------------------------

def _bass_notes(seconds: float = 4.0) -> np.ndarray:
    """A mono bass: a 55 Hz note with its 2nd and 3rd harmonics every 500 ms, each decaying."""
    t = np.arange(int(0.45 * SR)) / SR
    note = (np.sin(2 * np.pi * 55 * t) + 0.5 * np.sin(2 * np.pi * 110 * t + 0.4)
            + 0.3 * np.sin(2 * np.pi * 165 * t + 1.1)) * np.exp(-t / 0.2)
    x = np.zeros(int(seconds * SR))
    for start in np.arange(0.0, seconds - 0.45, 0.5):
        x[int(start * SR): int(start * SR) + t.size] += 0.3 * note
    return np.stack([x, x])


def test_a_bass_inverted_against_its_stem_fails_the_polarity_gate_a_ducked_one_passes():
    """Every duck reading is a level, so the oracle's duck with the bass flipped scored 1.000; the polarity
    reading keeps the correlation's sign at the best lag within 20 ms (a delay of half a cycle does not turn
    an inverted bass over)."""
    (lo, _), soft = _gate("mixdown-sidechain-bass", "polarity")
    bass = _bass_notes()
    gain = np.ones(bass.shape[1])
    for start in np.arange(0.0, 3.5, 0.5):
        gain[int(start * SR): int((start + 0.1) * SR)] = 0.5
    ducked = bass * gain
    assert polarity_correlation(ducked, bass, sr=SR) >= lo
    assert polarity_correlation(bass, bass, sr=SR) == pytest.approx(1.0, abs=1e-12)
    assert polarity_correlation(-bass, bass, sr=SR) == pytest.approx(-1.0, abs=1e-12)
    half = int(round(SR / 55 / 2))  # inverted and half a 55 Hz cycle late
    late = np.concatenate([np.zeros((2, half)), -ducked[:, :-half]], axis=1)
    assert polarity_correlation(-ducked, bass, sr=SR) < lo - soft
    assert polarity_correlation(late, bass, sr=SR) < lo - soft


def test_a_bass_inverted_only_around_each_kick_reads_minus_one_in_its_blocks_where_the_file_read_plus():
    """The duck with the bass flipped from 2 ms before to 120 ms after each kick cancels the low end where
    it meets the kick, and the whole file still correlated well above the gate; read per 50 ms block where
    the bass plays, the flipped blocks read -1 and a duck of any shape (a gain never turns a block over)
    stays near +1. The gate is read from the task file."""
    (lo, _), soft = _gate("mixdown-sidechain-bass", "polarity")
    bass = _bass_notes()
    gain = np.ones(bass.shape[1])
    flip = np.ones(bass.shape[1])
    for kick_s in np.arange(0.3, 3.5, 0.5):  # the kicks fall late in each bass note, as on an offbeat bass
        a = int(kick_s * SR)
        gain[a: a + int(0.1 * SR)] = 0.5
        flip[max(0, a - int(0.002 * SR)): a + int(0.12 * SR)] = -1.0
    ducked = bass * gain
    flipped = ducked * flip
    assert polarity_correlation(flipped, bass, sr=SR) >= lo  # the whole file passed the gate: the hole
    assert polarity_blocks_low(flipped, bass, sr=SR) == pytest.approx(-1.0, abs=0.01)  # < lo - soft: 0
    assert lo - soft > -0.99
    assert polarity_blocks_low(ducked, bass, sr=SR) >= 0.9
    assert polarity_blocks_low(bass, bass, sr=SR) == pytest.approx(1.0, abs=1e-12)
    # a duck to one hundredth in 1 ms: the gain moves inside the block, and no block turns over
    deep = bass * np.where(gain < 1.0, 0.01, 1.0)
    assert polarity_blocks_low(deep, bass, sr=SR) >= lo
    # an answer 5 ms late is brought back first (the file's lag), as the whole-file reading is
    late = np.concatenate([np.zeros((2, 240)), ducked[:, :-240]], axis=1)
    assert polarity_blocks_low(late, bass, sr=SR) >= 0.9


# --- sidechain: "between" has frames to read when the kick is on every beat --------------------------

def test_between_reads_a_four_on_the_floor_kick_and_catches_a_duck_where_there_is_none():
    """Kicks every 500 ms (120 bpm) left no frame 400 ms from a hit, so ``between`` read NaN and every
    answer scored 0 on it; it reads 350 ms after a hit to 20 ms before the next."""
    from pytest_overdub.bench.audio.readings import duck

    (lo, _), soft = _gate("mixdown-sidechain-bass", "between")
    t = np.arange(6 * SR) / SR
    bass = 0.3 * np.stack([np.sin(2 * np.pi * 55 * t)] * 2)
    kicks = np.zeros_like(bass)
    gain = np.ones(t.size)
    for start in np.arange(0.25, 5.5, 0.5):
        a = int(start * SR)
        kicks[:, a: a + 48] = 0.9
        gain[a: a + int(0.1 * SR)] = 0.5  # a 100 ms duck on each kick: the job
    honest = bass * gain
    assert duck(honest, bass, kicks, sr=SR, measure="between") == pytest.approx(0.0, abs=0.01)
    off_beat = gain.copy()
    for start in np.arange(0.25, 5.5, 0.5):
        a = int((start + 0.4) * SR)  # and a 30 ms duck where there is no kick
        off_beat[a: a + int(0.03 * SR)] = 0.5
    got = duck(bass * off_beat, bass, kicks, sr=SR, measure="between")
    assert got == pytest.approx(-6.0206, abs=0.01) and got < lo - soft


def test_a_blip_at_each_kick_reads_the_depth_but_not_the_hold():
    """A 6 dB dip for the first 12 ms of each kick made the deepest 5 ms frame read a 6 dB duck; ``hold``
    reads the gain 20-50 ms after the kick, where a held duck still is and a blip is over."""
    from pytest_overdub.bench.audio.readings import duck

    (_, hi), soft = _gate("mixdown-sidechain-bass", "hold")
    t = np.arange(5 * SR) / SR
    bass = 0.3 * np.stack([np.sin(2 * np.pi * 55 * t)] * 2)
    kicks = np.zeros_like(bass)
    held, blip = np.ones(t.size), np.ones(t.size)
    for start in np.arange(0.5, 4.5, 1.0):
        a = int(start * SR)
        kicks[:, a: a + 48] = 0.9
        held[a: a + int(0.1 * SR)] = 0.5
        blip[a: a + int(0.012 * SR)] = 0.5
    for gain in (held, blip):
        assert duck(bass * gain, bass, kicks, sr=SR, measure="depth") == pytest.approx(-6.0206, abs=0.01)
    assert duck(bass * held, bass, kicks, sr=SR, measure="hold") == pytest.approx(-6.0206, abs=0.01)
    assert duck(bass * blip, bass, kicks, sr=SR, measure="hold") == pytest.approx(0.0, abs=0.01)
    assert 0.0 >= hi + soft  # the blip scores 0 on the gate


def test_a_duck_is_read_after_a_latency_of_a_few_ms_and_not_after_a_late_bass():
    """Read sample-aligned, a ducked bass of plucked notes 2 ms late (a look-ahead's latency) moved the gain
    of the 5 ms frames at each note's start and read a duck between the kicks; the check takes a latency
    within 5 ms out first. A bass 10 ms late is late against its kick and reads as it is."""
    from pytest_overdub.bench.audio.readings import duck
    from pytest_overdub.bench.model import DuckCheck

    check = DuckCheck.model_validate(next(c for c in json.loads(
        (TASKS / "mixdown-sidechain-bass.json").read_text(encoding="utf-8"))["checks"] if c["id"] == "between"))
    (lo, _), soft = _gate("mixdown-sidechain-bass", "between")
    t = np.arange(6 * SR) / SR
    pluck = np.exp(-((t % 0.25) / 0.06))  # a note every 250 ms, each falling away
    bass = 0.3 * np.stack([np.sin(2 * np.pi * 55 * t) * pluck] * 2)
    kicks, gain = np.zeros_like(bass), np.ones(t.size)
    for start in np.arange(0.5, 5.5, 1.0):
        a = int(start * SR)
        kicks[:, a: a + 48] = 0.9
        gain[a: a + int(0.1 * SR)] = 0.5
    honest = bass * gain

    def late(x, n):
        return np.concatenate([np.zeros((2, n)), x[:, :-n]], axis=1)

    def ctx(answer):
        return _context({"bass.wav": answer, "input:stems/bass.wav": bass, "input:stems/kick.wav": kicks})

    assert duck(late(honest, 96), bass, kicks, sr=SR, measure="between") < lo  # unaligned: a false duck
    # the same to rounding (the check reads the audio band, an FFT's round-off apart)
    assert check.value(ctx(late(honest, 96))) == pytest.approx(check.value(ctx(honest)), abs=1e-9)
    assert check.value(ctx(honest)) == pytest.approx(0.0, abs=0.01)
    assert check.value(ctx(late(honest, 480))) < lo - soft


# --- streaming: the song's peaks, not a planted one ---------------------------------------------------

@pytest.mark.parametrize("freq_hz", [50.0, 440.0, 1000.0, 2900.0, 9000.0])
def test_a_tone_s_block_peak_is_its_sample_peak(freq_hz):
    """A band-limited peak has samples near its size 6 to 54 samples away: nothing is held back."""
    t = np.arange(2 * SR) / SR
    x = 0.5 * np.stack([np.sin(2 * np.pi * freq_hz * t + 0.3)] * 2)
    assert block_peak_db(x, sr=SR) == pytest.approx(20 * np.log10(np.abs(x).max()), abs=1e-9)
    assert block_peak_db(0.25 * x, sr=SR) == pytest.approx(block_peak_db(x, sr=SR) - 12.0412, abs=1e-3)


def test_peaks_planted_in_a_crushed_master_do_not_move_the_peak_through_the_song():
    """One sample, a 2- or 5-sample burst, a 2 ms blip, a few spikes spread over the song, or a click in
    every block: each set a whole-file true peak (the ``plr`` gate read it: a crushed master EQ'd back, with
    one sample planted, scored 1.000); the median block's held peak is the crushed master's."""
    from pytest_overdub.measure import true_peak_db

    (lo, _), soft = _gate("master-streaming-single", "plr")
    a = _drums(8.0) * 0.5
    crushed = ch.gain(ch.master_to(a, target_lufs=-9.0, ceiling_db=-1.5, release_ms=5), -6.0)
    base = block_peak_db(crushed, sr=SR)
    assert block_peak_db(a, sr=SR) - base > lo - 7.5  # the limiter took 0.5 dB or more from the song's peaks
    n, top = crushed.shape[1], 10 ** (-1.6 / 20)
    blip = np.hanning(96) * np.sin(2 * np.pi * 3000 * np.arange(96) / SR)
    planted = {}
    for name, (at, width) in {"one": ([n // 3], 1), "burst2": ([n // 3], 2), "burst5": ([n // 3], 5),
                              "spread": (list(range(n // 7, n, n // 7)), 1),
                              "every-block": (list(range(0, n, int(0.4 * SR))), 2)}.items():
        y = crushed.copy()
        for i in at:
            y[:, i: i + width] = top
        planted[name] = y
    y = crushed.copy()
    y[:, n // 3: n // 3 + 96] = top * blip / np.abs(blip).max()
    planted["blip"] = y
    for name, y in planted.items():
        assert true_peak_db(y, sr=SR) - true_peak_db(crushed, sr=SR) > 3.0, name  # a whole-file peak moves
        assert block_peak_db(y, sr=SR) == pytest.approx(base, abs=0.3), name  # the song's peaks do not


def _clicked(x: np.ndarray, *, clicks: int, gap: int, level_db: float) -> np.ndarray:
    """``x`` with ``clicks`` one-sample clicks ``gap`` samples apart (both channels) in every 400 ms block."""
    y = x.copy()
    for k in range(clicks):
        y[:, k * gap:: int(0.4 * SR)] = 10 ** (level_db / 20)
    return y


@pytest.mark.parametrize(("clicks", "gap"), [(2, 6), (2, 30), (2, 54), (4, 6), (8, 6), (15, 6), (15, 3), (15, 1)])
def test_clicks_that_vouch_for_each_other_do_not_move_the_peak_through_the_song(clicks, gap):
    """Two one-sample clicks 6 to 54 samples apart are each in the other's ring, so each was held in full:
    planted in every block of a crushed master they were its peaks (master-streaming-single scored a crushed
    master 1.000, master-ep-sequence@21 a crushed EP 1.000). A block's peak is the level 16 of its samples
    reach now: 15 clicks, spaced or touching, leave it where the music put it, and so do the EP's crest
    factors."""
    (lo, _), _ = _gate("master-streaming-single", "plr")
    (_, hi), soft = _gate("master-ep-sequence", "dynamics")
    a = _drums(8.0) * 0.5
    crushed = ch.gain(ch.master_to(a, target_lufs=-8.0, ceiling_db=-1.5, release_ms=5), -6.0)
    y = _clicked(crushed, clicks=clicks, gap=gap, level_db=-1.6)
    assert block_peak_db(y, sr=SR) == pytest.approx(block_peak_db(crushed, sr=SR), abs=0.3)
    drop = block_crest_db(a, sr=SR) - block_crest_db(y, sr=SR)
    assert drop == pytest.approx(block_crest_db(a, sr=SR) - block_crest_db(crushed, sr=SR), abs=0.3)
    assert drop > hi + soft  # the EP's gate still reads it crushed


def test_a_pulse_a_millisecond_long_in_every_block_is_a_peak():
    """The measure's stated limit (docs/audio-tasks.md): 16 samples that vouch for each other are a peak.
    A 1 ms pulse at -1.6 dBFS in every block, a tick heard through the song, reads as one."""
    a = _drums(8.0) * 0.5
    crushed = ch.gain(ch.master_to(a, target_lufs=-8.0, ceiling_db=-1.5, release_ms=5), -6.0)
    y = _clicked(crushed, clicks=48, gap=1, level_db=-1.6)
    assert block_peak_db(y, sr=SR) == pytest.approx(-1.6, abs=1e-9)


def test_the_audio_band_keeps_what_is_heard_and_nothing_above_20_khz():
    from pytest_overdub.measure.compare import audio_band

    t = np.arange(SR + 123) / SR  # an awkward length: the FFT is padded and cut back
    heard = 0.5 * np.sin(2 * np.pi * 1000 * t) + 0.1 * np.sin(2 * np.pi * 19000 * t)
    above = 0.3 * np.sin(2 * np.pi * 23000 * t)
    x = np.stack([heard + above, heard])
    y = audio_band(x, sr=SR)
    assert y.shape == x.shape
    assert np.abs(y[:, 2000:-2000] - np.stack([heard, heard])[:, 2000:-2000]).max() < 1e-6
    assert audio_band(x, sr=40000) is not None and np.array_equal(audio_band(x, sr=40000), x)  # no band above


def test_a_24_khz_burst_in_every_block_is_no_peak_in_the_audio_band():
    """A 2 ms burst at half the sample rate in every 400 ms block: 96 samples at the peak level, each vouched
    for by the others, read the crushed song's crest factor back on the whole band. Nobody hears it, and in the
    audio band (what the checks read) it is gone."""
    from pytest_overdub.measure.compare import audio_band

    (_, hi), soft = _gate("master-ep-sequence", "dynamics")
    a = _drums(6.0) * 0.5
    crushed = ch.gain(ch.master_to(a, target_lufs=-9.0, ceiling_db=-1.5, release_ms=5), -6.0)
    burst = 10 ** (-1.6 / 20) * np.where(np.arange(96) % 2 == 0, 1.0, -1.0)
    bursts = crushed.copy()
    for start in range(0, bursts.shape[1] - 96, int(0.4 * SR)):
        bursts[:, start:start + 96] += burst
    assert block_crest_db(a, sr=SR) - block_crest_db(bursts, sr=SR) < hi  # the hole, on the whole band
    drop = block_crest_db(audio_band(a, sr=SR), sr=SR) - block_crest_db(audio_band(bursts, sr=SR), sr=SR)
    assert drop == pytest.approx(block_crest_db(a, sr=SR) - block_crest_db(crushed, sr=SR), abs=0.3)
    assert drop > hi + soft


def test_the_crest_a_block_lost_is_gain_free_and_a_planted_sample_gives_back_only_its_own_block():
    from pytest_overdub.measure.compare import block_crest_loss_db
    from pytest_overdub.measure.gated import gated_levels

    a = _drums(6.0) * 0.5
    assert block_crest_loss_db(a, a, sr=SR) == 0.0
    assert block_crest_loss_db(a * 0.3, a, sr=SR) == pytest.approx(0.0, abs=1e-9)  # a gain loses no crest
    crushed = ch.gain(ch.master_to(a, target_lufs=-9.0, ceiling_db=-1.5, release_ms=5), -6.0)
    planted = crushed.copy()
    planted[:, int(2.1 * SR)] = 0.885  # one sample, in one block
    whole = gated_levels(a, sr=SR).crest_db
    assert whole - gated_levels(planted, sr=SR).crest_db < whole - gated_levels(crushed, sr=SR).crest_db - 3.0
    loss = block_crest_loss_db(crushed, a, sr=SR)
    assert loss > 4.5
    assert block_crest_loss_db(planted, a, sr=SR) == pytest.approx(loss, abs=0.01)


def test_every_other_kick_ducked_reads_no_duck_and_every_kick_ducked_reads_its_depth():
    """``depth`` and ``hold`` read what four kicks in five reach: the median read half the kicks ducked 12 dB
    as every kick ducked."""
    from pytest_overdub.bench.audio.readings import duck

    t = np.arange(6 * SR) / SR
    bass = 0.3 * np.stack([np.sin(2 * np.pi * 55 * t)] * 2)
    kicks, every, other = np.zeros_like(bass), np.ones(t.size), np.ones(t.size)
    for k, start in enumerate(np.arange(0.5, 5.5, 0.5)):
        a = int(start * SR)
        kicks[:, a: a + 48] = 0.9
        every[a: a + int(0.1 * SR)] = 10 ** (-6 / 20)
        if k % 2 == 0:
            other[a: a + int(0.1 * SR)] = 10 ** (-12 / 20)
    for measure in ("depth", "hold"):
        assert duck(bass * every, bass, kicks, sr=SR, measure=measure) == pytest.approx(-6.0, abs=0.1)
        assert duck(bass * other, bass, kicks, sr=SR, measure=measure) == pytest.approx(0.0, abs=0.1)


@pytest.mark.parametrize("late_ms", [0, 5, 13, 20])
def test_a_hit_is_read_after_the_answer_s_latency(late_ms):
    """The input handed back late read an earlier, louder part of each decay as body (3.4 dB at 13 ms) while the
    transient window still held the attack; an honest chain 15-20 ms late lost its transients. The answer's
    latency within 20 ms is taken out before any hit is read."""
    a = _drums(6.0) * 0.5
    lag = int(round(late_ms * SR / 1000))
    late = np.concatenate([np.zeros((2, lag)), a[:, : a.shape[1] - lag]], axis=1)
    assert hit_change(late, a, sr=SR, measure="body") == pytest.approx(0.0, abs=0.05)
    assert hit_change(late, a, sr=SR, measure="transient") == pytest.approx(0.0, abs=0.05)


def test_a_band_cut_in_one_channel_reads_as_no_cut_when_each_channel_is_read():
    """200-500 Hz taken 40 dB down in the left channel only: the pair's pooled power reads a cut of 3 dB (half
    the power gone), which passed `mud`; read channel by channel, the right one is cut by nothing."""
    from pytest_overdub.bench.model import BandChangeCheck

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4 * SR)) * 0.1
    y = x.copy()
    spec = np.fft.rfft(y[0])
    f = np.fft.rfftfreq(y.shape[1], 1.0 / SR)
    spec[(f >= 200.0) & (f < 500.0)] *= 0.01
    y[0] = np.fft.irfft(spec, y.shape[1])
    ctx = _context({"mix.wav": y, "input:mix.wav": x})
    check = {"id": "mud", "label": "mud", "kind": "bandChange", "target": [None, -2.5], "file": "mix.wav",
             "against": "input:mix.wav", "band": [200, 500]}
    pooled = BandChangeCheck.model_validate(check).value(ctx)
    each = BandChangeCheck.model_validate({**check, "channels": True}).value(ctx)
    assert pooled == pytest.approx(10 * np.log10((1 + 1e-4) / 2), abs=0.05)  # -3.0 dB
    assert each == pytest.approx(0.0, abs=1e-9)


def test_the_rounding_dependence_is_a_sawtooth_s_rms_for_rounding_and_none_for_tpdf():
    """Rounding, truncation, and rounding with a random step added after it leave the error's mean a sawtooth
    of where a sample falls between two 16-bit steps: its RMS is 1/sqrt(12) = 0.289 steps. TPDF dither before
    the rounding makes the error's mean independent of the signal."""
    from pytest_overdub.bench.audio import chains
    from pytest_overdub.measure.compare import rounding_dependence_lsb

    rng = np.random.default_rng(11)
    x = np.round(0.05 * rng.standard_normal((2, 4 * SR)) * 2**23) / 2**23  # a 24-bit signal, never clipped
    step = 1 / 32768
    rounded = np.round(x / step) * step
    noisy = rounded + rng.integers(-1, 2, x.shape) * step
    truncated = np.floor(x / step) * step
    for copy in (rounded, noisy, truncated):
        assert rounding_dependence_lsb(copy, x) == pytest.approx(1 / np.sqrt(12), abs=0.01)
    assert rounding_dependence_lsb(chains.dither16(x, seed=1) * step, x) < 0.01


def _noise(seconds: float, seed: int) -> np.ndarray:
    return 0.1 * np.random.default_rng(seed).standard_normal((2, int(seconds * SR)))


def test_a_band_change_read_frame_by_frame_is_the_gain_and_a_switched_cut_reads_its_uncut_frames():
    """A gain of g dB reads g in every frame (a late copy too: the lag is taken out); a static bell reads
    its cut over the band in nine frames in ten; a cut switched on and off every second, whose quarters
    each averaged a cut (the ``mud-throughout`` hole), reads 0 dB: its uncut frames. The gate is read from
    the task file."""
    from pytest_overdub.bench.audio.chains import eq
    from pytest_overdub.measure.compare import band_change_blocks_db, band_level_db

    (_, hi), soft = _gate("mixdown-clear-mud", "mud-throughout")
    x = _noise(8.0, 11)
    read = lambda y: band_change_blocks_db(y, x, sr=SR, lo_hz=200.0, hi_hz=500.0)
    assert read(0.5 * x) == pytest.approx(20 * np.log10(0.5), abs=1e-9)
    late = np.concatenate([np.zeros((2, 480)), 0.5 * x[:, :-480]], axis=1)  # 10 ms late
    assert read(late) == pytest.approx(20 * np.log10(0.5), abs=0.05)
    cut = eq(x, mid=-12.0, midf=300, q=0.8)
    assert read(cut) < hi - soft
    on = (np.arange(x.shape[1]) // SR) % 2 == 1
    switched = np.where(on, cut, x)
    quarters = [band_level_db(switched[:, a:a + 2 * SR], sr=SR, lo_hz=200, hi_hz=500)
                - band_level_db(x[:, a:a + 2 * SR], sr=SR, lo_hz=200, hi_hz=500) for a in range(0, 8 * SR, 2 * SR)]
    assert max(quarters) < hi  # every quarter passed
    assert read(switched) == pytest.approx(0.0, abs=0.2)  # > hi + soft: 0


def test_a_cut_switched_faster_than_a_frame_is_no_filter_of_the_input():
    """Switched every 50 ms the cut averages into each 100 ms frame; the part of the answer no filter of the
    input explains is about 9 dB under it, where a static bell's is under -27 dB. The noise is low-passed
    at 800 Hz (a muddy mix's power sits low). Gate from the task file."""
    import scipy.signal as ss

    from pytest_overdub.bench.audio.chains import eq

    (_, hi), soft = _gate("mixdown-clear-mud", "filtered")
    x = ss.sosfilt(ss.butter(2, 800, fs=SR, output="sos"), _noise(8.0, 12), axis=1)
    cut = eq(x, mid=-12.0, midf=300, q=0.8)
    on = (np.arange(x.shape[1]) // (SR // 20)) % 2 == 1
    assert unexplained_db(cut, x, sr=SR) < -27.0 < hi
    assert unexplained_db(np.where(on, cut, x), x, sr=SR) > hi + soft


def test_a_top_widened_by_cutting_the_mid_reads_the_cut_in_the_mid_and_a_raised_side_reads_none():
    """The side-to-mid ratio above 4 kHz rises 3 dB either way: the side's top raised 3 dB (the job) or the
    mid's top cut 3 dB (the mix's centre dulled). Read of the mid, the first is exactly 0 dB (the mid is the
    input's, bit for bit) and the second the cut. The gate is read from the task file."""
    from pytest_overdub.bench.model import BandChangeCheck

    (lo, _), soft = _gate("master-mid-side", "mid-top")
    rng = np.random.default_rng(9)
    mid, side = rng.standard_normal((2, 4 * SR)) * 0.1
    f = np.fft.rfftfreq(mid.size, 1.0 / SR)

    def top_gain(sig, gain_db):
        spec = np.fft.rfft(sig)
        spec[f >= 4000.0] *= 10 ** (gain_db / 20)
        return np.fft.irfft(spec, sig.size)

    x = np.stack([mid + side, mid - side])
    wider = np.stack([mid + top_gain(side, 3.0), mid - top_gain(side, 3.0)])
    dulled = np.stack([top_gain(mid, -3.0) + side, top_gain(mid, -3.0) - side])
    check = BandChangeCheck.model_validate(next(c for c in json.loads(
        (TASKS / "master-mid-side.json").read_text(encoding="utf-8"))["checks"] if c["id"] == "mid-top"))
    read = lambda y: check.value(_context({"master.wav": y, "input:mix.wav": x}))
    assert read(wider) == pytest.approx(0.0, abs=1e-9)
    assert read(dulled) == pytest.approx(-3.0, abs=0.01)  # < lo - soft: 0
    assert -3.0 < lo - soft
