"""Peak memory and time of one scoring of the longest song the limits admit.

A task's start song is stretched to the longest length the limits admit for ``--tracks`` tracks (its clips repeated bar-aligned until the last one
ends by then) and widened to ``--tracks`` tracks (copies of its tracks under new ids and names), then
scored on the task as a whole-song submission, in this fresh process. Prints the song's length, its track
and note counts, the scoring's wall time and score, and the process's peak resident memory
(``ru_maxrss``). Memory grows with tracks x seconds: each heard track's stem is held as float64 stereo
for the checks (768 KB per second at 48 kHz).

Run: ``python3 bench/limits_memory.py`` (``--tracks N``, ``--task ID``, ``--seconds S`` for a shorter song).
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_overdub.bench.tasks import bundled_bench, score_task, start_song  # noqa: E402
from pytest_overdub.song.limits import LIMITS  # noqa: E402
from pytest_overdub.song.model import Song, song_from_data, song_to_data  # noqa: E402
from pytest_overdub.song.timing import song_end_beats  # noqa: E402


def stretched(start: Song, *, seconds: float, tracks: int) -> Song:
    """``start`` repeated to end by ``seconds`` and widened to ``tracks`` tracks."""
    data = song_to_data(start)
    period = song_end_beats(start)
    last_beat = seconds * start.tempo / 60.0
    for tr in data["tracks"]:
        clips = []
        for k in range(math.floor(last_beat / period)):
            for c in tr["clips"]:
                if k * period + c["start"] + c["length"] <= last_beat:
                    clips.append({**c, "id": f"{c['id']}_r{k}", "start": k * period + c["start"],
                                  "notes": [{**n, "id": f"{n['id']}_r{k}" if n["id"] else ""} for n in c["notes"]]})
        tr["clips"] = clips
    base = list(data["tracks"])
    for j in range(tracks - len(base)):
        src = base[j % len(base)]
        suffix = f"x{j}"
        data["tracks"].append({**src, "id": f"{src['id']}_{suffix}", "name": f"{src['name']} {suffix}",
                               "inserts": [{**i, "id": f"{i['id']}_{suffix}"} for i in src["inserts"]],
                               "clips": [{**c, "id": f"{c['id']}_{suffix}",
                                          "notes": [{**n, "id": f"{n['id']}_{suffix}" if n["id"] else ""}
                                                    for n in c["notes"]]} for c in src["clips"]]})
    return song_from_data(data, source="stretched")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="mix-chorus-lift")
    parser.add_argument("--tracks", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=None,
                        help="the song's length (default: the longest the limits admit for --tracks)")
    args = parser.parse_args()
    if args.seconds is None:
        args.seconds = min(LIMITS.song_s, LIMITS.track_s / args.tracks)
    bench = bundled_bench()
    task = bench.task(args.task)
    start = start_song(task, bench=bench)
    song = stretched(start, seconds=args.seconds, tracks=args.tracks)
    notes = sum(len(c.notes) for tr in song.tracks for c in tr.clips)
    end_s = song_end_beats(song) * 60.0 / song.tempo
    t0 = time.perf_counter()
    result = score_task(task, song, bench=bench)
    wall = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"task {task.id}: a {end_s:.0f} s song ({end_s / 60:.1f} min), {len(song.tracks)} tracks, {notes} notes")
    print(f"one scoring: {wall:.1f} s wall, score {result.score:.3f}, peak RSS {peak_mb:.0f} MB "
          f"({peak_mb / 1024:.2f} GB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
