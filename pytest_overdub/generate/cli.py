"""``overdub generate``: write a generated song (and its ground truth) from a seed and a tier.

``main(argv)`` returns 0 or raises an :class:`~pytest_overdub.errors.OverdubError` that
:mod:`pytest_overdub.cli` prints as one line (exit 2); paths and numbers are checked before any work.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cliargs import Parser, arg, int_in, output_file
from ..errors import UsageError
from .plan import LADDER, MAX_TIER

_EPILOG = """examples:
  overdub generate --seed 17 --out song.json
  overdub generate --seed 17 --tier 3 --out song.json --truth truth.json

The same seed and tier write the same song, byte for byte, on any machine. Tiers are a ladder; each adds
one difficulty to the tier below:
  1  4/4 pop at 60-110 bpm: drums, bass on the roots, keys or pad, a hook; verse and chorus
""" + "\n".join(f"  {t + 2}  + {what}" for t, what in enumerate(LADDER)) + """
--truth writes the ground truth (key, tempo, meter, chords per bar, sections, parts and roles, every
note's provenance) as JSON; the song's meta holds only the generator, seed and tier."""

MAX_SEED = 2**63 - 1


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="overdub generate", description="Write an original song from a seed (and its ground truth).",
               epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", required=True, type=arg(int_in, lo=0, hi=MAX_SEED, what="a seed"),
                   help="the seed, a whole number >= 0")
    p.add_argument("--tier", type=arg(int_in, lo=1, hi=MAX_TIER, what="a tier"), default=1,
                   help=f"difficulty tier 1..{MAX_TIER} (default 1)")
    p.add_argument("--out", "-o", required=True, type=arg(output_file, what="song file", suffixes=(".json",)),
                   help="the song file to write (JSON)")
    p.add_argument("--truth", type=arg(output_file, what="truth file", suffixes=(".json",)),
                   help="also write the ground truth here (JSON)")
    return p


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror}") from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.truth is not None and args.truth.resolve() == args.out.resolve():
        raise UsageError(f"--truth {args.truth} is the song file --out {args.out}; want a file of its own")
    from ..song.model import dumps_song
    from .build import generate

    made = generate(args.seed, args.tier)
    _write(args.out, dumps_song(made.song))
    if args.truth is not None:
        _write(args.truth, truth_json(made.truth))
    tr = made.truth
    print(f"{args.out}: {made.song.title!r}, tier {tr.tier}, {tr.key.name}, {tr.tempo_bpm:g} bpm, "
          f"{tr.meter[0]}/{tr.meter[1]}, {len(tr.chords)} bars, {tr.length_s:.1f} s")
    return 0


def truth_json(truth) -> str:
    """The ground truth as canonical JSON (2-space indent, trailing newline)."""
    return json.dumps(truth.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
