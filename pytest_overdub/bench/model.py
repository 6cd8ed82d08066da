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
    least: bool = Field(default=False, description="each of the tracks alone: the lowest value")

    @model_validator(mode="after")
    def _least(self) -> "MeasureCheck":
        if self.least and (not isinstance(self.tracks, list) or self.minus is not None):
            raise ValueError("least reads each of a list of tracks alone: give tracks, and no minus")
        return self

    def value(self, ctx: "Context") -> float:
        from .checks import measure_value

        return measure_value(ctx, self)


class CrestLossCheck(CheckBase):
    """Minus the most crest factor any loud 400 ms block of the starting song's mix lost in the answer's, dB
    (:func:`~pytest_overdub.measure.compare.block_crest_loss_db`, both in the audio band): how hard the master
    hit the music where it hit it hardest. A whole-file peak is one sample, which a song-defined insert can
    plant; a block's peak is 16 the music vouches for, and a planted one gives back its own block only."""

    kind: Literal["crestLoss"]

    def value(self, ctx: "Context") -> float:
        from ..measure.compare import audio_band, block_crest_loss_db

        def mix(song):
            heard = ctx.hear(song, self)
            if heard.silent:
                return None, ctx.sr
            x, sr = ctx.audio(heard)
            return audio_band(x, sr=sr), sr

        (after, sr), (before, _) = mix(ctx.song), mix(ctx.start)
        if after is None or before is None:
            return float("-inf")
        return -block_crest_loss_db(after, before, sr=sr)


class StemLikenessCheck(CheckBase):
    """How much the scope's stems (post-fader, before the master) keep their own envelope: the correlation of
    their 10 ms level envelopes on the agent's song with the starting song's, over the span
    (:func:`~pytest_overdub.measure.compare.envelope_correlation`, ±100 ms of lag). A level, an EQ, a compressor
    or a touch of reverb keep a part's shape (0.89-1.0); a part drowned in a fully wet reverb is a wash of it
    (0.05). A scope that hears nothing on either song reads 0."""

    kind: Literal["stemLikeness"]
    tracks: Tracks = None
    from_beats: float | None = Field(default=None, alias="from", ge=0)
    to_beats: float | None = Field(default=None, alias="to", ge=0)
    section: str | None = None

    def value(self, ctx: "Context") -> float:
        from ..measure.compare import envelope_correlation

        stems = []
        for song in (ctx.song, ctx.start):
            heard = ctx.hear(song, self)
            if heard.silent:
                return 0.0
            x, sr = ctx.audio(heard, stem=True)
            stems.append(x)
        return envelope_correlation(stems[0], stems[1], sr=ctx.sr)


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
    new_hits: int | None = Field(default=None, ge=1, alias="newHits",
                                 description="at least this many hits of bar a that bar b lacks (30 ms slack)")

    def value(self, ctx: "Context") -> float:
        return readings.differs(self.notes(ctx), bar_a=self.a, bar_b=self.b, beats_per_bar=ctx.beats_per_bar,
                                new_hits=self.new_hits, tol_beats=ctx.on_beat_tol_beats)


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
        return readings.distinct(self.notes(ctx), tol_beats=ctx.on_beat_tol_beats)


class TurnsCheck(_Selected):
    kind: Literal["turns"]

    def value(self, ctx: "Context") -> float:
        return readings.turns(self.notes(ctx), tol_beats=ctx.on_beat_tol_beats)


class CopiedCheck(_Selected):
    """The largest copy share of any selected track, or of the selected tracks together, against any
    ``against`` track (read over the whole song), transpositions counted in semitones and in steps of the
    task's key. Together: a copy dealt out note by note over several new tracks is one copy to the ear."""

    kind: Literal["copied"]
    against: list[str] = Field(min_length=1)

    def value(self, ctx: "Context") -> float:
        from ..notes.theory import scale_pcs

        root, scale = ctx.key
        pcs = scale_pcs(root, scale) if root is not None else None
        selected = self.notes(ctx)
        ours, theirs = _by_track(selected), _by_track(self.part(ctx, self.against))
        if len(ours) > 1:
            ours.append(selected)
        return max((readings.copied(a, b, tol_beats=ctx.on_beat_tol_beats, scale=pcs)
                    for a in ours for b in theirs), default=0.0)


class VoicedCheck(_Selected):
    """The share of the selected notes that their track's instrument sounds as written
    (:func:`~pytest_overdub.notes.selection.sounds_as_written`): ``voice="pitched"``, on a pitched house
    instrument; ``"drums"``, a note of ``core.drums``'s map on the kit. The other note checks read pitch
    numbers; this one says whether anyone hears them as pitches (or as drums). 0 for an empty selection."""

    kind: Literal["voiced"]
    voice: Literal["pitched", "drums"]

    def value(self, ctx: "Context") -> float:
        from ..notes.selection import sounds_as_written

        notes = self.notes(ctx)
        if not notes:
            return 0.0
        device = {t.id: (t.instrument.device if t.instrument is not None else None) for t in ctx.song.tracks}
        return sum(sounds_as_written(device.get(n.track_id), n.p, voice=self.voice) for n in notes) / len(notes)


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


def _ordered(check: Any, *names: str) -> Any:
    for name in names:
        lo, hi = getattr(check, name)
        if lo > hi:
            raise ValueError(f"{name} [{lo}, {hi}] has lo > hi")
    return check


class _Echo(_Probed):
    """A click through the track's inserts at each tempo: ``tempos`` plus ``draws`` tempos drawn from
    ``tempoRange``; when it draws, the click's pitch and level are drawn too (bench/device_checks.py)."""

    tempos: list[float] = Field(default_factory=lambda: [100.0], min_length=1)
    draws: int = Field(default=0, ge=0, le=8, description="tempos drawn from tempoRange, added to tempos")
    tempoRange: tuple[float, float] = Field(default=(70.0, 170.0), description="bpm, for draws")

    @model_validator(mode="after")
    def _ranges(self) -> "_Echo":
        return _ordered(self, "tempoRange")

    def family(self, ctx: "Context") -> tuple[Any, list[float], dict]:
        """(track, tempos, click) of this check's seeded probe family."""
        from . import device_checks as dc

        track = self.probed(ctx)
        rng = dc.probe_rng(ctx.song, track, salt=self.id)
        tempos = list(self.tempos) + dc.draw_tempos(rng, lo=self.tempoRange[0], hi=self.tempoRange[1],
                                                    n=self.draws)
        # the click: drawn pitch (about 660 Hz to 1.5 kHz) and level, only when the check draws at all
        click = {"pitch": dc.draw_pitch(rng, 60, spread=7), "velocity": dc.draw_in(rng, 0.5, 1.0)} \
            if self.draws else {}
        return track, tempos, click

    def echoes(self, ctx: "Context") -> list[tuple[float, float, float, float]]:
        """(tempo, dry peak, first-repeat peak, delay ms) of a click through the inserts at each tempo."""
        from .probes import echo_at

        track, tempos, click = self.family(ctx)
        return [(tempo, *echo_at(ctx, track, tempo, inserts=True, **click)) for tempo in tempos]


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

        track, tempos, click = self.family(ctx)
        with_fx = echo_at(ctx, track, tempos[0], inserts=True, **click)[0]
        without = echo_at(ctx, track, tempos[0], inserts=False, **click)[0]
        return _db(with_fx) - _db(without)


def _db(x: float) -> float:
    return float(gain_to_db(x))


class ProbeNote(_Model):
    p: int = Field(ge=0, le=127)
    d: float = Field(gt=0, description="beats at 120 bpm")


class _Decay(_Probed):
    """Probe notes on the track's instrument alone, 4 s apart: each at every pitch of -spread..spread
    around its ``p``, at velocities in ``velocities`` and lengths times factors in ``stretch`` drawn one in
    each stratum of those ranges (bench/probes.py ``decay_notes``); the value reads the worst note."""

    notes: list[ProbeNote] = Field(min_length=1)
    spread: int = Field(default=0, ge=0, le=12, description="each note played at every pitch -spread..spread")
    velocities: tuple[float, float] = Field(default=(0.8, 0.8), description="velocity drawn in [lo, hi]")
    stretch: tuple[float, float] = Field(default=(1.0, 1.0), description="each d times a drawn factor")

    @model_validator(mode="after")
    def _ranges(self) -> "_Decay":
        return _ordered(self, "velocities", "stretch")

    def drawn(self, ctx: "Context") -> tuple[Any, list[Any]]:
        """(track, the probe notes as drawn for this check)."""
        from . import device_checks as dc
        from .probes import decay_notes

        track = self.probed(ctx)
        rng = dc.probe_rng(ctx.song, track, salt=self.id)
        return track, decay_notes(self.notes, rng=rng, spread=self.spread, velocities=self.velocities,
                                  stretch=self.stretch)

    def figures(self, ctx: "Context", threshold_db: float) -> list[tuple[float, float]]:
        from .probes import decay_at

        track, notes = self.drawn(ctx)
        return decay_at(ctx, track, notes, threshold_db=threshold_db)


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


class NotePitchCheck(_Decay):
    """The worst note's distance (cents) from a prominent partial at its pitch, ∞ for a note whose energy is
    less than a quarter in clear partials (bench/device_checks.py, ``note_pitch_cents``)."""

    kind: Literal["notePitch"]

    def value(self, ctx: "Context") -> float:
        from . import device_checks as dc
        from .probes import decay_render

        track, notes = self.drawn(ctx)
        x = decay_render(ctx, track, notes)
        return max(dc.note_pitch_cents(x[:, int(i * 4.0 * ctx.sr): int((i * 4.0 + dc.TONAL_WINDOW_S) * ctx.sr)],
                                       sr=ctx.sr, f0_hz=440.0 * 2 ** ((n.p - 69) / 12)) for i, n in enumerate(notes))


class NoteLengthCheck(_Decay):
    """The shortest note's sounding time (s) until it falls 30 dB under its peak."""

    kind: Literal["noteLength"]

    def value(self, ctx: "Context") -> float:
        from . import device_checks as dc
        from .probes import decay_render

        track, notes = self.drawn(ctx)
        x = decay_render(ctx, track, notes)
        return min(dc.sounding_s(x[:, int(i * 4.0 * ctx.sr): int((i + 1) * 4.0 * ctx.sr)], sr=ctx.sr)
                   for i in range(len(notes)))


class ToneGainCheck(_Probed):
    kind: Literal["toneGain"]
    pitch: int = Field(ge=0, le=127)
    spread: int = Field(default=0, ge=0, le=12,
                        description="every pitch in pitch-spread..pitch+spread is measured; the worst counts")
    velocities: tuple[float, float] = Field(default=(1.0, 1.0), description="velocity drawn in [lo, hi]")

    @model_validator(mode="after")
    def _ranges(self) -> "ToneGainCheck":
        if self.spread and self.target == (None, None):
            raise ValueError("toneGain with a spread needs a target with a bound (the worst pitch is read "
                             "against it)")
        return _ordered(self, "velocities")

    def value(self, ctx: "Context") -> float:
        from . import device_checks as dc
        from .probes import tone_gain_db

        track = self.probed(ctx)
        velocity = dc.draw_in(dc.probe_rng(ctx.song, track, salt=self.id), *self.velocities)
        return dc.worst([tone_gain_db(ctx, track, p, velocity=velocity)
                         for p in dc.pitch_span(self.pitch, spread=self.spread)], self.target)


class TrackBandCheck(_Probed):
    """Real-track checks (bench/device_checks.py): the device on the part it is written for."""

    kind: Literal["trackBand"]
    band: tuple[float, float] = Field(description="[lo, hi) Hz")

    @model_validator(mode="after")
    def _band(self) -> "TrackBandCheck":
        if not 0 <= self.band[0] < self.band[1]:
            raise ValueError(f"trackBand needs band [lo, hi] Hz with 0 <= lo < hi, got {list(self.band)}")
        return self

    def value(self, ctx: "Context") -> float:
        from .device_checks import track_band_db

        return track_band_db(ctx, self.probed(ctx), band=self.band)


class TrackEchoTimeCheck(_Probed):
    kind: Literal["trackEchoTime"]
    beats: float = Field(gt=0, description="the wanted delay in beats")

    def value(self, ctx: "Context") -> float:
        from .device_checks import track_echo

        return track_echo(ctx, self.probed(ctx), self.track, beats=self.beats)[0]


class TrackEchoLevelCheck(_Probed):
    kind: Literal["trackEchoLevel"]
    beats: float = Field(gt=0, description="the wanted delay in beats")

    def value(self, ctx: "Context") -> float:
        from .device_checks import track_echo

        return min(track_echo(ctx, self.probed(ctx), self.track, beats=self.beats)[1], default=FLOOR_DB)


class TrackDryKeptCheck(_Probed):
    kind: Literal["trackDryKept"]

    def value(self, ctx: "Context") -> float:
        from .device_checks import track_dry_kept_db

        return track_dry_kept_db(ctx, self.probed(ctx))


class TrackDecayCheck(_Probed):
    kind: Literal["trackDecay"]
    threshold: float = -60.0

    def value(self, ctx: "Context") -> float:
        from .device_checks import track_decay_s

        return track_decay_s(ctx, self.probed(ctx), self.track, threshold_db=self.threshold)


class TrackPitchCheck(_Probed):
    kind: Literal["trackPitch"]

    def value(self, ctx: "Context") -> float:
        from .device_checks import track_notes_value

        return track_notes_value(ctx, self.probed(ctx), self.track, kind="trackPitch")


class TrackLengthCheck(_Probed):
    kind: Literal["trackLength"]

    def value(self, ctx: "Context") -> float:
        from .device_checks import track_notes_value

        return track_notes_value(ctx, self.probed(ctx), self.track, kind="trackLength")


# --- audio files (audio tasks, docs/audio-tasks.md) ------------------------------------------------
#
# A task with ``inputs`` is an audio task: the bench renders each input to a 24-bit 48 kHz stereo WAV
# (:mod:`.audio.inputs`) and the answer is a folder holding the files of ``answer`` (:mod:`.audio.files`).
# An audio check names the files it reads: an answer file by its name (``master.wav``), an input as
# ``input:<name>``; its value reads them from an :class:`~pytest_overdub.bench.audio.score.AudioContext`.

FileName = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)?\.(wav|flac)$")]


class Insert(_Model):
    """A house effect the bench runs the input through (``core.eq``, ``core.width``, ...), params resolved
    like a song's insert (defaults overlaid, clamped)."""

    device: str
    params: dict[str, float] = Field(default_factory=dict)


class AudioInput(_Model):
    """One WAV the agent is handed. ``tracks`` absent: the song's mix through its master; given: those
    tracks' stems (post-fader) summed, before the master. Then ``chain``, ``gain_db``, ``pad_s`` of silence."""

    name: FileName
    song: str = Field(description="a song name in songs/ (without .json)")
    tracks: list[str] | None = None
    chain: list[Insert] = Field(default_factory=list)
    gain_db: float = Field(default=0.0, ge=-40, le=20)
    pad_s: float = Field(default=0.0, ge=0, le=10)


class AnswerFile(_Model):
    """One file of the answer: made ``from`` one input (same length, rate, channels), or several laid end to
    end with ``gap_s`` of silence between. ``bits``: the PCM bit depth it must have (none: any)."""

    name: FileName
    what: str = Field(min_length=1, description="what the file is, in a few words (errors name it)")
    from_: list[str] = Field(alias="from", min_length=1)
    gap_s: float = Field(default=0.0, ge=0, le=30)
    bits: Literal[16, 24] | None = None


# --- check kinds ---------------------------------------------------------------------------------

class _Audio(CheckBase):
    file: str = Field(description="an answer file, or input:<name>")


class _Against(_Audio):
    against: str = Field(description="an answer file, or input:<name>")


class LoudnessCheck(_Audio):
    kind: Literal["loudness"]

    def value(self, ctx: Any) -> float:
        return ctx.lufs(self.file)


class TruePeakCheck(_Audio):
    kind: Literal["truePeak"]

    def value(self, ctx: Any) -> float:
        from ..measure import true_peak_db

        return true_peak_db(ctx.get(self.file), sr=ctx.sr)


class PlrCheck(_Audio):
    """Peak to loudness ratio: true peak (dBTP) minus integrated loudness (LUFS)."""

    kind: Literal["plr"]

    def value(self, ctx: Any) -> float:
        from ..measure import true_peak_db

        return true_peak_db(ctx.get(self.file), sr=ctx.sr) - ctx.lufs(self.file)


class PlrBlocksCheck(_Audio):
    """Peak to loudness ratio through the song: the level the file's peaks reach in its median loud 400 ms
    block, clicks and short bursts held to the music around them, the level 16 of its samples reach
    (:func:`~pytest_overdub.measure.compare.block_peak_db`), minus its integrated loudness (LUFS). No few
    planted peaks move it, where one sample sets a whole-file true peak."""

    kind: Literal["plrBlocks"]

    def value(self, ctx: Any) -> float:
        from ..measure.compare import block_peak_db

        return block_peak_db(ctx.heard(self.file), sr=ctx.sr) - ctx.lufs(self.file)


class LoudnessChangeCheck(_Against):
    kind: Literal["loudnessChange"]

    def value(self, ctx: Any) -> float:
        return ctx.lufs(self.file) - ctx.lufs(self.against)


class ClippedAddedCheck(_Audio):
    """Clipped samples (flat tops at full scale) in ``file`` minus those in ``against`` (none: 0)."""

    kind: Literal["clippedAdded"]
    against: str | None = None

    def value(self, ctx: Any) -> float:
        from ..measure.compare import clipped_samples

        from ..measure.kept import kept

        x = ctx.get(self.against) if self.against else None
        before = kept(x, "clipped", lambda: clipped_samples(x)) if self.against else 0
        return float(clipped_samples(ctx.get(self.file)) - before)


class TonalBalanceCheck(_Against):
    """The largest octave band difference (each band's share of the total, dB) against ``against``."""

    kind: Literal["tonalBalance"]
    centres_hz: list[float] = Field(default=[63, 125, 250, 500, 1000, 2000, 4000, 8000], min_length=1,
                                    alias="centres")

    def value(self, ctx: Any) -> float:
        from ..measure.compare import octave_levels_db

        from ..measure.kept import kept

        c = tuple(self.centres_hz)
        a, b = (kept(x, f"octave-levels {ctx.sr} {c}", lambda: octave_levels_db(x, sr=ctx.sr, centres_hz=c))
                for x in (ctx.get(self.file), ctx.get(self.against)))
        return float(abs(a - b).max())


class BandChangeCheck(_Against):
    """Absolute level (dBFS) of ``band`` in ``file`` minus the same in ``against``. With ``spans``, both are
    read in that many equal spans of time and the value is the largest span's change (the span cut least, or
    raised most): a change made in part of the song only does not average into a whole-song figure. With
    ``channels``, each channel is read on its own and the largest channel's change counts likewise: a cut made
    in one channel only does not average into the pair's figure. ``of: "mid"`` reads the files' mids
    (``(L + R) / 2``): a mid/side master that widens the top by cutting the mid shows there. ``per: "block"`` reads the change frame by
    frame (:func:`~pytest_overdub.measure.compare.band_change_blocks_db`: 100 ms frames where the input's band
    plays, the change nine in ten reach): a cut made in every other bar, second or tenth of a second reads
    the uncut frames."""

    kind: Literal["bandChange"]
    band: tuple[float, float]
    spans: int | None = Field(default=None, ge=2, le=16,
                              description="read in this many equal spans; the largest span's change")
    channels: bool = Field(default=False, description="read each channel on its own; the largest change")
    per: Literal["file", "block"] = Field(
        default="file", description="block: the change nine in ten 100 ms frames where the band plays reach")
    of: Literal["channels", "mid"] = Field(default="channels", description="mid: read the files' mids")

    @model_validator(mode="after")
    def _per(self) -> "BandChangeCheck":
        if self.per == "block" and self.spans is not None:
            raise ValueError("bandChange reads either spans or per: 'block' (every frame), not both")
        if self.of == "mid" and (self.channels or self.per == "block"):
            raise ValueError("bandChange of: 'mid' reads the one mid signal: not with channels or per: 'block'")
        return self

    def value(self, ctx: Any) -> float:
        from ..measure.compare import band_change_blocks_db, band_level_db
        from ..measure.kept import kept

        lo, hi = self.band
        k = self.spans or 1
        each = self.channels
        if self.per == "block":
            a, b = ctx.get(self.file), ctx.get(self.against)
            pairs = [(a[c:c + 1], b[c:c + 1]) for c in range(a.shape[0])] if each and a.shape == b.shape else [(a, b)]
            return max(band_change_blocks_db(x, y, sr=ctx.sr, lo_hz=lo, hi_hz=hi) for x, y in pairs)

        def levels(x) -> list[float]:  # an input's: kept for the next answer
            def read() -> list[float]:
                n = x.shape[-1]
                cuts = [n * i // k for i in range(k + 1)]
                parts = [x[c:c + 1] for c in range(x.shape[0])] if each else [x]
                if self.of == "mid":
                    parts = [_mid(x)[None, :]]
                return [band_level_db(y[..., a:b], sr=ctx.sr, lo_hz=lo, hi_hz=hi)
                        for y in parts for a, b in zip(cuts, cuts[1:])]
            return kept(x, f"band-levels {ctx.sr} {lo!r} {hi!r} {k} {each} {self.of}", read)

        return max(a - b for a, b in zip(levels(ctx.get(self.file)), levels(ctx.get(self.against))))


class SideBandCheck(_Audio):
    """Side-to-mid ratio (dB) in ``band`` (the meter ``side.<lo>-<hi>``); with ``against``, minus the same."""

    kind: Literal["sideBand"]
    band: tuple[float, float]
    against: str | None = None

    def value(self, ctx: Any) -> float:
        from ..measure import measure_band_side
        from ..measure.kept import kept

        def side(name: str) -> float:  # an input's: kept for the next answer
            x, (lo, hi) = ctx.heard(name), self.band
            return kept(x, f"band-side {ctx.sr} {lo!r} {hi!r}", lambda: measure_band_side(x, sr=ctx.sr, lo_hz=lo,
                                                                                          hi_hz=hi))

        return side(self.file) - (side(self.against) if self.against else 0.0)


class TailRmsCheck(_Audio):
    """RMS level (dBFS) of the file's last ``tail_s`` seconds."""

    kind: Literal["tailRms"]
    tail_s: float = Field(default=0.5, gt=0, alias="tail")

    def value(self, ctx: Any) -> float:
        from ..measure.compare import rms_dbfs

        x = ctx.get(self.file)
        return rms_dbfs(x[:, -int(round(self.tail_s * ctx.sr)):])


class DitherCheck(_Against):
    """The requantisation error ``file - against``. ``measure="floor"``: how quiet it is anywhere, the lowest,
    over channels and 100 ms frames, of its standard deviation (dBFS;
    :func:`~pytest_overdub.measure.compare.dither_floor_db`). ``"rounding"``: how much its mean follows where
    each sample falls between two 16-bit steps, in steps (:func:`~pytest_overdub.measure.compare.
    rounding_dependence_lsb`: about 0.29 rounded, truncated or rounded and then given noise; about 0 dithered)."""

    kind: Literal["dither"]
    measure: Literal["floor", "rounding"] = "floor"

    def value(self, ctx: Any) -> float:
        from ..measure.compare import dither_floor_db, rounding_dependence_lsb

        if self.measure == "rounding":
            return rounding_dependence_lsb(ctx.get(self.file), ctx.get(self.against))
        return dither_floor_db(ctx.get(self.file), ctx.get(self.against), sr=ctx.sr)


class ResidualCheck(_Against):
    """``file`` (``files`` summed, when given: names or a ``dir/*.wav`` pattern) minus ``against``, in dB
    against ``against``."""

    kind: Literal["residual"]
    file: str | None = None
    files: list[str] | None = None

    @model_validator(mode="after")
    def _one(self) -> "ResidualCheck":
        if (self.file is None) == (self.files is None):
            raise ValueError("give file or files, not both")
        return self

    def value(self, ctx: Any) -> float:
        from ..measure.compare import residual_db

        names = [self.file] if self.file else ctx.expand(self.files)
        return residual_db(sum(ctx.get(n) for n in names), ctx.get(self.against))


class BusStemCheck(_Audio):
    """A stem as it sounds through a bus: ``file`` minus ``stem`` times the bus's per-sample gain (``bus``
    over the sum of ``parts``, :func:`~pytest_overdub.measure.compare.bus_gain`), dB against the latter."""

    kind: Literal["busStem"]
    stem: str
    bus: str
    parts: list[str] = Field(min_length=1)

    def value(self, ctx: Any) -> float:
        from ..measure.compare import bus_gain, residual_db

        g = ctx.figure(("bus_gain", tuple(self.parts), self.bus),  # each stem's check reads the same bus
                       lambda: bus_gain(sum(ctx.get(p) for p in self.parts), ctx.get(self.bus)))
        return residual_db(ctx.get(self.file), ctx.get(self.stem) * g[None, :])


class LikenessCheck(_Against):
    """How alike two files are: ``waveform`` (sample correlation), ``envelope`` (level envelopes'
    correlation: the same music whatever its EQ) or ``polarity`` (the sample correlation at ``file``'s lag
    within ±20 ms where it is largest in size, its sign kept: about +1 for a gain or a duck, -1 inverted);
    ``per: "block"`` reads ``polarity`` in each 50 ms block where ``against`` plays and keeps the lowest
    (:func:`~pytest_overdub.measure.compare.polarity_blocks_low`): inverted around each kick reads -1)."""

    kind: Literal["likeness"]
    how: Literal["waveform", "envelope", "polarity"] = "waveform"
    per: Literal["file", "block"] = "file"

    @model_validator(mode="after")
    def _blocks_are_polarity(self) -> "LikenessCheck":
        if self.per == "block" and self.how != "polarity":
            raise ValueError(f"per: 'block' reads polarity only (how: 'polarity'), not how: {self.how!r}")
        return self

    def value(self, ctx: Any) -> float:
        from ..measure.compare import correlation, envelope_correlation, polarity_blocks_low, polarity_correlation

        a, b = ctx.get(self.file), ctx.get(self.against)
        if self.how == "polarity":
            read = polarity_blocks_low if self.per == "block" else polarity_correlation
            return read(a, b, sr=ctx.sr)
        return correlation(a, b) if self.how == "waveform" else envelope_correlation(a, b, sr=ctx.sr)


class UnexplainedCheck(_Against):
    """The share of ``file`` that no filter of ``against`` explains (dB,
    :func:`~pytest_overdub.measure.compare.unexplained_db`): an EQ of the input reads -27 dB or lower; other
    material blended in shows. ``of: "side"`` reads the two files' sides (``(L - R) / 2``) instead of
    their channels, and ``band`` [lo, hi) Hz the share of ``file``'s power in that band: a side raised by
    a shelf is the input's side filtered; one raised by noise or by other material is not."""

    kind: Literal["unexplained"]
    of: Literal["channels", "side"] = "channels"
    band: tuple[float, float] | None = None

    @model_validator(mode="after")
    def _band(self) -> "UnexplainedCheck":
        if self.band is not None and not 0 <= self.band[0] < self.band[1]:
            raise ValueError(f"unexplained needs band [lo, hi] Hz with 0 <= lo < hi, got {list(self.band)}")
        return self

    def value(self, ctx: Any) -> float:
        from ..measure.compare import unexplained_db

        a, b = ctx.get(self.file), ctx.get(self.against)
        if self.of == "side":
            a, b = _side(a), _side(b)
        return unexplained_db(a, b, sr=ctx.sr, band_hz=self.band)


def _mid(x: Any) -> Any:
    """``(L + R) / 2`` of a stereo file; a one-channel file is its own mid."""
    return (x[0] + x[1]) / 2.0 if x.shape[0] == 2 else x[0]


def _side(x: Any) -> Any:
    """``(L - R) / 2`` of a stereo file; silence for a one-channel file (it has no side)."""
    import numpy as np

    return (x[0] - x[1]) / 2.0 if x.shape[0] == 2 else np.zeros(x.shape[-1])


class ImageCheck(_Against):
    """Whether ``file`` keeps ``against``'s left and right where they were: the correlation of their
    side-to-mid cross-spectra (:func:`~pytest_overdub.measure.compare.image_correlation`), +1 in place, -1
    with the channels swapped; 1.0 for a mono input."""

    kind: Literal["image"]

    def value(self, ctx: Any) -> float:
        from ..measure.compare import image_correlation

        return image_correlation(ctx.get(self.file), ctx.get(self.against), sr=ctx.sr)


class DuckCheck(_Audio):
    """The gain ``file`` (its latency within 5 ms taken out) has over ``source`` around each hit of ``hits``
    (a clean percussive input): ``depth`` the median over hits of the lowest gain in the first 80 ms,
    ``hold`` the median gain 20-50 ms after the hit, ``recovery`` the median gain 250-350 ms after the hit,
    ``between`` the 2nd percentile of the gain from 350 ms after a hit to 20 ms before the next (dB)."""

    kind: Literal["duck"]
    source: str
    hits: str
    measure: Literal["depth", "hold", "recovery", "between"]

    def value(self, ctx: Any) -> float:
        from .audio.readings import duck, duck_aligned

        answer = ctx.figure(("duck-aligned", self.file, self.source),  # once for the answer's four readings
                            lambda: duck_aligned(ctx.heard(self.file), ctx.heard(self.source), sr=ctx.sr))
        return duck(answer, ctx.heard(self.source), ctx.heard(self.hits), sr=ctx.sr, measure=self.measure)


class HitsCheck(_Audio):
    """The median over the hits of ``source`` of ``file``'s level minus ``source``'s: ``transient`` the
    peak from 2 ms before to 15 ms after the hit, ``body`` the rms 40-150 ms after it (dB); ``incoherent``
    the share of ``file``'s body 40-150 ms after the hit that no filter of ``source``'s explains (dB).
    ``quietBody``: not a median, the body lift that four in five of the half of the hits with the quieter
    bodies in ``source`` reach (dB, :func:`~.audio.readings.quiet_body_lift`)."""

    kind: Literal["hits"]
    source: str
    measure: Literal["transient", "body", "incoherent", "quietBody"]

    def value(self, ctx: Any) -> float:
        from .audio.readings import hit_change, hits_aligned

        answer, source = ctx.heard(self.file), ctx.heard(self.source)
        either = self.measure == "incoherent"  # the levels share one alignment, incoherent has its own
        aligned = ctx.figure(("hits-aligned", self.file, self.source, either),
                             lambda: hits_aligned(answer, source, sr=ctx.sr, measure=self.measure))
        return hit_change(aligned, source, sr=ctx.sr, measure=self.measure, latency=False)


class SequenceCheck(_Audio):
    """``file`` read as ``parts`` laid end to end with ``gap_s`` between: ``spread`` the loudest part's
    integrated loudness minus the quietest's (LU), ``quietest`` the quietest part's (LUFS), ``likeness``
    the least envelope likeness of a part to its input, ``gaps`` the loudest gap's rms (dBFS), ``crest``
    the largest drop of a part's block crest factor from its input's (dB)."""

    kind: Literal["sequence"]
    parts: list[str] = Field(min_length=2)
    gap_s: float = Field(ge=0, alias="gap")
    measure: Literal["spread", "quietest", "likeness", "gaps", "crest"]

    def value(self, ctx: Any) -> float:
        from .audio.readings import sequence

        return sequence(ctx.heard(self.file), [ctx.heard(p) for p in self.parts], sr=ctx.sr, gap_s=self.gap_s,
                        measure=self.measure)


def file_refs(check: Any) -> list[str]:
    """The file names an audio check reads (patterns unexpanded)."""
    refs = []
    for name in ("file", "against", "source", "hits", "stem", "bus"):
        v = getattr(check, name, None)
        if isinstance(v, str):
            refs.append(v)
    refs += list(getattr(check, "files", None) or []) + list(getattr(check, "parts", None) or [])
    return refs


# --- the registry: every kind, once --------------------------------------------------------------

#: Every check kind's class, in the order docs/checks.md lists them. The union below, ``CHECK_KINDS`` and
#: the docs test all derive from this tuple; a kind is added here and nowhere else.
CHECK_CLASSES: tuple[type[CheckBase], ...] = (
    MeasureCheck, CrestLossCheck, StemLikenessCheck, KeyCheck,
    CountCheck, InKeyCheck, SpanCheck, WithinCheck, ClashesCheck, DoublingCheck, UnchangedCheck,
    TransposedCheck, RootsCheck, ChordTonesCheck, PatternCheck, DiffersCheck, ChordsUnderCheck, DistinctCheck,
    TurnsCheck, CopiedCheck, JitterCheck, SwingCheck, QuantizedCheck, VoicedCheck,
    DefinedCheck, EchoTimeCheck, EchoLevelCheck, DryKeptCheck, DecayTimeCheck, DecayPeakCheck, NotePitchCheck,
    NoteLengthCheck, ToneGainCheck,
    TrackBandCheck, TrackEchoTimeCheck, TrackEchoLevelCheck, TrackDryKeptCheck, TrackDecayCheck, TrackPitchCheck,
    TrackLengthCheck,
    LoudnessCheck, TruePeakCheck, PlrCheck, PlrBlocksCheck, LoudnessChangeCheck, ClippedAddedCheck, TonalBalanceCheck,
    BandChangeCheck, SideBandCheck, TailRmsCheck, DitherCheck, ResidualCheck, BusStemCheck, LikenessCheck,
    UnexplainedCheck, ImageCheck, DuckCheck,
    HitsCheck, SequenceCheck,
)

#: The kinds that read audio files (audio tasks only).
AUDIO_CHECK_CLASSES: tuple[type[CheckBase], ...] = CHECK_CLASSES[CHECK_CLASSES.index(LoudnessCheck):]


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
AUDIO_HOUSE_GATES = ("files",)

AUDIO_KINDS: frozenset[str] = frozenset(kind_of(c) for c in AUDIO_CHECK_CLASSES)


class Task(_Model):
    """A song task (the agent edits ``song``; ``scope`` says what it may change) or an audio task (``inputs``:
    WAVs the bench renders; ``answer``: the files the agent hands back; audio checks only)."""

    # ``<task>@<seed>`` is a variant's id (bench/variants.py); a task file's id has no ``@``.
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*(@[0-9]+)?$")
    family: Literal["mix", "writing", "device", "editing", "mastering", "mixdown"]
    title: str = Field(min_length=1)
    instruction: str = Field(min_length=40)
    song: str = Field(description="a song name in songs/ (without .json); an audio task's main song")
    setup: list[dict[str, Any]] = Field(default_factory=list, description="ops the house applies first")
    checks: list[Check] = Field(min_length=1)
    scope: ChangeScope | None = Field(default=None, description="what the answer may change (the house gate "
                                                                "scope); song tasks only")
    split: Literal["train", "test"] = Field(
        default="train", description="train (default): open for tuning; test: the held-out release gate that "
                                     "prompts and tool descriptions must not be tuned against")
    inputs: list[AudioInput] = Field(default_factory=list, description="audio tasks: the WAVs handed over")
    answer: list[AnswerFile] = Field(default_factory=list, description="audio tasks: the files handed back")

    @property
    def is_audio(self) -> bool:
        return bool(self.inputs)

    @property
    def house_gates(self) -> tuple[str, ...]:
        return AUDIO_HOUSE_GATES if self.is_audio else HOUSE_GATES

    @model_validator(mode="after")
    def _audio_or_song(self) -> "Task":
        audio_checks = [c.id for c in self.checks if c.kind in AUDIO_KINDS]
        if not self.is_audio:
            if self.answer or audio_checks:
                raise ValueError(f"answer and audio checks ({', '.join(audio_checks) or 'none'}) need inputs")
            if self.scope is None:
                raise ValueError("scope: missing; a song task declares what the answer may change (an audio "
                                 "task has inputs instead)")
            return self
        song_checks = [c.id for c in self.checks if c.kind not in AUDIO_KINDS]
        if song_checks or self.scope is not None or self.setup or not self.answer:
            raise ValueError("an audio task has inputs, answer and audio checks only (no scope, setup or song "
                             f"checks: {', '.join(song_checks) or 'none'})")
        names = [i.name for i in self.inputs]
        for a in self.answer:
            missing = [f for f in a.from_ if f not in names]
            if missing:
                raise ValueError(f"answer {a.name}: from {missing} is not an input ({', '.join(names)})")
        answers = [a.name for a in self.answer]
        for c in self.checks:
            for ref in file_refs(c):
                name = ref[len("input:"):] if ref.startswith("input:") else ref
                known = names if ref.startswith("input:") else answers
                if "*" not in name and name not in known:
                    raise ValueError(f"check {c.id}: {ref!r} is not one of the task's files (answer: "
                                     f"{', '.join(answers)}; inputs: input:{', input:'.join(names)})")
        return self

    @model_validator(mode="after")
    def _unique_checks(self) -> "Task":
        seen = set()
        for c in self.checks:
            if c.id in seen:
                raise ValueError(f"check id {c.id!r} is used twice")
            if c.id in HOUSE_GATES + AUDIO_HOUSE_GATES:
                raise ValueError(f"check id {c.id!r} is the house gate's")
            seen.add(c.id)
        if not any(not c.gate for c in self.checks):
            raise ValueError("a task needs at least one weighted goal")
        return self
