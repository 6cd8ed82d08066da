"""Dynamics primitives against their closed forms."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pytest_overdub.dsp.dynamics import (PeakFollower, RmsFollower, db_to_gain, gain_computer, gain_to_db,
                                         hard_clip, peak_hold_release, soft_clip)
from pytest_overdub.errors import DeviceError


def loop_reference(u, a, state=0.0):
    e, out = state, []
    for v in u:
        e = max(v, a * e)
        out.append(e)
    return np.array(out)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=60), st.floats(0.01, 0.999), st.floats(0, 5))
def test_log_domain_release_equals_the_recursion(values, a, state):
    u = np.array(values)
    np.testing.assert_allclose(peak_hold_release(u, coeff=a, state=state), loop_reference(u, a, state),
                               rtol=1e-9, atol=1e-300)


def test_peak_follower_release_time_constant_and_segments():
    pf = PeakFollower(release_s=0.01, sr=1000)
    env = pf.process(np.eye(1, 50))
    assert env[10] == pytest.approx(math.exp(-1))
    pf2 = PeakFollower(release_s=0.01, sr=1000)
    parts = np.concatenate([pf2.process(np.eye(1, 50)[:, a:b]) for a, b in [(0, 1), (1, 7), (7, 50)]])
    np.testing.assert_allclose(parts, env, rtol=1e-12)


def test_rms_follower_of_a_sine():
    t = np.arange(48000) / 48000
    env = RmsFollower(window_s=0.05, sr=48000).process(np.sin(2 * np.pi * 100 * t))
    assert env[-1] == pytest.approx(1 / math.sqrt(2), rel=0.02)


def test_gain_computer_knee_is_continuous():
    kw = dict(threshold_db=-20, ratio=4, knee_db=10)
    x = np.array([-25.0 - 1e-9, -25.0, -15.0, -15.0 + 1e-9, -10.0])
    gr = gain_computer(x, **kw)
    assert gr[0] == 0 and gr[1] == 0
    assert gr[2] == pytest.approx(5 * 0.75) and gr[3] == pytest.approx(5 * 0.75)
    assert gr[4] == pytest.approx(10 * 0.75)
    with pytest.raises(DeviceError, match="0.5"):
        gain_computer(x, threshold_db=-20, ratio=0.5, knee_db=0)


def test_db_helpers_and_clips():
    assert db_to_gain(20.0) == pytest.approx(10.0)
    assert gain_to_db(0.0) == -120.0 and gain_to_db(np.array([0.1]))[0] == pytest.approx(-20.0)
    np.testing.assert_array_equal(hard_clip(np.array([-3.0, 0.2, 3.0]), ceiling=0.5), [-0.5, 0.2, 0.5])
    x = np.linspace(-20, 20, 100001)
    y = soft_clip(x)
    knee = 10 ** (-3 / 20)
    np.testing.assert_array_equal(y[np.abs(x) <= knee], x[np.abs(x) <= knee])
    assert np.abs(y).max() <= 10 ** (-0.5 / 20)
    assert np.all(np.diff(y) >= 0)  # monotonic


# ---------------------------------------------------------------- compiled per-sample loops

from numba import njit  # noqa: E402
from scipy import signal  # noqa: E402

from pytest_overdub.dsp.dynamics import compressor_samples, peak_hold_samples, release_coeff  # noqa: E402

PEAK_HOLD = njit(cache=True)(peak_hold_samples)
COMPRESS = njit(cache=True)(compressor_samples)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=60), st.floats(0.01, 0.999), st.floats(0, 5))
def test_compiled_release_is_the_recursion_exactly(values, a, state):
    u = np.array(values)
    got = peak_hold_release(u, coeff=a, state=state, loop=PEAK_HOLD)
    np.testing.assert_array_equal(got, loop_reference(u, a, state))


def test_compiled_compressor_detector_equals_gain_computer_release_and_attack():
    """One compiled pass's gain reduction == gain_computer -> peak_hold_release -> one-pole lfilter on the
    level in dB, in two calls (the state carried); asked for the reduction only, it writes no audio."""
    rng = np.random.default_rng(2)
    level_db = -40 + 30 * rng.random(4000) + 10 * np.sin(np.arange(4000) / 200.0)
    x = (10.0 ** (level_db / 20.0) * np.where(rng.random(4000) < 0.5, -1.0, 1.0))[None, :]
    rel, att = release_coeff(0.05, sr=48000), release_coeff(0.002, sr=48000)
    gr = gain_computer(20.0 * np.log10(np.abs(x[0])), threshold_db=-24, ratio=4, knee_db=6)
    held = peak_hold_release(gr, coeff=rel)
    expect = signal.lfilter([1 - att], [1, -att], held)
    state = np.zeros(2)
    got = np.empty(4000)
    none = np.empty((1, 0))
    COMPRESS(x[:, :1500], -24.0, 4.0, 6.0, 0.0, rel, att, state, none, got[:1500])
    COMPRESS(x[:, 1500:], -24.0, 4.0, 6.0, 0.0, rel, att, state, none, got[1500:])
    assert expect.max() > 3.0 and (gr == 0.0).mean() > 0.3  # it really compressed, and rested under the knee
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("size", [1, 2, 7, 147, 400])
def test_window_max_equals_maximum_filter1d(size):
    from scipy.ndimage import maximum_filter1d

    from pytest_overdub.dsp.dynamics import window_max

    x = np.round(np.random.default_rng(size).standard_normal(1000), 1)  # many ties
    half = size // 2  # scipy centres the window: left reach size // 2
    want = maximum_filter1d(x, size=size, mode="nearest")[half:half + x.size - size + 1]
    assert np.array_equal(window_max(x, size=size), want)
    assert window_max(x[:3], size=5).shape == (0,)
    with pytest.raises(DeviceError, match="2.5"):
        window_max(x, size=2.5)


#: The compiled loops call the C library's exp and log10; numpy's array exp and log10 are its own SIMD code
#: on a CPU with AVX-512 (numpy's X86_V4 dispatch), which differ from the C library's by an ulp, and a gain
#: smoothed over a block carries that to about 1e-14 (seen on an AMD EPYC with AVX-512; bit for bit on
#: CPUs without it). Any change to the formulas moves the samples by far more than this.
SAME_MATHS_RTOL = 1e-12


@pytest.mark.parametrize("knee_db, makeup_db", [(6.0, 0.0), (0.0, 2.0), (10.0, -3.0)])
def test_one_pass_compressor_gives_the_samples_of_its_detector_and_gain_law(knee_db, makeup_db):
    """``core.comp``'s pass == its gain reduction then ``x · db_to_gain(makeup - gr)`` (numpy's exp on the
    whole array), to the last few ulps (:data:`SAME_MATHS_RTOL`), on bursts, a fade through the knee and
    digital silence, in uneven blocks, state carried."""
    from pytest_overdub.devices.dynamics import Compressor
    from pytest_overdub.dsp.levels import db_to_gain

    rng = np.random.default_rng(7)
    n = 48000
    env = np.concatenate([np.linspace(0.0, 1.0, n // 2), np.zeros(n // 4), np.full(n - n // 2 - n // 4, 0.3)])
    x = rng.standard_normal((2, n)) * env * 0.5
    x[1, : n // 8] *= 0.1  # the right channel quieter for a while: the link follows the left
    p = {"threshold": -18.0, "ratio": 4.0, "knee": knee_db, "attack": 5.0, "release": 80.0, "makeup": makeup_db}
    fused = Compressor(sr=48000, tempo_bpm=120, seed=0, params=p)
    split = Compressor(sr=48000, tempo_bpm=120, seed=0, params=p)
    got = np.concatenate([fused.process(x[:, a:b], p) for a, b in [(0, 1000), (1000, 30001), (30001, n)]],
                         axis=1)
    gr = split.gain_reduction_db(x, p)
    want = x * db_to_gain(makeup_db - gr)[None, :]
    assert gr.max() > 6.0 and (gr == 0.0).any()  # it compressed, and it rested
    np.testing.assert_allclose(got, want, rtol=SAME_MATHS_RTOL, atol=0.0)


def test_limiter_compiled_need_and_gain_give_the_samples_of_the_array_formulas():
    """``core.limiter``'s need (``max(20·log10(peak) - target, 0)``, its log skipped under the target) and
    its gain (``y · db_to_gain(-att)``, skipped at 0 dB) compiled == the same formulas on whole arrays, to the
    last few ulps, on a signal that stays under the ceiling, crosses it and rests in silence."""
    from pytest_overdub.devices import dynamics as dyn
    from pytest_overdub.dsp.levels import db_to_gain

    class ArrayLimiter(dyn.Limiter):
        def _attenuation_db(self, peak, params):
            target = params["ceiling"] - dyn.LIMITER_MARGIN_DB
            with np.errstate(divide="ignore"):
                need = np.maximum(20.0 * np.log10(peak) - target, 0.0)
            att = np.empty(need.shape[0])
            coeff = release_coeff(params["release"] / 1000.0, sr=self.sr)
            self._release_state = dyn._lookahead_smoothing(need, self._max_hist, self._box_hist, coeff,
                                                           self._release_state, att)
            return att

        def _block(self, x, params):
            x = np.asarray(x, dtype=np.float64) * db_to_gain(params["gain"])
            floor = db_to_gain(params["ceiling"] - dyn.LIMITER_MARGIN_DB)
            att = self._attenuation_db(self._detector.process(x, floor=floor), params)
            y = self._audio.process(x)
            y *= db_to_gain(-att)[None, :]
            return y

    rng = np.random.default_rng(11)
    n = 96000
    env = np.concatenate([np.full(n // 4, 0.2), np.linspace(0.2, 1.6, n // 4), np.zeros(n // 4), np.full(n // 4, 0.9)])
    x = rng.standard_normal((2, n)) * env * 0.6
    p = {"gain": 3.0, "ceiling": -1.0, "release": 50.0}
    got = dyn.Limiter(sr=48000, tempo_bpm=120, seed=0, params=p).process(x, p)
    want = ArrayLimiter(sr=48000, tempo_bpm=120, seed=0, params=p).process(x, p)
    assert np.abs(got).max() < 10 ** (-1 / 20) and np.abs(got).max() > 0.8  # it limited, to the ceiling
    np.testing.assert_allclose(got, want, rtol=SAME_MATHS_RTOL, atol=0.0)
