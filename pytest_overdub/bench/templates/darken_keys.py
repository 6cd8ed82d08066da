"""``mix-darken-keys@<seed>``: the keys of a generated tier-1 song are too bright; darken them at the same
loudness, on their own track.

The checks are the published task's (relative to the starting song, on the keys' own stem) plus the same
presence cut in the last chorus (the instruction's "all through the song"), the setup
makes the problem on whatever chords part the song has: the chords track becomes Keys on ``core.keys``
turned fully bright and bell-like (a Pad is replaced by the keys, its chords kept). Computed from the
ground truth: the chords track, the verse's end (the verse-only cheat). The oracle is the published
one, a 7 dB high shelf at 4 kHz at the head of the keys' chain; near misses: the fader pulled 7.5 dB instead,
the shelf on the master (outside the scope), the shelf automated to cut only in the verse, the keys silenced
every other bar (the presence band counts the rests, the loudness skips them: the keys' RMS level is held).
"""

from __future__ import annotations

from ...generate.build import Generated
from .base import Answer, held

TIER = 1
INSTRUCTION = ("The keys are too bright and bell-like, they poke out around 4 to 8 kHz. Take three to six dB "
               "out of that presence range on the keys themselves, all through the song, but keep them at "
               "the same overall loudness, within about a dB, and playing all the way through: their level with "
               "their rests counted within a dB and a half too (silencing them in places is not darkening them). "
               "All three are measured on the keys' own track, before the master.")
SHELF = {"device": "core.eq", "params": {"highf": 4000, "high": -7}}


def _every_other_bar(length_beats: float, bar: float) -> str:
    """Breakpoints holding 0 dB in the even bars (``bar`` beats long) and -60 dB in the odd ones."""
    spans, at, odd = [], 0.0, False
    while at < length_beats:
        spans.append((at, at + bar, -60 if odd else 0))
        at, odd = at + bar, not odd
    return held(spans, (length_beats, 0))


def build(made: Generated, variant_id: str):
    truth = made.truth
    chords = truth.part("chords")
    setup = [{"type": "instrument.set", "track": chords.track_id, "device": "core.keys",
              "params": {"bright": 1, "bell": 1}}]
    if chords.name != "Keys":
        setup.append({"type": "track.set", "track": chords.track_id, "patch": {"name": "Keys"}})
    keys = ["Keys"]
    last_chorus = [sec.name for sec in truth.sections if sec.name.startswith("Chorus")][-1]
    checks = [
        {"id": "presence", "label": "Keys presence band (4-8 kHz) vs before, own track", "kind": "measure",
         "metric": "band.presence", "unit": "dB", "target": [-6, -3], "soft": 2, "weight": 1, "tracks": keys,
         "relative": True, "stem": True},
        # "all through the song": the cut is checked in the last chorus too, so a cut automated to the
        # verse alone fails (on the whole song it can still reach the target when the verse carries most
        # of the keys' presence, as on 9 of 99 train seeds before this check); weighed 2, so such a cut
        # scores at most 1/3
        {"id": "presence-chorus", "label": f"Keys presence band (4-8 kHz) vs before in {last_chorus}, own track",
         "kind": "measure", "metric": "band.presence", "unit": "dB", "target": [-6, -3], "soft": 2, "weight": 2,
         "tracks": keys, "relative": True, "stem": True, "section": last_chorus},
        {"id": "loudness", "label": "Keys loudness vs before, own track", "kind": "measure", "metric": "lufs",
         "unit": "LU", "target": [-1, 1], "soft": 1.5, "gate": True, "tracks": keys, "relative": True,
         "stem": True},
        # the presence band reads the keys with their rests counted, the loudness skips silence: the keys
        # silenced in stretches lower the one and not the other, so their level with the rests counted is
        # held too (an EQ cut moves it about as much as the loudness)
        {"id": "level", "label": "Keys level with their rests counted (RMS) vs before, own track",
         "kind": "measure", "metric": "rms", "unit": "dB", "target": [-1.5, 1.5], "soft": 1, "gate": True,
         "tracks": keys, "relative": True, "stem": True},
    ]
    fields = {"family": "mix", "title": "Darken the keys", "instruction": INSTRUCTION,
              "scope": {"tracks": keys}, "setup": setup, "checks": checks}
    verse_end = truth.section("Verse").end_beats
    fader_db = made.song.track(chords.track_id).gain - 7.5
    oracle = Answer("oracle", "A 7 dB high shelf at 4 kHz at the head of the keys' chain.",
                    [{"type": "insert.add", "track": "Keys", "index": 0, "insert": SHELF}])
    misses = (
        Answer("fader", "Pulling the keys' fader 7.5 dB darkens nothing, it only makes them quieter.",
               [{"type": "track.set", "track": "Keys", "patch": {"gain": fader_db}}], ("loudness",)),
        Answer("cheat-master-eq", "The shelf on the master instead of the keys: every track darkens.",
               [{"type": "insert.add", "track": "master", "insert": SHELF}], ("scope",)),
        Answer("cheat-verse-only", "The shelf automated to cut only in the verse.",
               [{"type": "insert.add", "track": "Keys", "index": 0, "insert": SHELF, "ref": "eq"},
                {"type": "auto.write", "track": "Keys", "insert": "$eq", "param": "high",
                 "points": held([(0, verse_end, -7)], (verse_end, 0), (truth.length_beats, 0))}],
               ("presence-chorus",)),
        Answer("cheat-chop-bars", "The keys silenced every other bar by a gain stage: the presence band, read "
               "with the rests counted, drops 3 dB while the loudness, which skips silence, hardly moves.",
               [{"type": "insert.add", "track": "Keys", "insert": {"device": "core.gain"}, "ref": "g"},
                {"type": "auto.write", "track": "Keys", "insert": "$g", "param": "gain",
                 "points": _every_other_bar(truth.length_beats, made.song.beats_per_bar)}],
               ("level",)),
    )
    return fields, oracle, misses
