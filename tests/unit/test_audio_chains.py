"""The bench's answer chains (bench/audio/chains.py) on their compiled filters give the samples of the
simple path: each filter run alone through scipy's ``sosfilt``."""

import numpy as np
from scipy.signal import sosfilt

from pytest_overdub.bench.audio import chains as ch
from pytest_overdub.dsp.filters import _lr4_allpass, linkwitz_riley4, rbj_biquad
from pytest_overdub.dsp.levels import db_to_gain

SR = 48000
CENTRES_HZ = (31.25, 62.5, 125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0, 16000.0)


def _noise(n: int = 20000) -> np.ndarray:
    return np.random.default_rng(11).standard_normal((2, n)) * 0.2


def test_octave_bells_give_the_samples_of_one_sosfilt_per_bell():
    """The bells run as one compiled cascade; a bell within 1e-3 dB of 0 is left out, as before."""
    x = _noise()
    gains = [3.0, -2.5, 0.0, 4.0, -6.0, 1e-4, 2.0, -1.0, 24.0, -24.0]
    want = x
    for c, g in zip(CENTRES_HZ, gains):
        if abs(g) > 1e-3:
            want = sosfilt(rbj_biquad("peak", freq_hz=c, sr=SR, q=1.4, gain_db=g), want, axis=-1)
    got = ch.octave_bells(x, gains, centres_hz=CENTRES_HZ)
    assert np.array_equal(got, want)
    assert ch.octave_bells(x, [0.0] * len(CENTRES_HZ), centres_hz=CENTRES_HZ) is x


def test_ms_master_gives_the_samples_of_its_crossovers_through_scipy():
    x = _noise()
    mid, side = (x[0] + x[1]) / 2.0, (x[0] - x[1]) / 2.0
    _, hi120 = linkwitz_riley4(freq_hz=120, sr=SR)
    lo4k, hi4k = linkwitz_riley4(freq_hz=4000, sr=SR)
    side_hi = sosfilt(hi120, side[None, :], axis=-1)
    side = (sosfilt(lo4k, side_hi, axis=-1) + sosfilt(hi4k, side_hi, axis=-1) * db_to_gain(3.0))[0]
    mid = sosfilt(_lr4_allpass(freq_hz=120, sr=SR), mid[None, :], axis=-1)
    mid = sosfilt(_lr4_allpass(freq_hz=4000, sr=SR), mid, axis=-1)[0]
    got = ch.ms_master(x, mono_below_hz=120, wide_above_hz=4000, wide_db=3.0)
    assert np.array_equal(got, np.stack([mid + side, mid - side]))
