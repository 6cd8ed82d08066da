"""The bench's answer chains (bench/audio/chains.py) on their compiled filters give the samples of the
simple path: each filter run alone through scipy's ``sosfilt``."""

import numpy as np
import pytest
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


def _drums(seconds: float = 6.0) -> np.ndarray:
    """Decaying noise hits every 0.45 s (one pair 0.1 s apart, whose first hit the body reading skips)."""
    n = int(seconds * SR)
    rng = np.random.default_rng(3)
    x = np.zeros((2, n))
    t = np.arange(int(0.3 * SR)) / SR
    for start in [*np.arange(0.2, seconds - 0.5, 0.45), seconds / 2 + 0.1]:
        a = int(start * SR)
        x[:, a:a + t.size] += rng.standard_normal((2, t.size)) * 0.5 * np.exp(-t / 0.03)
    return x


def test_the_wet_level_mixing_only_the_read_frames_is_the_whole_mix_bisection():
    """parallel drums: each try of the bisection mixes only the frames the body reading reads; the level
    found is the one the whole mix gives at every try."""
    from pytest_overdub.bench.audio.answers import _wet_level
    from pytest_overdub.bench.audio.readings import hit_change

    x = _drums()
    wet = ch.compress(x, threshold=-40, ratio=20, attack=0.1, release=80, knee=0, makeup=0)
    dry = ch.gain(x, -1.0)
    lo, hi = -30.0, 30.0
    for _ in range(20):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if hit_change(dry + ch.gain(wet, mid), x, sr=SR, measure="body") < 4.0 else (lo, mid)
    assert _wet_level(x, wet, dry_db=-1.0) == (lo + hi) / 2
    assert -30.0 < (lo + hi) / 2 < 30.0  # the bisection found a level inside its range


def test_a_scorer_keeps_an_inputs_master_and_it_is_the_fresh_one(monkeypatch):
    """The oracle and two cheats of master-streaming-single master the same input alike: a scorer makes it
    once (the input is read-only), and what it keeps is the master made afresh, bit for bit."""
    from pytest_overdub import runtime
    from pytest_overdub.measure.kept import clear

    x = _drums(3.0)
    fresh = ch.master_to(x, target_lufs=-14.0, ceiling_db=-1.5)
    x.setflags(write=False)
    monkeypatch.setattr(runtime, "active", lambda: True)
    clear()
    try:
        first = ch.master_to(x, target_lufs=-14.0, ceiling_db=-1.5)
        assert ch.master_to(x, target_lufs=-14.0, ceiling_db=-1.5) is first
        assert ch.master_to(x, target_lufs=-9.0, ceiling_db=-1.5) is not first  # another target: made
    finally:
        clear()
    assert np.array_equal(first, fresh) and ch.lufs(fresh) == pytest.approx(-14.0, abs=0.1)
