"""Bad input is a MeasureError that names what was passed and what was expected."""

import numpy as np
import pytest

from pytest_overdub.errors import MeasureError
from pytest_overdub.measure import integrated_lufs, measure, measure_metric, true_peak_db

GOOD = np.zeros((2, 4800))


@pytest.mark.parametrize(
    ("x", "sr", "match"),
    [
        (np.zeros((4800, 2)), 48000, r"\(4800, 2\).*x\.T"),
        (np.zeros((2, 3, 4)), 48000, r"shape \(2, 3, 4\)"),
        (np.zeros((2, 0)), 48000, "empty"),
        (np.array([[0.0, np.nan]]), 48000, "non-finite.*frame 1"),
        (np.array([0.0, np.inf]), 48000, "non-finite"),
        (np.zeros(10, dtype=np.int16), 48000, "int16.*32768"),
        (np.zeros(10, dtype=complex), 48000, "complex"),
        (GOOD, 4000, r"8000\.\.384000.*4000"),
        (GOOD, 44100.5, "44100.5"),
        (GOOD, "48000", "'48000'"),
        (GOOD, True, "True"),
    ],
)
def test_bad_input_is_a_measure_error(x, sr, match):
    with pytest.raises(MeasureError, match=match):
        integrated_lufs(x, sr=sr)


def test_every_entry_point_validates():
    bad = np.array([0.0, np.nan])
    for call in (
        lambda: measure(bad, sr=48000),
        lambda: true_peak_db(bad, sr=48000),
        lambda: measure_metric(bad, sr=48000, metric="lufs"),
    ):
        with pytest.raises(MeasureError):
            call()


def test_float32_and_lists_are_accepted():
    x32 = (0.1 * np.sin(np.arange(48000) / 10)).astype(np.float32)
    assert integrated_lufs(x32, sr=48000) == pytest.approx(integrated_lufs(x32.astype(np.float64), sr=48000))
    assert true_peak_db([0.0] * 12 + [0.5] + [0.0] * 12, sr=48000) >= -6.03
