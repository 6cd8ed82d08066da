"""``write-bassline@<seed>``: the bass of a generated tier-1 song is gone; write one for the verse.

Computed from the ground truth: the verse's bars and chords (the ``roots`` and ``chordTones`` checks), its
key (``inKey``), the names of the other parts. The oracle is a bassline written from the chord roots
(root, its push, the fifth on beat three, the root again on the last eighth). Near misses: the roots a bar
late, fifths on the downbeats, the hook's verse line copied octaves down, the oracle muted, the oracle three
octaves up, and roots written into a legato chain core.bass plays silent (a velocity-0 tick starts it).

The range is a gate scaled by the share of notes in it (soft 1): as a goal beside ``inKey`` (the task's
only other goal) a line three octaves up still scored 0.5, as did one off the key everywhere but the
strong beats; a note or two above C3 costs its share, as it did. ``inKey``, now the only goal, has twice
its soft width (0.8), so a line in range with a chromatic approach note or two scores what the mean of
the two goals gave it (2 of 12 notes off the key: 0.917), and a line mostly off the key far less.
"""

from __future__ import annotations

from typing import Any

from ...generate.build import Generated
from ...generate.truth import ChordTruth
from .base import PLAY_PITCHED, Answer

TIER = 1
LO, HI = 28, 48  # E1..C3, as the published task
NOTES_PER_BAR = (3, 8)


def _root(pc: int) -> int:
    """The root in E1..D#2."""
    return LO + (pc - LO) % 12


def _line(chords: list[ChordTruth], *, fifth_first: bool = False, up: int = 0) -> str:
    tokens = []
    for i, ch in enumerate(chords):
        r = _root(ch.root_pc) + up
        low, high = (r + 7, r) if fifth_first else (r, r + 7)
        b = 4 * i
        tokens += [f"{low}@{b}:1.5", f"{low}@{b + 1.5}:0.5", f"{high}@{b + 2}:1.5", f"{r}@{b + 3.5}:0.5"]
    return " ".join(tokens)


def _silent_chain(chords: list[ChordTruth]) -> str:
    """Each bar's root and fifth in one legato chain started by a velocity-0 tick of the root (core.bass
    plays a chain at its first note's velocity: silent), then one loud passing note after a gap."""
    tokens = []
    for i, ch in enumerate(chords):
        r, b = _root(ch.root_pc), 4 * i
        tokens += [f"{r}@{b}:0.02*0", f"{r}@{b}:1.5", f"{r + 7}@{b + 1.5}:1.5", f"{r + 2}@{b + 3.25}:0.5*1"]
    return " ".join(tokens)


def _clip(section, notes: Any) -> dict[str, Any]:
    return {"type": "clip.add", "track": "Bass",
            "clip": {"start": section.start_beats, "length": section.end_beats - section.start_beats,
                     "name": "verse bass", "notes": notes}}


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    verse = truth.section("Verse")
    chords = list(truth.chords_of(verse))
    symbols = [c.symbol for c in chords]
    chords_part = truth.part("chords").name
    others = [p.name for p in truth.parts if p.role != "bass"]
    span = {"from": verse.start_beats, "to": verse.end_beats}
    bars = [verse.first_bar, verse.first_bar + verse.bars]
    lo_n, hi_n = NOTES_PER_BAR[0] * verse.bars, NOTES_PER_BAR[1] * verse.bars
    key = verse.key.name
    instruction = (
        f"The bass part is gone. Write a new bassline on the Bass track for the verse (bars 1-{verse.bars}, "
        f"beats {verse.start_beats:g}-{verse.end_beats:g}) over its chords, {', '.join(symbols)}, one chord "
        f"per bar: the root of the bar's chord starting on every downbeat and sounding at least a sixteenth "
        f"note, mostly chord tones (at least three in four) sounding on beats one and three, {lo_n} to {hi_n} "
        f"notes, in {key}, between E1 and C3, its own line rather than a copy of the {chords_part.lower()} or "
        f"the hook, and loud enough to hear in "
        f"the mix (at least -30 LUFS). A note within 30 ms of a beat is on it. Leave every other part alone. "
        f"{PLAY_PITCHED}")
    bass = ["Bass"]
    checks = [
        {"id": "roots", "label": "Bars with the chord root on the downbeat", "kind": "roots", "target": [1, 1],
         "soft": 0.5, "gate": True, "tracks": bass, **span, "chords": symbols, "bars": bars},
        {"id": "chord-tones", "label": "Share of bass notes on beats 1 and 3 that are chord tones",
         "kind": "chordTones", "target": [0.75, 1], "soft": 0.5, "gate": True, "tracks": bass, **span,
         "chords": symbols, "bars": bars},
        {"id": "count", "label": f"Bass notes in the verse ({lo_n} to {hi_n})", "kind": "count",
         "target": [lo_n, hi_n], "soft": 8, "gate": True, "tracks": bass, **span},
        {"id": "in-key", "label": f"Share of bass notes in {key}", "kind": "inKey", "target": [0.9, 1],
         "soft": 0.8, "weight": 1, "tracks": bass, **span},
        {"id": "range", "label": "Share of bass notes between E1 and C3", "kind": "within", "target": [1, 1],
         "soft": 1, "gate": True, "tracks": bass, **span, "lo": LO, "hi": HI},
        {"id": "copy", "label": f"Largest share of the bass line that copies the {chords_part.lower()} or the hook",
         "kind": "copied", "target": [0, 0.5], "soft": 0.25, "gate": True, "tracks": bass, **span,
         "against": [chords_part, "Hook"]},
        {"id": "heard", "label": "Bass loudness in the verse as the mix plays it", "kind": "measure",
         "metric": "lufs", "unit": "LUFS", "target": [-30, None], "soft": 10, "gate": True, "tracks": bass,
         "section": "Verse"},
        {"id": "voiced", "label": "Share of bass notes a pitched house instrument plays at their pitch",
         "kind": "voiced", "target": [1, 1], "soft": 0.25, "gate": True, "tracks": bass, **span, "voice": "pitched"},
        {"id": "others", "label": f"{', '.join(others)} notes as they were", "kind": "unchanged",
         "target": [1, 1], "soft": 0.5, "gate": True, "tracks": others},
    ]
    fields = {"family": "writing", "title": "Write the bassline", "instruction": instruction,
              "scope": {"tracks": ["Bass"], "notes": True},
              "setup": [{"type": "clip.remove", "track": "Bass", "clip": c.id}
                        for c in song.track("Bass").clips],
              "checks": checks}
    late = chords[-1:] + chords[:-1]
    hook = _verse_notes(song, "Hook", verse)
    down = 12 * -((min(p for _, p, _ in hook) - LO) // 12) if hook else 0  # lowest note into E1..D#2
    copy = " ".join(f"{p + down}@{t - verse.start_beats:g}:{d:g}" for t, p, d in hook)
    oracle = Answer("oracle", "Roots from the truth's chords: root, its push, the fifth on beat three, the root "
                    "on the last eighth.", [_clip(verse, _line(chords))])
    misses = (
        Answer("wrong-roots", "The roots a bar late: every bar plays the chord before it.",
               [_clip(verse, _line(late))], ("roots",)),
        Answer("cheat-fifths-on-downbeats", "Chord tones on beats one and three, but the fifth on every "
               "downbeat.", [_clip(verse, _line(chords, fifth_first=True))], ("roots",)),
        Answer("cheat-hook-copy", "The hook's verse line played octaves down, its lowest note in E1..D#2.",
               [_clip(verse, copy)],
               ("copy",)),
        Answer("cheat-up-three-octaves", "The oracle's line three octaves up, a lead in the bass's place: roots, "
               "chord tones and key right, none of it in the bass register.", [_clip(verse, _line(chords, up=36))],
               ("range",)),
        Answer("cheat-muted", "The oracle's notes on a muted track.",
               [_clip(verse, _line(chords)), {"type": "track.set", "track": "Bass", "patch": {"mute": True}}],
               ("heard",)),
        Answer("cheat-silent-chain", "Roots and fifths written but silent (a legato chain started by a "
               "velocity-0 tick), one loud passing note a bar keeping the bass heard.",
               [_clip(verse, _silent_chain(chords))], ("roots", "chord-tones")),
        Answer("cheat-gain-silenced-roots", "The oracle's line, and a gain insert automated to -60 dB over the "
               "first beat and a half of every bar: the roots written at full velocity, nobody hears them.",
               [_clip(verse, _line(chords)),
                {"type": "insert.add", "track": "Bass", "insert": {"device": "core.gain"}, "ref": "g"},
                {"type": "auto.write", "track": "Bass", "insert": "$g", "param": "gain", "points": [
                    {"t": float(verse.start_beats + b + dt), "v": v}
                    for b in range(0, int(verse.end_beats - verse.start_beats), 4)
                    for dt, v in ((0.0, -60.0), (1.48, -60.0), (1.5, 0.0), (3.98, 0.0))]}],
               ("roots",)),
        Answer("cheat-on-the-kit", "The oracle's line played by the drum kit, 12 dB up: roots and chord tones "
               "written, kicks, snares and silence heard.",
               [_clip(verse, _line(chords)), {"type": "instrument.set", "track": "Bass", "device": "core.drums"},
                {"type": "track.set", "track": "Bass", "patch": {"gain": 12}}], ("voiced",)),
    )
    return fields, oracle, misses


def _verse_notes(song, track_name: str, verse) -> list[tuple[float, int, float]]:
    track = song.track(track_name)
    return [(c.start + n.t, n.p, n.d) for c in track.clips for n in c.notes
            if verse.start_beats <= c.start + n.t < verse.end_beats]
