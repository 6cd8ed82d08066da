"""The compiled sosfilt/lfilter give scipy.signal's samples bit for bit (scipy is the reference here)."""

import numpy as np
import pytest
from scipy import signal

from pytest_overdub.dsp import signals
from pytest_overdub.dsp.compiled import SOS, _pcg64_seed_words, all_finite, lfilter, rng_for, sine, sosfilt
from pytest_overdub.dsp.filters import Crossover, SOSFilter, butterworth, one_pole, rbj_biquad
from pytest_overdub.errors import DeviceError

SR = 48000
RNG = np.random.default_rng(11)


@pytest.mark.parametrize("sections", [1, 3])
@pytest.mark.parametrize("shape", [(700,), (2, 500), (2, 3, 300)])
def test_sosfilt_equals_scipy_bit_for_bit(shape, sections):
    x = RNG.standard_normal(shape)
    sos = np.concatenate([butterworth("hp", order=4, freq_hz=80, sr=SR), one_pole("lp", freq_hz=900, sr=SR)[None]])
    sos = sos[-sections:]  # one section (its own loop for other than two channels) or the cascade
    assert np.array_equal(sosfilt(sos, x), signal.sosfilt(sos, x, axis=-1))


@pytest.mark.parametrize("b,a", [([0.15], [1.0, -0.85]),                     # the pluck's excitation one-pole
                                 ([1.0], [1.0, -0.7]),                       # a comb's recursion
                                 ([0.2, 0.3, -0.1], [1.0, -0.5, 0.25, 0.1]),  # third order, b padded
                                 ([0.5, 0.4, 0.3, 0.2], [2.0, -0.4])])       # a[0] != 1, a padded
def test_lfilter_equals_scipy_bit_for_bit_with_and_without_state(b, a):
    x = RNG.standard_normal((3, 400))
    assert np.array_equal(lfilter(b, a, x[0]), signal.lfilter(b, a, x[0]))
    zi = RNG.standard_normal((3, max(len(a), len(b)) - 1))
    (y, zf), (want_y, want_zf) = lfilter(b, a, x, zi=zi), signal.lfilter(b, a, x, axis=-1, zi=zi)
    assert np.array_equal(y, want_y) and np.array_equal(zf, want_zf)


def test_lfilter_refuses_a_non_recursive_or_unnormalisable_filter():
    with pytest.raises(DeviceError, match=r"len\(a\) >= 2"):
        lfilter([1.0, 0.5], [1.0], np.ones(4))
    with pytest.raises(DeviceError, match="a\\[0\\] != 0"):
        lfilter([1.0], [0.0, 0.5], np.ones(4))
    with pytest.raises(DeviceError, match="zi of shape"):
        lfilter([1.0], [1.0, -0.5], np.ones((2, 4)), zi=np.zeros(1))


def test_loop_filters_take_mono_signals_and_carry_state_like_sosfilt():
    x = RNG.standard_normal(2000)
    sos = rbj_biquad("hp", freq_hz=120, sr=SR)[None]
    f = SOSFilter(sos, loop=SOS)
    got = np.concatenate([f.process(x[:777]), f.process(x[777:])])
    assert np.array_equal(got, signal.sosfilt(sos, x))
    plain, compiled = Crossover(freq_hz=150, sr=SR), Crossover(freq_hz=150, sr=SR, loop=SOS)
    assert np.array_equal(compiled.allpass(x), plain.allpass(x))


# --- sin ------------------------------------------------------------------------------------------

def test_sin_matches_numpy_to_one_ulp_of_one_over_the_range_the_synths_use():
    from pytest_overdub.dsp.compiled import sin

    rng = np.random.default_rng(3)
    for scale in (1.0, 1e2, 1e4, 1e5):
        x = rng.uniform(-scale, scale, 20000)
        assert np.max(np.abs(sin(x) - np.sin(x))) <= 2.3e-16
    exact = sin(np.array([0.0, np.pi / 2, -np.pi / 2, np.pi / 6]))
    assert exact[0] == 0.0 and exact[1] == 1.0 and exact[2] == -1.0
    assert abs(exact[3] - 0.5) <= 1.2e-16


def test_sin_in_place_and_out_of_range_inputs_fall_back_to_numpy():
    from pytest_overdub.dsp.compiled import SIN_MAX_ARG, sin

    x = np.array([1.0, 3.0 * SIN_MAX_ARG, -2.5, np.inf, np.nan])
    with np.errstate(invalid="ignore"):  # sin(inf) is NaN, as numpy says
        want = np.sin(x)
        sin(x, out=x)  # in place, with values past the reduction's range: numpy's samples, not a mix
    assert np.array_equal(x[:3], want[:3]) and np.isnan(x[3]) and np.isnan(x[4])
    y = np.linspace(-50.0, 50.0, 1001)
    z = y.copy()
    assert np.array_equal(sin(z, out=z), sin(y))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_all_finite_finds_one_bad_sample_anywhere_in_a_block_or_a_slice_of_it(bad):
    # every position in rows of 1..37 frames (the vectorised body and its remainder), and in a slice in time
    for n in range(1, 38):
        for pos in range(n):
            y = np.ones((2, n))
            y[1, pos] = bad
            assert not all_finite(y) and not all_finite(y[1]) and all_finite(y[0])
    y = RNG.standard_normal((2, 40000))
    y[0, 32767] = bad
    assert not all_finite(y) and not all_finite(y[:, 32000:33000]) and all_finite(y[:, 32768:])


def test_all_finite_is_true_for_finite_values_that_would_overflow_a_plain_sum():
    assert all_finite(np.full((2, 1000), 1.7e308)) and all_finite(np.array([1.7e308, -1.7e308, 1.7e308]))
    assert all_finite(np.zeros((2, 0))) and all_finite(np.zeros(0))
    # other dtypes and layouts go to numpy, with its answer
    assert all_finite(np.ones((3, 2, 2))) and not all_finite(np.array([np.nan], dtype=np.float32))
    assert not all_finite(np.array([[1.0, np.inf], [0.0, 0.0]]).T)


def test_pcg64_seed_words_are_numpys_seed_sequence_state_for_64_bit_seeds():
    seeds = [0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1] + [int(s) for s in RNG.integers(0, 2**63, 300)]
    seeds += [int(s) for s in RNG.integers(0, 2**32, 100)]  # one entropy word
    for seed in seeds:
        words = np.empty(4, np.uint64)
        _pcg64_seed_words(np.uint64(seed), words)
        assert np.array_equal(words, np.random.SeedSequence(seed).generate_state(4, np.uint64)), seed


@pytest.mark.parametrize("ids", [("t_bass", 3), (2**64 - 1, 0), (5, "pan", 17), ("drum-bank", "hat", 0)])
def test_rng_for_gives_the_stream_of_numpys_default_rng(ids):
    fast, ref = rng_for(*ids), np.random.default_rng(signals.seed_for(*ids))
    assert fast.bit_generator.state == ref.bit_generator.state
    assert np.array_equal(fast.standard_normal(257), ref.standard_normal(257))
    assert np.array_equal(fast.integers(0, 2**40, 9), ref.integers(0, 2**40, 9))


@pytest.mark.parametrize("freq_hz,n", [(0.13, 48000 * 20), (123.4, 2048), (440.0, 2049), (7777.7, 99_999), (30.0, 100)])
def test_sine_gives_the_samples_of_signals_sine(freq_hz, n):
    """The compiled angle addition against einsum's: the same products and sum, so the same samples,
    the last block cut short and the short (direct np.sin) path included."""
    for phase0 in (0.0, 0.37, 5.25):
        got = sine(freq_hz, sr=SR, n_frames=n, phase0=phase0)
        assert got.shape == (n,) and np.array_equal(got, signals.sine(freq_hz, sr=SR, n_frames=n, phase0=phase0))
    np.testing.assert_allclose(sine(440.0, sr=SR, n_frames=4800), np.sin(2 * np.pi * 440.0 * np.arange(4800) / SR),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 1023, 1024, 1025, 5000])
def test_over_indices_are_the_samples_above_the_limit_in_order(n):
    from pytest_overdub.dsp.compiled import over_indices

    x = np.random.default_rng(n).standard_normal(n) * 0.5
    x[::97] = np.nan
    x[5::311] = -np.inf
    with np.errstate(invalid="ignore"):
        for limit in (0.9, 0.1):  # sparse (a scan) and dense (a mask)
            assert np.array_equal(over_indices(x, limit), np.flatnonzero(np.abs(x) > limit))
    assert over_indices(np.full(n, 0.9), 0.9).size == 0  # at the limit is not above it
    with pytest.raises(DeviceError, match="1-D float64"):
        over_indices(np.zeros((2, 3)), 0.5)
