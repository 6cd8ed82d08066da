"""Speed of the song generator (issue 18, "Cost"), and the render cost of what it writes.

    python3 bench/generate_speed.py            # 100 seeds per tier, renders of 3 generated songs
    python3 bench/generate_speed.py --seeds 20 --renders 1

(1) Generation: mean, 95th percentile and worst wall time of ``generate(seed, tier)`` (plan, notes, mix,
    the strict song validation and the ground truth) over seeds 1..N of each tier, after one warm-up call
    (imports). Target: mean under 50 ms.
(2) Rendering: a generated tier-1 song against the hand-made ``songs/night-shift.json`` in the same run,
    each rendered cold (an empty stem cache) the best of 3 times, as seconds and times-real-time (audio
    seconds, tail included, / wall seconds); the JIT is warmed first. Generated songs are 15-35 s
    (generator 2) and night-shift 21 s, so the fair comparison is times-real-time: a generated song
    should render within the same order of cost per second of audio as the hand-made one (they carry
    more inserts: an EQ and a compressor or reverb on every track and a glue compressor on the master).
(3) ``--against REV``: the renders of (2) timed in this tree and in git revision REV (exported to a
    temporary folder), each in a fresh process, the two trees alternating for ``--rounds`` rounds (best of
    all rounds per tree), so the ratio is measured at like loads. Three ways per song: ``cold`` (an
    empty cache that keeps nothing: the library's render), ``parts`` (an empty cache that keeps each
    stem's source and insert chain: the scorer's first render of a song) and ``warm`` (every stem
    cached: the mix and the master chain, what each further render of a scoring costs). Prints each
    figure in both trees, the ratio REV / this tree (above 1: this tree is faster) and the load average.
    The figures are the process's CPU time (wall time alongside): on the shared machine a process waits
    for a core for much of its wall time, and CPU time leaves that out.
    The children enter the scorer runtime (its malloc tuning: what scoring pays) unless ``--library``.
    ``--devices``: instead, each insert of ``generate(1, 1)`` alone on 61 s of noise, in both trees.
A benchmark reads the clock; nothing in the generator or the renderer does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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


# A child in one code tree: each song rendered three ways, best of ``repeats``, as JSON {label: [cold, parts,
# warm, audio seconds]}. The JIT is warmed on the first song first.
_CHILD = """
import json, sys, time
from pathlib import Path
repeats, library, labels = int(sys.argv[1]), sys.argv[2] == "library", sys.argv[3:]
if not library:
    from pytest_overdub import runtime
    runtime.enter("bench")
from pytest_overdub.render import StemCache, render
from pytest_overdub.generate import generate
from pytest_overdub.song.model import load_song
def song(label):
    if label.startswith("gen"):
        seed, tier = label[3:].split("t")
        return generate(int(seed), int(tier)).song
    return load_song(Path("songs") / (label + ".json"))
def best(s, cache):
    wall = cpu = float("inf")
    for _ in range(repeats):
        c = cache()
        t0, c0 = time.perf_counter(), time.process_time()
        out = render(s, cache=c)
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return [wall, cpu], out.mix.shape[1] / out.sr
songs = {label: song(label) for label in labels}
render(songs[labels[0]], cache=StemCache())
res = {}
for label, s in songs.items():
    cold, audio = best(s, StemCache)
    parts, _ = best(s, lambda: StemCache(keep_parts=True))
    full = StemCache(keep_parts=True)
    render(s, cache=full)
    warm, _ = best(s, lambda: full)
    res[label] = [cold, parts, warm, audio]
print(json.dumps(res))
"""


# A child in one code tree: each insert of generate(1, 1) (tracks, then master) on 61 s of seeded stereo noise
# in the streamed chain's blocks, best of ``repeats`` by CPU time, as JSON [[device, track, seconds], ...].
_DEVICES = """
import json, sys, time
import numpy as np
from pytest_overdub import runtime
runtime.enter("bench")
from pytest_overdub.devices import house_class
from pytest_overdub.generate import generate
from pytest_overdub.render.engine import STREAM_BLOCK_FRAMES as B
song, repeats = generate(1, 1).song, int(sys.argv[1])
x = np.random.default_rng(1).standard_normal((2, 48000 * 61)) * 0.1
rows = []
for name, inserts in [(t.name, t.inserts) for t in song.tracks] + [("master", song.master.inserts)]:
    for ins in inserts:
        cls = house_class(ins.device)
        p = {**cls.spec.defaults(), **ins.params}
        best = float("inf")
        for _ in range(repeats):
            d = cls(sr=48000, tempo_bpm=song.tempo, seed=1, params=p)
            c0 = time.process_time()
            for a in range(0, x.shape[1], B):
                d.process(x[:, a:a + B], p)
            best = min(best, time.process_time() - c0)
        rows.append([ins.device, name, best])
print(json.dumps(rows))
"""


def time_devices(rev: str, *, rounds: int, repeats: int) -> None:
    """Each insert of a generated song alone, REV's tree and this one alternating, best of every round."""
    other = _export(rev)
    best: dict[str, list] = {}
    for _ in range(rounds):
        for tree, code in (("rev", other), ("here", ROOT)):
            out = subprocess.run([sys.executable, "-c", _DEVICES, str(repeats)], cwd=code,
                                 env=dict(os.environ, PYTHONPATH=str(code)), capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(f"the device timing in {code} failed:\n{out.stderr[-2000:]}")
            rows = json.loads(out.stdout.strip().splitlines()[-1])
            old = best.get(tree)
            best[tree] = rows if old is None else [[a[0], a[1], min(a[2], b[2])] for a, b in zip(old, rows)]
    print(f"each insert of generate(1, 1) on 61 s of stereo noise in 32768-frame blocks, CPU ms, best of "
          f"{rounds} rounds x {repeats}; {rev} -> this tree; load {os.getloadavg()[0]:.1f}")
    for a, b in zip(best["rev"], best["here"]):
        print(f"  {a[0]:12s} {a[1]:8s} {a[2] * 1e3:7.1f} -> {b[2] * 1e3:7.1f} ms  ratio {a[2] / b[2]:4.2f}")
    ta, tb = sum(r[2] for r in best["rev"]), sum(r[2] for r in best["here"])
    print(f"  total                 {ta * 1e3:7.1f} -> {tb * 1e3:7.1f} ms  ratio {ta / tb:4.2f}")


def _export(rev: str) -> Path:
    """REV's files in a temporary folder named by its commit, kept for the next run (its numba cache too:
    a second run does not compile REV's loops again)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    where = Path(tempfile.gettempdir()) / f"overdub-against-{sha}"
    if not (where / "pytest_overdub").is_dir():
        where.mkdir(exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


def _child(code: Path, labels: list[str], repeats: int, library: bool) -> dict[str, list[float]]:
    env = dict(os.environ, PYTHONPATH=str(code))
    out = subprocess.run([sys.executable, "-c", _CHILD, str(repeats), "library" if library else "scorer", *labels],
                         cwd=code, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"the render timing in {code} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def time_against(rev: str, labels: list[str], *, rounds: int, repeats: int, library: bool) -> None:
    """The renders timed in REV's tree and this one, alternating, best of every round per tree."""
    other = _export(rev)
    _child(other, labels[:1], 1, library)  # numba compiles REV's loops into its own __pycache__ once
    best: dict[str, dict[str, list]] = {"rev": {}, "here": {}}
    loads = []
    for r in range(rounds):
        for tree, code in (("rev", other), ("here", ROOT)):
            before = os.getloadavg()[0]
            for label, times in _child(code, labels, repeats, library).items():
                old = best[tree].get(label)
                best[tree][label] = times if old is None else [
                    [min(a, b) for a, b in zip(o, t)] for o, t in zip(old[:3], times[:3])] + [times[3]]
            loads.append((tree, r, before, os.getloadavg()[0]))
    print(f"rendering, {rev} against this tree, best of {rounds} rounds x {repeats} renders, "
          f"{'library (malloc untuned)' if library else 'scorer runtime entered (malloc tuned)'}; the process's "
          f"CPU seconds (wall seconds in brackets) and times real time by CPU; ratio = {rev} / this tree, by CPU")
    ways = ("cold", "parts", "warm")
    for label in labels:
        a, b = best["rev"][label], best["here"][label]
        audio = b[3]
        cells = "  ".join(f"{way} {a[i][1]:6.3f} -> {b[i][1]:6.3f} s [{a[i][0]:.3f} -> {b[i][0]:.3f}] "
                          f"({audio / a[i][1]:5.1f}x -> {audio / b[i][1]:5.1f}x) ratio {a[i][1] / b[i][1]:4.2f}"
                          for i, way in enumerate(ways))
        print(f"  {label:12s} {audio:5.1f} s audio  {cells}")
    for i, way in enumerate(ways):
        ta = sum(best["rev"][x][i][1] for x in labels)
        tb = sum(best["here"][x][i][1] for x in labels)
        wa = sum(best["rev"][x][i][0] for x in labels)
        wb = sum(best["here"][x][i][0] for x in labels)
        print(f"  total {way:5s} CPU {ta:7.3f} -> {tb:7.3f} s  ratio {ta / tb:4.2f}   wall {wa:7.3f} -> {wb:7.3f} s  "
              f"ratio {wa / wb:4.2f}")
    print("  load average (1 min) before -> after each child: " +
          ", ".join(f"{t}{r} {a:.1f}->{b:.1f}" for t, r, a, b in loads))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100, help="seeds per tier (default 100)")
    parser.add_argument("--renders", type=int, default=3, help="generated songs to render (default 3)")
    parser.add_argument("--against", metavar="REV", help="time the renders here and in git revision REV")
    parser.add_argument("--songs", nargs="+", default=["night-shift", "gen1t1", "gen2t1", "gen1t3", "gen3t5"],
                        help="with --against: songs/<name> or gen<seed>t<tier> (default: night-shift and "
                             "four generated songs)")
    parser.add_argument("--rounds", type=int, default=3, help="with --against: rounds per tree (default 3)")
    parser.add_argument("--repeats", type=int, default=2, help="with --against: renders per round (default 2)")
    parser.add_argument("--library", action="store_true",
                        help="with --against: render as a library does, without entering the scorer runtime "
                             "(glibc's malloc untuned: whole-track arrays above 32 MB are mapped and zeroed "
                             "afresh each time)")
    parser.add_argument("--devices", action="store_true",
                        help="with --against: time each insert of generate(1, 1) alone instead of whole renders")
    args = parser.parse_args()
    if args.against and args.devices:
        time_devices(args.against, rounds=args.rounds, repeats=args.repeats)
        return
    if args.against:
        time_against(args.against, args.songs, rounds=args.rounds, repeats=args.repeats, library=args.library)
        return
    time_generation(args.seeds)
    if args.renders:
        time_renders(args.renders)


if __name__ == "__main__":
    main()
