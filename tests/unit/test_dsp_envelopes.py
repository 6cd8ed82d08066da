"""Envelopes: exact values at their breakpoints (T60 decays, exact-zero releases)."""

import numpy as np
import pytest

from pytest_overdub.dsp import envelopes as E
from pytest_overdub.errors import DeviceError

SR = 1000  # 1 ms per sample keeps the arithmetic readable


def test_exp_decay_is_a_t60():
    env = E.exp_decay(2001, sr=SR, t60_s=1.0)
    assert env[0] == 1.0
    assert env[1000] == pytest.approx(1e-3)  # -60 dB at t60
    assert env[500] == pytest.approx(10 ** (-1.5))  # -30 dB halfway


def test_release_curve_reaches_exact_zero():
    r = E.release_curve(300, sr=SR, release_s=0.2)
    assert r[0] == 1.0 and r[200] == 0.0 and np.all(r[200:] == 0.0)
    assert np.all(np.diff(r[:201]) < 0)


def test_adsr_breakpoints():
    env = E.adsr(0.5, sr=SR, attack_s=0.01, decay_s=0.1, sustain=0.5, release_s=0.2)
    assert env.shape == (700,)
    assert env[0] == 0.0 and env[5] == pytest.approx(0.5) and env[10] == pytest.approx(1.0)
    assert env[110] == pytest.approx(0.5 + 0.5e-3)  # decay T60 0.1 s toward the sustain
    assert env[499] == pytest.approx(0.5, abs=1e-6)
    assert env[500] == pytest.approx(0.5, abs=1e-6) and env[-1] == pytest.approx(0.0, abs=1e-3)


def test_adsr_release_during_attack_starts_from_reached_level():
    env = E.adsr(0.005, sr=SR, attack_s=0.01, decay_s=0.1, sustain=1.0, release_s=0.05)
    assert env[5] == pytest.approx(0.5)  # the attack reached half way at gate-off
    assert np.max(env) <= 0.5 + 1e-12


def test_adsr_n_frames_truncates_and_pads():
    assert E.adsr(0.1, sr=SR, attack_s=0, decay_s=0, sustain=1, release_s=0.1, n_frames=50).shape == (50,)
    padded = E.adsr(0.1, sr=SR, attack_s=0, decay_s=0, sustain=1, release_s=0.1, n_frames=400)
    assert padded.shape == (400,) and np.all(padded[200:] == 0)


def test_ar_percussive():
    env = E.ar(1100, sr=SR, attack_s=0.1, decay_s=1.0)
    assert env[50] == pytest.approx(0.5) and env[100] == pytest.approx(1.0)
    assert env[1100 - 1] == pytest.approx(np.exp(-np.log(1000) * 0.999), rel=1e-6)


@pytest.mark.parametrize("kw", [dict(attack_s=-1.0), dict(sustain=1.5), dict(release_s=float("nan"))])
def test_bad_times_raise(kw):
    args = dict(sr=SR, attack_s=0.01, decay_s=0.1, sustain=0.5, release_s=0.1) | kw
    with pytest.raises(DeviceError):
        E.adsr(0.2, **args)
