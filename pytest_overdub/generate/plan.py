"""The plan of a generated song: tier, tempo, meter, key and form, drawn from the seed before any note.

Conventions:

* The random stream is :class:`random.Random` seeded with the first 16 bytes of
  ``sha256(f"overdub-generate/1:{tier}:{seed}")`` read as a big-endian integer (:data:`STREAM_SALT`: the
  first version's name, kept, so a seed keeps its draws (tempo, key, progressions, devices, mix) from one
  version to the next, and only what a version changes changes). Python's Mersenne Twister, its integer
  seeding and ``random()``, ``randrange`` and ``choice`` on integer arguments are the same on every
  platform; the generator draws nothing else (no ``gauss``, nothing through libm), and every number that
  reaches the song is an integer, a multiple of 1/4 beat, or rounded to 2 decimals.
* Tiers are a ladder: tier ``T`` adds one difficulty to tier ``T - 1`` (:data:`LADDER`), so a score that
  drops from one tier to the next drops for that difficulty.
* Meter: ``(4, 4)`` has 4 beats a bar and strong beats every 2 (1 and 3); ``(3, 4)`` 3 beats, strong on
  the downbeat only; ``(6, 8)`` 3 beats (six eighths), strong every 1.5 (the two dotted quarters).
* Form: Verse then Chorus, 4 bars each (the progression once, as in the hand-made ``night-shift``); when
  8 bars last under :data:`MIN_LENGTH_S` the pair repeats (Verse, Chorus, Verse 2, Chorus 2); with a key
  change the chorus repeats a step or a half step up (Verse, Chorus, Chorus 2; or, when those 12 bars
  last under :data:`MIN_LENGTH_S`, Verse, Chorus, Verse 2, Chorus 2 with only Chorus 2 lifted). A song
  lasts 15-35 s, the length of the bench's hand-made songs (``night-shift`` 21 s): every variant of every
  template renders and is scored many times over, so length is what a train split costs to check.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from .harmony import CHORUS_PROGRESSIONS, VERSE_PROGRESSIONS, KeySig

#: The generator's version, in every song's ``meta.generated``: 2 has 4-bar sections (1 had 8).
GENERATOR = "overdub-generate/2"
#: What seeds the random stream (see the module docstring): version 1's name, in every version.
STREAM_SALT = "overdub-generate/1"
#: Difficulty added at each tier above 1, in ladder order.
LADDER = ("denser parts", "faster tempo", "syncopation", "key change", "3/4 or 6/8")
MAX_TIER = 1 + len(LADDER)
MIN_LENGTH_S = 15.0
SECTION_BARS = 4
SLOW_BPM = (60, 110)
FAST_BPM = (110, 160)


@dataclass(frozen=True)
class SectionPlan:
    id: str
    name: str
    first_bar: int
    bars: int
    key: KeySig
    progression: tuple[int, ...]
    chorus: bool
    #: Semitones above the section it copies (Chorus 2 of a key change); 0 otherwise.
    shift: int = 0


@dataclass(frozen=True)
class Plan:
    seed: int
    tier: int
    tempo_bpm: int
    meter: tuple[int, int]
    key: KeySig
    sections: tuple[SectionPlan, ...]

    @property
    def difficulties(self) -> tuple[str, ...]:
        return LADDER[:self.tier - 1]

    @property
    def dense(self) -> bool:
        return self.tier >= 2

    @property
    def syncopated(self) -> bool:
        return self.tier >= 4

    @property
    def beats_per_bar(self) -> float:
        return self.meter[0] * 4.0 / self.meter[1]

    @property
    def strong_every(self) -> float:
        """Beats between strong beats (see the module docstring)."""
        return {(4, 4): 2.0, (3, 4): 3.0, (6, 8): 1.5}[self.meter]

    @property
    def meter_name(self) -> str:
        return f"{self.meter[0]}/{self.meter[1]}"

    @property
    def bars(self) -> int:
        return sum(s.bars for s in self.sections)

    @property
    def length_beats(self) -> float:
        return self.bars * self.beats_per_bar


def stream(seed: int, tier: int) -> random.Random:
    """The seeded random stream of ``(seed, tier)`` (see the module docstring)."""
    digest = hashlib.sha256(f"{STREAM_SALT}:{tier}:{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def check_seed_tier(seed: int, tier: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed {seed!r}: expected a whole number >= 0")
    if isinstance(tier, bool) or not isinstance(tier, int) or not 1 <= tier <= MAX_TIER:
        raise ValueError(f"tier {tier!r}: expected a whole number 1..{MAX_TIER}")


def make_plan(seed: int, tier: int, rng: random.Random) -> Plan:
    """Tempo, meter, key and form for ``(seed, tier)``, drawn first from ``rng``."""
    check_seed_tier(seed, tier)
    lo, hi = FAST_BPM if tier >= 3 else SLOW_BPM
    tempo = rng.randrange(lo, hi + 1)
    meter = rng.choice(((3, 4), (6, 8))) if tier >= 6 else (4, 4)
    key = KeySig(rng.randrange(12), rng.choice(("major", "minor")))
    verse = rng.choice(VERSE_PROGRESSIONS[key.mode])
    chorus = rng.choice(CHORUS_PROGRESSIONS[key.mode])
    shift = rng.choice((1, 2)) if tier >= 5 else 0
    bpb = meter[0] * 4.0 / meter[1]
    pair_s = 2 * SECTION_BARS * bpb * 60.0 / tempo
    if shift and 1.5 * pair_s >= MIN_LENGTH_S:
        form = (("s_verse", "Verse", verse, False, 0), ("s_chorus", "Chorus", chorus, True, 0),
                ("s_chorus2", "Chorus 2", chorus, True, shift))
    elif shift:
        form = (("s_verse", "Verse", verse, False, 0), ("s_chorus", "Chorus", chorus, True, 0),
                ("s_verse2", "Verse 2", verse, False, 0), ("s_chorus2", "Chorus 2", chorus, True, shift))
    elif pair_s < MIN_LENGTH_S:
        form = (("s_verse", "Verse", verse, False, 0), ("s_chorus", "Chorus", chorus, True, 0),
                ("s_verse2", "Verse 2", verse, False, 0), ("s_chorus2", "Chorus 2", chorus, True, 0))
    else:
        form = (("s_verse", "Verse", verse, False, 0), ("s_chorus", "Chorus", chorus, True, 0))
    sections = tuple(SectionPlan(id=sid, name=name, first_bar=i * SECTION_BARS, bars=SECTION_BARS,
                                 key=key.transposed(sh), progression=prog, chorus=is_chorus, shift=sh)
                     for i, (sid, name, prog, is_chorus, sh) in enumerate(form))
    return Plan(seed=seed, tier=tier, tempo_bpm=tempo, meter=meter, key=key, sections=sections)
