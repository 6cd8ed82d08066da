"""A digest of the renderer's output, to prove a speed change kept every rendered sample bit-identical.

    PYTHONPATH=$PWD python bench/render_digest.py                  # prints one line per song, then the total
    PYTHONPATH=/tmp/base python bench/render_digest.py --root /tmp/base > base.txt   # the same on a revision
    diff base.txt <(PYTHONPATH=$PWD python bench/render_digest.py)

What it renders: every published song (``songs/*.json``); ``generate(seed, tier)`` for seeds 1..5 of every
tier; and for every task whose answer is a song (not transcription) its start song and the song each of
its answers makes (oracle, alternatives, near misses, cheats; an audio task's answers make audio files, not
songs, and are left out). Every song is rendered with one cache kept
across the whole run that keeps each stem's parts (the scorer's path: sources and insert chains reused,
gains and pans applied to cached parts); the published and generated songs also cold, with a cache that
keeps nothing (:func:`~pytest_overdub.render.engine.render_stem`, the library's path). A line is the
sha256 of the float64 mix and each stem (bytes, shape, track id) and the warnings, for each render.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path


def _digest(out) -> str:
    h = hashlib.sha256()
    for name, a in [("mix", out.mix), *sorted(out.stems.items())]:
        h.update(f"{name}{a.shape}{a.dtype}".encode())
        h.update(a.tobytes())
    h.update(repr([(w.kind, w.where, w.message) for w in out.warnings]).encode())
    return h.hexdigest()


def _songs(root: Path, seeds: int):
    from pytest_overdub.bench.tasks import TRANSCRIPTION, Bench, candidate_song, start_song
    from pytest_overdub.bench.validity import load_answer
    from pytest_overdub.errors import TaskError
    from pytest_overdub.generate import MAX_TIER, generate
    from pytest_overdub.song.model import load_song

    for path in sorted((root / "songs").glob("*.json")):
        yield f"songs/{path.name}", load_song(path)
    for tier in range(1, MAX_TIER + 1):
        for seed in range(1, seeds + 1):
            yield f"generate({seed}, {tier})", generate(seed, tier).song
    bench = Bench(root)
    for task_id in bench.task_ids():
        task = bench.task(task_id)
        if task.family == TRANSCRIPTION:
            continue
        start = start_song(task, bench=bench)
        yield f"{task_id} start", start
        answers = [("oracle", bench.oracle_path(task_id))] if bench.oracle_path(task_id).exists() else []
        answers += [("alternative", p) for p in bench.alternative_paths(task_id)]
        answers += [("near_miss", p) for p in bench.near_miss_paths(task_id)]
        answers += [("cheat", p) for p in bench.cheat_paths(task_id)]
        for kind, path in answers:
            try:
                sub, _ = load_answer(path, task_id=task_id, kind=kind)
            except TaskError:  # an audio task's answer makes audio files from renders, not a song
                continue
            yield f"{task_id} {path.name}", candidate_song(start, sub)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the checkout whose songs, tasks and answers to render (default: this one)")
    parser.add_argument("--seeds", type=int, default=5, help="generated seeds per tier (default 5)")
    args = parser.parse_args()
    from pytest_overdub.render import StemCache, render

    shared = StemCache(max_bytes=600 << 20, keep_parts=True)
    total = hashlib.sha256()
    for label, song in _songs(args.root, args.seeds):
        line = f"{label}: parts {_digest(render(song, cache=shared, trust_kernels=True))}"
        if label.startswith(("songs/", "generate(")):
            line += f" cold {_digest(render(song, cache=StemCache(max_bytes=0), trust_kernels=True))}"
        total.update(line.encode())
        print(line, flush=True)
    print(f"total {total.hexdigest()}")


if __name__ == "__main__":
    sys.exit(main())
