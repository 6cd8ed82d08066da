"""What an agent left in its trial folder: the answer, the MCP log's tool-call counts, the usage lines.

The answer is ``workspace/answer.json`` (any submission form) when the agent wrote one, else the MCP
session's log ``calls.json``. Usage: ``usage.jsonl`` in the trial folder, one JSON object a line (a turn)
with ``input_tokens``, ``output_tokens`` and ``cost_usd`` (each optional, a number); they are summed and
``turns`` counts the lines. A line that is not such an object is skipped with a warning naming it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from .workspace import ANSWER, CALLS, USAGE

USAGE_FIELDS = ("input_tokens", "output_tokens", "cost_usd")


def find_answer(run_dir: Path) -> tuple[Path, str] | None:
    """(path, source) of the answer: ``workspace/answer.json``, else ``calls.json``; None when neither."""
    for path, source in ((run_dir / "workspace" / ANSWER, ANSWER), (run_dir / CALLS, CALLS)):
        if path.exists() or path.is_symlink():
            return path, source
    return None


def tool_calls(run_dir: Path) -> tuple[dict[str, int] | None, list[str]]:
    """Calls per tool in ``calls.json`` (None when there is no log) and warnings about a log it cannot read."""
    path = run_dir / CALLS
    if not path.is_file():
        return None, []
    try:
        calls = json.loads(path.read_text(encoding="utf-8"))["calls"]
        names = [str(c.get("tool", c.get("name"))) for c in calls]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return None, [f"{CALLS}: tool calls not counted: not a log of {{\"calls\": [{{\"tool\", \"input\"}}]}} "
                      f"({type(exc).__name__})"]
    return dict(sorted(Counter(names).items())), []


def usage(run_dir: Path) -> tuple[dict[str, Any] | None, list[str]]:
    """The summed usage (None when the adapter wrote no ``usage.jsonl``) and warnings for lines skipped."""
    path = run_dir / USAGE
    if not path.is_file():
        return None, []
    total: dict[str, Any] = {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "turns": 0}
    warnings = []
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        problem = _usage_problem(line)
        if problem:
            warnings.append(f"{USAGE} line {n}: {problem}; line skipped")
            continue
        data = json.loads(line)
        for name in USAGE_FIELDS:
            total[name] += data.get(name, 0)
        total["turns"] += 1
    total["cost_usd"] = round(total["cost_usd"], 6)
    return total, warnings


def _usage_problem(line: str) -> str | None:
    try:
        data = json.loads(line)
    except ValueError:
        return "not JSON"
    if not isinstance(data, dict):
        return "not a JSON object"
    for name in USAGE_FIELDS:
        value = data.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            return f"{name} = {json.dumps(value)[:40]}: want a number >= 0"
        if name != "cost_usd" and not isinstance(value, int):
            return f"{name} = {value}: want a whole number"
    return None
