"""``mix-bass-under-kick@<seed>``: tuck the bass of a generated tier-1 song about 3 dB under the kick below
250 Hz in the verse, leaving the kick exactly as it is.

The checks are the published task's: the bass's low end (under 250 Hz) minus the kick's over the verse, and
the kick's low end as it was. The setup makes the fight the same on every seed: a generated song's kick and
bass come from several kits and tones (their verse gap spans -1.8 to +6 dB), so the setup sets both
instruments to one kit and one tone (kick EQ and faders too), with the bass on top. What the bass's and the
kick's notes still vary is modelled: the gap is 5.64 dB minus ``10 log10`` of the verse's kicks per second,
plus 2 dB per dB of the share of the verse's beats the bass sounds (its legato) and 0.22 dB per semitone of
its mean pitch above F2 (fitted on 20 train seeds, within 0.5 dB of each; kicks per second alone left seed
95's legato, high line 1.3 dB off, and its oracle at 0.886). Computed from the ground truth: the verse's bars
and beats, its kicks per second and the bass's notes in it (the oracle's fader move: the modelled gap's
distance to -3 dB over 0.9, since the master's glue compressor gives back a tenth of a fader move; the oracle
lands at -3.7 to -2.2 dB over the 99 train seeds). Near misses and cheats: the bass 20 dB down, the bass
muted, the kick pushed up instead (the published cheats), the oracle's fader with the other parts muted, the
verse bass thinned out (half its notes, played softer), the bass silenced for most of the verse's bars (the gap
is a mean, so the bass's loudness range in the verse is held too), the verse tucked and the bass pushed 9 dB
up after it (its low end after the verse may rise by a dB at most).
"""

from __future__ import annotations

import math

from ...generate.build import Generated
from .base import Answer, held

TIER = 1
KICK = {"kit": 2, "drive": 0.5, "decay": 1.3}
KICK_EQ = {"hp": 25, "lowf": 80, "low": 2}
BASS = {"cutoff": 700, "drive": 0.3, "sub": 0.6}
BASS_DB = 1.5
#: The verse gap at one kick a second, the bass sounding through the whole verse at a mean pitch of
#: PITCH_REF; the bass's low end moves 2 dB per dB of its sounding share (0.88-1.0 of the verse's beats)
#: and 0.22 dB per semitone of its mean pitch (fitted on 20 train seeds: within 0.5 dB of each).
GAP_DB = 5.64
LEGATO_DB_PER_DB = 2.0
PITCH_DB = 0.22
PITCH_REF = 41
WANT_DB = -3.0
#: A bass fader move shows as about 0.9 of itself in the gap (the master's glue compressor gives some back).
MOVE_SHOWS = 0.9


def _silenced(from_beats: float, to_beats: float, end_beats: float) -> str:
    """Gain breakpoints holding -60 dB from ``from_beats`` to ``to_beats`` and 0 dB elsewhere."""
    before = [(0, from_beats, 0)] if from_beats > 0 else []
    return held(before + [(from_beats, to_beats, -60)], (to_beats, 0), (end_beats, 0))


def _boosted_after(from_beats: float, to_beats: float, end_beats: float, tuck_db: float) -> str:
    """Gain breakpoints: 0 dB before ``from_beats``, ``tuck_db`` in the verse, +9 dB from ``to_beats`` on."""
    before = [(0, from_beats, 0)] if from_beats > 0 else []
    return held(before + [(from_beats, to_beats, tuck_db)], (to_beats, 9), (end_beats, 9))


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    verse = truth.section("Verse")
    bass, kick = truth.part("bass"), next(p for p in truth.parts_with("drums") if p.name == "Kick")
    span = {"from": verse.start_beats, "to": verse.end_beats}
    bass_db, kick_db = BASS_DB, 0.0
    kicks = [c.start + n.t for c in song.track(kick.track_id).clips for n in c.notes]
    kicks_per_s = sum(verse.start_beats <= t < verse.end_beats for t in kicks) / (
        (verse.end_beats - verse.start_beats) * 60.0 / truth.tempo_bpm)
    bass_notes = [n for c in song.track(bass.track_id).clips for n in c.notes
                  if verse.start_beats <= c.start + n.t < verse.end_beats]
    sounding = sum(n.d for n in bass_notes) / (verse.end_beats - verse.start_beats)
    pitch = sum(n.p for n in bass_notes) / len(bass_notes)
    gap_db = (GAP_DB + LEGATO_DB_PER_DB * 10 * math.log10(sounding) + PITCH_DB * (pitch - PITCH_REF)
              - 10 * math.log10(kicks_per_s))
    tuck_db = round((WANT_DB - gap_db) / MOVE_SHOWS, 2)
    instruction = (
        f"The low end is a fight right now. In the verse (bars {verse.first_bar + 1}-{verse.first_bar + verse.bars}, "
        f"beats {verse.start_beats:g}-{verse.end_beats:g}), sit the bass about three dB under the kick below "
        "250 Hz, so the kick owns the bottom, all through the verse (the bass's loudness range there may grow by "
        "a LU and a half at most: silencing it in places is not tucking it), and don't make the fight worse "
        "after it (the bass's low end there may rise by a dB at most), but leave the kick itself exactly as it "
        "is.")
    checks = [
        {"id": "gap", "label": "Bass low end minus kick low end, verse", "kind": "measure", "metric": "band.sub+low",
         "unit": "dB", "target": [-4, -2], "soft": 3, "weight": 1, "tracks": [bass.name], **span,
         "minus": {"tracks": [kick.name], **span}},
        {"id": "kick", "label": "Kick low end vs before", "kind": "measure", "metric": "band.sub+low", "unit": "dB",
         "target": [-1, 1], "soft": 2, "gate": True, "tracks": [kick.name], "relative": True},
        # the gap is a mean over the verse: the bass silenced for most of it lands the number, so its loudness
        # range there may not grow (a fader, shelf or compressor moves it by 0.7 LU at most)
        {"id": "steady", "label": "Bass loudness range in the verse vs before", "kind": "measure", "metric": "lra",
         "unit": "LU", "target": [None, 1.5], "soft": 1, "gate": True, "tracks": [bass.name], **span,
         "relative": True},
        # the gap reads the verse alone: the bass pushed up after it makes the fight worse where no goal looks
        {"id": "after", "label": "Bass low end after the verse vs before", "kind": "measure",
         "metric": "band.sub+low", "unit": "dB", "target": [None, 1], "soft": 2, "gate": True,
         "tracks": [bass.name], "from": verse.end_beats, "relative": True},
    ]
    kick_eq = song.track(kick.track_id).inserts[0].id
    setup = [{"type": "instrument.set", "track": kick.name, "params": KICK},
             {"type": "insert.set", "track": kick.name, "insert": kick_eq, "patch": {"params": KICK_EQ}},
             {"type": "track.set", "track": kick.name, "patch": {"gain": kick_db}},
             {"type": "instrument.set", "track": bass.name, "params": BASS},
             {"type": "track.set", "track": bass.name, "patch": {"gain": bass_db}}]
    fields = {"family": "mix", "title": "Tuck the bass under the kick", "instruction": instruction,
              "scope": {"tracks": [bass.name]}, "setup": setup, "checks": checks}
    oracle = Answer("oracle", f"The bass fader {-tuck_db:g} dB down, so its low end sits about 3 dB under the "
                    "kick's.", [{"type": "track.set", "track": bass.name, "patch": {"gain": bass_db + tuck_db}}])
    others = [p.name for p in truth.parts if p.name not in (bass.name, kick.name)]
    verse_clip = next(c for c in song.track(bass.track_id).clips if c.start == verse.start_beats)
    # the share of the verse's bars that, silenced, lowers its mean level by the oracle's move
    muted_bars = min(verse.bars - 1, max(1, round(verse.bars * (1 - 10 ** (tuck_db * MOVE_SHOWS / 10)))))
    unmuted = verse.start_beats + muted_bars * song.beats_per_bar
    thin = [{"p": n.p, "t": n.t, "d": n.d, "v": round(n.v * 0.5, 2)} for n in verse_clip.notes[1::2]]
    misses = (
        Answer("buried", "The bass 20 dB down: far more than 3 dB under the kick.",
               [{"type": "track.set", "track": bass.name, "patch": {"gain": bass_db - 20}}], ("gap",)),
        Answer("muted", "Muting the bass gets it 'under' the kick by burying it.",
               [{"type": "track.set", "track": bass.name, "patch": {"mute": True}}], ("gap",)),
        Answer("cheat-kick-up", f"The kick pushed up {-tuck_db:g} dB instead of the bass tucked under it: the "
               "kick was to be left exactly as it is.",
               [{"type": "track.set", "track": kick.name, "patch": {"gain": kick_db - tuck_db}}], ("kick",)),
        Answer("cheat-mute-others", "The oracle's bass fader, plus every other part but the kick muted 'to clear "
               "the low end': tracks the task never named.",
               [*oracle.ops, *({"type": "track.set", "track": name, "patch": {"mute": True}} for name in others)],
               ("scope",)),
        Answer("cheat-thin-notes", "Half the verse bass's notes deleted and the rest played softer: less low end "
               "by playing less, not by mixing.",
               [{"type": "notes.replace", "track": bass.name, "clip": verse_clip.id, "notes": thin}], ("scope",)),
        Answer("chorus-boosted", f"The oracle's move on a gain stage in the verse and the bass 9 dB up after it: "
               "the verse gap is right and the fight after the verse far worse.",
               [{"type": "insert.add", "track": bass.name, "insert": {"device": "core.gain"}, "ref": "g"},
                {"type": "auto.write", "track": bass.name, "insert": "$g", "param": "gain",
                 "points": _boosted_after(verse.start_beats, verse.end_beats, truth.length_beats, tuck_db)}],
               ("after",)),
        Answer("cheat-mute-bars", f"The bass silenced for the first {muted_bars} of the verse's {verse.bars} bars "
               "and left as it was after: its low end averages about 3 dB under the kick's over the verse, with "
               "no bass at all for most of it.",
               [{"type": "insert.add", "track": bass.name, "insert": {"device": "core.gain"}, "ref": "g"},
                {"type": "auto.write", "track": bass.name, "insert": "$g", "param": "gain",
                 "points": _silenced(verse.start_beats, unmuted, truth.length_beats)}],
               ("steady",)),
    )
    return fields, oracle, misses
