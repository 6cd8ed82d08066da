"""The 4x true-peak detector: the compiled tap loop against scipy's correlate1d path and resample_poly."""

import numpy as np
from numba import njit
from scipy import signal

from pytest_overdub.dsp.oversample import TruePeakDetector, true_peak_samples

TRUE_PEAK = njit(cache=True)(true_peak_samples)


def test_compiled_taps_equal_the_correlate_path_in_any_segmentation():
    rng = np.random.default_rng(3)
    x = np.diff(rng.standard_normal((2, 9001)), axis=1) * 0.4  # much energy near Nyquist: real overs
    ref = TruePeakDetector(channels=2).process(x)
    det = TruePeakDetector(channels=2, loop=TRUE_PEAK)
    got = np.concatenate([det.process(x[:, i:i + n]) for i, n in ((0, 1), (1, 4095), (4096, 4904))])
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=0)
    assert np.all(got >= np.abs(np.pad(x, ((0, 0), (TruePeakDetector.delay_frames, 0)))[:, :9000]).max(0))


def test_compiled_peak_is_within_0_05_db_of_resample_poly_and_floor_skips_quiet_blocks():
    rng = np.random.default_rng(4)
    x = np.diff(rng.standard_normal((1, 6001)), axis=1) * 0.3
    x[:, :3000] *= 1e-3  # a quiet first half, under the floor
    det = TruePeakDetector(channels=1, loop=TRUE_PEAK)
    peak = det.process(np.concatenate([x, np.zeros((1, 12))], 1), floor=0.5)[12:]
    fine = np.abs(signal.resample_poly(x[0], 4, 1)).reshape(-1, 4).max(1)
    loud = slice(3100, 5900)
    assert abs(20 * np.log10(peak[loud].max() / fine[loud].max())) < 0.05
    assert peak[:3000].max() <= 0.5


def test_stored_prototype_is_firwins_design_bit_for_bit_and_a_nyquist_filter():
    from pytest_overdub.dsp.oversample import PHASE_WEIGHTS, prototype

    h = prototype()
    assert np.array_equal(h, signal.firwin(97, 0.25, window=("kaiser", 7.0)))
    assert abs(h.sum() - 1.0) < 1e-15  # firwin scales to unit DC gain
    assert np.array_equal(h, h[::-1])  # linear phase
    # each in-between phase reads every 4th tap of 4·h: a Nyquist filter passes DC at ~unity on every phase
    assert np.allclose(PHASE_WEIGHTS.sum(axis=1), 1.0, atol=1e-4)
