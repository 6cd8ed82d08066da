"""Keys, diatonic chords and the progressions the generator picks from.

Conventions:

* Pitch classes are 0..11 with C = 0 (as in :mod:`pytest_overdub.notes.theory`, whose scales this reads).
* A key is a tonic pitch class and a mode, ``major`` or ``minor`` (natural minor: the generator never
  raises the seventh, so every note of a part is in the key's scale and ``inKey`` reads 1.0).
* Degrees are 1..7 above the tonic in the key's scale; a chord is the diatonic triad on its degree, so its
  quality (``maj``, ``min``, ``dim``) follows from the scale. The progressions below use no ``dim`` chord.
* Names: a key and its chords are spelled with flats in flat keys (F, Bb, Eb, Ab, Db, Gb major; D, G, C,
  F, Bb, Eb minor) and sharps otherwise, so ``Bb`` major has ``Gm``, never ``A#`` and ``Gm``; chord symbols
  (``"Gm"``, ``"Eb"``, ``"F#dim"``) are the ones :func:`pytest_overdub.notes.theory.parse_chord` reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from ..notes.theory import SCALE_STEPS

Mode = Literal["major", "minor"]
Quality = Literal["maj", "min", "dim"]

SHARP_NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
FLAT_NAMES = ("C", "Db", "D", "Eb", "E", "F", "Gb", "G", "Ab", "A", "Bb", "B")
#: (tonic pc, mode) of the keys written with flats.
FLAT_KEYS = frozenset({(5, "major"), (10, "major"), (3, "major"), (8, "major"), (1, "major"), (6, "major"),
                       (2, "minor"), (7, "minor"), (0, "minor"), (5, "minor"), (10, "minor"), (3, "minor")})
SUFFIX = {"maj": "", "min": "m", "dim": "dim"}
#: The triads' intervals (third, fifth) above the root -> quality.
_QUALITY: dict[tuple[int, int], Quality] = {(4, 7): "maj", (3, 7): "min", (3, 6): "dim"}

#: Progressions (scale degrees, one chord per bar) a verse opens with: each starts on the tonic and gives
#: the tonic chord at least as many bars as any other, so the song opens on its home chord and stays
#: anchored there (what a listener, and the key meter's tonic step, hear as home). Loops that dwell on the
#: dominant or the subtonic (I-V-IV-V, i-VII-VI-VII) read as the key a fifth away to the key meter too
#: often to carry a ground-truth key, and are left out. Every progression, verse or chorus, holds both
#: scale degrees that tell the key from its neighbours a fifth away (major: 4 and 7, in IV or ii and in V
#: or iii; minor: 2 and 6, in v or VII and in iv or VI): i-VI-iv-i, which has no 2, sounds as much in
#: the key a fourth up (D minor's Dm Bb Gm Dm is all G minor's notes too).
VERSE_PROGRESSIONS: dict[Mode, tuple[tuple[int, ...], ...]] = {
    "major": ((1, 5, 6, 4), (1, 6, 4, 5), (1, 4, 6, 5), (1, 3, 4, 5), (1, 4, 1, 5), (1, 6, 2, 5)),
    "minor": ((1, 6, 3, 7), (1, 4, 7, 3), (1, 4, 5, 1), (1, 6, 7, 1), (1, 3, 7, 6), (1, 5, 6, 4)),
}
#: Progressions a chorus may use: the verse's set plus a few that open away from the tonic and come home
#: to it within the four bars.
CHORUS_PROGRESSIONS: dict[Mode, tuple[tuple[int, ...], ...]] = {
    "major": VERSE_PROGRESSIONS["major"] + ((4, 5, 1, 6), (6, 4, 1, 5), (4, 1, 5, 6), (2, 5, 1, 6)),
    "minor": VERSE_PROGRESSIONS["minor"] + ((6, 7, 1, 1), (4, 6, 7, 1), (6, 3, 7, 1), (4, 7, 1, 1)),
}


@dataclass(frozen=True)
class KeySig:
    """A key: tonic pitch class and mode."""

    tonic_pc: int
    mode: Mode

    @property
    def flats(self) -> bool:
        return (self.tonic_pc, self.mode) in FLAT_KEYS

    def name_of(self, pc: int) -> str:
        """The pitch class ``pc`` spelled as this key spells it."""
        return (FLAT_NAMES if self.flats else SHARP_NAMES)[pc % 12]

    @property
    def tonic(self) -> str:
        return self.name_of(self.tonic_pc)

    @cached_property
    def scale_pcs(self) -> tuple[int, ...]:
        """The seven pitch classes of the scale, tonic first."""
        return tuple((self.tonic_pc + s) % 12 for s in SCALE_STEPS[self.mode])

    def transposed(self, semitones: int) -> "KeySig":
        return KeySig((self.tonic_pc + semitones) % 12, self.mode)

    def chord(self, degree: int) -> "ChordSpec":
        """The diatonic triad on ``degree`` (1..7)."""
        if not 1 <= degree <= 7:
            raise ValueError(f"degree {degree}: expected 1..7")
        scale = self.scale_pcs
        root, third, fifth = (scale[(degree - 1 + k) % 7] for k in (0, 2, 4))
        quality = _QUALITY[((third - root) % 12, (fifth - root) % 12)]
        return ChordSpec(root_pc=root, quality=quality, symbol=self.name_of(root) + SUFFIX[quality],
                         degree=degree)


@dataclass(frozen=True)
class ChordSpec:
    """A triad: root pitch class, quality, symbol (``"Am"``), and its degree in the key it came from."""

    root_pc: int
    quality: Quality
    symbol: str
    degree: int

    @property
    def pcs(self) -> tuple[int, int, int]:
        """Root, third, fifth as pitch classes."""
        third = 4 if self.quality == "maj" else 3
        fifth = 6 if self.quality == "dim" else 7
        return (self.root_pc, (self.root_pc + third) % 12, (self.root_pc + fifth) % 12)
