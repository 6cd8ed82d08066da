"""The ground truth of a generated song: what the generator wrote, exactly, as frozen pydantic models.

Conventions:

* Beats are 0-based quarter notes on the song's timeline (as in songs); bar ``i`` starts at
  ``i * beats_per_bar`` and a section spans ``start_beats <= b < end_beats``.
* Pitch classes are 0..11, C = 0; names follow the key's spelling (:mod:`.harmony`).
* ``mode`` is ``major`` or ``minor`` (natural minor). A section carries its own key: they differ only
  after a key change (tier 5 and up), and the song's ``key`` field holds the key of the first section.
* Each note of the song has one :class:`NoteTruth` (its provenance): the track, the bar, and the rule that
  wrote it (``tag``): ``kick``, ``snare``, ``ghost``, ``hat``, ``open-hat``, ``crash`` for drums;
  ``root``, ``fifth``, ``octave`` for the bass; ``chord`` for chords; ``chord-tone``, ``passing``,
  ``anticipation`` (a chord tone of the next bar, struck before its downbeat) for the lead.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["drums", "bass", "chords", "lead"]
NoteTag = Literal["kick", "snare", "ghost", "hat", "open-hat", "crash", "root", "fifth", "octave", "chord",
                  "chord-tone", "passing", "anticipation"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class KeyTruth(_Model):
    tonic: str = Field(description="the tonic's name, spelled as the key spells it")
    tonic_pc: int = Field(ge=0, le=11)
    mode: Literal["major", "minor"]

    @property
    def name(self) -> str:
        """E.g. ``"A minor"``."""
        return f"{self.tonic} {self.mode}"

    @property
    def relative_pc_mode(self) -> tuple[int, str]:
        """The relative key's tonic pitch class and mode (A minor <-> C major)."""
        if self.mode == "minor":
            return (self.tonic_pc + 3) % 12, "major"
        return (self.tonic_pc + 9) % 12, "minor"


class ChordTruth(_Model):
    """The chord of one bar."""

    bar: int = Field(ge=0)
    start_beats: float = Field(ge=0)
    root: str
    root_pc: int = Field(ge=0, le=11)
    quality: Literal["maj", "min", "dim"]
    symbol: str = Field(description="a chord symbol the note readings parse: Am, F, C#dim")
    degree: int = Field(ge=1, le=7, description="the chord's degree in its section's key")


class SectionTruth(_Model):
    id: str
    name: str
    start_beats: float = Field(ge=0)
    end_beats: float = Field(gt=0)
    first_bar: int = Field(ge=0)
    bars: int = Field(ge=1)
    key: KeyTruth
    progression: tuple[int, ...] = Field(description="the scale degrees of its chords, one per bar, cycled")


class PartTruth(_Model):
    track_id: str
    name: str
    role: Role
    device: str
    notes: int = Field(ge=0, description="how many notes the track holds")


class NoteTruth(_Model):
    id: str
    track_id: str
    bar: int = Field(ge=0)
    tag: NoteTag


class GroundTruth(_Model):
    """Everything a task template may read about a generated song (see :mod:`pytest_overdub.generate`)."""

    generator: str = Field(description="the generator's version string; a new version may write other songs")
    seed: int = Field(ge=0)
    tier: int = Field(ge=1)
    difficulties: tuple[str, ...] = Field(description="what this tier adds over tier 1, in ladder order")
    song_id: str
    tempo_bpm: float = Field(gt=0)
    meter: tuple[int, int]
    beats_per_bar: float = Field(gt=0)
    strong_every_beats: float = Field(gt=0, description="beats between strong beats: 2 in 4/4, 3 in 3/4, 1.5 in 6/8")
    length_beats: float = Field(gt=0)
    key: KeyTruth = Field(description="the key of the first section (the song's key field)")
    chords: tuple[ChordTruth, ...] = Field(description="one per bar, in bar order")
    sections: tuple[SectionTruth, ...]
    parts: tuple[PartTruth, ...]
    notes: tuple[NoteTruth, ...] = Field(description="every note's provenance, in track, clip and note order")

    @property
    def length_s(self) -> float:
        return self.length_beats * 60.0 / self.tempo_bpm

    def section(self, name: str) -> SectionTruth:
        """The section named ``name`` (case-insensitive), or its id."""
        for s in self.sections:
            if s.id == name or s.name.lower() == name.lower():
                return s
        raise KeyError(f"no section {name!r}; sections: {', '.join(s.name for s in self.sections)}")

    def chords_of(self, section: SectionTruth) -> tuple[ChordTruth, ...]:
        return self.chords[section.first_bar:section.first_bar + section.bars]

    def parts_with(self, role: Role) -> tuple[PartTruth, ...]:
        return tuple(p for p in self.parts if p.role == role)

    def part(self, role: Role) -> PartTruth:
        """The one part with ``role`` (bass, chords or lead; drums has two: see :meth:`parts_with`)."""
        found = self.parts_with(role)
        if len(found) != 1:
            raise KeyError(f"{len(found)} parts have role {role!r}; expected one")
        return found[0]
