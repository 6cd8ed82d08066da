"""Filters against analytic responses and scipy's own designs."""

import numpy as np
import pytest
from scipy import signal

from pytest_overdub.dsp.filters import (BIQUAD_KINDS, Crossover, OnePole, SOSFilter, butter2, butterworth,
                                        linkwitz_riley4, one_pole, rbj_biquad)
from pytest_overdub.errors import DeviceError

SR = 48000


def mag_db(sos, f):
    _, h = signal.sosfreqz(np.atleast_2d(sos), worN=[f], fs=SR)
    return 20 * np.log10(abs(h[0]))


def test_rbj_peak_and_shelves_hit_their_gains():
    assert mag_db(rbj_biquad("peak", freq_hz=1000, sr=SR, q=2, gain_db=6), 1000) == pytest.approx(6, abs=1e-9)
    assert mag_db(rbj_biquad("lowshelf", freq_hz=200, sr=SR, gain_db=-8), 10) == pytest.approx(-8, abs=0.01)
    assert mag_db(rbj_biquad("lowshelf", freq_hz=200, sr=SR, gain_db=-8), 200) == pytest.approx(-4, abs=1e-9)
    assert mag_db(rbj_biquad("highshelf", freq_hz=3000, sr=SR, gain_db=9), 23000) == pytest.approx(9, abs=0.05)


def test_rbj_lp_hp_bp_notch_landmarks():
    q = 1 / np.sqrt(2)
    assert mag_db(rbj_biquad("lp", freq_hz=1000, sr=SR, q=q), 1000) == pytest.approx(-3.0103, abs=1e-3)
    assert mag_db(rbj_biquad("hp", freq_hz=1000, sr=SR, q=q), 1000) == pytest.approx(-3.0103, abs=1e-3)
    assert mag_db(rbj_biquad("bp", freq_hz=1000, sr=SR, q=3), 1000) == pytest.approx(0, abs=1e-9)
    assert mag_db(rbj_biquad("notch", freq_hz=1000, sr=SR, q=3), 1000) < -200


def test_butterworth_matches_scipy():
    ours = butterworth("lp", order=4, freq_hz=2000, sr=SR)
    ref = signal.butter(4, 2000, "lp", fs=SR, output="sos")
    w = np.linspace(10, 23000, 200)
    _, a = signal.sosfreqz(ours, worN=w, fs=SR)
    _, b = signal.sosfreqz(ref, worN=w, fs=SR)
    np.testing.assert_allclose(abs(a), abs(b), atol=1e-9)


def test_one_pole_is_3db_at_cutoff():
    assert mag_db(one_pole("lp", freq_hz=500, sr=SR), 500) == pytest.approx(-3.0103, abs=1e-3)
    assert mag_db(one_pole("hp", freq_hz=500, sr=SR), 500) == pytest.approx(-3.0103, abs=1e-3)
    assert mag_db(one_pole("hp", freq_hz=500, sr=SR), 1) < -50


def test_linkwitz_riley_sums_to_allpass_and_is_6db_at_split():
    lo, hi = linkwitz_riley4(freq_hz=300, sr=SR)
    w = np.geomspace(20, 20000, 100)
    _, a = signal.sosfreqz(lo, worN=w, fs=SR)
    _, b = signal.sosfreqz(hi, worN=w, fs=SR)
    np.testing.assert_allclose(abs(a + b), 1.0, atol=1e-9)
    assert mag_db(lo, 300) == pytest.approx(-6.0206, abs=1e-3)
    xo = Crossover(freq_hz=300, sr=SR)
    x = np.random.default_rng(0).standard_normal((2, 4000))
    lo_x, hi_x = xo.split(x)
    np.testing.assert_allclose(lo_x + hi_x, Crossover(freq_hz=300, sr=SR).allpass(x), atol=1e-9)


def test_state_is_carried_exactly_between_calls():
    x = np.random.default_rng(1).standard_normal((2, 10000))
    whole = SOSFilter(butterworth("hp", order=4, freq_hz=80, sr=SR)).process(x)
    f = SOSFilter(butterworth("hp", order=4, freq_hz=80, sr=SR))
    parts = np.concatenate([f.process(x[:, a:b]) for a, b in [(0, 1), (1, 66), (66, 8259), (8259, 10000)]], 1)
    assert np.array_equal(whole, parts)
    lp = OnePole("lp", freq_hz=100, sr=SR)
    assert lp.process(np.ones(1)).shape == (1,)


def test_bad_input_names_what_was_wrong():
    with pytest.raises(DeviceError, match="allowed: " + ", ".join(BIQUAD_KINDS)):
        rbj_biquad("band", freq_hz=100, sr=SR)
    with pytest.raises(DeviceError, match="-5"):
        rbj_biquad("lp", freq_hz=-5, sr=SR)
    with pytest.raises(DeviceError, match="even"):
        butterworth("lp", order=3, freq_hz=100, sr=SR)


def test_compiled_loop_gives_sosfilts_samples_bit_for_bit_across_blocks():
    from numba import njit

    from pytest_overdub.dsp.filters import sos_samples

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3000))
    sos = butterworth("hp", order=4, freq_hz=80, sr=SR)
    want = signal.sosfilt(sos, x, axis=-1)
    f = SOSFilter(sos, loop=njit(cache=True)(sos_samples))
    got = np.concatenate([f.process(x[:, :1234]), f.process(x[:, 1234:])], axis=1)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("sections", [1, 3, 5])
def test_compiled_stereo_loop_runs_sections_in_pairs_with_sosfilts_samples(sections):
    """Stereo cascades run two sections at a time and an odd last one alone: every count gives scipy's
    samples bit for bit, across blocks (the state of each section carried)."""
    from pytest_overdub.dsp.compiled import SOS

    x = np.random.default_rng(9).standard_normal((2, 2000))
    sos = np.concatenate([butterworth("hp", order=4, freq_hz=60, sr=SR), butterworth("lp", order=4, freq_hz=7000,
                                                                                       sr=SR),
                          rbj_biquad("peak", freq_hz=900, sr=SR, q=1.5, gain_db=-4)[None]])[:sections]
    f = SOSFilter(sos, loop=SOS)
    got = np.concatenate([f.process(x[:, :777]), f.process(x[:, 777:])], axis=1)
    assert np.array_equal(got, signal.sosfilt(sos, x, axis=-1))


def test_the_eq_runs_its_five_stages_as_one_cascade_with_the_stages_samples_across_blocks():
    """core.eq joins its active stages into one call: the samples of scipy's sosfilt through the stages in
    order (high-pass, low shelf, bell, high shelf, low-pass), with each stage's state kept across blocks."""
    from pytest_overdub.devices.eq import EQ
    from pytest_overdub.devices.params import HOUSE_SPECS
    from pytest_overdub.dsp.levels import db_to_gain

    p = {**HOUSE_SPECS["core.eq"].defaults(), "hp": 80, "low": 3, "mid": -2, "high": 4, "lp": 9000, "gain": -1.5}
    eq = EQ(sr=SR, tempo_bpm=120, seed=1, params=p)
    x = np.random.default_rng(4).standard_normal((2, 3000))
    got = np.concatenate([eq.process(x[:, a:b], p) for a, b in ((0, 1000), (1000, 1001), (1001, 3000))], axis=1)
    sos = np.concatenate([butterworth("hp", order=4, freq_hz=80, sr=SR),
                          rbj_biquad("lowshelf", freq_hz=p["lowf"], sr=SR, gain_db=3)[None],
                          rbj_biquad("peak", freq_hz=p["midf"], sr=SR, q=p["q"], gain_db=-2)[None],
                          rbj_biquad("highshelf", freq_hz=p["highf"], sr=SR, gain_db=4)[None],
                          butterworth("lp", order=4, freq_hz=9000, sr=SR)])
    assert np.array_equal(got, signal.sosfilt(sos, x, axis=-1) * db_to_gain(-1.5))


@pytest.mark.parametrize("kind,btype", [("lp", "lowpass"), ("hp", "highpass")])
@pytest.mark.parametrize("freq_hz,sr", [(20.0, 48000), (120.0, 48000), (1000.0, 44100), (12000.0, 48000),
                                        (23500.0, 48000)])
def test_butter2_is_scipys_design_and_minus_3_01_db_at_the_cutoff(kind, btype, freq_hz, sr):
    ours = butter2(kind, freq_hz=freq_hz, sr=sr)
    assert np.max(np.abs(ours - signal.butter(2, freq_hz, btype=btype, fs=sr, output="sos")[0])) < 1e-12
    _, h = signal.sosfreqz(ours[None, :], worN=[freq_hz], fs=sr)
    assert 20 * np.log10(abs(h[0])) == pytest.approx(-3.0103, abs=1e-4)  # 10·log10(1/2)
    with pytest.raises(DeviceError, match=f"between 0 and {sr / 2:g} Hz"):
        butter2(kind, freq_hz=sr / 2, sr=sr)


@pytest.mark.parametrize("channels", [1, 2])
def test_a_decay_in_silence_ends_at_rest_not_on_subnormals(channels):
    """An EQ-like cascade rung by one impulse, then 20 s of silence: scipy carries its state on as
    subnormal numbers for ever (each costs ~100x in every later pass); the compiled loop sets a
    section at rest once its state is below 1e-300, so the tail becomes exactly 0 and stays there."""
    from scipy.signal import sosfilt as scipy_sosfilt

    from pytest_overdub.dsp.compiled import SOS

    sos = np.vstack([rbj_biquad("hp", freq_hz=80, sr=48000), rbj_biquad("peak", freq_hz=900, sr=48000,
                                                                       gain_db=3.0)])
    x = np.zeros((channels, 20 * 48000))
    x[:, 10] = 0.5
    ours = SOSFilter(sos, loop=SOS).process(x)
    theirs = scipy_sosfilt(sos, x, axis=-1)
    tiny = np.finfo(np.float64).tiny
    assert int(((theirs != 0) & (np.abs(theirs) < tiny)).sum()) > 100_000  # the hazard is real
    assert int(((ours != 0) & (np.abs(ours) < tiny)).sum()) == 0
    assert np.all(ours[:, -48000:] == 0.0)
    loud = np.abs(theirs) > 1e-200  # where the signal is still far above the threshold: scipy's samples
    np.testing.assert_array_equal(ours[loud], theirs[loud])
