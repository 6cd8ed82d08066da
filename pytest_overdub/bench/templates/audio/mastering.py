"""The mastering templates (``master-*@<seed>``): the published tasks on generated tier-1 songs.

* ``master-streaming-single``: the published task on the variant's song. A generated rough mix peaks on
  bright transients (hats, plucks) some 20 dB over its loudness, so the limiter that brings it to -14 LUFS
  takes up to 3.6 dB from its top octaves; the oracle EQs that back onto the mix's balance and limits again
  (``streaming.oracle-rebalanced``).
* ``master-mid-side``: the published task on the variant's song.
* ``master-match-reference``: the reference is another generated song of the same seed (tier 2, so an
  unrelated song: the tier is part of the generator's seed), through a tilt EQ drawn from the variant
  (brighter or darker), so the mix starts well away from it; handing the reference back still fails the
  likeness to the mix.
* ``master-ep-sequence``: the three songs are the seed's songs at tiers 1, 2 and 3 (three unrelated songs,
  the third faster), one of them (drawn) through a loud master (:data:`LOUD_MASTER`), each turned down by
  a level drawn from the variant (about 0, 4 and 8 dB, in a drawn order), so they start several LU apart,
  their crest factors differ (peaks equal is not loudness equal) and none is over full scale.
"""

from __future__ import annotations

from ....generate.build import Generated
from ..base import Answer
from .published import carried, variant_rng

TIER = 1
#: The shelves of the reference's tilt (``master-match-reference``): 5 to 7 dB, opposite signs.
TILT_LOW_HZ, TILT_HIGH_HZ = 200, 3000
#: One EP song was mastered loud (``master-ep-sequence``): the generated rough mixes all peak some 19 dB
#: over their loudness, so peak-normalising them matched their loudness within 1 LU (seed 1000); squashed
#: 8 dB into a limiter, this one peaks about 13 dB over it and comes out several LU louder.
LOUD_MASTER = {"device": "core.limiter", "params": {"gain": 8, "ceiling": -1}}
STREAMING_ORACLE = Answer(
    "oracle", "the house limiter to -14 LUFS at a -1.5 dBTP ceiling, octave bells that put back the balance "
    "the limiter took from the mix's bright transients, and the limiter again", [],
    make="streaming.oracle-rebalanced")


def streaming_single(made: Generated, variant_id: str):
    return carried("master-streaming-single", made.truth, replace=(STREAMING_ORACLE,))


def mid_side(made: Generated, variant_id: str):
    return carried("master-mid-side", made.truth)


def match_reference(made: Generated, variant_id: str):
    seed = made.truth.seed
    fields, oracle, misses = carried("master-match-reference", made.truth,
                                     songs={"night-shift": made.song.id, "lab": f"gen-t2-{seed}"})
    rng = variant_rng(variant_id)
    sign = rng.choice((1, -1))  # brighter or darker than the mix
    tilt_db = 5 + 0.5 * rng.randrange(5)
    ref = next(i for i in fields["inputs"] if i["name"] == "reference.wav")
    ref["chain"] = [*ref.get("chain", []), {"device": "core.eq", "params": {
        "lowf": TILT_LOW_HZ, "low": -sign * tilt_db, "highf": TILT_HIGH_HZ, "high": sign * tilt_db}}]
    return fields, oracle, misses


def ep_sequence(made: Generated, variant_id: str):
    seed = made.truth.seed
    fields, oracle, misses = carried("master-ep-sequence", made.truth,
                                     songs={"night-shift": f"gen-t1-{seed}", "loose-groove": f"gen-t2-{seed}",
                                            "lab": f"gen-t3-{seed}"})
    rng = variant_rng(variant_id)
    levels = rng.sample([0.0, -4.0, -8.0], 3)
    for inp, level in zip(fields["inputs"], levels):
        inp["gain_db"] = level - 0.5 * rng.randrange(3)
    loud = fields["inputs"][rng.randrange(3)]
    loud["chain"] = [*loud.get("chain", []), LOUD_MASTER]
    return fields, oracle, misses
