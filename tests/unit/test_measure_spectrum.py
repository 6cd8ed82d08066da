"""Band shares, absolute band levels and the centroid, against analytic answers."""

import numpy as np
import pytest

from pytest_overdub.errors import MeasureError
from pytest_overdub.measure import BANDS, band_abs_db, band_rel_db, centroid_hz, rms_db

SR = 48000


def faded_sine(freq_hz: float, seconds: float = 1.0, amp: float = 0.5) -> np.ndarray:
    n = np.arange(int(seconds * SR))
    fade = np.minimum(1.0, np.minimum(n, n[::-1]) / (0.02 * SR))
    return amp * np.sin(2 * np.pi * freq_hz * n / SR) * fade


@pytest.mark.parametrize(("freq_hz", "band"), [(150, "low"), (1000, "mid"), (3000, "highmid"), (12000, "air")])
def test_sine_lands_in_its_band(freq_hz, band):
    rel = band_rel_db(faded_sine(freq_hz), sr=SR)
    assert rel[band] > 10 * np.log10(0.99)
    assert max(v for b, v in rel.items() if b != band) < -20


def test_two_equal_sines_share_half_each():
    x = faded_sine(1000) + faded_sine(5000)
    rel = band_rel_db(x, sr=SR)
    assert rel["mid"] == pytest.approx(-3.01, abs=0.05)
    assert rel["presence"] == pytest.approx(-3.01, abs=0.05)


def test_band_abs_is_rms_plus_share():
    x = faded_sine(100) + faded_sine(1000)  # equal power in low and mid
    rms = rms_db(x, sr=SR)
    assert band_abs_db(x, sr=SR, bands=["low"]) == pytest.approx(rms - 3.01, abs=0.05)
    assert band_abs_db(x, sr=SR, bands=["sub", "low", "lowmid", "mid"]) == pytest.approx(rms, abs=0.01)


def test_centroid_of_two_equal_sines_is_their_mean():
    x = faded_sine(1000) + faded_sine(3000)
    assert centroid_hz(x, sr=SR) == pytest.approx(2000, rel=0.02)


def test_silence():
    z = np.zeros((2, 8192))
    assert all(v == -120.0 for v in band_rel_db(z, sr=SR).values())
    assert band_abs_db(z, sr=SR, bands=["low"]) == -120.0
    assert centroid_hz(z, sr=SR) == 0.0


def test_band_edges_are_the_spec_ones():
    assert BANDS["sub"] == (0.0, 60.0) and BANDS["presence"] == (4000.0, 8000.0)
    assert BANDS["air"][0] == 8000.0 and np.isinf(BANDS["air"][1])


def test_unknown_band_is_a_measure_error():
    with pytest.raises(MeasureError, match="known bands"):
        band_abs_db(faded_sine(100), sr=SR, bands=["bass"])
