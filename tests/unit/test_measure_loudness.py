"""Loudness against published figures: BS.1770-4 coefficients, EBU Tech 3341 and Tech 3342 synthetic cases."""

import numpy as np
import pytest

from pytest_overdub.errors import TooShortError
from pytest_overdub.measure import integrated_lufs, loudness_range, momentary_lufs, short_term_lufs
from pytest_overdub.measure.loudness import k_weighting_sos

SR = 48000


def sine_1k(peak_dbfs: float, seconds: float) -> np.ndarray:
    """Stereo 1 kHz sine whose peak level is ``peak_dbfs`` (EBU Tech 3341/3342 convention)."""
    t = np.arange(int(round(seconds * SR))) / SR
    mono = 10.0 ** (peak_dbfs / 20.0) * np.sin(2 * np.pi * 1000.0 * t)
    return np.stack([mono, mono])


def sequence(*parts: tuple[float, float]) -> np.ndarray:
    return np.concatenate([sine_1k(db, s) for db, s in parts], axis=1)


def test_k_weighting_matches_bs1770_table_at_48k():
    # BS.1770-4 Annex 1, Tables 1 and 2.
    sos = k_weighting_sos(sr=48000)
    np.testing.assert_allclose(sos[0, :3], [1.53512485958697, -2.69169618940638, 1.19839281085285], atol=1e-10)
    np.testing.assert_allclose(sos[0, 4:], [-1.69065929318241, 0.73248077421585], atol=1e-10)
    np.testing.assert_allclose(sos[1, :3], [1.0, -2.0, 1.0])
    np.testing.assert_allclose(sos[1, 4:], [-1.99004745483398, 0.99007225036621], atol=1e-10)


TECH_3341 = {
    "case1_-23": ([(-23, 20)], -23.0),
    "case2_-33": ([(-33, 20)], -33.0),
    "case3_gated_-36": ([(-36, 10), (-23, 60), (-36, 10)], -23.0),
    "case4_abs_gate": ([(-72, 10), (-36, 10), (-23, 60), (-36, 10), (-72, 10)], -23.0),
    "case5_-26_-20_-26": ([(-26, 20), (-20, 20.1), (-26, 20)], -23.0),
}


@pytest.mark.parametrize("case", sorted(TECH_3341))
def test_tech_3341_integrated_loudness(case):
    parts, expected = TECH_3341[case]
    assert integrated_lufs(sequence(*parts), sr=SR) == pytest.approx(expected, abs=0.1)


TECH_3342 = {
    "case1_-20_-30": ([(-20, 20), (-30, 20)], 10.0),
    "case2_-20_-15": ([(-20, 20), (-15, 20)], 5.0),
    "case3_-40_-20": ([(-40, 20), (-20, 20)], 20.0),
    "case4_ramp": ([(-50, 20), (-35, 20), (-20, 20), (-35, 20), (-50, 20)], 15.0),
}


@pytest.mark.parametrize("case", sorted(TECH_3342))
def test_tech_3342_loudness_range(case):
    parts, expected = TECH_3342[case]
    assert loudness_range(sequence(*parts), sr=SR) == pytest.approx(expected, abs=1.0)


def test_silence_reads_the_floor():
    silence = np.zeros((2, SR * 4))
    assert integrated_lufs(silence, sr=SR) == -120.0
    assert loudness_range(silence, sr=SR) == 0.0
    assert np.all(momentary_lufs(silence, sr=SR) == -120.0)


def test_below_absolute_gate_reads_the_floor():
    assert integrated_lufs(sine_1k(-75, 2), sr=SR) == -120.0


def test_shorter_than_one_block_is_refused():
    # 50 ms of the reference tone once read -20.7 LUFS (its ungated loudness); there is no 400 ms block in it.
    with pytest.raises(TooShortError, match=r"^too short for integrated loudness: 50 ms, needs 400 ms$"):
        integrated_lufs(sine_1k(-23, 0.05), sr=SR)
    with pytest.raises(TooShortError, match="momentary loudness: 399 ms, needs 400 ms"):
        momentary_lufs(sine_1k(-23, 0.399), sr=SR)
    assert integrated_lufs(sine_1k(-23, 0.4), sr=SR) == pytest.approx(-23.0, abs=0.1)  # exactly one block


def test_range_and_short_term_need_one_3_s_window():
    for meter in (loudness_range, short_term_lufs):
        with pytest.raises(TooShortError, match="needs 3 s"):
            meter(sine_1k(-23, 2.9), sr=SR)
    assert loudness_range(sine_1k(-23, 3.0), sr=SR) == 0.0  # one window: no spread
    assert short_term_lufs(sine_1k(-23, 3.0), sr=SR).size == 1


def test_series_lengths_and_values():
    x = sine_1k(-23, 5)
    mom, st = momentary_lufs(x, sr=SR), short_term_lufs(x, sr=SR)
    assert mom.size == 47  # 400 ms windows on a 100 ms hop in 5 s: (50 - 4) + 1
    assert st.size == 21  # 3 s windows: (50 - 30) + 1
    np.testing.assert_allclose(st, -23.0, atol=0.1)


def test_mono_counts_one_channel():
    # One channel carries half the power of the same tone on two channels: 3.01 LU less.
    stereo = integrated_lufs(sine_1k(-23, 5), sr=SR)
    mono = integrated_lufs(sine_1k(-23, 5)[0], sr=SR)
    assert stereo - mono == pytest.approx(10 * np.log10(2), abs=0.01)


def test_other_sample_rates_read_the_reference_tone():
    for sr in (44100, 11025, 96000):
        t = np.arange(sr * 3) / sr
        tone = 10 ** (-23 / 20) * np.sin(2 * np.pi * 1000 * t)
        assert integrated_lufs(np.stack([tone, tone]), sr=sr) == pytest.approx(-23.0, abs=0.1), sr
