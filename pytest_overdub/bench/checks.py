"""Checks: an audio scope's figure (``measure``, ``key``) and a check's result (docs/checks.md).

This is the one place where a scope becomes a measure: every audio check takes the one path from a scope to
audio, :meth:`Context.hear <pytest_overdub.bench.context.Context.hear>` (which tracks it hears, by the
renderer's own rule, and its span) then :meth:`~pytest_overdub.bench.context.Context.audio` (the render,
cut to the span's frames). Conventions:

* A scope is rendered as the whole song with only its heard tracks playing (through the master chain),
  then cut to the span. A scope that hears no track reads -120 (``key``: 0). ``stem: true`` reads the
  scope's tracks as they leave their own faders, summed, before the master chain
  (:func:`~pytest_overdub.bench.context.scope_audio`), it and its ``minus`` alike.
* ``relative: true`` subtracts the same figure measured on the starting song (after setup);
  ``minus`` subtracts another scope's value (``each: true``: the loudest of its heard tracks, each alone).

Each check kind computes its own value (:meth:`CheckBase.value <pytest_overdub.bench.model.CheckBase.value>`);
:func:`evaluate` turns it into a scored result. This module does not import the check models.
"""

from __future__ import annotations

import math
from typing import Any

from ..dsp.levels import FLOOR_DB
from ..errors import OverdubError
from ..song.model import Song
from .context import Context
from .scoring import CheckResult, check_score

__all__ = ["Context", "measure_scope", "measure_value", "minus_value", "key_value", "evaluate", "clean_result"]


def measure_scope(ctx: Context, song: Song, scope: Any, metric: str, *, stem: bool = False) -> float:
    """``metric`` of what the scope hears on ``song`` (:meth:`Context.hear`); -120 when it hears no track.
    ``stem``: the heard tracks before the master chain."""
    heard = ctx.hear(song, scope)
    if heard.silent:
        return FLOOR_DB

    def compute() -> float:
        from ..measure import measure_metric

        x, sr = ctx.audio(heard, stem=stem)
        return measure_metric(x, sr=sr, metric=metric)

    return ctx.value((heard.key, heard.from_beats, heard.to_beats, metric, stem), compute)


def measure_value(ctx: Context, check: Any) -> float:
    """``figure(scope) - figure(minus)``, minus the same on the starting song when ``relative``; with
    ``least``, the lowest of that over the scope's tracks each alone (those the starting song plays when
    ``relative``, else those the answer plays; none: -120)."""
    if getattr(check, "least", False):
        ids = ctx.heard_ids(ctx.start if check.relative else ctx.song, check.tracks)
        values = [measure_value(ctx, check.model_copy(update={"tracks": [i], "least": False})) for i in ids]
        return min(values) if values else FLOOR_DB

    def one(song: Song) -> float:
        v = measure_scope(ctx, song, check, check.metric, stem=check.stem)
        if check.minus is not None:
            v -= minus_value(ctx, song, check.minus, check.metric, stem=check.stem)
        return v

    value = one(ctx.song)
    if check.relative:
        value -= one(ctx.start)
    return value


def minus_value(ctx: Context, song: Song, scope: Any, metric: str, *, stem: bool = False) -> float:
    if not scope.each:
        return measure_scope(ctx, song, scope, metric, stem=stem)
    ids = ctx.heard_ids(song, scope.tracks)
    values = [measure_scope(ctx, song, scope.model_copy(update={"tracks": [i], "each": False}), metric,
                            stem=stem) for i in ids]
    return max(values) if values else FLOOR_DB


def key_value(ctx: Context, check: Any) -> float:
    """1 if the key heard in the scope is ``check.expect`` or its relative major/minor, else 0."""
    from ..measure import detect_key
    from ..notes.theory import pitch_class

    heard = ctx.hear(ctx.song, check)
    if heard.silent:
        return 0.0
    x, sr = ctx.audio(heard)
    found = detect_key(x, sr=sr)
    root, scale = check.expect.split()
    want = pitch_class(root)
    got = pitch_class(found.root)
    if found.scale == scale and got == want:
        return 1.0
    # the relative major/minor: A minor <-> C major
    if scale == "minor" and found.scale == "major" and got == (want + 3) % 12:
        return 1.0
    if scale == "major" and found.scale == "minor" and got == (want - 3) % 12:
        return 1.0
    return 0.0


def evaluate(check: Any, ctx: Context) -> CheckResult:
    """Compute one check (``check.value(ctx)``); an error becomes the value NaN, score 0, with the message."""
    error = None
    try:
        value = float(check.value(ctx))
    except OverdubError as exc:
        value, error = math.nan, str(exc)
    except Exception as exc:  # a bug in a reading must not take the other checks down
        value, error = math.nan, f"{type(exc).__name__}: {exc}"
    return CheckResult(
        id=check.id, label=check.label, kind=check.kind, value=value, unit=check.unit,
        target=tuple(check.target), soft=check.soft, weight=None if check.gate else check.effective_weight,
        gate=check.gate, score=check_score(value, tuple(check.target), check.soft), error=error,
    )


def clean_result(ctx: Context) -> CheckResult:
    problems = float(ctx.problems())
    return CheckResult(
        id="clean", label="renders clean (no NaN, no failed or faulting device)", kind="clean",
        value=problems, unit="problems", target=(0.0, 0.0), soft=None, weight=None, gate=True,
        score=check_score(problems, (0.0, 0.0), None),
    )
