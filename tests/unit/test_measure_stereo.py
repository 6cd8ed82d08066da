"""Stereo figures against analytic answers, and the band-limited side level."""

import numpy as np
import pytest

from pytest_overdub.errors import MeasureError
from pytest_overdub.measure import correlation, measure_band_side, side_db

SR = 48000
RNG = np.random.default_rng(11)
NOISE = RNG.standard_normal(SR) * 0.1


def test_identical_channels():
    x = np.stack([NOISE, NOISE])
    assert correlation(x, sr=SR) == pytest.approx(1.0)
    assert side_db(x, sr=SR) == -120.0


def test_opposite_channels():
    x = np.stack([NOISE, -NOISE])
    assert correlation(x, sr=SR) == pytest.approx(-1.0)
    assert side_db(x, sr=SR) == 120.0


def test_one_silent_channel_has_equal_mid_and_side():
    x = np.stack([NOISE, np.zeros_like(NOISE)])
    assert side_db(x, sr=SR) == pytest.approx(0.0, abs=1e-9)
    assert correlation(x, sr=SR) == 0.0


def test_independent_side_at_known_level():
    # side = 0.1 x mid with independent noise: sideDb = 20 log10(0.1) = -20 (within sampling error).
    other = np.random.default_rng(12).standard_normal(SR) * 0.1
    mid, side = NOISE, 0.1 * other
    x = np.stack([(mid + side) / 2, (mid - side) / 2])
    assert side_db(x, sr=SR) == pytest.approx(-20.0, abs=0.2)


def test_band_side_sees_only_its_band():
    t = np.arange(2 * SR) / SR
    mid = np.sin(2 * np.pi * 60 * t)  # centred low tone
    side = 0.5 * np.sin(2 * np.pi * 3000 * t)  # wide high tone
    x = np.stack([mid + side, mid - side])
    assert measure_band_side(x, sr=SR, lo_hz=20, hi_hz=120) < -35
    assert measure_band_side(x, sr=SR, lo_hz=1000, hi_hz=8000) > 25
    # Without band limits it is the plain sideDb.
    assert measure_band_side(x, sr=SR, lo_hz=0, hi_hz=SR / 2) == pytest.approx(side_db(x, sr=SR))


def test_mono_input_reads_fully_correlated():
    assert correlation(NOISE, sr=SR) == 1.0
    assert side_db(NOISE, sr=SR) == -120.0


def test_bad_band_is_a_measure_error():
    with pytest.raises(MeasureError, match="lo_hz"):
        measure_band_side(np.stack([NOISE, NOISE]), sr=SR, lo_hz=500, hi_hz=100)


@pytest.mark.parametrize("scale", [1e-100, 1e100])
def test_correlation_holds_for_very_quiet_and_very_loud_signals(scale):
    """sum L^2 * sum R^2 under- or overflows at these levels (each sum alone does not); the correlation
    must not: it is scale-free, the same figure as at unit level, not an inf clipped to +-1 or a NaN."""
    rng = np.random.default_rng(4)
    left = rng.standard_normal(4800)
    x = np.vstack([left, 0.6 * left + 0.8 * rng.standard_normal(4800)])
    assert correlation(x * scale, sr=48000) == pytest.approx(correlation(x, sr=48000), abs=1e-12)
    assert 0.5 < correlation(x, sr=48000) < 0.7


_THREADS_PROBE = """
import numpy as np
from pytest_overdub.measure import correlation, side_db
from pytest_overdub.measure.compare import correlation as pearson
rng = np.random.default_rng(5)
x = rng.standard_normal((2, 3_000_000)) * [[0.3], [0.2]]
x[1] += 0.5 * x[0]
print(repr(correlation(x, sr=48000)), repr(side_db(x, sr=48000)), repr(pearson(x[0], x[1])))
"""


def test_stereo_figures_do_not_depend_on_blas_threads():
    """A long stereo correlation, side level and Pearson correlation, measured in a process with one BLAS
    thread and in one with four, are the same to the last bit (a BLAS dot product split across threads
    sums in another order: 1e-15 apart)."""
    import os
    import subprocess
    import sys

    def run(threads: str) -> str:
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", _THREADS_PROBE], capture_output=True, text=True, env=env,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert run("1") == run("4")
