"""The mastering templates (``master-*@<seed>``): the published tasks on generated tier-1 songs.

* ``master-streaming-single``: the published task on the variant's song. A generated rough mix peaks on
  bright transients (hats, plucks) some 20 dB over its loudness, so the limiter that brings it to -14 LUFS
  takes up to 3.6 dB from its top octaves; the oracle EQs that back onto the mix's balance and limits again
  (``streaming.oracle-rebalanced``).
* ``master-mid-side``: the published task on the variant's song.
* ``master-match-reference``: the reference is another generated song of the same seed (tier 2, so an
  unrelated song: the tier is part of the generator's seed), through a tilt EQ drawn from the variant
  (brighter or darker), so the mix starts well away from it; handing the reference back still fails the
  likeness to the mix. The template knows its oracle (``match.oracle``: octave bells onto the reference), so
  the draw is checked at build time: a mix brightened onto a bright reference can have its 10 ms level
  envelope follow the hats more than the kick (the oracle's likeness to the mix read 0.916 on seeds 22 and
  24, under the ``same`` gate's 0.95), and a darkened one can drift too (0.941 on seed 3). When the
  oracle's likeness on the drawn reference is under :data:`SAME_FLOOR` or its largest octave difference
  over :data:`MATCH_CEILING_DB`, the tilt turns the other way (same size) if the oracle holds there; a draw
  that holds is kept as drawn. Building a variant costs the two inputs' renders (cached like any input, so
  its scoring reuses them) and one match, two when the draw turns.
* ``master-ep-sequence``: the three songs are the seed's songs at tiers 1, 2 and 3 (three unrelated songs,
  the third faster), one of them (drawn) through a loud master (:data:`LOUD_MASTER`), each turned down by
  a level drawn from the variant (about 0, 4 and 8 dB, in a drawn order), so they start several LU apart,
  their crest factors differ (peaks equal is not loudness equal) and none is over full scale.
"""

from __future__ import annotations

from ....generate import generate
from ....generate.build import Generated
from ..base import Answer
from .published import carried, variant_rng

TIER = 1
#: The shelves of the reference's tilt (``master-match-reference``): 5 to 7 dB, opposite signs.
TILT_LOW_HZ, TILT_HIGH_HZ = 200, 3000
#: A drawn tilt is kept only if the oracle's answer to it reads at least this likeness to the mix (the
#: ``same`` gate's 0.95 with a margin) and at most this octave difference from the reference (``match``: 2).
SAME_FLOOR, MATCH_CEILING_DB = 0.96, 1.5
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
    chain = ref.get("chain", [])
    ref["chain"] = [*chain, _tilt(sign * tilt_db)]
    songs = _Songs({made.song.id: made.song, f"gen-t2-{seed}": generate(seed, 2).song})
    if not _oracle_holds(fields["inputs"], songs):
        drawn, ref["chain"] = ref["chain"], [*chain, _tilt(-sign * tilt_db)]
        if not _oracle_holds(fields["inputs"], songs):
            ref["chain"] = drawn  # neither holds: the draw stands (and the validity sweep shows it)
    return fields, oracle, misses


def _tilt(high_db: float) -> dict:
    """Opposite shelves: ``high_db`` at :data:`TILT_HIGH_HZ` and up, its negative at :data:`TILT_LOW_HZ` and down."""
    return {"device": "core.eq", "params": {"lowf": TILT_LOW_HZ, "low": -high_db, "highf": TILT_HIGH_HZ,
                                            "high": high_db}}


def _oracle_holds(inputs: list[dict], songs: "_Songs") -> bool:
    """Whether ``match.oracle`` on these inputs (made in memory as a scorer makes them) reads the ``same`` likeness
    at least :data:`SAME_FLOOR` and the ``match`` difference at most :data:`MATCH_CEILING_DB`."""
    import numpy as np

    from ...model import AudioInput
    from ....measure.compare import envelope_correlation, octave_levels_db
    from ...audio.chains import match_spectrum
    from ...audio.inputs import SR, made_inputs

    task = _Inputs([AudioInput.model_validate(i) for i in inputs])
    x = made_inputs(task, songs)
    mix, reference = x["mix.wav"], x["reference.wav"]
    y = match_spectrum(mix, reference)
    off_db = float(np.abs(octave_levels_db(y, sr=SR) - octave_levels_db(reference, sr=SR)).max())
    return envelope_correlation(y, mix, sr=SR) >= SAME_FLOOR and off_db <= MATCH_CEILING_DB


class _Inputs:
    """What :func:`~pytest_overdub.bench.audio.inputs.made_inputs` reads of a task: its inputs."""

    def __init__(self, inputs):
        self.inputs = inputs


class _Songs:
    """What it reads of a bench: its songs by name (the variant's own two, generated here: a template does
    not import the bench, which imports the templates)."""

    def __init__(self, songs):
        self._songs = songs

    def song(self, name):
        return self._songs[name]


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
