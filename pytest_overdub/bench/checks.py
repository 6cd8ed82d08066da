"""Checks: turning a check's scope into renders, meters and note readings (docs/checks.md).

This is the one place where a scope becomes a render plus a measure. Conventions:

* Tracks in a scope are names or ids, resolved on the starting song first so a track the agent renamed
  is still found by its starting id; ``"new"`` = tracks the starting song didn't have.
* A span is ``from``/``to`` in beats or a ``section`` name, read from the starting song (so an agent
  moving sections cannot move the goalposts).
* A scope is rendered as the whole song with only its tracks playing (through the master chain), then
  sliced to the span. No tracks in scope reads -120. ``stem: true`` reads the scope's tracks as they leave
  their own faders, summed, before the master chain (:func:`scope_audio`), it and its ``minus`` alike.
* ``relative: true`` subtracts the same figure measured on the starting song (after setup);
  ``minus`` subtracts another scope's value (``each: true``: the loudest of its tracks, each alone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..dsp.levels import FLOOR_DB
from ..errors import OverdubError, TaskError
from ..song.model import Song
from .model import CheckBase, Scope
from .scoring import CheckResult, check_score


@dataclass
class Context:
    """What checks read: the starting song (after setup), the candidate song, and a render cache."""

    start: Song
    song: Song
    trusted: bool = False
    sr: int = 48000
    warnings: list[Any] = field(default_factory=list)
    _renders: dict[tuple[int, tuple[str, ...]], Any] = field(default_factory=dict)
    _values: dict[tuple, float] = field(default_factory=dict)

    def render(self, song: Song, track_ids: tuple[str, ...]):
        key = (id(song), track_ids)
        if key not in self._renders:
            from ..render import render

            r = render(song, sr=self.sr, tracks=list(track_ids), trust_kernels=self.trusted)
            self._renders[key] = r
            self.warnings.extend(r.warnings)
        return self._renders[key]

    def problems(self) -> int:
        """Render problems for the house gate ``clean``: faults and errors (NaN, bad params)."""
        return sum(1 for w in self.warnings if w.kind in ("fault", "error"))


def span_beats(ctx: Context, scope: Any) -> tuple[float | None, float | None]:
    section = getattr(scope, "section", None)
    if section is not None:
        s = ctx.start.section(section)
        if s is None:
            names = ", ".join(x.name for x in ctx.start.sections) or "none"
            raise TaskError(f"section {section!r} is not in the starting song (sections: {names})")
        return s.start, s.start + s.length
    return getattr(scope, "from_beats", None), getattr(scope, "to_beats", None)


def scope_track_ids(ctx: Context, song: Song, tracks: Any) -> tuple[str, ...]:
    from ..notes.selection import resolve_tracks

    return tuple(t.id for t in resolve_tracks(song, tracks, start_song=ctx.start))


def _mix_ids(song: Song) -> tuple[str, ...]:
    """The whole mix as the song would play: mute and solo honoured."""
    solo = [t for t in song.tracks if t.solo]
    return tuple(t.id for t in (solo or [t for t in song.tracks if not t.mute]))


def scope_audio(r: Any, *, stem: bool = False):
    """What a scope hears of a render of its tracks: the mix through the master chain, or with ``stem``
    the tracks' own stems (post-fader, post-pan) summed in song order, before the master's inserts, gain
    and clip: "the keys on their own", which no master insert can change."""
    if not stem:
        return r.mix
    import numpy as np

    out = np.zeros_like(r.mix)
    for audio in r.stems.values():
        out += audio
    return out


def measure_scope(ctx: Context, song: Song, scope: Any, metric: str, *, stem: bool = False) -> float:
    """Render ``song`` with the scope's tracks, slice the span, read ``metric`` (``stem``: pre-master)."""
    tracks = getattr(scope, "tracks", None)
    ids = _mix_ids(song) if tracks is None else scope_track_ids(ctx, song, tracks)
    lo, hi = span_beats(ctx, scope)
    key = (id(song), ids, lo, hi, metric, stem)
    if key in ctx._values:
        return ctx._values[key]
    if not ids:
        value = FLOOR_DB
    else:
        from ..measure import measure_metric

        r = ctx.render(song, ids)
        x = scope_audio(r, stem=stem)
        spb = 60.0 / song.tempo
        a = 0 if lo is None else int(round(lo * spb * r.sr))
        b = x.shape[-1] if hi is None else int(round(hi * spb * r.sr))
        value = float(measure_metric(x[:, a:b], sr=r.sr, metric=metric))
    ctx._values[key] = value
    return value


def measure_value(ctx: Context, check) -> float:
    def one(song: Song) -> float:
        v = measure_scope(ctx, song, check, check.metric, stem=check.stem)
        if check.minus is not None:
            v -= minus_value(ctx, song, check.minus, check.metric, stem=check.stem)
        return v

    value = one(ctx.song)
    if check.relative:
        value -= one(ctx.start)
    return value


def minus_value(ctx: Context, song: Song, scope: Scope, metric: str, *, stem: bool = False) -> float:
    if not scope.each:
        return measure_scope(ctx, song, scope, metric, stem=stem)
    ids = scope_track_ids(ctx, song, scope.tracks) if scope.tracks is not None else _mix_ids(song)
    values = [measure_scope(ctx, song, scope.model_copy(update={"tracks": [i], "each": False}), metric,
                            stem=stem) for i in ids]
    return max(values) if values else FLOOR_DB


def key_value(ctx: Context, check) -> float:
    from ..measure import detect_key
    from ..notes.theory import pitch_class

    tracks = check.tracks
    song = ctx.song
    ids = _mix_ids(song) if tracks is None else scope_track_ids(ctx, song, tracks)
    if not ids:
        return 0.0
    r = ctx.render(song, ids)
    lo, hi = span_beats(ctx, check)
    spb = 60.0 / song.tempo
    a = 0 if lo is None else int(round(lo * spb * r.sr))
    b = r.mix.shape[-1] if hi is None else int(round(hi * spb * r.sr))
    heard = detect_key(r.mix[:, a:b], sr=r.sr)
    root, scale = check.expect.split()
    want = pitch_class(root)
    got = pitch_class(heard.root)
    if heard.scale == scale and got == want:
        return 1.0
    # the relative major/minor: A minor <-> C major
    if scale == "minor" and heard.scale == "major" and got == (want + 3) % 12:
        return 1.0
    if scale == "major" and heard.scale == "minor" and got == (want - 3) % 12:
        return 1.0
    return 0.0


def evaluate(check: CheckBase, ctx: Context) -> CheckResult:
    """Compute one check; an error becomes the value NaN, score 0, with the message kept."""
    from .kinds import value_of

    error = None
    try:
        value = float(value_of(check, ctx))
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
