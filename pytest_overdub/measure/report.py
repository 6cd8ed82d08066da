"""``overdub measure FILE [--json]``: every figure of a WAV or FLAC file as a table or as JSON.

Exit codes: 0 measured; 2 the file is missing, a folder, unreadable, or not a signal the meters accept (one line on
stderr says which and why). A file too short for some figures is measured: each such figure reads
``refused`` with its reason in the table, and ``null`` in the JSON, whose ``refused`` object maps the
figure's name to the reason (e.g. ``"lufs": "too short for integrated loudness: 50 ms, needs 400 ms"``).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from pytest_overdub.cliargs import Parser
from pytest_overdub.measure.units import UNITS


def _parser() -> Parser:
    parser = Parser(prog="overdub measure", description="Measure a WAV or FLAC file (docs/meters.md).")
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
    from pytest_overdub.errors import UsageError

    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except UsageError as exc:
        print(f"overdub measure: {exc}", file=sys.stderr)
        return 2
    import soundfile

    from pytest_overdub.errors import MeasureError
    from pytest_overdub.measure.measurement import measure

    try:
        data, sr = soundfile.read(args.file, dtype="float64", always_2d=True)
    except Exception as exc:  # soundfile raises RuntimeError/LibsndfileError/OSError variants
        reason = _unreadable(Path(args.file)) or (
            (str(exc).splitlines()[0].rstrip(".") if str(exc) else type(exc).__name__) + "; want a WAV or FLAC file")
        print(f"overdub measure: cannot read {args.file!r}: {reason}", file=sys.stderr)
        return 2
    try:
        figures = {"file": args.file, **measure(data.T, sr=sr).as_dict()}
    except MeasureError as exc:
        print(f"overdub measure: cannot measure {args.file!r}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(_finite(figures), indent=2, allow_nan=False))
    else:
        print(format_table(figures))
    return 0


def _finite(value: object) -> object:
    """``value`` with every float that is not finite replaced by None, at any depth."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _unreadable(path: Path) -> str | None:
    """Why ``path`` cannot be opened at all (missing, a folder, no permission), or None when it can."""
    if not path.exists():
        return "no such file; want a WAV or FLAC file"
    if path.is_dir():
        return "it is a folder; want a WAV or FLAC file"
    try:
        path.open("rb").close()
    except OSError as exc:
        return f"cannot open: {exc.strerror}"
    return None


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
