"""The value of each check kind: a table from ``kind`` to a small function (docs/checks.md)."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import TaskError
from .checks import Context, key_value, measure_value, span_beats


def _selection(ctx: Context, check: Any, *, song=None, tracks: Any = ..., pitches: Any = ...,
               spanned: bool = True):
    """The check's note selection; ``spanned=False`` reads the whole song (for ``against``/``melody``
    parts, whose notes may start before the span and still sound inside it)."""
    from ..notes.selection import select

    lo, hi = span_beats(ctx, check) if spanned else (None, None)
    return select(
        ctx.song if song is None else song, start_song=ctx.start,
        tracks=check.tracks if tracks is ... else tracks,
        from_beats=lo, to_beats=hi,
        pitches=check.pitches if pitches is ... else pitches,
    )


def _key(ctx: Context) -> tuple[str | None, str | None]:
    key = ctx.song.key or ctx.start.key
    return (key.root, key.scale) if key else (None, None)


def _bpb(ctx: Context) -> float:
    return ctx.start.beats_per_bar


def _count(check, ctx):
    return float(len(_selection(ctx, check)))


def _in_key(check, ctx):
    from ..notes import readings as r

    root, scale = _key(ctx)
    return r.in_key(_selection(ctx, check), key_root=root, key_scale=scale)


def _span(check, ctx):
    from ..notes import readings as r

    return r.span(_selection(ctx, check))


def _within(check, ctx):
    from ..notes import readings as r

    return r.within(_selection(ctx, check), lo=check.lo, hi=check.hi)


def _clashes(check, ctx):
    from ..notes import readings as r

    against = _selection(ctx, check, tracks=check.against, pitches=None, spanned=False)
    return r.clashes(_selection(ctx, check), against, beats_per_bar=_bpb(ctx))


def _doubling(check, ctx):
    from ..notes import readings as r

    against = _selection(ctx, check, tracks=check.against, pitches=None, spanned=False)
    return r.doubling(_selection(ctx, check), against)


def _unchanged(check, ctx):
    from ..notes import readings as r

    before = _selection(ctx, check, song=ctx.start)
    return r.unchanged(before, _selection(ctx, check))


def _transposed(check, ctx):
    from ..notes import readings as r

    before = _selection(ctx, check, song=ctx.start)
    return r.transposed(before, _selection(ctx, check), semitones=check.semitones)


def _roots(check, ctx):
    from ..notes import readings as r

    return r.roots(_selection(ctx, check), chords=check.chords, bars=tuple(check.bars),
                   beats_per_bar=_bpb(ctx))


def _pattern(check, ctx):
    from ..notes import readings as r

    return r.pattern(_selection(ctx, check), pitches=check.pitches, at=check.at, bars=tuple(check.bars),
                     beats_per_bar=_bpb(ctx))


def _differs(check, ctx):
    from ..notes import readings as r

    return r.differs(_selection(ctx, check), bar_a=check.a, bar_b=check.b, beats_per_bar=_bpb(ctx))


def _chords_under(check, ctx):
    from ..notes import readings as r

    root, scale = _key(ctx)
    melody = _selection(ctx, check, tracks=check.melody, pitches=None, spanned=False)
    return r.chords_under(_selection(ctx, check), melody, bars=tuple(check.bars), voices=check.voices,
                          hold=check.hold, key_root=root, key_scale=scale, beats_per_bar=_bpb(ctx))


def _jitter(check, ctx):
    from ..notes import readings as r

    reference = _selection(ctx, check, song=ctx.start)
    return r.jitter(_selection(ctx, check), reference_notes=reference, grid=check.grid)


def _swing(check, ctx):
    from ..notes import readings as r

    before = _selection(ctx, check, song=ctx.start)
    return r.swing_change(before, _selection(ctx, check), grid=check.grid)


def _probe(check, ctx):
    from . import probes

    return probes.value(check, ctx)


KINDS: dict[str, Callable[[Any, Context], float]] = {
    "measure": lambda c, ctx: measure_value(ctx, c),
    "key": lambda c, ctx: key_value(ctx, c),
    "count": _count, "inKey": _in_key, "span": _span, "within": _within, "clashes": _clashes,
    "doubling": _doubling, "unchanged": _unchanged, "transposed": _transposed, "roots": _roots,
    "pattern": _pattern, "differs": _differs, "chordsUnder": _chords_under, "jitter": _jitter,
    "swing": _swing,
    "defined": _probe, "echoTime": _probe, "echoLevel": _probe, "dryKept": _probe, "decayTime": _probe,
    "decayPeak": _probe, "toneGain": _probe, "notePitch": _probe, "noteLength": _probe,
    "trackBand": _probe, "trackEchoTime": _probe, "trackEchoLevel": _probe, "trackDryKept": _probe,
    "trackDecay": _probe, "trackPitch": _probe, "trackLength": _probe,
}


def value_of(check: Any, ctx: Context) -> float:
    try:
        fn = KINDS[check.kind]
    except KeyError:
        raise TaskError(f"check {check.id}: unknown kind {check.kind!r}; known: {', '.join(KINDS)}") from None
    return fn(check, ctx)
