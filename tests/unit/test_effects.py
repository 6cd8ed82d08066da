"""House effects against independent expectations (analytic values, scipy's own resampler, invariants)."""

import math

import numpy as np
import pytest
from scipy import signal

from pytest_overdub.devices import HOUSE_SPECS, house_class

SR = 48000


def make(device_id, seed=11, tempo=120.0, **params):
    spec = HOUSE_SPECS[device_id]
    p = spec.resolve(params)
    return house_class(device_id)(sr=SR, tempo_bpm=tempo, seed=seed, params=p), p


def sine(freq_hz, seconds=0.5, amp=0.25):
    t = np.arange(int(seconds * SR)) / SR
    s = amp * np.sin(2 * np.pi * freq_hz * t)
    return np.stack([s, s])


def rms_db(x):
    return 10 * np.log10(np.mean(np.square(x)))


def side_mid_db(x, lo_hz, hi_hz):
    """side.<lo>-<hi> (docs/meters.md): two 2nd-order high-passes at lo and two 2nd-order low-passes at hi."""
    sos = []
    if lo_hz > 0:
        sos += [signal.butter(2, lo_hz, "hp", fs=SR, output="sos")] * 2
    sos += [signal.butter(2, hi_hz, "lp", fs=SR, output="sos")] * 2
    sos = np.concatenate(sos)
    mid = signal.sosfilt(sos, x[0] + x[1])
    side = signal.sosfilt(sos, x[0] - x[1])
    return 10 * np.log10(np.sum(side ** 2) / np.sum(mid ** 2))


def run_segments(device_id, x, sizes, **params):
    dev, p = make(device_id, **params)
    out, i, k = [], 0, 0
    while i < x.shape[1]:
        n = sizes[k % len(sizes)]
        out.append(dev.process(x[:, i:i + n], p))
        i, k = i + n, k + 1
    return np.concatenate(out, axis=1)


# ---------------------------------------------------------------- block-size invariance

STATEFUL = [
    ("core.eq", {"hp": 80, "low": 4, "mid": -3, "high": 5, "lp": 9000}),
    ("core.comp", {"threshold": -30, "ratio": 6, "attack": 2, "release": 60}),
    ("core.limiter", {"gain": 12, "ceiling": -1}),
    ("core.delay", {"div": 0, "ms": 20, "feedback": 0.6, "wow": 0.5}),
    ("core.delay", {"div": 3, "mode": 0, "feedback": 0.5}),
    ("core.verb", {"size": 0.1, "decay": 1.0, "predelay": 5}),
    ("core.chorus", {"feedback": 0.5, "depth": 1.0}),
    ("core.width", {"monobass": 150, "width": 1.5, "pan": 0.3}),
]


@pytest.mark.parametrize("device_id,params", STATEFUL, ids=[f"{d}-{i}" for i, (d, _) in enumerate(STATEFUL)])
def test_segments_give_the_same_samples(device_id, params):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 9000)) * np.exp(-np.arange(9000) / 3000.0) * 0.5
    x[:, 4000:4100] *= 8.0  # a burst to wake the dynamics
    whole = run_segments(device_id, x, [x.shape[1]], **params)
    for sizes in ([1, 65, 8193], [65], [8193, 1]):
        parts = run_segments(device_id, x, sizes, **params)
        np.testing.assert_allclose(parts, whole, rtol=0, atol=1e-9 * max(1.0, np.abs(whole).max()))
    assert np.all(np.isfinite(whole))


@pytest.mark.parametrize("device_id,params", [
    ("core.delay", {"div": 0, "ms": 30, "feedback": 0.6, "wow": 0.5}),
    ("core.verb", {"size": 0.1, "decay": 0.5}),
    ("core.comp", {"threshold": -30, "ratio": 6}),
    ("core.chorus", {"feedback": 0.3}),
])
def test_a_long_call_is_processed_in_blocks_with_the_same_samples(device_id, params):
    """Inputs longer than BLOCK_FRAMES run block by block inside the device: exactly one long call."""
    from pytest_overdub.devices.dynamics import BLOCK_FRAMES

    n = BLOCK_FRAMES + 5000
    x = np.random.default_rng(12).standard_normal((2, n)) * 0.3
    whole = run_segments(device_id, x, [n], **params)
    parts = run_segments(device_id, x, [20000, 4000], **params)  # every call under BLOCK_FRAMES
    assert np.array_equal(whole, parts)


# ---------------------------------------------------------------- EQ

def test_eq_high_shelf_plus_6_db_raises_10k_and_leaves_100hz():
    for freq, expect in ((10000, 6.0), (100, 0.0)):
        dev, p = make("core.eq", high=6, highf=2000)
        x = sine(freq)
        y = dev.process(x, p)
        gain = rms_db(y[:, SR // 4:]) - rms_db(x[:, SR // 4:])
        assert abs(gain - expect) <= 0.2, (freq, gain)


def test_eq_shelf_is_half_gain_at_its_frequency():
    dev, p = make("core.eq", high=6)  # default highf 7000: RBJ shelf is +3 dB there
    x = sine(7000)
    gain = rms_db(dev.process(x, p)[:, SR // 4:]) - rms_db(x[:, SR // 4:])
    assert abs(gain - 3.0) < 0.05


def test_eq_4th_order_highpass_is_24_db_down_an_octave_below():
    dev, p = make("core.eq", hp=200)
    x = sine(100, seconds=1.0)
    gain = rms_db(dev.process(x, p)[:, SR // 2:]) - rms_db(x[:, SR // 2:])
    # 4th-order Butterworth: |H|^2 = 1 / (1 + (f/fc)^-8) at f = fc/2: -24.1 dB
    assert abs(gain - 10 * np.log10(1 / (1 + 2 ** 8))) < 0.2


def test_eq_at_defaults_is_identity():
    dev, p = make("core.eq")
    x = sine(440)
    np.testing.assert_array_equal(dev.process(x, p), x)


# ---------------------------------------------------------------- gain, width, balance

@pytest.mark.parametrize("device_id", ["core.gain", "core.width"])
def test_balance_pan(device_id):
    x = np.ones((2, 100))
    dev, p = make(device_id)
    np.testing.assert_allclose(dev.process(x, p), 1.0, atol=1e-15)
    dev, p = make(device_id, pan=0.5)
    y = dev.process(x, p)
    np.testing.assert_allclose(y[1], 1.0, atol=1e-15)
    np.testing.assert_allclose(y[0], math.cos(math.pi / 4), atol=1e-15)
    dev, p = make(device_id, pan=-1.0, gain=-6)
    y = dev.process(x, p)
    np.testing.assert_allclose(y[0], 10 ** (-6 / 20), atol=1e-15)
    np.testing.assert_allclose(y[1], 0.0, atol=1e-15)


def test_width_zero_is_exact_mono_even_with_monobass():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5000))
    for mb in (20, 200):
        dev, p = make("core.width", width=0, monobass=mb)
        y = dev.process(x, p)
        assert np.array_equal(y[0], y[1])


def chorused_bass(seconds=3.0):
    """A bass-like tone (55 Hz with decaying harmonics) plus some 1-4 kHz content, through core.chorus."""
    t = np.arange(int(seconds * SR)) / SR
    tone = sum(0.3 / k * np.sin(2 * np.pi * 55 * k * t + k) for k in range(1, 5))
    rng = np.random.default_rng(3)
    air = signal.sosfilt(signal.butter(4, [1000, 4000], "bp", fs=SR, output="sos"), rng.standard_normal(t.size))
    mono = tone + 0.05 * air
    ch, p = make("core.chorus", depth=1.0, rate=0.4, mix=0.8)
    return ch.process(np.stack([mono, mono]), p)


def test_monobass_makes_the_lows_mono_and_keeps_the_highs():
    x = chorused_bass()
    skip = SR // 2
    before_lo, before_hi = side_mid_db(x[:, skip:], 20, 120), side_mid_db(x[:, skip:], 1000, 8000)
    assert before_lo > -20  # the chorus really made the bass wide
    dev, p = make("core.width", monobass=120)
    y = dev.process(x, p)
    after_lo, after_hi = side_mid_db(y[:, skip:], 20, 120), side_mid_db(y[:, skip:], 1000, 8000)
    assert after_lo <= before_lo - 30, (before_lo, after_lo)
    assert abs(after_hi - before_hi) <= 1.0, (before_hi, after_hi)


def test_monobass_narrows_more_as_the_cutoff_rises():
    x = chorused_bass(2.0)
    values = []
    for mb in (20, 40, 80, 160, 320):
        dev, p = make("core.width", monobass=mb)
        values.append(side_mid_db(dev.process(x, p)[:, SR // 2:], 20, 120))
    assert all(b < a for a, b in zip(values, values[1:])), values


@pytest.mark.parametrize("width,pan,gain", [(1.0, 0.0, 0.0), (0.0, 0.4, -6.0), (2.0, -1.0, 3.5), (1.3, 1.0, 0.0)])
def test_width_without_mono_bass_equals_its_numpy_definition(width, pan, gain):
    """The compiled pass is the stacked mid + side / mid - side times the balance gains, bit for bit."""
    from pytest_overdub.devices.dynamics import apply_gain_pan

    x = np.random.default_rng(12).standard_normal((2, 5000))
    dev, p = make("core.width", width=width, pan=pan, gain=gain)
    mid, side = (x[0] + x[1]) * 0.5, (x[0] - x[1]) * (0.5 * width)
    expect = apply_gain_pan(np.stack([mid + side, mid - side]), gain_db=gain, pan=pan)
    assert np.array_equal(dev.process(x, p), expect)


# ---------------------------------------------------------------- limiter

def drum_loop(seconds=2.0):
    """Kick-ish thumps, snare-ish noise bursts and hat ticks on a 120 bpm grid."""
    n = int(seconds * SR)
    t = np.arange(n) / SR
    rng = np.random.default_rng(9)
    out = np.zeros(n)
    for k, start in enumerate(np.arange(0, seconds, 0.25)):
        i = int(start * SR)
        m = n - i
        tt = t[:m]
        if k % 4 == 0:
            out[i:] += 0.9 * np.sin(2 * np.pi * (50 * tt + 400 * (1 - np.exp(-tt * 30)) / 30)) * np.exp(-tt * 8)
        elif k % 4 == 2:
            out[i:] += 0.6 * rng.standard_normal(m) * np.exp(-tt * 20)
        out[i:] += 0.3 * np.diff(rng.standard_normal(m + 1)) * np.exp(-tt * 200)
    return np.stack([out, np.roll(out, 7) * 0.9])


def test_limiter_holds_the_true_peak_of_a_plus_12_db_drum_loop():
    x = drum_loop()
    dev, p = make("core.limiter", gain=12, ceiling=-1.0, release=50)
    y = dev.process(x, p)
    tp = np.max(np.abs(signal.resample_poly(y, 4, 1, axis=1)))
    assert 20 * np.log10(tp) <= -1.0 + 0.1
    # and it is really limiting, not just turning down: the loud parts sit near the ceiling
    assert 20 * np.log10(np.max(np.abs(y))) > -3.0


def test_limiter_latency_is_exact_and_transparent_below_the_ceiling():
    dev, p = make("core.limiter", gain=0, ceiling=-1.0)
    x = np.zeros((2, 2000))
    x[:, 100] = 0.5
    y = dev.process(x, p)
    assert int(np.argmax(np.abs(y[0]))) == 100 + dev.latency_frames
    assert y[0, 100 + dev.latency_frames] == pytest.approx(0.5, abs=1e-12)


def test_limiter_one_pass_smoothing_equals_window_max_release_and_box_average_across_blocks():
    """The compiled lookahead smoothing is the three reference steps of pytest_overdub.dsp.dynamics (the
    sliding max, the exponential release, the box average as a difference of cumulative sums), to rounding
    (the reference release runs in the log domain), with the tails carried from one block to the next."""
    from pytest_overdub.devices.dynamics import _lookahead_smoothing
    from pytest_overdub.dsp.dynamics import peak_hold_release, window_max

    rng = np.random.default_rng(11)
    need = np.maximum(rng.standard_normal(9000) * 3.0, 0.0) * (rng.random(9000) < 0.2)
    span, w, coeff = 147, 145, 0.9991
    held = window_max(np.concatenate([np.zeros(span - 1), need]), size=span)
    rel = peak_hold_release(held, coeff=coeff, state=0.0)
    cs = np.concatenate([[0.0], np.cumsum(np.concatenate([np.zeros(w - 1), rel]))])
    expect = (cs[w:] - cs[:-w]) / w
    max_hist, box_hist, state, parts, i = np.zeros(span - 1), np.zeros(w - 1), 0.0, [], 0
    for n in (1, 64, 5000, 3935):
        att = np.empty(n)
        state = _lookahead_smoothing(need[i:i + n], max_hist, box_hist, coeff, state, att)
        parts.append(att)
        i += n
    assert np.max(expect) > 1.0
    np.testing.assert_allclose(np.concatenate(parts), expect, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- compressor

def test_compressor_static_curve_hard_knee():
    dev, p = make("core.comp", threshold=-20, ratio=4, knee=0, attack=1, release=1000, makeup=0)
    x = sine(1000, seconds=1.0, amp=10 ** (-8 / 20))  # peak -8 dB, 12 dB over the threshold
    y = dev.process(x, p)
    # steady state: peak-detected gain reduction = 12 * (1 - 1/4) = 9 dB
    gain = 20 * np.log10(np.max(np.abs(y[:, SR // 2:])) / np.max(np.abs(x)))
    assert abs(gain + 9.0) < 0.05


def test_compressor_below_threshold_is_makeup_only():
    dev, p = make("core.comp", threshold=-6, knee=0, makeup=3)
    x = sine(200, amp=0.1)
    np.testing.assert_allclose(dev.process(x, p), x * 10 ** (3 / 20), rtol=1e-12)


# ---------------------------------------------------------------- delay

def click():
    x = np.zeros((2, SR))
    x[:, 1000] = 1.0
    return x


def test_delay_free_375ms_first_repeat():
    for mode in (0, 1):
        dev, p = make("core.delay", div=0, ms=375, mode=mode, mix=0.5)
        y = dev.process(click(), p)
        env = np.abs(y).max(axis=0)
        late = env.copy()
        late[:1000 + int(0.040 * SR)] = 0
        t_ms = (int(np.argmax(late)) - 1000) / SR * 1000
        assert abs(t_ms - 375) <= 1.0, t_ms
        assert env[1000] == pytest.approx(1.0)  # mix 0.5 keeps the dry at unity


def test_delay_tempo_synced_division():
    dev, p = make("core.delay", div=7, tempo=100.0, wow=0, mode=0, mix=0.5)  # 1/8D = 0.75 beat
    y = dev.process(click(), p)
    late = np.abs(y[0]).copy()
    late[:1000 + 100] = 0
    assert abs((int(np.argmax(late)) - 1000) / SR - 0.45) <= 0.001


def test_ping_pong_alternates_sides_and_feedback_decays():
    dev, p = make("core.delay", div=0, ms=100, mode=1, feedback=0.5, wow=0, tone=16000, lowcut=20, mix=1)
    x = np.zeros((2, SR))
    burst = np.hanning(480) * np.sin(2 * np.pi * 1000 * np.arange(480) / SR)  # 10 ms at 1 kHz
    x[:, 1000:1480] = burst
    y = dev.process(x, p)
    d = int(0.1 * SR)
    win = lambda k, ch: np.sqrt(np.sum(y[ch, 900 + k * d:1600 + k * d] ** 2) / np.sum(burst ** 2))
    # equal-power mono feed: the first repeat (left only) carries sqrt(2) x the centred input
    assert win(1, 0) == pytest.approx(math.sqrt(2), rel=0.02) and win(1, 1) < 1e-4
    assert win(2, 1) == pytest.approx(math.sqrt(2) * 0.5, rel=0.02) and win(2, 0) < 1e-4
    assert win(3, 0) == pytest.approx(math.sqrt(2) * 0.25, rel=0.02)


# ---------------------------------------------------------------- reverb

def schroeder_rt60(ir):
    energy = np.cumsum((ir ** 2)[::-1])[::-1]
    edc = 10 * np.log10(energy / energy[0])
    t = np.arange(ir.size) / SR
    sel = (edc <= -5) & (edc >= -35)
    slope = np.polyfit(t[sel], edc[sel], 1)[0]
    return -60.0 / slope


@pytest.mark.parametrize("decay,damp", [(1.0, 0.0), (2.4, 0.45)])
def test_reverb_rt60_near_decay(decay, damp):
    dev, p = make("core.verb", decay=decay, damp=damp, mix=1.0, lowcut=20, predelay=0)
    x = np.zeros((2, int(SR * decay * 1.6)))
    x[:, 0] = 1.0
    y = dev.process(x, p)
    rt = schroeder_rt60(y[0] + y[1])
    assert 0.7 * decay <= rt <= 1.3 * decay, rt


def test_reverb_mix_is_equal_power_and_tail_is_stereo():
    dev, p = make("core.verb", mix=0.0)
    x = sine(300, seconds=0.2)
    np.testing.assert_allclose(dev.process(x, p), x, atol=1e-15)
    dev, p = make("core.verb", mix=1.0, width=1.0)
    y = dev.process(click()[:, :SR // 2], p)
    corr = np.sum(y[0] * y[1]) / np.sqrt(np.sum(y[0] ** 2) * np.sum(y[1] ** 2))
    assert abs(corr) < 0.5


# ---------------------------------------------------------------- chorus

def test_chorus_widens_a_mono_input():
    x = sine(330, seconds=1.0)
    dev, p = make("core.chorus")
    y = dev.process(x, p)[:, SR // 10:]
    corr = np.sum(y[0] * y[1]) / np.sqrt(np.sum(y[0] ** 2) * np.sum(y[1] ** 2))
    side = np.sum((y[0] - y[1]) ** 2) / np.sum((y[0] + y[1]) ** 2)
    assert corr < 0.99 and 10 * np.log10(side) > -30
    dev, p = make("core.chorus", width=0)  # no stereo offset: stays mono
    y = dev.process(x, p)
    np.testing.assert_array_equal(y[0], y[1])


def test_chorus_is_seeded():
    x = sine(330, seconds=0.2)
    a = make("core.chorus", seed=1)
    b = make("core.chorus", seed=1)
    c = make("core.chorus", seed=2)
    ya, yb, yc = (d.process(x, p) for d, p in (a, b, c))
    assert np.array_equal(ya, yb) and not np.array_equal(ya, yc)


# ---------------------------------------------------------------- automation

@pytest.mark.parametrize("device_id,key,a,b", [
    ("core.eq", "high", -6.0, 6.0), ("core.delay", "ms", 100.0, 120.0), ("core.verb", "size", 0.3, 0.6),
    ("core.comp", "threshold", -30.0, -10.0), ("core.width", "monobass", 60.0, 120.0),
])
def test_param_change_between_calls_does_not_click(device_id, key, a, b):
    x = sine(220, seconds=0.4)
    dev, p = make(device_id, **{key: a, "div": 0} if device_id == "core.delay" else {key: a})
    half = x.shape[1] // 2
    y1 = dev.process(x[:, :half], p)
    y2 = dev.process(x[:, half:], dict(p, **{key: b}))
    y = np.concatenate([y1, y2], axis=1)
    step = np.abs(np.diff(y[0]))
    typical = np.percentile(step[half - 2000:half - 10], 99)
    assert step[half - 2:half + 2].max() <= 3 * typical + 1e-9


@pytest.mark.parametrize("device_id,params,through", [
    ("core.gain", {}, True), ("core.gain", {"pan": 0.2}, False), ("core.gain", {"gain": -1.0}, False),
    ("core.eq", {}, True), ("core.eq", {"gain": 0.5}, False), ("core.eq", {"hp": 80.0}, False),
    ("core.comp", {}, False)])
def test_passes_through_only_where_process_returns_its_input_exactly(device_id, params, through):
    """A device that says it passes its input through is skipped in streamed chains, so it must really
    return the same samples (signed zeros and extremes included)."""
    dev, p = make(device_id, **params)
    x = np.random.default_rng(13).standard_normal((2, 4096))
    x[0, :4] = [-0.0, 0.0, 1e300, -1e-300]
    assert dev.passes_through(p) is through
    if through:
        y = dev.process(x, p)
        assert np.array_equal(y, x) and np.array_equal(np.signbit(y), np.signbit(x))
