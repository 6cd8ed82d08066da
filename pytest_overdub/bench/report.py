"""Results as JSON: values that are not finite are written as strings ("inf", "nan"), never as invalid JSON."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from .scoring import TaskResult


def json_number(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def result_to_dict(result: TaskResult) -> dict[str, Any]:
    d = asdict(result)
    for c in d["checks"]:
        c["value"] = json_number(c["value"])
        c["target"] = list(c["target"])
    return d
