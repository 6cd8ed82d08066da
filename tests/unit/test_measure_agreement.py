"""Agreement with independent meters: pyloudnorm (always) and ffmpeg's ebur128 filter (where installed; required
under ``CI=true``)."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest
import soundfile

from pytest_overdub.measure import integrated_lufs, true_peak_db

SR = 48000


def music_like(seed: int, seconds: float = 4.0) -> np.ndarray:
    """Seeded stereo: plucked notes on a grid, a bass line, noise hats, random pans and a level ride."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    t = np.arange(n) / SR
    out = np.zeros((2, n))
    step = rng.choice([0.125, 0.25, 0.5])
    for start in np.arange(0, seconds, step):
        i = int(start * SR)
        seg = t[: n - i]
        f = 110 * 2 ** (rng.integers(0, 24) / 12)
        note = rng.uniform(0.05, 0.3) * np.sin(2 * np.pi * f * seg + rng.uniform(0, 6)) * np.exp(-seg * rng.uniform(3, 15))
        pan = rng.uniform(0, 1)
        out[0, i:] += np.sqrt(1 - pan) * note
        out[1, i:] += np.sqrt(pan) * note
        out[:, i:] += rng.uniform(0, 0.05) * rng.standard_normal((2, seg.size)) * np.exp(-seg * 80)
    out += rng.uniform(0, 0.3) * np.sin(2 * np.pi * rng.uniform(40, 90) * t)
    ride = 10 ** (rng.uniform(-12, 0) / 20 * (1 + np.sin(2 * np.pi * t / seconds)) / 2)
    return out * ride * 10 ** (rng.uniform(-20, 0) / 20)


SIGNALS = [music_like(seed) for seed in range(20)]


@pytest.mark.parametrize("seed", range(20))
def test_lufs_agrees_with_pyloudnorm(seed):
    import pyloudnorm

    x = SIGNALS[seed]
    theirs = pyloudnorm.Meter(SR).integrated_loudness(x.T)
    assert integrated_lufs(x, sr=SR) == pytest.approx(theirs, abs=0.05)


FFMPEG = shutil.which("ffmpeg")


def ffmpeg_ebur128(path) -> tuple[float, float]:
    run = subprocess.run(
        [FFMPEG, "-nostats", "-hide_banner", "-i", str(path), "-af", "ebur128=peak=true", "-f", "null", "-"],
        capture_output=True, text=True, check=True,
    )
    summary = run.stderr[run.stderr.rindex("Summary:") :]
    lufs = float(re.search(r"I:\s+(-?[\d.]+) LUFS", summary).group(1))
    peak = float(re.search(r"Peak:\s+(-?[\d.]+) dBFS", summary).group(1))
    return lufs, peak


def need_ffmpeg() -> None:
    """Skip without ffmpeg on a developer's machine; under ``CI=true`` fail instead, so CI never drops the
    only independent true-peak check on music-like audio without saying so (``.ci/run`` installs it)."""
    if FFMPEG is not None:
        return
    why = "ffmpeg is not installed: the ebur128 agreement check needs it (apt-get install ffmpeg)"
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(f"{why}; CI=true, so this is a failure, not a skip")
    pytest.skip(why)


@pytest.mark.parametrize("seed", [0, 7, 13])
def test_lufs_and_true_peak_agree_with_ffmpeg(tmp_path, seed):
    need_ffmpeg()
    x = SIGNALS[seed]
    path = tmp_path / "x.wav"
    soundfile.write(path, x.T, SR, subtype="FLOAT")
    lufs, peak = ffmpeg_ebur128(path)
    assert integrated_lufs(x, sr=SR) == pytest.approx(lufs, abs=0.2)
    assert true_peak_db(x, sr=SR) == pytest.approx(peak, abs=0.2)
