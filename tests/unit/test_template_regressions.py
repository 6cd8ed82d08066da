"""Variants where a first version of a template broke the validity rules, pinned (each scores one variant's
answers, a few renders each)."""

from __future__ import annotations

from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.bench.variant_checks import check_variant
from pytest_overdub.bench.variant_rules import variant_verdict


def _rows(variant_id: str) -> dict:
    return {rule: (ok, msg, result) for rule, ok, msg, result in check_variant(variant_id, trusted=True)}


def _oracle(variant_id: str) -> tuple:
    """The oracle's rule alone: (held, message, result)."""
    v = variant_verdict(variant_id, "oracle", bundled_bench(), trusted=True)
    return v.ok, v.message, v.result


def test_chorus_up_a_step_fails_a_dropped_chords_part_whatever_its_share_of_the_notes():
    # seed 5: a Pad holds 24 of the chorus's 104 pitched notes; one pooled transposed gate (soft 0.5) let
    # the chords deleted instead of moved score 0.538
    rows = _rows("edit-chorus-up-a-step@5")
    ok, msg, result = rows["cheat:drop-keys"]
    assert ok, msg
    assert result.check("moved-chords").score == 0.0 and result.check("moved-bass").score == 1.0
    assert rows["oracle"][0], rows["oracle"][1]


def test_chorus_up_a_step_oracle_passes_where_the_key_meter_misreads_the_chorus():
    # seed 3: D minor moved up reads as A minor to the key meter; the new key is read from the notes
    ok, msg, result = _rows("edit-chorus-up-a-step@3")["oracle"]
    assert ok, msg
    assert result.check("heard").value == 1.0


def test_drum_groove_oracle_is_heard_once_the_kit_carries_the_kick():
    # seed 1: the Kit at its generated level played the oracle's groove at -30.5 LUFS, under the -30 target
    ok, msg, result = _rows("write-drum-groove@1")["oracle"]
    assert ok, msg
    assert result.check("heard").value >= -28.0


def test_counter_melody_oracle_is_its_own_line_where_the_plain_alternation_copies_the_bass():
    # seed 1006 (test split): the half-note line alternating the chord's higher and lower free tone played
    # a run of the bass's intervals, a copy of 0.714 (the gate allows 0.5), and the oracle scored 0; 7 of
    # test seeds 1000-1399 did so (the bass or the hook). The oracle now takes the first candidate line
    # copying at most 0.4 of any part; every cheat still fails
    rows = _rows("write-counter-melody@1006")
    ok, msg, result = rows["oracle"]
    assert ok, msg
    assert result.check("copy").value <= 0.4 and result.check("pitches").value >= 5
    assert [(rule, m) for rule, (held, m, _) in rows.items() if not held] == []


def test_bass_under_kick_oracle_reads_the_bass_line_as_well_as_the_kicks():
    # seed 95: a legato, high bass line (its notes sound through the whole verse, mean pitch G2) sat 1.3 dB
    # louder under 250 Hz than the kicks per second alone predict: the oracle's gap was -1.66 dB (want -4
    # to -2) and it scored 0.886. The fader move now reads the bass's sounding share and mean pitch too
    ok, msg, result = _rows("mix-bass-under-kick@95")["oracle"]
    assert ok, msg
    assert -3.5 <= result.check("gap").value <= -2.5


def test_chorus_lift_oracle_lands_inside_the_lift_target():
    # seed 52: 3.15 dB of chorus gain with width 1.3 lifted the chorus 3.07 LU (want 1.5 to 3), an oracle of
    # 0.956; at 3 dB the oracle's lift spanned 1.55 to 2.92 LU over train seeds 21-54, and the gain is now
    # solved per variant (2.33 dB here)
    ok, msg, result = _rows("mix-chorus-lift@52")["oracle"]
    assert ok, msg
    assert 1.5 <= result.check("lift").value <= 3.0 and result.score == 1.0


def test_mono_low_end_oracle_monos_what_other_parts_leave_wide_and_keeps_the_bass_level():
    # seed 49: a bare width 0 on the chorused bass left the side under 120 Hz 29.3 dB under the mid (want
    # 30: the other parts' own width), an oracle of 0.956, and summed the bass's decorrelated sides 2.9 dB
    # down (want within 3; 3.06 on seed 25). The oracle now monos the master under 120 Hz as well and makes
    # up 1.5 dB on the bass
    ok, msg, result = _oracle("mix-mono-low-end@49")
    assert ok, msg
    assert result.check("lows").value <= -35.0 and -2.0 <= result.check("bass").value <= 0.0
    assert result.score == 1.0


def test_mono_low_end_oracle_keeps_the_bass_highs_wide():
    # seed 29: width 0 took the chorus off the bass's upper harmonics as well, the highs' side 1.41 dB down
    # (want within 1.5); a MONO BASS stage leaves the bass wide above its split
    ok, msg, result = _oracle("mix-mono-low-end@29")
    assert ok, msg
    assert abs(result.check("highs").value) <= 0.75


def test_chorus_lift_oracle_solves_its_gain_where_the_song_barely_lifts():
    # seed 50: the fixed 3 dB lifted the chorus 1.55 LU over the verse (want 1.5 to 3), 0.05 from failing;
    # the gain is now solved from a measured try (3.7 dB here), and the lift lands on 2.25
    ok, msg, result = _oracle("mix-chorus-lift@50")
    assert ok, msg
    assert abs(result.check("lift").value - 2.25) <= 0.05 and result.score == 1.0
