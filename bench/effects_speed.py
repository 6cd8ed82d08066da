"""Time 60 s of stereo through high-pass -> compressor -> delay -> reverb -> limiter: ours and pedalboard's.

Run: ``python3 bench/effects_speed.py``. Prints seconds for each of our devices, the chain total, and,
where ``pedalboard`` is importable (it is not a dependency of this project), the same chain in
pedalboard and the ratio ours/pedalboard (target <= 2.0). Best of ``REPEATS`` runs each ("warm").

"cold" is the first run in this process: it also pays for importing the device modules, numba, and
loading their compiled loops from numba's cache (``__pycache__``). To include the compile itself, point
numba at an empty cache: ``NUMBA_CACHE_DIR=$(mktemp -d) python3 bench/effects_speed.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_overdub.devices import HOUSE_SPECS, house_class  # noqa: E402

SR = 48000
SECONDS = 60
REPEATS = 3
CHAIN = [
    ("core.eq", {"hp": 100}),
    ("core.comp", {"threshold": -24, "ratio": 4, "attack": 5, "release": 120}),
    ("core.delay", {"div": 0, "ms": 375, "feedback": 0.35, "mode": 0}),
    ("core.verb", {"decay": 2.4, "mix": 0.22}),
    ("core.limiter", {"gain": 6, "ceiling": -1, "release": 90}),
]


def test_signal() -> np.ndarray:
    """Seeded noise bursts on a 120 bpm grid with a low sine: music-like level changes."""
    rng = np.random.default_rng(0)
    n = SR * SECONDS
    t = np.arange(n) / SR
    env = np.exp(-((t % 0.5) * 12.0))
    x = 0.3 * rng.standard_normal((2, n)) * env + 0.2 * np.sin(2 * np.pi * 55 * t)
    return x


def run_ours(x: np.ndarray) -> tuple[float, dict[str, float]]:
    per: dict[str, float] = {}
    y = x
    for device_id, params in CHAIN:
        p = HOUSE_SPECS[device_id].resolve(params)
        dev = house_class(device_id)(sr=SR, tempo_bpm=120.0, seed=1, params=p)
        t0 = time.perf_counter()
        y = dev.process(y, p)
        per[device_id] = time.perf_counter() - t0
    return sum(per.values()), per


def run_pedalboard(x: np.ndarray) -> float | None:
    try:
        import pedalboard as pb
    except ImportError:
        return None
    board = pb.Pedalboard([
        pb.HighpassFilter(cutoff_frequency_hz=100),
        pb.Compressor(threshold_db=-24, ratio=4, attack_ms=5, release_ms=120),
        pb.Delay(delay_seconds=0.375, feedback=0.35, mix=0.25),
        pb.Reverb(room_size=0.55, wet_level=0.22, dry_level=0.78),
        pb.Gain(gain_db=6),
        pb.Limiter(threshold_db=-1, release_ms=90),
    ])
    xf = x.astype(np.float32)  # pedalboard processes float32
    t0 = time.perf_counter()
    board(xf, SR)
    return time.perf_counter() - t0


def main() -> None:
    x = test_signal()
    cold = run_ours(x)
    ours = min((run_ours(x) for _ in range(REPEATS)), key=lambda r: r[0])
    print(f"{SECONDS} s stereo at {SR} Hz; cold = first run in this process, warm = best of {REPEATS}")
    for device_id, secs in ours[1].items():
        print(f"  {device_id:14s} cold {cold[1][device_id]:7.3f} s   warm {secs:7.3f} s")
    print(f"ours cold (imports, numba cache load or compile, first run): {cold[0]:.3f} s")
    print(f"ours (hp -> comp -> delay -> verb -> limiter): {ours[0]:.3f} s, {SECONDS / ours[0]:.0f}x real time")
    times = [run_pedalboard(x) for _ in range(REPEATS)]
    if times[0] is None:
        print("pedalboard: not installed here; skipped (pip install pedalboard to compare)")
        return
    ref = min(times)
    print(f"pedalboard (same chain, float32): {ref:.3f} s")
    print(f"ratio ours/pedalboard: {ours[0] / ref:.2f} (target <= 2.0)")


if __name__ == "__main__":
    main()
