"""Studio speed and memory: a warm ``render_and_measure`` after a one-track edit, against a cold render.

    python3 bench/studio_speed.py                 # mix-chorus-lift, 5 timed edits
    python3 bench/studio_speed.py --task mix-hook-in-front --edits 9

In one run, on the task's starting song:

* **cold ``overdub render``**: the command in a fresh process (imports, the numba cache, every stem), wall
  time; and a cold render in this process (modules warm, an empty stem cache), best of 3, wall and CPU;
* **warm ``render_and_measure``** after a one-track edit (``track.set`` gain on one track, a new value each
  time, so that track's stem renders again and the others come from the stem cache), the whole tool call:
  render, every figure and the key on the whole song; median and worst of ``--edits`` calls (wall, and this
  process's CPU time, which is what an idle machine's wall time would be: the machine's load average is
  printed), and the ratio to both colds. Target: under 0.5 s.
* **memory of a long session**: traced Python memory (``tracemalloc``) held by a session after 10 and after
  200 edits (gain and pan on every track in turn, and a note moved in a clip: the undo history keeps the
  songs before each), with the history's structure sharing and, for comparison, without it.

The process enters the scorer runtime first, as ``overdub`` does, so the stem cache is the process cache.
A benchmark reads the clock; nothing in the studio does.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_overdub import runtime  # noqa: E402
from pytest_overdub.song.model import dump_song  # noqa: E402
from pytest_overdub.studio import Studio  # noqa: E402
from pytest_overdub.studio import session as session_module  # noqa: E402


def cold_command(song_path: Path, out: Path) -> float:
    """Wall seconds of ``overdub render SONG -o OUT`` in a fresh interpreter."""
    code = "import sys; from pytest_overdub.cli import main; sys.exit(main(sys.argv[1:]))"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, "render", str(song_path), "-o", str(out)], check=True,
                   capture_output=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - t0


def cold_in_process(song) -> tuple[float, float]:
    """(wall, CPU) seconds of the best of 3 renders with an empty stem cache."""
    from pytest_overdub.render import StemCache, render

    best = (float("inf"), float("inf"))
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        render(song, cache=StemCache())
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    return best


def warm_calls(task: str, track: str, n: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of each warm ``render_and_measure`` after a gain edit on ``track``."""
    studio = Studio.for_task(task)
    studio.render_and_measure()  # every stem into the cache, the meters warm
    times = []
    for i in range(n):
        studio.apply_ops(ops=[{"type": "track.set", "track": track, "patch": {"gain": -1.0 - 0.5 * i}}])
        t0, c0 = time.perf_counter(), time.process_time()
        studio.render_and_measure()
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    return times


def edits(song, k: int) -> list[dict]:
    """The k-th edit of a long session: gain, pan or a moved note, on each track in turn."""
    tr = song.tracks[k % len(song.tracks)]
    kind = k % 3
    if kind == 0:
        return [{"type": "track.set", "track": tr.id, "patch": {"gain": -0.25 * (k % 40)}}]
    if kind == 1:
        return [{"type": "track.set", "track": tr.id, "patch": {"pan": ((k % 9) - 4) / 8}}]
    clip = next((c for c in tr.clips if c.notes), None)
    if clip is None:
        return [{"type": "track.set", "track": tr.id, "patch": {"mute": False}}]
    note = clip.notes[k % len(clip.notes)]
    return [{"type": "notes.set", "track": tr.id, "clip": clip.id, "notes": [{"id": note.id, "v": 0.5 + (k % 5) / 10}]}]


def session_memory(task: str, n_edits: int) -> int:
    """Traced bytes a session holds after ``n_edits`` edits (its songs and history; no render)."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    studio = Studio.for_task(task)
    for k in range(n_edits):
        studio.apply_ops(ops=edits(studio.song, k))
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del studio
    return held


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", default="mix-chorus-lift")
    p.add_argument("--track", default="Bass", help="the track whose gain each edit changes")
    p.add_argument("--edits", type=int, default=5, help="timed warm calls")
    args = p.parse_args()
    runtime.enter("overdub")
    start = Studio.for_task(args.task).song
    with tempfile.TemporaryDirectory() as tmp:
        song_path = Path(tmp) / "start.json"
        dump_song(start, song_path)
        command_s = cold_command(song_path, Path(tmp) / "mix.wav")
    in_process_s, in_process_cpu = cold_in_process(start)
    warm = warm_calls(args.task, args.track, args.edits)
    med, worst = statistics.median(w for w, _ in warm), max(w for w, _ in warm)
    med_cpu = statistics.median(c for _, c in warm)
    print(f"task {args.task}: {len(start.tracks)} tracks; edit: gain on {args.track}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"cold `overdub render` (fresh process)        {command_s:7.3f} s wall")
    print(f"cold render in process (empty stem cache)   {in_process_s:7.3f} s wall, {in_process_cpu:.3f} s CPU")
    print(f"warm render_and_measure after the edit      {med:7.3f} s wall median ({worst:.3f} s worst of {len(warm)}), "
          f"{med_cpu:.3f} s CPU median")
    print(f"ratio warm / cold command (wall)            {med / command_s:7.3f}")
    print(f"ratio warm / cold in process (wall)         {med / in_process_s:7.3f}")
    print(f"target warm < 0.5 s wall: {'met' if med < 0.5 else 'NOT met'} (median); "
          f"CPU time is the figure on an idle machine")
    for label, shared in (("with sharing", True), ("without sharing", False)):
        if not shared:
            session_module.share = lambda new, old: new  # the comparison: every step a whole song
        m10, m200 = session_memory(args.task, 10), session_memory(args.task, 200)
        print(f"session memory {label:16s} after 10 edits {m10 / 1e6:7.2f} MB, after 200 edits {m200 / 1e6:7.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
