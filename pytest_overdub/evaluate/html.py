"""``overdub report --html FILE``: one self-contained HTML file (no external file, script or font).

The figures are drawn with matplotlib (the optional extra ``pytest-overdub[report]``, imported only
here) and inlined as SVG: the pass rate of every task with its Wilson 95% interval, and for every task
each check's value in every trial against its target band. SVG ids and metadata are fixed, so the same
run gives the same file.
"""

from __future__ import annotations

import html
import io
import math
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .reader import Run, Trial
from .report import summary_text

INSTALL = "pip install 'pytest-overdub[report]'"


def require_matplotlib() -> None:
    """Refuse in one line when matplotlib (the ``[report]`` extra) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(f"--html needs matplotlib, which is not installed: {INSTALL}") from None


def write_html(path: Path, summary: dict[str, Any], run: Run) -> None:
    require_matplotlib()
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "overdub", "svg.fonttype": "none", "font.size": 9}):
        page = _page(summary, run)
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror}") from None


def _page(summary: dict[str, Any], run: Run) -> str:
    title = f"overdub report: {(summary['run'].get('agent') or {}).get('id', '?')}"
    parts = [f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;margin:2em;max-width:70em} pre{font-size:12px;overflow-x:auto}"
             " figure{margin:1em 0}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>", "<h2>Summary</h2>",
             f"<pre>{html.escape(summary_text(summary))}</pre>",
             "<h2>Pass rate per task (Wilson 95% interval)</h2>", _figure(_pass_rates(summary))]
    by_task = run.by_task()
    parts.append("<h2>Checks across trials</h2><p>Green: the check's target band (a line for a single value); "
                 "blue: the check passed in that trial, red: it did not.</p>")
    for task_id, trials in by_task.items():
        counted = [t for t in trials if t.counted]
        if counted and counted[0].checks:
            parts += [f"<h3>{html.escape(task_id)}</h3>", _figure(_checks(counted))]
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _figure(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    svg = buf.getvalue()
    return f"<figure>{svg[svg.index('<svg'):]}</figure>"


def _pass_rates(summary: dict[str, Any]) -> Any:
    from matplotlib.figure import Figure

    rows = [(tid, t) for tid, t in summary["tasks"].items() if t["n"]]
    fig = Figure(figsize=(7, 0.3 * len(rows) + 1.0))
    ax = fig.add_subplot()
    for y, (tid, t) in enumerate(reversed(rows)):
        lo, hi = t["wilson_95"]
        p = t["pass_at_1"]
        ax.errorbar([p], [y], xerr=[[p - lo], [hi - p]], fmt="o", color="C0", capsize=3)
    ax.set_yticks(range(len(rows)), [f"{tid} ({t['successes']}/{t['n']})" for tid, t in reversed(rows)])
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("pass@1 = successes / trials")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _checks(trials: list[Trial]) -> Any:
    from matplotlib.figure import Figure

    ids = list(dict.fromkeys(c.id for t in trials for c in t.checks))
    fig = Figure(figsize=(2.3 * len(ids) + 0.5, 2.4), layout="constrained")
    for i, check_id in enumerate(ids):
        ax = fig.add_subplot(1, len(ids), i + 1)
        points = [(t.trial, c) for t in trials for c in t.checks if c.id == check_id]
        _check_panel(ax, check_id, points)
    return fig


def _check_panel(ax: Any, check_id: str, points: list[tuple[int, Any]]) -> None:
    first = points[0][1]
    lo, hi = first.target
    shown = [(x, c.value) for x, c in points if math.isfinite(c.value)]
    values = [v for _, v in shown] + [b for b in (lo, hi) if b is not None]
    span = (max(values) - min(values)) if values else 1.0
    pad = span * 0.15 or 0.5
    bottom = min(values, default=0.0) - pad
    top = max(values, default=1.0) + pad
    if lo is not None and lo == hi:  # a target of one value: a line, a band would have no height
        ax.axhline(lo, color="C2", alpha=0.5, lw=3)
    else:
        ax.axhspan(bottom if lo is None else lo, top if hi is None else hi, color="C2", alpha=0.2, lw=0)
    colors = ["C0" if c.passed else "C3" for x, c in points if math.isfinite(c.value)]
    ax.scatter([x for x, _ in shown], [v for _, v in shown], c=colors, s=18, zorder=3)
    missing = len(points) - len(shown)
    ax.set_ylim(bottom, top)
    ax.set_title(f"{check_id}" + (" (gate)" if first.gate else "") + (f"\n{missing} without a value" if missing else ""),
                 fontsize=8)
    ax.set_xlabel(f"trial (target [{_bound(lo)}, {_bound(hi)}])", fontsize=8)
    xs = sorted({x for x, _ in points})
    ax.set_xticks(xs if len(xs) <= 10 else xs[:: max(1, len(xs) // 10)])


def _bound(v: float | None) -> str:
    return "…" if v is None else f"{v:g}"
