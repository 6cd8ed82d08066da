"""Task and check models (docs/formats.md, docs/checks.md), discriminated on ``kind``.

A check is ``{id, label, kind, unit?, target: [lo|null, hi|null], soft?, weight? | gate: true}`` plus the
fields of its kind. Scopes and note selections are written flat on the check: ``tracks`` (names, ids or
``"new"``; absent = the whole mix / every track), ``from``/``to`` in beats or ``section`` (a section name).
Beats are 0-based; bars are 4 beats (the bench's songs are in 4/4).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

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


class _Selected(CheckBase):
    """Note checks: the selection is ``tracks``, ``from``/``to`` (or ``section``) and ``pitches``."""

    tracks: Tracks = None
    from_beats: float | None = Field(default=None, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", ge=0)
    section: str | None = None
    pitches: list[int] | None = None


class MeasureCheck(CheckBase):
    kind: Literal["measure"]
    metric: str
    tracks: Tracks = None
    from_beats: float | None = Field(default=None, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", ge=0)
    section: str | None = None
    minus: Scope | None = None
    relative: bool = False


class KeyCheck(CheckBase):
    kind: Literal["key"]
    expect: str = Field(pattern=r"^[A-G][#b]? (major|minor)$")
    tracks: Tracks = None
    from_beats: float | None = Field(default=None, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", ge=0)
    section: str | None = None


class CountCheck(_Selected):
    kind: Literal["count"]


class InKeyCheck(_Selected):
    kind: Literal["inKey"]


class SpanCheck(_Selected):
    kind: Literal["span"]


class WithinCheck(_Selected):
    kind: Literal["within"]
    lo: int = Field(ge=0, le=127)
    hi: int = Field(ge=0, le=127)


class ClashesCheck(_Selected):
    kind: Literal["clashes"]
    against: list[str]


class DoublingCheck(_Selected):
    kind: Literal["doubling"]
    against: list[str]


class UnchangedCheck(_Selected):
    kind: Literal["unchanged"]


class TransposedCheck(_Selected):
    kind: Literal["transposed"]
    semitones: int


class RootsCheck(_Selected):
    kind: Literal["roots"]
    chords: list[str] = Field(min_length=1)
    bars: tuple[int, int]


class PatternCheck(_Selected):
    kind: Literal["pattern"]
    at: list[float] = Field(min_length=1, description="positions in the bar, beats")
    bars: tuple[int, int]


class DiffersCheck(_Selected):
    kind: Literal["differs"]
    a: int = Field(ge=0, description="bar index")
    b: int = Field(ge=0, description="bar index")


class ChordsUnderCheck(_Selected):
    kind: Literal["chordsUnder"]
    melody: list[str]
    bars: tuple[int, int]
    voices: int = Field(default=3, ge=1)
    hold: float = Field(default=2.0, ge=0)


class JitterCheck(_Selected):
    kind: Literal["jitter"]
    grid: float = Field(default=0.25, gt=0)


class SwingCheck(_Selected):
    kind: Literal["swing"]
    grid: float = Field(default=0.25, gt=0)


class DefinedCheck(CheckBase):
    kind: Literal["defined"]
    track: str
    deviceKind: Literal["instrument", "effect"]


def _ordered(check: Any, *names: str) -> Any:
    for name in names:
        lo, hi = getattr(check, name)
        if lo > hi:
            raise ValueError(f"{name} [{lo}, {hi}] has lo > hi")
    return check


class EchoCheck(CheckBase):
    kind: Literal["echoTime", "echoLevel", "dryKept"]
    track: str
    tempos: list[float] = Field(default_factory=lambda: [100.0], min_length=1)
    beats: float | None = Field(default=None, gt=0, description="echoTime: the wanted delay in beats")
    draws: int = Field(default=0, ge=0, le=8, description="tempos drawn from tempoRange, added to tempos")
    tempoRange: tuple[float, float] = Field(default=(70.0, 170.0), description="bpm, for draws")

    @model_validator(mode="after")
    def _ranges(self) -> "EchoCheck":
        return _ordered(self, "tempoRange")


class ProbeNote(_Model):
    p: int = Field(ge=0, le=127)
    d: float = Field(gt=0, description="beats at 120 bpm")


class DecayCheck(CheckBase):
    """``notePitch``/``noteLength`` read the same probe notes as ``decayTime``/``decayPeak``."""

    kind: Literal["decayTime", "decayPeak", "notePitch", "noteLength"]
    track: str
    notes: list[ProbeNote] = Field(min_length=1)
    threshold: float = -60.0
    which: Literal["loudest", "quietest"] = "loudest"
    spread: int = Field(default=0, ge=0, le=12, description="each pitch moved by a drawn -spread..spread")
    velocities: tuple[float, float] = Field(default=(0.8, 0.8), description="velocity drawn in [lo, hi]")
    stretch: tuple[float, float] = Field(default=(1.0, 1.0), description="each d times a drawn factor")

    @model_validator(mode="after")
    def _ranges(self) -> "DecayCheck":
        return _ordered(self, "velocities", "stretch")


class ToneCheck(CheckBase):
    kind: Literal["toneGain"]
    track: str
    pitch: int = Field(ge=0, le=127)
    spread: int = Field(default=0, ge=0, le=12, description="the pitch moved by a drawn -spread..spread")
    velocities: tuple[float, float] = Field(default=(1.0, 1.0), description="velocity drawn in [lo, hi]")

    @model_validator(mode="after")
    def _ranges(self) -> "ToneCheck":
        return _ordered(self, "velocities")


class TrackCheck(CheckBase):
    """Real-track checks (bench/device_checks.py): the device on the part it is written for."""

    kind: Literal["trackBand", "trackEchoTime", "trackEchoLevel", "trackDryKept", "trackDecay", "trackPitch",
                  "trackLength"]
    track: str
    band: tuple[float, float] | None = Field(default=None, description="trackBand: [lo, hi) Hz")
    beats: float | None = Field(default=None, gt=0, description="trackEcho*: the wanted delay in beats")
    threshold: float = -60.0

    @model_validator(mode="after")
    def _fields(self) -> "TrackCheck":
        if self.kind == "trackBand" and (self.band is None or not 0 <= self.band[0] < self.band[1]):
            raise ValueError(f"trackBand needs band [lo, hi] Hz with 0 <= lo < hi, got {self.band}")
        if self.kind in ("trackEchoTime", "trackEchoLevel") and self.beats is None:
            raise ValueError(f"{self.kind} needs beats, the wanted delay")
        return self


Check = Annotated[
    Union[MeasureCheck, KeyCheck, CountCheck, InKeyCheck, SpanCheck, WithinCheck, ClashesCheck,
          DoublingCheck, UnchangedCheck, TransposedCheck, RootsCheck, PatternCheck, DiffersCheck,
          ChordsUnderCheck, JitterCheck, SwingCheck, DefinedCheck, EchoCheck, DecayCheck, ToneCheck,
          TrackCheck],
    Field(discriminator="kind"),
]

CHECK_KINDS = ("measure", "key", "count", "inKey", "span", "within", "clashes", "doubling", "unchanged",
               "transposed", "roots", "pattern", "differs", "chordsUnder", "jitter", "swing", "defined",
               "echoTime", "echoLevel", "dryKept", "decayTime", "decayPeak", "toneGain", "notePitch",
               "noteLength", "trackBand", "trackEchoTime", "trackEchoLevel", "trackDryKept", "trackDecay", "trackPitch",
               "trackLength")


class Task(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    family: Literal["mix", "writing", "device", "editing"]
    title: str = Field(min_length=1)
    instruction: str = Field(min_length=40)
    song: str = Field(description="a song name in songs/ (without .json)")
    setup: list[dict[str, Any]] = Field(default_factory=list, description="ops the house applies first")
    checks: list[Check] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_checks(self) -> "Task":
        seen = set()
        for c in self.checks:
            if c.id in seen:
                raise ValueError(f"check id {c.id!r} is used twice")
            if c.id == "clean":
                raise ValueError("check id 'clean' is the house gate's")
            seen.add(c.id)
        if not any(not c.gate for c in self.checks):
            raise ValueError("a task needs at least one weighted goal")
        return self
