"""Results as JSON: always valid JSON. A value that is not finite (a check that was not scored or that
raised) is written as ``null`` next to its error, never as ``NaN``, ``Infinity`` or a string."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from .scoring import TaskResult


def json_number(v: Any) -> Any:
    """``v``, or None when it is a float that is not finite."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def result_to_dict(result: TaskResult) -> dict[str, Any]:
    """The result as plain JSON data; a check without a finite value has ``value: null`` and an error."""
    d = asdict(result)
    for c in d["checks"]:
        if c["value"] is not None and json_number(c["value"]) is None:
            c["error"] = c["error"] or f"the value is not finite ({c['value']})"
            c["value"] = None
        c["target"] = list(c["target"])
    return d


def dumps_json(data: Any) -> str:
    """``data`` as indented JSON; a NaN or infinity anywhere raises instead of writing invalid JSON."""
    return json.dumps(data, indent=2, allow_nan=False)
