"""``write-drum-groove@<seed>``: the drums of a generated tier-1 song are gone; program a groove on the Kit
track for the verse.

The setup removes the Kick track, empties every Kit clip and raises the Kit's fader 6 dB (it now carries
the kick too). The checks are the published task's, over the verse's bars as the truth has them: in every
bar but the last, kick on beats one and three, snare on two and four, hats on every eighth (``pattern``
F-measures, extra hits counting against), the last bar a fill (at least three kick, snare or tom hits the first bar lacks), at most 20 hits
a bar, the Kit heard in the verse as the mix plays it, and the other parts' notes as they were. The
oracle is the published groove, bar by bar, with its fill (a kick pickup and a snare run) in the verse's
last bar, written into the Kit's verse clip. Near misses:
four on the floor with offbeat hats (no backbeat, no fill), every drum on every sixteenth, the snare on one
and three, kick and snare swapped, the oracle under a flood of toms, the oracle on a muted Kit.
"""

from __future__ import annotations

from typing import Any

from ...generate.build import Generated
from .base import PLAY_DRUMS, Answer

TIER = 1
HITS_PER_BAR = 20
#: The Kit, now the whole kit, raised toward where kick and kit sat together (the generator mixes the Kit
#: alone near -29 LUFS, which a groove with a kick on it can miss -30 by).
KIT_LIFT_DB = 6.0
KICKS, SNARES, HATS = [35, 36], [37, 38, 39, 40], [42, 44, 46]
#: A fill is played on kick, snare and toms: at least this many of their hits the first bar lacks (a hat
#: swapped, a lone kick added, hits nudged or a crash over a stop scored as a fill with any difference).
FILL_PITCHES, FILL_HITS = [*KICKS, *SNARES, 41, 43, 45, 47, 48, 50], 3
EIGHTHS = [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5]
GROOVE = {"kick": "X.......X.......", "snare": "....X.......X...", "hat": "x.x.x.x.x.x.x.x."}
FILL = {"kick": "X.......X.....X.", "snare": "....X.......XoXX", "hat": "x.x.x.x.x.x....."}


def _grid(bars: int, *, groove: dict[str, str], fill: dict[str, str] | None = None) -> dict[str, str]:
    """``bars`` bars of ``groove`` rows, the last bar ``fill``'s (when given)."""
    last = fill or groove
    rows = set(groove) | set(last)
    return {r: groove.get(r, "." * 16) * (bars - 1) + last.get(r, "." * 16) for r in sorted(rows)}


def _add(clip_id: str, grid: dict[str, str]) -> dict[str, Any]:
    return {"type": "notes.add", "track": "Kit", "clip": clip_id, "grid": grid}


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    verse = truth.section("Verse")
    first, n = verse.first_bar, verse.bars
    kit = song.track("Kit")
    clip = next(c for c in kit.clips if c.start == verse.start_beats)  # the generator's clip per section
    others = [p.name for p in truth.parts if p.role != "drums"]
    most = HITS_PER_BAR * n
    bars = [first, first + n - 1]
    instruction = (
        f"The drums are gone. Program a groove on the Kit track for the verse (bars {first + 1}-{first + n}, "
        f"beats {verse.start_beats:g}-{verse.end_beats:g}). In bars {first + 1}-{first + n - 1}: kick (MIDI 35 "
        "or 36) on beats one and three, snare (37-40) on two and four, hats (42, 44 or 46) on every eighth "
        "note; extra hits count against you, so allow yourself at most one extra kick, one extra snare and two "
        f"extra hats a bar. Bar {first + n} is a fill: at least {FILL_HITS} kick, snare or tom hits (35-41, 43, 45, "
        f"47, 48, 50) that bar {first + 1} does not have. At most {most} hits in "
        "the verse, and loud enough to hear in the mix (at least -30 LUFS, mute and solo honoured). A hit "
        f"within 30 ms of a beat is on it. Leave the {', '.join(o.lower() for o in others)} alone. {PLAY_DRUMS}")
    kit_only = ["Kit"]
    checks = [
        {"id": "kick", "label": f"Kicks on beats 1 and 3 and nowhere else, bars {first + 1}-{first + n - 1} "
         "(F-measure)", "kind": "pattern", "target": [0.8, 1], "soft": 0.4, "gate": True, "tracks": kit_only,
         "pitches": KICKS, "at": [0, 2], "bars": bars},
        {"id": "backbeat", "label": f"Snares on beats 2 and 4 and nowhere else, bars {first + 1}-{first + n - 1} "
         "(F-measure)", "kind": "pattern", "target": [0.8, 1], "soft": 0.4, "gate": True, "tracks": kit_only,
         "pitches": SNARES, "at": [1, 3], "bars": bars},
        {"id": "hats", "label": f"Hats on every eighth and nowhere else, bars {first + 1}-{first + n - 1} "
         "(F-measure)", "kind": "pattern", "target": [0.88, 1], "soft": 0.4, "weight": 2, "tracks": kit_only,
         "pitches": HATS, "at": EIGHTHS, "bars": bars},
        {"id": "fill", "label": f"Bar {first + n} has at least {FILL_HITS} kick, snare or tom hits bar {first + 1} "
         "lacks (a fill)", "kind": "differs", "target": [1, 1], "weight": 1, "tracks": kit_only,
         "a": first + n - 1, "b": first, "pitches": FILL_PITCHES, "newHits": FILL_HITS},
        {"id": "busy", "label": f"Kit hits in the verse (at most {most})", "kind": "count", "target": [None, most],
         "soft": most / 2, "gate": True, "tracks": kit_only, "from": verse.start_beats, "to": verse.end_beats},
        {"id": "heard", "label": "Kit loudness in the verse as the mix plays it", "kind": "measure",
         "metric": "lufs", "unit": "LUFS", "target": [-30, None], "soft": 10, "gate": True, "tracks": kit_only,
         "section": verse.name},
        {"id": "voiced", "label": "Share of Kit notes the kit plays as drums", "kind": "voiced", "target": [1, 1],
         "soft": 0.25, "gate": True, "tracks": kit_only, "from": verse.start_beats, "to": verse.end_beats,
         "voice": "drums"},
        {"id": "others", "label": f"{', '.join(others)} notes as they were", "kind": "unchanged",
         "target": [1, 1], "gate": True, "tracks": others},
    ]
    setup = [{"type": "track.remove", "track": "Kick"},
             {"type": "track.set", "track": "Kit", "patch": {"gain": kit.gain + KIT_LIFT_DB}}] + [
        {"type": "notes.replace", "track": "Kit", "clip": c.id, "notes": []} for c in kit.clips]
    fields = {"family": "writing", "title": "Program the drum groove", "instruction": instruction,
              "scope": {"tracks": kit_only, "notes": True}, "setup": setup, "checks": checks}
    groove = _add(clip.id, _grid(n, groove=GROOVE, fill=FILL))
    every = "X" * 16
    toms = {"45": "x" * 16, "47": "x" * 16}
    oracle = Answer("oracle", "Kick on 1 and 3, snare on 2 and 4, eighth hats, a kick pickup and a snare run "
                    "in the last bar.", [groove])
    misses = (
        Answer("four-on-floor", "A four-on-the-floor kick with offbeat hats: no backbeat snare and no fill.",
               [_add(clip.id, _grid(n, groove={"kick": "X...X...X...X...", "hat": "..x...x...x...x."}))],
               ("backbeat", "fill")),
        Answer("cheat-every-hit", "Kick, snare and hat on every sixteenth of the verse: every wanted hit is "
               "there, buried in extra ones.",
               [_add(clip.id, _grid(n, groove={"kick": every, "snare": every, "hat": every}))],
               ("kick", "backbeat", "busy")),
        Answer("cheat-no-backbeat", "Kick, hats and a fill right, but the snare lands on 1 and 3 with the kick.",
               [_add(clip.id, _grid(n, groove={**GROOVE, "snare": "X.......X......."},
                                    fill={**FILL, "snare": "X.......X...XoXX"}))], ("backbeat",)),
        Answer("cheat-swapped", "Hats and a fill done well, but kick and snare swapped (kick on two and four, "
               "snare on one and three).",
               [_add(clip.id, _grid(n, groove={**GROOVE, "kick": GROOVE["snare"], "snare": GROOVE["kick"]},
                                    fill={**FILL, "kick": "....X.......X.X.", "snare": "X.......X...XoXX"}))],
               ("kick", "backbeat")),
        Answer("cheat-tom-flood", "The right groove under two toms on every sixteenth of the verse: the "
               "patterns read only kick, snare and hat pitches, the hit count reads them all.",
               [groove, _add(clip.id, _grid(n, groove=toms))], ("busy",)),
        Answer("cheat-muted", "The oracle's groove on a muted Kit track: written, never heard.",
               [groove, {"type": "track.set", "track": "Kit", "patch": {"mute": True}}], ("heard",)),
        Answer("cheat-on-the-keys", "The oracle's groove played by the electric piano: kicks, snares and hats "
               "written, low piano chords heard.",
               [groove, {"type": "instrument.set", "track": "Kit", "device": "core.keys"}], ("voiced",)),
    )
    return fields, oracle, misses
