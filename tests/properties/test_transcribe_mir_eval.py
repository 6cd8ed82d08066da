"""Our note matching agrees with mir_eval.transcription (the independent reference, a dev dependency) on
random note sets: precision, recall and F1 equal to 1e-9, with and without offsets.

Onsets are drawn on a 10 ms lattice from 1 s (so sums like 1.37 + 0.05 are inexact in floats) plus small
offsets that put many pairs at and around the 50 ms boundary (where the 7-decimal rounding decides); pitches are semitones plus 0, ±30 or ±70 cents, so a pitch
distance is never within float error of the 50-cent bound (mir_eval measures cents through log2 of Hz,
we through MIDI numbers; both are exact away from the bound; at exactly 50 cents ours is exclusive and
mir_eval's inclusive, docs/transcription.md).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_overdub.transcribe.matching import TimedNote, figures

mir_eval = pytest.importorskip("mir_eval")

SOME = settings(max_examples=300, deadline=None, derandomize=True)

note = st.builds(
    lambda k, nudge, length, semitone, cents: TimedNote(semitone + cents / 100, 1 + k * 0.01 + nudge,
                                                        1 + k * 0.01 + nudge + length),
    st.integers(0, 60), st.sampled_from([0.0, 0.0001, 0.0499, 0.05, 0.0501]),
    st.sampled_from([0.03, 0.1, 0.25, 0.26, 0.5, 1.0]), st.integers(57, 63), st.sampled_from([0, 30, -30, 70, -70]))
notes = st.lists(note, min_size=1, max_size=25)


def _theirs(ref, est, *, offsets):
    as_arrays = [(np.array([[x.onset_s, x.offset_s] for x in xs]),
                  440.0 * 2 ** ((np.array([x.pitch for x in xs]) - 69) / 12)) for xs in (ref, est)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, r, f, _ = mir_eval.transcription.precision_recall_f1_overlap(
            *as_arrays[0], *as_arrays[1], onset_tolerance=0.05, pitch_tolerance=50.0,
            offset_ratio=0.2 if offsets else None, offset_min_tolerance=0.05)
    return p, r, f


@SOME
@given(ref=notes, est=notes, copies=st.integers(0, 5), offsets=st.booleans())
def test_precision_recall_and_f1_equal_mir_eval(ref, est, copies, offsets):
    est = est + ref[:copies]  # some exact hits, so the figures are not all near 0
    ours = figures(ref, est, offsets=offsets)
    p, r, f = _theirs(ref, est, offsets=offsets)
    assert abs(ours.precision - p) <= 1e-9
    assert abs(ours.recall - r) <= 1e-9
    assert abs(ours.f1 - f) <= 1e-9
