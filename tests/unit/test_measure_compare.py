"""The meters over delivered files (measure/compare.py) and the audio checks' readings, on signals whose
answers are known analytically."""

import numpy as np
import pytest

from pytest_overdub.bench.audio.readings import duck, hit_change, sequence
from pytest_overdub.measure.compare import (bus_gain, clipped_samples, correlation, envelope_correlation,
                                            gain_curve_db, hit_times_s, octave_levels_db, residual_db)

SR = 48000


def _sine(freq_hz, seconds, amp=0.5):
    t = np.arange(int(seconds * SR)) / SR
    x = amp * np.sin(2 * np.pi * freq_hz * t)
    return np.stack([x, x])


def test_a_sine_puts_its_power_in_its_octave_and_white_noise_shares_by_bandwidth():
    levels = octave_levels_db(_sine(1000.0, 2.0), sr=SR)
    assert levels[4] == pytest.approx(0.0, abs=0.05)  # the 1 kHz octave holds it all
    assert max(np.delete(levels, 4)) < -60
    noise = np.random.default_rng(3).standard_normal((2, 10 * SR))
    want = [10 * np.log10(c * (np.sqrt(2) - 1 / np.sqrt(2)) / (SR / 2)) for c in (250, 1000, 4000)]
    got = octave_levels_db(noise, sr=SR, centres_hz=(250.0, 1000.0, 4000.0))
    assert got == pytest.approx(want, abs=0.3)
    assert octave_levels_db(noise * 0.1, sr=SR) == pytest.approx(octave_levels_db(noise, sr=SR), abs=1e-5)


def test_residual_of_a_gain_error_is_the_gain_error():
    x = _sine(440.0, 1.0)
    assert residual_db(x * 1.01, x) == pytest.approx(20 * np.log10(0.01), abs=1e-6)
    assert residual_db(x, x) == -120.0
    assert residual_db(x, np.zeros_like(x)) == 120.0


def test_correlation_and_envelope_likeness():
    rng = np.random.default_rng(7)
    bursts = rng.standard_normal((2, 4 * SR)) * np.repeat(rng.random(40) ** 3, SR // 10)[None, :]
    assert correlation(bursts, -2 * bursts) == pytest.approx(-1.0)
    shifted = np.concatenate([np.zeros((2, int(0.05 * SR))), bursts], axis=1)[:, : bursts.shape[1]]
    assert envelope_correlation(shifted, bursts, sr=SR) > 0.97  # 50 ms late: within the lag search
    other = rng.standard_normal((2, 4 * SR)) * np.repeat(rng.random(40) ** 3, SR // 10)[None, :]
    assert envelope_correlation(other, bursts, sr=SR) < 0.5


def test_clipped_samples_counts_flat_tops_only():
    x = np.zeros((2, 100))
    x[0, 10:15] = 1.0  # a flat top of 5
    x[1, 50:53] = -1.0  # a flat bottom of 3
    x[0, 80] = 1.0  # a lone full-scale sample is a peak, not a clip
    assert clipped_samples(x) == 8


def test_hits_and_gain_curve():
    x = np.zeros((2, 3 * SR))
    for t in (0.5, 1.5, 2.5):
        x[:, int(t * SR): int(t * SR) + 200] = 0.8
    assert hit_times_s(x, sr=SR) == pytest.approx([0.5, 1.5, 2.5], abs=0.001)
    tone = _sine(100.0, 1.0)
    g = gain_curve_db(tone * 0.5, tone, sr=SR)
    assert np.nanmedian(g) == pytest.approx(-6.0206, abs=1e-3)


def _ducked():
    """A steady tone ducked to -6 dB for 100 ms at each of four clicks, one second apart."""
    source = _sine(110.0, 4.5, amp=0.3)
    clicks = np.zeros_like(source)
    gain = np.ones(source.shape[1])
    for t in (0.5, 1.5, 2.5, 3.5):
        clicks[:, int(t * SR): int(t * SR) + 48] = 0.9
        gain[int(t * SR): int((t + 0.1) * SR)] = 0.5
    return source * gain, source, clicks


@pytest.mark.parametrize("measure, want", [("depth", -6.0206), ("recovery", 0.0), ("between", 0.0)])
def test_duck_reads_a_known_duck(measure, want):
    answer, source, clicks = _ducked()
    assert duck(answer, source, clicks, sr=SR, measure=measure) == pytest.approx(want, abs=0.01)


def test_hit_change_reads_gain_as_both_transient_and_body():
    rng = np.random.default_rng(1)
    x = np.zeros((2, 3 * SR))
    decay = np.exp(-np.arange(int(0.2 * SR)) / (0.05 * SR))
    for t in (0.5, 1.5, 2.5):
        a = int(t * SR)
        x[:, a: a + decay.size] = 0.5 * decay * rng.standard_normal(decay.size)
    assert hit_change(x * 2, x, sr=SR, measure="transient") == pytest.approx(6.0206, abs=1e-6)
    assert hit_change(x * 2, x, sr=SR, measure="body") == pytest.approx(6.0206, abs=1e-6)


def test_sequence_reads_parts_where_they_belong():
    a, b = _sine(500.0, 3.0, amp=0.5), _sine(500.0, 3.0, amp=0.25)
    gap = np.zeros((2, SR))
    ep = np.concatenate([a, gap, b], axis=1)
    assert sequence(ep, [a, b], sr=SR, gap_s=1.0, measure="spread") == pytest.approx(6.0206, abs=0.01)
    assert sequence(ep, [a, b], sr=SR, gap_s=1.0, measure="gaps") == -120.0


def test_a_kick_is_one_hit_however_many_cycles_and_a_hit_on_its_tail_counts():
    """A 50 Hz kick decaying over 0.5 s reads as one hit (its cycles dip the 1 ms envelope), and a second
    kick 326 ms later, while the first still rings 20 dB under its peak, is found."""
    t = np.arange(int(0.6 * SR)) / SR
    kick = np.sin(2 * np.pi * 50 * t) * np.exp(-t / 0.15)
    x = np.zeros((2, 2 * SR))
    for start in (0.2, 0.526):
        a = int(start * SR)
        x[:, a: a + kick.size] += 0.8 * kick
    assert hit_times_s(x, sr=SR) == pytest.approx([0.2, 0.526], abs=0.002)


def test_bus_gain_recovers_a_linked_gain_and_is_one_over_silence():
    rng = np.random.default_rng(5)
    parts = rng.standard_normal((2, 1000)) * 0.3
    parts[:, 400:500] = 0.0
    g = np.linspace(0.5, 1.5, 1000)
    got = bus_gain(parts, parts * g[None, :])
    assert got[:400] == pytest.approx(g[:400]) and got[500:] == pytest.approx(g[500:])
    assert (got[400:500] == 1.0).all()


def test_bus_gain_on_two_channels_picks_argmaxs_channel_with_ties_zeros_and_nans():
    """The stereo path selects the louder channel as ``np.argmax`` over channels does (the first of equal
    magnitudes, a NaN before any number) and gives its gains bit for bit."""
    from pytest_overdub.measure.compare import bus_gain

    rng = np.random.default_rng(8)
    total = rng.standard_normal((2, 400))
    total[:, :40] = [[0.5], [-0.5]]  # ties
    total[:, 40:60] = [[0.0], [-0.0]]
    total[0, 60:70], total[1, 70:80] = np.nan, np.nan
    total[:, 80:90] = np.nan
    total[:, 90:100] = [[1e-7], [-2e-7]]  # under the floor
    bus = total * 0.5 + rng.standard_normal((2, 400)) * 0.01
    loud = np.argmax(np.abs(total), axis=0)[None, :]
    t, m = np.take_along_axis(total, loud, 0)[0], np.take_along_axis(bus, loud, 0)[0]
    want = np.ones_like(t)
    ok = np.abs(t) > 1e-6
    want[ok] = m[ok] / t[ok]
    got = bus_gain(total, bus)
    assert got.tobytes() == want.tobytes()
    assert got[60:100].tolist() == [1.0] * 40  # a NaN or a near-silence says nothing: gain 1
