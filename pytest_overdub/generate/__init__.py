"""A seeded song generator with exact ground truth: ``generate(seed, tier)`` -> song and truth.

What it makes. An original song in ``overdub/0`` from ``(seed, tier)`` alone, the same bytes on every
machine (:mod:`.plan` says how the random stream is seeded and why nothing platform-dependent reaches the
song): Kick and Kit on ``core.drums``, Bass on ``core.bass`` striking each chord's root on every
downbeat, Keys (``core.keys``) or Pad (``core.pad``) playing voice-led triads, and a Hook (``core.pluck``
or ``core.poly``) whose notes on strong beats are chord tones and whose others are scale tones; a Verse and
a Chorus of 4 bars (repeated when 8 bars would last under 15 s), one clip per track and section, a
rough mix (:mod:`.mix`). Tier 1 is 4/4 pop at 60-110 bpm in a major or natural-minor key; each tier above
adds one difficulty to the one below (:data:`.plan.LADDER`): denser parts, faster tempos (110-160 bpm),
syncopation, a key change (the last chorus a half or whole step up), 3/4 or 6/8.

The ground truth (:class:`.truth.GroundTruth`) is what the generator wrote, not what a meter heard: key
(tonic and mode, per section too), tempo, meter and strong beats, the chord of every bar (root pitch class,
quality, symbol, degree), the sections (name, start and end beats, bars), each part's role (drums, bass,
chords, lead) and device, and every note's provenance (its bar and the rule that wrote it). The song's
``meta.generated`` holds only ``{generator, seed, tier}``: a starting song handed to an agent must not
carry the answer, and the truth is recomputed from the seed whenever it is needed (``overdub generate
--truth`` writes it to a file).

How task templates use it (:mod:`pytest_overdub.bench.variants`, :mod:`pytest_overdub.bench.templates`:
write-bassline and mix-darken-keys so far). A template is a task whose song, setup, targets and
oracle are functions of a generated song's ground truth, instantiated as a *variant* with the id
``<task>@<seed>`` (``mix-chorus-lift@17``); the seed picks the song and everything else is computed from
its truth, so a variant is as reproducible as a song:

* bass tasks read the chord roots per bar (``truth.chords[i].root_pc``, ``symbol``) for ``roots`` and
  ``chordTones`` checks, and a setup that smears or transposes the bass is undone by an oracle that writes
  the roots back;
* section tasks (chorus lift, "without touching the verse") read ``truth.sections`` for the span to change
  and the scope's ``sections``;
* writing tasks (a new part, a hook in key) read ``truth.key`` (or the section's key after a key change) for
  ``inKey`` and ``truth.strong_every_beats`` for ``chordTones``;
* mix tasks read the roles (``truth.part("lead")`` is the hook to unbury, ``truth.parts_with("drums")`` the
  kit to tighten) and the rough mix the song starts from.

Splits: train seeds 1-99 are public (listed and sampled by the bench); test seeds are 1000 and up,
generated on demand and never written into the repository, so a test result cannot be looked up.
"""

from __future__ import annotations

from .plan import GENERATOR, LADDER, MAX_TIER

__all__ = ["GENERATOR", "LADDER", "MAX_TIER", "generate"]


def generate(seed: int, tier: int = 1):
    """The :class:`~.build.Generated` song and ground truth of ``(seed, tier)`` (see :mod:`.build`)."""
    from .build import generate as _generate

    return _generate(seed, tier)
