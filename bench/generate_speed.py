"""Speed of the song generator (issue 18, "Cost"), and the render cost of what it writes.

    python3 bench/generate_speed.py            # 100 seeds per tier, renders of 3 generated songs
    python3 bench/generate_speed.py --seeds 20 --renders 1

(1) Generation: mean, 95th percentile and worst wall time of ``generate(seed, tier)`` (plan, notes, mix,
    the strict song validation and the ground truth) over seeds 1..N of each tier, after one warm-up call
    (imports). Target: mean under 50 ms.
(2) Rendering: a generated tier-1 song against the hand-made ``songs/night-shift.json`` in the same run,
    each rendered cold (an empty stem cache) the best of 3 times, as seconds and times-real-time (audio
    seconds, tail included, / wall seconds); the JIT is warmed first. Generated songs are 35-64 s and
    night-shift 21 s, so the fair comparison is times-real-time: a generated song should render within
    the same order of cost per second of audio as the hand-made one (they carry more inserts: an EQ
    and a compressor or reverb on every track and a glue compressor on the master).
A benchmark reads the clock; nothing in the generator or the renderer does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_overdub.generate import MAX_TIER, generate  # noqa: E402


def time_generation(seeds: int) -> None:
    generate(0, 1)  # imports and pydantic schema builds
    print(f"generation, seeds 1..{seeds} per tier (target: mean < 50 ms)")
    for tier in range(1, MAX_TIER + 1):
        times = []
        for seed in range(1, seeds + 1):
            t0 = time.perf_counter()
            generate(seed, tier)
            times.append(time.perf_counter() - t0)
        times.sort()
        mean = statistics.fmean(times)
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        mark = "ok" if mean < 0.050 else "OVER 50 ms"
        print(f"  tier {tier}: mean {mean * 1e3:6.1f} ms  p95 {p95 * 1e3:6.1f} ms  "
              f"max {times[-1] * 1e3:6.1f} ms  {mark}")


def _cold(song, repeats: int = 3) -> tuple[float, float]:
    from pytest_overdub.render import StemCache, render

    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = render(song, cache=StemCache())
        best = min(best, time.perf_counter() - t0)
    return best, out.mix.shape[1] / out.sr


def time_renders(count: int) -> None:
    from pytest_overdub.song.model import load_song

    hand = load_song(ROOT / "songs" / "night-shift.json")
    _cold(hand, repeats=1)  # JIT compile and imports
    rows = [("songs/night-shift.json (hand-made)", hand)]
    rows += [(f"generate({seed}, 1) {generate(seed, 1).song.title!r}", generate(seed, 1).song)
             for seed in range(1, count + 1)]
    print("rendering, cold, best of 3")
    for label, song in rows:
        wall, audio = _cold(song)
        print(f"  {label:44s} {audio:5.1f} s audio  {wall:6.2f} s  {audio / wall:6.1f}x real time  "
              f"({len(song.tracks)} tracks, {sum(len(t.inserts) for t in song.tracks) + len(song.master.inserts)} "
              f"inserts)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100, help="seeds per tier (default 100)")
    parser.add_argument("--renders", type=int, default=3, help="generated songs to render (default 3)")
    args = parser.parse_args()
    time_generation(args.seeds)
    if args.renders:
        time_renders(args.renders)


if __name__ == "__main__":
    main()
