"""``overdub render`` and ``overdub devices``: hear what the bench heard, and read the device tables.

``main(argv)`` and ``devices_main(argv)`` take the arguments after the subcommand's name and return 0, or
raise an :class:`~pytest_overdub.errors.OverdubError` that :mod:`pytest_overdub.cli` prints as one line
(exit 2). Every path and number is checked before the render starts (see :mod:`pytest_overdub.cliargs`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ..cliargs import Parser, arg, input_file, int_in, output_dir, output_file
from ..devices.params import HOUSE_SPECS, DeviceSpec, Param
from ..errors import DeviceError, RenderError, UsageError

#: Sample rates ``--sr`` accepts, inclusive (the meters' range).
MIN_SR, MAX_SR = 8000, 384000
#: What ``-o`` may end in, which picks the format (both hold 24-bit PCM).
AUDIO_SUFFIXES = (".wav", ".flac")

_RENDER_EPILOG = """examples:
  overdub render songs/night-shift.json -o mix.wav
  overdub render song.json -o mix.wav --stems stems/ --tracks Bass Keys

The WAV is 24-bit PCM at the render's sample rate (48 kHz canonical), after the master chain.
--stems writes one 24-bit WAV per heard track (post-fader, post-pan, pre-master), named
NN-<track name>.wav. With --tracks exactly those tracks are heard and mute and solo are ignored."""


def _render_parser() -> argparse.ArgumentParser:
    p = Parser(prog="overdub render", description="Render a song to a 24-bit WAV.",
               epilog=_RENDER_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("song", type=arg(input_file, what="song file (JSON)"), help="an overdub/0 song file (JSON)")
    p.add_argument("-o", "--out", required=True, type=arg(output_file, what="file", suffixes=AUDIO_SUFFIXES),
                   help="the WAV (or FLAC) file to write")
    p.add_argument("--stems", metavar="DIR", type=arg(output_dir, what="folder for the stems"),
                   help="also write each heard track's stem into DIR (made if missing)")
    p.add_argument("--tracks", nargs="+", metavar="TRACK", help="render only these tracks (ids or names)")
    p.add_argument("--sr", type=arg(int_in, lo=MIN_SR, hi=MAX_SR, what="a sample rate", unit="Hz"), default=48000,
                   help=f"sample rate in Hz, {MIN_SR}..{MAX_SR} (default 48000)")
    p.add_argument("--trust-kernels", action="store_true",
                   help="run song-defined device kernels in this process instead of the sandbox")
    return p


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "track"


def _write_wav(path: Path, audio, sr: int) -> None:
    import soundfile as sf

    try:
        kind = "FLAC" if path.suffix.lower() == ".flac" else "WAV"  # WAV also into a device such as /dev/null
        sf.write(str(path), audio.T, sr, format=kind, subtype="PCM_24")
    except (OSError, RuntimeError, sf.LibsndfileError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RenderError(f"{path}: cannot write the audio file: {reason}") from None


def main(argv: list[str] | None = None) -> int:
    args = _render_parser().parse_args(argv)
    if args.stems and args.stems.resolve() == args.out.resolve():
        raise UsageError(f"--stems {args.stems} is the mix file -o {args.out}; want a folder of its own")
    from ..song.model import load_song
    from .engine import render

    song = load_song(args.song)
    result = render(song, sr=args.sr, tracks=args.tracks, trust_kernels=True if args.trust_kernels else None)
    out: Path = args.out
    _write_wav(out, result.mix, result.sr)
    if args.stems:
        folder: Path = args.stems
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RenderError(f"--stems {folder}: cannot make the folder: {exc.strerror}") from None
        for pos, tr in enumerate(song.tracks):
            if tr.id in result.stems:
                _write_wav(folder / f"{pos:02d}-{_slug(tr.name or tr.id)}.wav", result.stems[tr.id], result.sr)
    for w in result.warnings:
        print(f"warning [{w.kind}] {w.where}: {w.message}", file=sys.stderr)
    seconds = result.mix.shape[1] / result.sr
    print(f"{out}: {seconds:.2f} s, {result.sr} Hz, {len(result.stems)} track(s), "
          f"{len(result.warnings)} warning(s)")
    return 0


# --- overdub devices ----------------------------------------------------------------------------

_COLUMNS = ("key", "label", "min", "max", "default", "unit", "log", "options")


def _row(p: Param) -> tuple[str, ...]:
    options = ", ".join(f"{i}={o}" for i, o in enumerate(p.options))
    return (p.key, p.label, f"{p.min:g}", f"{p.max:g}", f"{p.default:g}", p.unit,
            "log" if p.log else "", options)


def format_device_table(spec: DeviceSpec) -> str:
    """One device's header line and its params as an aligned text table."""
    rows = [_COLUMNS] + [_row(p) for p in spec.params]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
    lines = [f"{spec.id}  ({spec.kind})  {spec.name}: {spec.description}"]
    for r in rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


def _spec_json(spec: DeviceSpec) -> dict:
    return {"id": spec.id, "kind": spec.kind, "name": spec.name, "description": spec.description,
            "params": [{"key": p.key, "label": p.label, "min": p.min, "max": p.max, "default": p.default,
                        "unit": p.unit, "log": p.log, "options": list(p.options)} for p in spec.params]}


def devices_main(argv: list[str] | None = None) -> int:
    p = Parser(prog="overdub devices",
               description="List the house devices and their parameter tables.",
               epilog="example:\n  overdub devices core.delay core.verb\n  overdub devices --json",
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ids", nargs="*", help="only these device ids (default: every house device)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text tables")
    args = p.parse_args(argv)
    unknown = [i for i in args.ids if i not in HOUSE_SPECS]
    if unknown:
        raise DeviceError(f"unknown device id(s) {', '.join(map(repr, unknown))}; house devices are: "
                           f"{', '.join(HOUSE_SPECS)}")
    specs = [HOUSE_SPECS[i] for i in (args.ids or HOUSE_SPECS)]
    if args.json:
        print(json.dumps([_spec_json(s) for s in specs], indent=2, allow_nan=False))
    else:
        print("\n\n".join(format_device_table(s) for s in specs))
    return 0
