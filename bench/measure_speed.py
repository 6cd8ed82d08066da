"""Speed of ``measure()`` against pyloudnorm and ffmpeg on the same audio, measured in the same run.

60 s of seeded 48 kHz stereo music-like audio. Times (best of ``REPEATS``, after one warm-up call so imports
are not counted): our ``measure()`` (every figure of docs/meters.md); pyloudnorm's integrated loudness plus
loudness range; and, where installed, ``ffmpeg -af ebur128=peak=true`` on the same audio written to a float
WAV (loudness + LRA + true peak, including ffmpeg's start-up and file read). Prints the ratios; the targets
are measure/ffmpeg <= 1.0 and measure/pyloudnorm <= 1.5.

Run: ``python3 bench/measure_speed.py``
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SR = 48000
SECONDS = 60.0
REPEATS = 3


def music_like(seed: int = 0, seconds: float = SECONDS) -> np.ndarray:
    """Seeded stereo: decaying notes on an eighth grid at 120 bpm, a bass, noise hats, random pans."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    t = np.arange(n) / SR
    out = np.zeros((2, n))
    note_len = int(2.0 * SR)
    nt = t[:note_len]
    for start in np.arange(0, seconds, 0.25):
        i = int(start * SR)
        m = min(note_len, n - i)
        f = 220 * 2 ** (rng.integers(0, 24) / 12)
        note = 0.15 * np.sin(2 * np.pi * f * nt[:m]) * np.exp(-nt[:m] * 4)
        hat = 0.04 * rng.standard_normal((2, m)) * np.exp(-nt[:m] * 70)
        pan = rng.uniform(0, 1)
        out[:, i : i + m] += np.array([[np.sqrt(1 - pan)], [np.sqrt(pan)]]) * note + hat
    out += 0.2 * np.sin(2 * np.pi * 55 * t)
    return out


def best_time(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    import pyloudnorm
    import soundfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pytest_overdub.measure import measure

    x = music_like()
    measure(x[:, : SR * 4], sr=SR)  # warm-up: imports and caches
    ours = best_time(lambda: measure(x, sr=SR))
    meter = pyloudnorm.Meter(SR)
    pyln = best_time(lambda: (meter.integrated_loudness(x.T), meter.loudness_range(x.T)))
    m = measure(x, sr=SR)
    print(f"audio: {SECONDS:.0f} s, {SR} Hz stereo, music-like (seed 0)")
    print(f"measure() every figure         {ours:7.3f} s   lufs {m.lufs:.2f}  lra {m.lra:.2f}  truePeak {m.true_peak:.2f}")
    print(f"pyloudnorm integrated + LRA     {pyln:7.3f} s   lufs {meter.integrated_loudness(x.T):.2f}")
    print(f"ratio measure / pyloudnorm      {ours / pyln:7.2f}   (target <= 1.5)")
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        print("ffmpeg not installed: ffmpeg comparison skipped")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.wav"
        soundfile.write(path, x.T, SR, subtype="FLOAT")
        cmd = [ffmpeg, "-nostats", "-hide_banner", "-i", str(path), "-af", "ebur128=peak=true", "-f", "null", "-"]
        subprocess.run(cmd, capture_output=True, check=True)  # warm the page cache
        ff = best_time(lambda: subprocess.run(cmd, capture_output=True, check=True))
    print(f"ffmpeg ebur128=peak=true        {ff:7.3f} s")
    print(f"ratio measure / ffmpeg          {ours / ff:7.2f}   (target <= 1.0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
