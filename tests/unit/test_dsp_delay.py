"""Delay lines against sample-by-sample definitions written as plain recursions on tiny inputs."""

import numpy as np
import pytest

from pytest_overdub.dsp.delay import (FeedbackComb, FeedbackDelay, FeedbackDelayNetwork, IntegerDelay,
                                      SchroederAllpass, hadamard, read_fractional)
from pytest_overdub.errors import DeviceError


def segments(proc, x, sizes):
    out, i, k = [], 0, 0
    while i < x.shape[-1]:
        n = sizes[k % len(sizes)]
        out.append(proc(x[..., i:i + n]))
        i, k = i + n, k + 1
    return np.concatenate(out, axis=-1)


def test_comb_impulse_response_is_geometric():
    y = FeedbackComb(delay_frames=5, gain=-0.5).process(np.eye(1, 21))
    expect = np.zeros(21)
    expect[::5] = (-0.5) ** np.arange(5)
    np.testing.assert_array_equal(y[0], expect)


def test_comb_and_allpass_are_exact_across_segments():
    x = np.random.default_rng(0).standard_normal((2, 9000))
    for cls in (FeedbackComb, SchroederAllpass):
        whole = cls(delay_frames=37, gain=0.7).process(x)
        dev = cls(delay_frames=37, gain=0.7)
        assert np.array_equal(segments(dev.process, x, [1, 65, 8193]), whole)


def test_allpass_has_flat_magnitude():
    y = SchroederAllpass(delay_frames=17, gain=0.6).process(np.eye(1, 1 << 14))[0]
    np.testing.assert_allclose(np.abs(np.fft.rfft(y)), 1.0, atol=1e-9)


def test_integer_delay_shifts():
    d = IntegerDelay(4)
    x = np.arange(1.0, 11.0)[None]
    y = segments(d.process, x, [3])
    np.testing.assert_array_equal(y[0], np.r_[np.zeros(4), np.arange(1.0, 7.0)])


def test_fractional_read_interpolates_linearly():
    buf = np.array([[0.0, 10.0, 20.0, 30.0]])
    assert read_fractional(buf, np.array([3]), np.array([[0.25]]))[0, 0] == pytest.approx(27.5)


def test_feedback_delay_fractional_first_repeat_and_echo_train():
    fd = FeedbackDelay(channels=1)
    y = fd.process(np.eye(1, 40), delay_frames=10.5, feedback=0.5)[0]
    assert y[10] == pytest.approx(0.5) and y[11] == pytest.approx(0.5)  # half-way between 10 and 11
    # second repeat: the line held 0.25 at frames 10 and 11, read again 10.5 frames later
    np.testing.assert_allclose(y[20:23], [0.125, 0.25, 0.125], atol=1e-15)
    assert abs(np.sum(y[15:30]) - 0.5) < 1e-12  # the second repeat carries feedback x the first's area


def test_feedback_delay_segments_with_modulation():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6000))
    d = 40 + 5 * np.sin(np.arange(6000) / 300.0)
    whole = FeedbackDelay(channels=2, cross=True).process(x, delay_frames=d[None], feedback=0.7)
    fd = FeedbackDelay(channels=2, cross=True)
    parts, i = [], 0
    for n in [1, 65, 3000, 2934]:
        parts.append(fd.process(x[:, i:i + n], delay_frames=d[None, i:i + n], feedback=0.7))
        i += n
    assert np.array_equal(np.concatenate(parts, 1), whole)


def test_fdn_rt60_per_line_and_lossless_matrix():
    h = hadamard(8)
    np.testing.assert_allclose(h @ h.T, np.eye(8), atol=1e-12)
    sr = 48000
    fdn = FeedbackDelayNetwork(delays_frames=[1201, 1399, 1601, 1811], rt60_s=0.5, sr=sr)
    y = fdn.process(np.eye(1, sr)[0])
    e = np.sum(y ** 2, axis=0)
    early = e[4000:8000].sum() / 4000
    late = e[28000:32000].sum() / 4000
    # energy falls 60 dB per 0.5 s: 24000 frames later -> -60 dB
    assert 10 * np.log10(late / early) == pytest.approx(-60, abs=3)


def test_bad_delay_is_refused():
    with pytest.raises(DeviceError, match="0.5"):
        FeedbackDelay(channels=1).process(np.zeros((1, 4)), delay_frames=0.5, feedback=0.1)
    with pytest.raises(DeviceError, match="power of two"):
        hadamard(6)


# ---------------------------------------------------------------- compiled per-sample loops

from numba import njit  # noqa: E402

from pytest_overdub.dsp.delay import (SineSweep, comb_samples, fdn_samples,  # noqa: E402
                                      feedback_delay_samples, stereo_feedback_delay_samples,
                                      stereo_swept_samples, swept_positions_samples)
from pytest_overdub.dsp.filters import SOSFilter, rbj_biquad  # noqa: E402

COMB = njit(cache=True)(comb_samples)
LINE = njit(cache=True)(feedback_delay_samples)
FDN = njit(cache=True)(fdn_samples)
STEREO_LINE = njit(cache=True)(stereo_feedback_delay_samples)
STEREO_SWEPT = njit(cache=True)(stereo_swept_samples)
POSITIONS = njit(cache=True)(swept_positions_samples)


def test_compiled_comb_and_allpass_equal_the_folded_lfilter_bit_for_bit():
    x = np.random.default_rng(4).standard_normal((2, 5000))
    for cls in (FeedbackComb, SchroederAllpass):
        whole = cls(delay_frames=29, gain=-0.6).process(x)
        dev = cls(delay_frames=29, gain=-0.6, loop=COMB)
        assert np.array_equal(segments(dev.process, x, [1, 65, 3001]), whole)


@pytest.mark.parametrize("cross,filtered,loop", [(False, True, LINE), (True, False, LINE), (True, True, LINE),
                                                  (False, True, STEREO_LINE), (True, True, STEREO_LINE)])
def test_compiled_feedback_delay_equals_the_chunked_path_bit_for_bit(cross, filtered, loop):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 6000))
    d = np.stack([40 + 5 * np.sin(np.arange(6000) / 300.0), 33.5 + np.zeros(6000)])

    def make(loop):
        sos = np.stack([rbj_biquad("lp", freq_hz=3000, sr=48000), rbj_biquad("hp", freq_hz=90, sr=48000)])
        filt = SOSFilter(sos) if filtered else None
        return FeedbackDelay(channels=2, cross=cross, loop_filter=filt, loop=loop)

    whole = make(None).process(x, delay_frames=d, feedback=0.7)
    fd = make(loop)
    parts, i = [], 0
    for n in [1, 65, 3000, 2934]:
        parts.append(fd.process(x[:, i:i + n], delay_frames=d[:, i:i + n], feedback=0.7))
        i += n
    assert np.array_equal(np.concatenate(parts, 1), whole)


@pytest.mark.parametrize("lines", [4, 8], ids=["4 lines", "8 lines (one-pass transform)"])
def test_compiled_fdn_equals_the_matrix_path_with_damping_and_a_length_change(lines):
    """The compiled loop uses a fast Walsh-Hadamard transform instead of the matrix product: same
    arithmetic up to the order of the sums, so equal to ~1e-15 relative, also through a crossfade."""
    rng = np.random.default_rng(8)
    inp = rng.standard_normal(6000)
    out = rng.standard_normal((2, lines))
    before = [101, 143, 165, 177, 189, 203, 211, 230][:lines]
    after = [90, 150, 171, 200, 181, 222, 207, 240][:lines]
    nets = [FeedbackDelayNetwork(delays_frames=before, rt60_s=0.8, sr=48000, damp=0.3, out=out,
                                 loop=loop) for loop in (None, FDN)]
    first = [f.process(inp[:3000]) for f in nets]
    for f in nets:
        f.set(delays_frames=after, rt60_s=0.8, damp=0.3)
    second = [f.process(inp[3000:]) for f in nets]
    a, b = np.concatenate([first[0], second[0]], 1), np.concatenate([first[1], second[1]], 1)
    assert np.abs(a).max() > 1.0
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * np.abs(a).max())


def test_stereo_swept_loop_refuses_other_shapes():
    sw = _sweep(1)
    rows = (np.zeros(8),) * 4
    args = (np.zeros((1, 8)), np.full((1, 8), 3, np.int64), 0.5, False)
    with pytest.raises(ValueError, match="2 channels and no loop filter or 2 sections"):
        STEREO_SWEPT(np.zeros((2, 100)), *rows, False, *args, np.zeros((1, 6)), np.zeros((1, 2, 2)), 1.0, 0.0,
                     np.empty((2, 8)))
    with pytest.raises(DeviceError, match=r"two channels .* got x \(1, 8\)"):
        FeedbackDelay(channels=1).process_swept(np.zeros((1, 8)), sweep=sw, feedback=0.5, dry=np.zeros((1, 8)),
                                                wet_gain=1.0, dry_gain=0.0, positions=POSITIONS, loop=STEREO_SWEPT)


@pytest.mark.parametrize("first", [0, 5, 63, 64, 1000])
def test_swept_positions_are_the_ceiling_and_fraction_of_the_sweeps_delays(first):
    """Over grid intervals cut anywhere (a block starting mid-interval, ending mid-interval)."""
    sw = _sweep(2)
    sw = SineSweep(sw.sin_at, sw.cos_at, sw.cos_b, sw.sin_b, first, sw.scale, sw.offset, sw.gain)
    n = 3001
    frac, back = np.empty((2, n)), np.empty((2, n), np.int64)
    POSITIONS(sw.sin_at, sw.cos_at, sw.cos_b, sw.sin_b, sw.first, sw.scale, sw.offset, sw.gain, frac, back)
    d = _sweep_delays(sw, n)
    assert np.array_equal(back, np.ceil(d).astype(np.int64)) and np.array_equal(frac, np.ceil(d) - d)
    assert back.min() >= 2 and 0.0 <= frac.min() and frac.max() < 1.0


def test_stereo_line_refuses_other_shapes():
    with pytest.raises(ValueError, match="2 channels and 2 sections"):
        identity = SOSFilter(np.zeros((2, 6)) + [1, 0, 0, 1, 0, 0])
        FeedbackDelay(channels=1, loop=STEREO_LINE, loop_filter=identity).process(
            np.zeros((1, 8)), delay_frames=3.0, feedback=0.5)


def _sweep(rows: int) -> SineSweep:
    """A sweep of two rows (a quarter turn apart) or one, on a 64-frame grid, 30 +- 12 frames."""
    grid = np.arange(200) * (64 * 0.002)
    a = grid[None, :] + np.array([[0.3], [0.3 + np.pi / 2]])[:rows]
    step = np.arange(64) * 0.002
    return SineSweep(np.sin(a), np.cos(a), np.cos(step), np.sin(step), 5, 12.0 / 48000, 30.0 / 48000, 48000.0)


def _sweep_delays(sw: SineSweep, n: int) -> np.ndarray:
    """The delays of the SineSweep docstring, computed with numpy."""
    idx = sw.first + np.arange(n)
    j, k = idx // sw.cos_b.shape[0], idx % sw.cos_b.shape[0]
    s = sw.sin_at[:, j] * sw.cos_b[k] + sw.cos_at[:, j] * sw.sin_b[k]
    return np.maximum((s * sw.scale + sw.offset) * sw.gain, 2.0)


@pytest.mark.parametrize("rows,cross,filtered", [(1, True, True), (2, False, True), (2, False, False),
                                                 (1, True, False)])
def test_swept_loop_equals_process_with_the_sweeps_delays_then_the_mix(rows, cross, filtered):
    """process_swept is process() given the delays SineSweep defines, then wet·wet_gain + dry_gain·dry,
    bit for bit and across any segmentation (the sweep's grid index carries on)."""
    rng = np.random.default_rng(9)
    x, dry = rng.standard_normal((2, 6000)), rng.standard_normal((2, 6000))
    sw = _sweep(rows)

    def make():
        sos = np.stack([rbj_biquad("lp", freq_hz=3000, sr=48000), rbj_biquad("hp", freq_hz=90, sr=48000)])
        return FeedbackDelay(channels=2, cross=cross, loop_filter=SOSFilter(sos) if filtered else None, loop=LINE)

    whole = make().process(x, delay_frames=np.broadcast_to(_sweep_delays(sw, 6000), (2, 6000)), feedback=0.6)
    whole *= 0.7
    whole += 0.4 * dry
    fd, parts, i = make(), [], 0
    for n in [1, 65, 3000, 2934]:
        part = SineSweep(sw.sin_at, sw.cos_at, sw.cos_b, sw.sin_b, sw.first + i, sw.scale, sw.offset, sw.gain)
        parts.append(fd.process_swept(x[:, i:i + n], sweep=part, feedback=0.6, dry=dry[:, i:i + n],
                                      wet_gain=0.7, dry_gain=0.4, positions=POSITIONS, loop=STEREO_SWEPT))
        i += n
    assert np.array_equal(np.concatenate(parts, 1), whole)
    # a ping-pong's input: the line fed (x[0] + x[1])·√½ and silence, as process() given that feed
    feed = np.stack([(x[0] + x[1]) * np.sqrt(0.5), np.zeros(6000)])
    want = make().process(feed, delay_frames=np.broadcast_to(_sweep_delays(sw, 6000), (2, 6000)), feedback=0.6)
    want *= 0.7
    want += 0.4 * dry
    got = make().process_swept(x, sweep=sw, feedback=0.6, dry=dry, wet_gain=0.7, dry_gain=0.4,
                               positions=POSITIONS, loop=STEREO_SWEPT, mono_in=True)
    assert np.array_equal(got, want) and not np.array_equal(got, whole)
