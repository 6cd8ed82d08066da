"""``overdub measure FILE [--json]``: every figure of a WAV or FLAC file as a table or as JSON.

Exit codes: 0 measured; 2 the file is missing, unreadable, or not a signal the meters accept (one line on
stderr says which and why). A file too short for some figures is measured: each such figure reads
``refused`` with its reason in the table, and ``null`` in the JSON, whose ``refused`` object maps the
figure's name to the reason (e.g. ``"lufs": "too short for integrated loudness: 50 ms, needs 400 ms"``).
"""

from __future__ import annotations

import argparse
import json
import sys

#: Units printed next to each figure in the table.
UNITS = {
    "lufs": "LUFS",
    "lufsShortMax": "LUFS",
    "lra": "LU",
    "truePeak": "dBTP",
    "peak": "dBFS",
    "rms": "dBFS",
    "crest": "dB",
    "centroid": "Hz",
    "correlation": "",
    "sideDb": "dB",
    "onsetsPerSec": "/s",
    "keyConfidence": "r",
    "sr": "Hz",
    "durationS": "s",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="overdub measure", description="Measure a WAV or FLAC file (SPEC section 7).")
    parser.add_argument("file", help="a WAV or FLAC file soundfile can read")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    return parser


def format_table(figures: dict[str, object]) -> str:
    """A two-column table: name, value and unit (dB figures to 2 decimals); a refused figure, its reason."""
    refused = figures.get("refused") or {}
    shown = {name: value for name, value in figures.items() if name != "refused"}
    width = max(len(name) for name in shown)
    lines = []
    for name, value in shown.items():
        if name in refused:
            lines.append(f"{name:<{width}}  {'refused':>10} {refused[name]}")
            continue
        unit = UNITS.get(name, "dB" if name.startswith("bandRel.") else "")
        text = f"{value:.2f}" if isinstance(value, float) else str(value)
        lines.append(f"{name:<{width}}  {text:>10} {unit}".rstrip())
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Run ``overdub measure``; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse has printed its usage message
        return int(exc.code or 0)
    import soundfile

    from pytest_overdub.errors import MeasureError
    from pytest_overdub.measure.measurement import measure

    try:
        data, sr = soundfile.read(args.file, dtype="float64", always_2d=True)
    except Exception as exc:  # soundfile raises RuntimeError/LibsndfileError/OSError variants
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"overdub measure: cannot read {args.file!r}: {reason}", file=sys.stderr)
        return 2
    try:
        figures = {"file": args.file, **measure(data.T, sr=sr).as_dict()}
    except MeasureError as exc:
        print(f"overdub measure: cannot measure {args.file!r}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(figures, indent=2) if args.json else format_table(figures))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
