"""Speed of op application: is it linear in the number of ops?

The same 100,000 notes go into a 10-track song (one 256-beat clip per track, 10,000 notes each) three
ways: 1,000 ``notes.add`` ops of 100 notes in one transaction; the same 1,000 ops as 1,000 transactions
(a tool-call session of one op per call); and 10 ops of 10,000 notes (one per clip, the fewest the
per-clip limit allows). Applying ops should cost what they carry, not the song's size per op: the
ratios many/few should stay near 1. Prints each time (the best of ``--repeat`` runs, after a warm-up on
a small transaction; the usual reading of a timing on a shared machine) and the ratios.

Run: ``python3 bench/ops_speed.py`` (``--ops N`` for another op count, notes per op stay 100;
``--repeat 1`` where one run takes minutes, as it did before ops were linear).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_overdub.song.model import song_from_data  # noqa: E402
from pytest_overdub.song.ops import apply_transactions  # noqa: E402

TRACKS = 10
NOTES_PER_OP = 100
STEP_BEATS = 0.025


def start_song():
    tracks = [{"id": f"t_{k}", "name": f"Lead {k}", "instrument": {"device": "core.poly"},
               "clips": [{"id": f"c_{k}", "start": 0, "length": 256}]} for k in range(TRACKS)]
    return song_from_data({"format": "overdub/0", "id": "ops-bench", "tempo": 120, "tracks": tracks},
                          source="ops-bench")


def notes(first: int, count: int) -> list[dict]:
    return [{"p": 48 + (first + i) % 24, "t": (first + i) * STEP_BEATS, "d": STEP_BEATS, "v": 0.8}
            for i in range(count)]


def many_ops(n_ops: int) -> list[dict]:
    """``n_ops`` ops of 100 notes, dealt round the tracks; each track's notes in time order."""
    per_track = [0] * TRACKS
    ops = []
    for j in range(n_ops):
        k = j % TRACKS
        ops.append({"type": "notes.add", "track": f"t_{k}", "clip": f"c_{k}",
                    "notes": notes(per_track[k], NOTES_PER_OP)})
        per_track[k] += NOTES_PER_OP
    return ops


def few_ops(n_ops: int) -> list[dict]:
    """The same notes as one op per track."""
    per_track = n_ops * NOTES_PER_OP // TRACKS
    return [{"type": "notes.add", "track": f"t_{k}", "clip": f"c_{k}", "notes": notes(0, per_track)}
            for k in range(TRACKS)]


def timed(song, transactions, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = apply_transactions(song, transactions)
        best = min(best, time.perf_counter() - t0)
    assert sum(len(c.notes) for tr in out.tracks for c in tr.clips) == sum(
        len(o["notes"]) for ops in transactions for o in ops)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1000, help="ops of 100 notes (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, the best printed (default 3)")
    args = parser.parse_args()
    song = start_song()
    timed(song, [few_ops(TRACKS)])  # warm-up: imports, pydantic's first validations
    many = many_ops(args.ops)
    t_many = timed(song, [many], args.repeat)
    t_calls = timed(song, [[o] for o in many], args.repeat)
    t_few = timed(song, [few_ops(args.ops)], args.repeat)
    n = args.ops * NOTES_PER_OP
    print(f"{n} notes as {args.ops} ops of {NOTES_PER_OP}, one transaction: {t_many:8.2f} s")
    print(f"{n} notes as {args.ops} transactions of one op:        {t_calls:8.2f} s")
    print(f"{n} notes as {TRACKS} ops (one per clip):                {t_few:8.2f} s")
    print(f"ratio many ops / few ops: {t_many / t_few:.2f}; one op per transaction / few ops: "
          f"{t_calls / t_few:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
