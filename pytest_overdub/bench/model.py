"""Task and check models (docs/formats.md, docs/checks.md), discriminated on ``kind``.

A check is ``{id, label, kind, unit?, target: [lo|null, hi|null], soft?, weight? | gate: true}`` plus the
fields of its kind. Scopes and note selections are written flat on the check: ``tracks`` (names, ids or
``"new"``; absent = the whole mix / every track), ``from``/``to`` in beats or ``section`` (a section name).
Beats are 0-based; bars are 4 beats (the bench's songs are in 4/4).

Each kind is one class: its ``kind`` literal, its fields, and ``value(ctx)``, the reading it stands for
(docs/checks.md). The classes are registered once, in :data:`CHECK_CLASSES`; the ``Check`` union and
:data:`CHECK_KINDS` derive from it. A value reads scopes and selections through :mod:`.context` and the
audio and probe machinery of :mod:`.checks` and :mod:`.probes`, which are imported when a value is
computed (loading a task imports no numpy) and never import this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..dsp.levels import FLOOR_DB, gain_to_db
from ..notes import readings

if TYPE_CHECKING:
    from .context import Context

Tracks = Union[Literal["new"], list[str], None]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Scope(_Model):
    """Which tracks are heard and which span of the song is read."""

    tracks: Tracks = None
    from_beats: float | None = Field(default=None, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", ge=0)
    section: str | None = None
    each: bool = Field(default=False, description="minus only: the loudest of the tracks, each alone")

    @model_validator(mode="after")
    def _span(self) -> "Scope":
        if self.section is not None and (self.from_beats is not None or self.to_beats is not None):
            raise ValueError("give either section or from/to, not both")
        return self


class CheckBase(_Model):
    """The fields every check has. A kind is a subclass with ``kind: Literal["<kind>"]``, its own fields,
    and :meth:`value`; it is registered once, in :data:`CHECK_CLASSES`."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    label: str = Field(min_length=1)
    unit: str = ""
    target: tuple[float | None, float | None]
    soft: float | None = Field(default=None, gt=0)
    weight: float | None = Field(default=None, gt=0)
    gate: bool = False

    @model_validator(mode="after")
    def _weight_or_gate(self) -> "CheckBase":
        if self.gate and self.weight is not None:
            raise ValueError("a check is either a gate or weighted, not both")
        lo, hi = self.target
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"target [{lo}, {hi}] has lo > hi")
        return self

    @property
    def effective_weight(self) -> float:
        return 0.0 if self.gate else (self.weight if self.weight is not None else 1.0)

    def value(self, ctx: "Context") -> float:
        """The check's reading on ``ctx`` (docs/checks.md); each kind defines it."""
        raise NotImplementedError(f"check kind {type(self).__name__} has no value()")


# --- audio ---------------------------------------------------------------------------------------

class MeasureCheck(CheckBase):
    kind: Literal["measure"]
    metric: str
    tracks: Tracks = None
    from_beats: float | None = Field(default=None, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", ge=0)
    section: str | None = None
    minus: Scope | None = None
    relative: bool = False
    stem: bool = Field(default=False, description="read the scope's tracks before the master chain")

    def value(self, ctx: "Context") -> float:
        from .checks import measure_value

        return measure_value(ctx, self)


class KeyCheck(CheckBase):
    kind: Literal["key"]
    expect: str = Field(pattern=r"^[A-G][#b]? (major|minor)$")
    tracks: Tracks = None
    from_beats: float | None = Field(default=None, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", ge=0)
    section: str | None = None

    def value(self, ctx: "Context") -> float:
        from .checks import key_value

        return key_value(ctx, self)


# --- notes ---------------------------------------------------------------------------------------

class _Selected(CheckBase):
    """Note checks: the selection is ``tracks``, ``from``/``to`` (or ``section``) and ``pitches``."""

    tracks: Tracks = None
    from_beats: float | None = Field(default=None, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", ge=0)
    section: str | None = None
    pitches: list[int] | None = None

    def notes(self, ctx: "Context", *, start: bool = False) -> list:
        """The selection on the agent's song (``start=True``: on the starting song)."""
        return ctx.select(self, song=ctx.start if start else None)

    def part(self, ctx: "Context", tracks: list[str]) -> list:
        """Every note of ``tracks`` over the whole song (an ``against``/``melody`` part: its notes may
        start before the span and still sound inside it)."""
        return ctx.select(self, tracks=tracks, pitches=None, spanned=False)


class CountCheck(_Selected):
    kind: Literal["count"]

    def value(self, ctx: "Context") -> float:
        return float(len(self.notes(ctx)))


class InKeyCheck(_Selected):
    kind: Literal["inKey"]

    def value(self, ctx: "Context") -> float:
        root, scale = ctx.key
        return readings.in_key(self.notes(ctx), key_root=root, key_scale=scale)


class SpanCheck(_Selected):
    kind: Literal["span"]

    def value(self, ctx: "Context") -> float:
        return readings.span(self.notes(ctx))


class WithinCheck(_Selected):
    kind: Literal["within"]
    lo: int = Field(ge=0, le=127)
    hi: int = Field(ge=0, le=127)

    def value(self, ctx: "Context") -> float:
        return readings.within(self.notes(ctx), lo=self.lo, hi=self.hi)


class ClashesCheck(_Selected):
    kind: Literal["clashes"]
    against: list[str]

    def value(self, ctx: "Context") -> float:
        return readings.clashes(self.notes(ctx), self.part(ctx, self.against), beats_per_bar=ctx.beats_per_bar)


class DoublingCheck(_Selected):
    kind: Literal["doubling"]
    against: list[str]

    def value(self, ctx: "Context") -> float:
        return readings.doubling(self.notes(ctx), self.part(ctx, self.against), tol_beats=ctx.on_beat_tol_beats)


class UnchangedCheck(_Selected):
    kind: Literal["unchanged"]

    def value(self, ctx: "Context") -> float:
        return readings.unchanged(self.notes(ctx, start=True), self.notes(ctx))


class TransposedCheck(_Selected):
    kind: Literal["transposed"]
    semitones: int

    def value(self, ctx: "Context") -> float:
        return readings.transposed(self.notes(ctx, start=True), self.notes(ctx), semitones=self.semitones)


class RootsCheck(_Selected):
    kind: Literal["roots"]
    chords: list[str] = Field(min_length=1)
    bars: tuple[int, int]

    def value(self, ctx: "Context") -> float:
        return readings.roots(self.notes(ctx), chords=self.chords, bars=tuple(self.bars),
                              tol_beats=ctx.on_beat_tol_beats, beats_per_bar=ctx.beats_per_bar)


class ChordTonesCheck(_Selected):
    kind: Literal["chordTones"]
    chords: list[str] = Field(min_length=1)
    bars: tuple[int, int]

    def value(self, ctx: "Context") -> float:
        return readings.chord_tones(self.notes(ctx), chords=self.chords, bars=tuple(self.bars),
                                    tol_beats=ctx.on_beat_tol_beats, beats_per_bar=ctx.beats_per_bar)


class PatternCheck(_Selected):
    kind: Literal["pattern"]
    at: list[float] = Field(min_length=1, description="positions in the bar, beats")
    bars: tuple[int, int]

    def value(self, ctx: "Context") -> float:
        return readings.pattern(self.notes(ctx), pitches=self.pitches, at=self.at, bars=tuple(self.bars),
                                tol_beats=ctx.on_beat_tol_beats, beats_per_bar=ctx.beats_per_bar)


class DiffersCheck(_Selected):
    kind: Literal["differs"]
    a: int = Field(ge=0, description="bar index")
    b: int = Field(ge=0, description="bar index")

    def value(self, ctx: "Context") -> float:
        return readings.differs(self.notes(ctx), bar_a=self.a, bar_b=self.b, beats_per_bar=ctx.beats_per_bar)


class ChordsUnderCheck(_Selected):
    kind: Literal["chordsUnder"]
    melody: list[str]
    bars: tuple[int, int]
    voices: int = Field(default=3, ge=1)
    max_voices: int = Field(default=5, ge=1, alias="maxVoices")
    hold: float = Field(default=2.0, ge=0)

    def value(self, ctx: "Context") -> float:
        root, scale = ctx.key
        return readings.chords_under(self.notes(ctx), self.part(ctx, self.melody), bars=tuple(self.bars),
                                     voices=self.voices, max_voices=self.max_voices, hold=self.hold,
                                     key_root=root, key_scale=scale, tol_beats=ctx.on_beat_tol_beats,
                                     beats_per_bar=ctx.beats_per_bar)


class DistinctCheck(_Selected):
    kind: Literal["distinct"]

    def value(self, ctx: "Context") -> float:
        return readings.distinct(self.notes(ctx))


class TurnsCheck(_Selected):
    kind: Literal["turns"]

    def value(self, ctx: "Context") -> float:
        return readings.turns(self.notes(ctx), tol_beats=ctx.on_beat_tol_beats)


class CopiedCheck(_Selected):
    """The largest copy share of any selected track against any ``against`` track (read over the whole
    song), transpositions counted in semitones and in steps of the task's key."""

    kind: Literal["copied"]
    against: list[str] = Field(min_length=1)

    def value(self, ctx: "Context") -> float:
        from ..notes.theory import scale_pcs

        root, scale = ctx.key
        pcs = scale_pcs(root, scale) if root is not None else None
        ours, theirs = _by_track(self.notes(ctx)), _by_track(self.part(ctx, self.against))
        return max((readings.copied(a, b, tol_beats=ctx.on_beat_tol_beats, scale=pcs)
                    for a in ours for b in theirs), default=0.0)


class JitterCheck(_Selected):
    kind: Literal["jitter"]
    grid: float = Field(default=0.25, gt=0)

    def value(self, ctx: "Context") -> float:
        return readings.jitter(self.notes(ctx), reference_notes=self.notes(ctx, start=True), grid=self.grid)


class SwingCheck(_Selected):
    kind: Literal["swing"]
    grid: float = Field(default=0.25, gt=0)

    def value(self, ctx: "Context") -> float:
        return readings.swing_change(self.notes(ctx, start=True), self.notes(ctx), grid=self.grid)


class QuantizedCheck(_Selected):
    kind: Literal["quantized"]
    grid: float = Field(default=0.25, gt=0)

    def value(self, ctx: "Context") -> float:
        before = self.notes(ctx, start=True)
        return readings.quantized(before, self.notes(ctx), grid=self.grid,
                                  swing=readings.swing_amount(before, grid=self.grid),
                                  tol_beats=ctx.on_beat_tol_beats)


def _by_track(notes: list) -> list[list]:
    """``notes`` grouped by track, in order of first appearance."""
    groups: dict[str, list] = {}
    for n in notes:
        groups.setdefault(n.track_id, []).append(n)
    return list(groups.values())


# --- devices (probes) ----------------------------------------------------------------------------

class _Probed(CheckBase):
    """Probe checks: ``track`` names the agent's track whose device is measured (bench/probes.py)."""

    track: str

    def probed(self, ctx: "Context"):
        from .probes import probe_track

        return probe_track(ctx, self.track)


class DefinedCheck(_Probed):
    kind: Literal["defined"]
    deviceKind: Literal["instrument", "effect"]

    def value(self, ctx: "Context") -> float:
        from .probes import defined

        return defined(ctx, self.probed(ctx), self.deviceKind)


class _Echo(_Probed):
    tempos: list[float] = Field(default_factory=lambda: [100.0], min_length=1)

    def echoes(self, ctx: "Context") -> list[tuple[float, float, float, float]]:
        """(tempo, dry peak, first-repeat peak, delay ms) of a click through the inserts at each tempo."""
        from .probes import echo_at

        track = self.probed(ctx)
        return [(tempo, *echo_at(ctx, track, tempo, inserts=True)) for tempo in self.tempos]


class EchoTimeCheck(_Echo):
    kind: Literal["echoTime"]
    beats: float = Field(gt=0, description="the wanted delay in beats")

    def value(self, ctx: "Context") -> float:
        return max(abs(delay_ms - self.beats * 60000.0 / tempo) for tempo, _, _, delay_ms in self.echoes(ctx))


class EchoLevelCheck(_Echo):
    kind: Literal["echoLevel"]

    def value(self, ctx: "Context") -> float:
        return max(_db(echo) - _db(dry) if echo > 0 else FLOOR_DB for _, dry, echo, _ in self.echoes(ctx))


class DryKeptCheck(_Echo):
    kind: Literal["dryKept"]

    def value(self, ctx: "Context") -> float:
        from .probes import echo_at

        track, tempo = self.probed(ctx), self.tempos[0]
        with_fx = echo_at(ctx, track, tempo, inserts=True)[0]
        without = echo_at(ctx, track, tempo, inserts=False)[0]
        return _db(with_fx) - _db(without)


def _db(x: float) -> float:
    return float(gain_to_db(x))


class ProbeNote(_Model):
    p: int = Field(ge=0, le=127)
    d: float = Field(gt=0, description="beats at 120 bpm")


class _Decay(_Probed):
    notes: list[ProbeNote] = Field(min_length=1)

    def figures(self, ctx: "Context", threshold_db: float) -> list[tuple[float, float]]:
        from .probes import decay_at

        return decay_at(ctx, self.probed(ctx), self.notes, threshold_db=threshold_db)


class DecayTimeCheck(_Decay):
    kind: Literal["decayTime"]
    threshold: float = -60.0

    def value(self, ctx: "Context") -> float:
        return max(t for t, _ in self.figures(ctx, self.threshold))


class DecayPeakCheck(_Decay):
    kind: Literal["decayPeak"]
    which: Literal["loudest", "quietest"] = "loudest"

    def value(self, ctx: "Context") -> float:
        peaks = [p for _, p in self.figures(ctx, -60.0)]
        return max(peaks) if self.which == "loudest" else min(peaks)


class ToneGainCheck(_Probed):
    kind: Literal["toneGain"]
    pitch: int = Field(ge=0, le=127)

    def value(self, ctx: "Context") -> float:
        from .probes import tone_gain_db

        return tone_gain_db(ctx, self.probed(ctx), self.pitch)


# --- the registry: every kind, once --------------------------------------------------------------

#: Every check kind's class, in the order docs/checks.md lists them. The union below, ``CHECK_KINDS`` and
#: the docs test all derive from this tuple; a kind is added here and nowhere else.
CHECK_CLASSES: tuple[type[CheckBase], ...] = (
    MeasureCheck, KeyCheck,
    CountCheck, InKeyCheck, SpanCheck, WithinCheck, ClashesCheck, DoublingCheck, UnchangedCheck,
    TransposedCheck, RootsCheck, ChordTonesCheck, PatternCheck, DiffersCheck, ChordsUnderCheck, DistinctCheck,
    TurnsCheck, CopiedCheck, JitterCheck, SwingCheck, QuantizedCheck,
    DefinedCheck, EchoTimeCheck, EchoLevelCheck, DryKeptCheck, DecayTimeCheck, DecayPeakCheck, ToneGainCheck,
)


def kind_of(cls: type[CheckBase]) -> str:
    """The one ``kind`` a check class declares (``kind: Literal["<kind>"]``)."""
    kinds = get_args(cls.model_fields["kind"].annotation)
    if len(kinds) != 1:
        raise TypeError(f"{cls.__name__} declares kinds {kinds}; a check class has exactly one")
    return kinds[0]


CHECK_KINDS: tuple[str, ...] = tuple(kind_of(c) for c in CHECK_CLASSES)

Check = Annotated[Union[CHECK_CLASSES], Field(discriminator="kind")]


class ChangeScope(_Model):
    """What an answer may change (the house gate ``scope``, docs/scoring.md); everything else must stay.

    Read it as the instruction: ``tracks`` are the starting song's tracks it names (names or ids, or
    ``"all"``), which may change how they sound; ``notes`` lets them also change what they play (a mix
    task leaves it false); ``new`` lets the answer add tracks; ``sections`` confines every allowed change
    to those sections of the starting song (``null`` = anywhere); ``master``, ``tempo`` (and meter),
    ``key`` and ``length`` (the song's end) may change only when true.
    """

    tracks: Union[Literal["all"], list[str]] = Field(default_factory=list)
    notes: bool = False
    new: bool = False
    sections: list[str] | None = Field(default=None, min_length=1)
    master: bool = False
    tempo: bool = False
    key: bool = False
    length: bool = False

    @model_validator(mode="after")
    def _notes_need_tracks(self) -> "ChangeScope":
        if self.notes and not self.tracks:
            raise ValueError("notes: true lets named tracks change their notes; name them in tracks")
        return self


HOUSE_GATES = ("clean", "scope")


class Task(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    family: Literal["mix", "writing", "device", "editing"]
    title: str = Field(min_length=1)
    instruction: str = Field(min_length=40)
    song: str = Field(description="a song name in songs/ (without .json)")
    setup: list[dict[str, Any]] = Field(default_factory=list, description="ops the house applies first")
    checks: list[Check] = Field(min_length=1)
    scope: ChangeScope = Field(description="what the answer may change (the house gate scope)")

    @model_validator(mode="after")
    def _unique_checks(self) -> "Task":
        seen = set()
        for c in self.checks:
            if c.id in seen:
                raise ValueError(f"check id {c.id!r} is used twice")
            if c.id in HOUSE_GATES:
                raise ValueError(f"check id {c.id!r} is the house gate's")
            seen.add(c.id)
        if not any(not c.gate for c in self.checks):
            raise ValueError("a task needs at least one weighted goal")
        return self
