"""Audio-in task fields and check kinds (docs/audio-tasks.md).

A task with ``inputs`` is an audio task: the bench renders each input (a song's mix, or some of its
tracks' stems summed before the master, through an optional house-device chain, a gain and a silent pad)
to a 24-bit 48 kHz stereo WAV, and the answer is a directory holding the files of ``answer``. A check names
the files it reads: an answer file by its name (``master.wav``), an input as ``input:<name>``.

Every kind computes its value from :class:`~pytest_overdub.bench.audio.score.AudioContext` through
:mod:`pytest_overdub.measure.compare` and the house meters; the maths lives there, not here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..model import CheckBase

if TYPE_CHECKING:
    from .score import AudioContext

FileName = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)?\.(wav|flac)$")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Insert(_Model):
    """A house effect the bench runs the input through (``core.eq``, ``core.width``, ...), params resolved
    like a song's insert (defaults overlaid, clamped)."""

    device: str
    params: dict[str, float] = Field(default_factory=dict)


class AudioInput(_Model):
    """One WAV the agent is handed. ``tracks`` absent: the song's mix through its master; given: those
    tracks' stems (post-fader) summed, before the master. Then ``chain``, ``gain_db``, ``pad_s`` of silence."""

    name: str = FileName
    song: str = Field(description="a song name in songs/ (without .json)")
    tracks: list[str] | None = None
    chain: list[Insert] = Field(default_factory=list)
    gain_db: float = Field(default=0.0, ge=-40, le=20)
    pad_s: float = Field(default=0.0, ge=0, le=10)


class AnswerFile(_Model):
    """One file of the answer: made ``from`` one input (same length, rate, channels), or several laid end to
    end with ``gap_s`` of silence between. ``bits``: the PCM bit depth it must have (none: any)."""

    name: str = FileName
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

    def value(self, ctx: "AudioContext") -> float:
        return ctx.lufs(self.file)


class TruePeakCheck(_Audio):
    kind: Literal["truePeak"]

    def value(self, ctx: "AudioContext") -> float:
        from ...measure import true_peak_db

        return true_peak_db(ctx.get(self.file), sr=ctx.sr)


class PlrCheck(_Audio):
    """Peak to loudness ratio: true peak (dBTP) minus integrated loudness (LUFS)."""

    kind: Literal["plr"]

    def value(self, ctx: "AudioContext") -> float:
        from ...measure import true_peak_db

        return true_peak_db(ctx.get(self.file), sr=ctx.sr) - ctx.lufs(self.file)


class LoudnessChangeCheck(_Against):
    kind: Literal["loudnessChange"]

    def value(self, ctx: "AudioContext") -> float:
        return ctx.lufs(self.file) - ctx.lufs(self.against)


class ClippedAddedCheck(_Audio):
    """Clipped samples (flat tops at full scale) in ``file`` minus those in ``against`` (none: 0)."""

    kind: Literal["clippedAdded"]
    against: str | None = None

    def value(self, ctx: "AudioContext") -> float:
        from ...measure.compare import clipped_samples

        before = clipped_samples(ctx.get(self.against)) if self.against else 0
        return float(clipped_samples(ctx.get(self.file)) - before)


class TonalBalanceCheck(_Against):
    """The largest octave band difference (each band's share of the total, dB) against ``against``."""

    kind: Literal["tonalBalance"]
    centres_hz: list[float] = Field(default=[63, 125, 250, 500, 1000, 2000, 4000, 8000], min_length=1,
                                    alias="centres")

    def value(self, ctx: "AudioContext") -> float:
        from ...measure.compare import octave_levels_db

        c = tuple(self.centres_hz)
        a = octave_levels_db(ctx.get(self.file), sr=ctx.sr, centres_hz=c)
        b = octave_levels_db(ctx.get(self.against), sr=ctx.sr, centres_hz=c)
        return float(abs(a - b).max())


class BandChangeCheck(_Against):
    """Absolute level (dBFS) of ``band`` in ``file`` minus the same in ``against``."""

    kind: Literal["bandChange"]
    band: tuple[float, float]

    def value(self, ctx: "AudioContext") -> float:
        from ...measure.compare import band_level_db

        lo, hi = self.band
        return (band_level_db(ctx.get(self.file), sr=ctx.sr, lo_hz=lo, hi_hz=hi)
                - band_level_db(ctx.get(self.against), sr=ctx.sr, lo_hz=lo, hi_hz=hi))


class SideBandCheck(_Audio):
    """Side-to-mid ratio (dB) in ``band`` (the meter ``side.<lo>-<hi>``); with ``against``, minus the same."""

    kind: Literal["sideBand"]
    band: tuple[float, float]
    against: str | None = None

    def value(self, ctx: "AudioContext") -> float:
        from ...measure import measure_band_side

        def side(name: str) -> float:
            return measure_band_side(ctx.get(name), sr=ctx.sr, lo_hz=self.band[0], hi_hz=self.band[1])

        return side(self.file) - (side(self.against) if self.against else 0.0)


class TailRmsCheck(_Audio):
    """RMS level (dBFS) of the file's last ``tail_s`` seconds."""

    kind: Literal["tailRms"]
    tail_s: float = Field(default=0.5, gt=0, alias="tail")

    def value(self, ctx: "AudioContext") -> float:
        from ...measure.compare import rms_dbfs

        x = ctx.get(self.file)
        return rms_dbfs(x[:, -int(round(self.tail_s * ctx.sr)):])


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

    def value(self, ctx: "AudioContext") -> float:
        from ...measure.compare import residual_db

        names = [self.file] if self.file else ctx.expand(self.files)
        return residual_db(sum(ctx.get(n) for n in names), ctx.get(self.against))


class LikenessCheck(_Against):
    """How alike two files are: ``waveform`` (sample correlation) or ``envelope`` (level envelopes'
    correlation: the same music whatever its EQ)."""

    kind: Literal["likeness"]
    how: Literal["waveform", "envelope"] = "waveform"

    def value(self, ctx: "AudioContext") -> float:
        from ...measure.compare import correlation, envelope_correlation

        a, b = ctx.get(self.file), ctx.get(self.against)
        return correlation(a, b) if self.how == "waveform" else envelope_correlation(a, b, sr=ctx.sr)


class DuckCheck(_Audio):
    """The gain ``file`` has over ``source`` around each hit of ``hits`` (a clean percussive input):
    ``depth`` the median over hits of the lowest gain in the first 80 ms, ``recovery`` the median gain
    250-350 ms after the hit, ``between`` the median gain more than 400 ms from any hit (dB)."""

    kind: Literal["duck"]
    source: str
    hits: str
    measure: Literal["depth", "recovery", "between"]

    def value(self, ctx: "AudioContext") -> float:
        from .readings import duck

        return duck(ctx.get(self.file), ctx.get(self.source), ctx.get(self.hits), sr=ctx.sr, measure=self.measure)


class HitsCheck(_Audio):
    """The median over the hits of ``source`` of ``file``'s level minus ``source``'s: ``transient`` the
    peak from 2 ms before to 15 ms after the hit, ``body`` the rms 40-150 ms after it (dB)."""

    kind: Literal["hits"]
    source: str
    measure: Literal["transient", "body"]

    def value(self, ctx: "AudioContext") -> float:
        from .readings import hit_change

        return hit_change(ctx.get(self.file), ctx.get(self.source), sr=ctx.sr, measure=self.measure)


class SequenceCheck(_Audio):
    """``file`` read as ``parts`` laid end to end with ``gap_s`` between: ``spread`` the loudest part's
    integrated loudness minus the quietest's (LU), ``quietest`` the quietest part's (LUFS), ``likeness``
    the least envelope likeness of a part to its input, ``gaps`` the loudest gap's rms (dBFS)."""

    kind: Literal["sequence"]
    parts: list[str] = Field(min_length=2)
    gap_s: float = Field(ge=0, alias="gap")
    measure: Literal["spread", "quietest", "likeness", "gaps"]

    def value(self, ctx: "AudioContext") -> float:
        from .readings import sequence

        return sequence(ctx.get(self.file), [ctx.get(p) for p in self.parts], sr=ctx.sr, gap_s=self.gap_s,
                        measure=self.measure)


#: Every audio check kind, in the order docs/audio-tasks.md lists them.
AUDIO_CHECK_CLASSES: tuple[type[CheckBase], ...] = (
    LoudnessCheck, TruePeakCheck, PlrCheck, LoudnessChangeCheck, ClippedAddedCheck, TonalBalanceCheck,
    BandChangeCheck, SideBandCheck, TailRmsCheck, ResidualCheck, LikenessCheck, DuckCheck, HitsCheck,
    SequenceCheck,
)


def file_refs(check: Any) -> list[str]:
    """The file names an audio check reads (patterns unexpanded)."""
    refs = []
    for name in ("file", "against", "source", "hits"):
        v = getattr(check, name, None)
        if isinstance(v, str):
            refs.append(v)
    refs += list(getattr(check, "files", None) or []) + list(getattr(check, "parts", None) or [])
    return refs
