"""``edit-quantize-swing@<seed>``: the drums of a generated tier-2 song are swung and sloppy; quantize them to
the swung sixteenth grid, keeping the swing.

Tier 2, because its hats play every sixteenth: the off sixteenths the swing moves are there to be read.
The setup moves every drum hit (Kick and Kit, by id): the off sixteenths late by a swing drawn per variant
(0.16 to 0.30 of a sixteenth, a drum machine's 58-65 %), and every hit by a drawn slop of up to 0.035
beats either way (none earlier than its clip's start). The draws come from a stream seeded by the variant
id, so a variant is a function of its id. The checks are the published task's, on the two drum tracks:
tight to the grid swung as the sloppy groove swings (``jitter``, a gate), every hit moved onto its nearest
line of that grid with its pitch and velocity (``quantized``, a gate), the swing kept within 10 %
(``swing``), and the other parts' notes as they were. The oracle moves each hit onto its own line of the
grid swung by the setup's measured swing (the mean lateness of the hits on off sixteenths, as the checks
read it); near misses: a straight quantize (the swing gone), a generic swung beat programmed in its place,
every hit stacked on a clip's first two grid lines, the bass dragged late along with the drums, the tenth
of the hits farthest from their lines deleted (``kept`` falls to 0.9, its 0.1 soft width leaves 0.05).
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any

from ...generate.build import Generated
from .base import Answer

TIER = 2
GRID = 0.25
SWING_RANGE = (16, 30)  # hundredths of a sixteenth
SLOP_MILLIBEATS = 35
DROPPED = 10  # cheat-drop-hardest deletes one hit in this many


def _rng(variant_id: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(f"overdub-variant/1:{variant_id}".encode()).digest()[:16],
                                        "big"))


def _step(start: float) -> int:
    return math.floor(start / GRID + 0.5)


def _hits(song, tracks: list[str]) -> list[tuple[str, Any, Any]]:
    """(track name, clip, note) of every drum hit, in track, clip and note order."""
    return [(name, clip, n) for name in tracks for clip in song.track(name).clips for n in clip.notes]


def _set(moves: dict[tuple[str, str], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"type": "notes.set", "track": track, "clip": clip, "notes": notes}
            for (track, clip), notes in moves.items()]


def _moved(hits, where) -> list[dict[str, Any]]:
    """``notes.set`` ops putting each hit at ``where(clip, note)`` (clip-local beats)."""
    moves: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for track, clip, n in hits:
        moves.setdefault((track, clip.id), []).append({"id": n.id, "t": round(where(clip, n), 6)})
    return _set(moves)


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    drums = [p.name for p in truth.parts_with("drums")]
    others = [p.name for p in truth.parts if p.role != "drums"]
    rng = _rng(variant_id)
    swing = rng.randint(*SWING_RANGE) / 100
    hits = _hits(song, drums)
    sloppy: dict[str, float] = {}
    for _, clip, n in hits:  # the generator writes every hit on the straight sixteenth grid
        slop = rng.randint(-SLOP_MILLIBEATS, SLOP_MILLIBEATS) / 1000
        late = swing * GRID if _step(n.t) % 2 else 0.0
        sloppy[n.id] = round(n.t + late + (abs(slop) if n.t < GRID / 2 else slop), 3)
    setup = _moved(hits, lambda clip, n: sloppy[n.id])
    odd = [clip.start + sloppy[n.id] - _step(clip.start + sloppy[n.id]) * GRID for _, clip, n in hits
           if _step(clip.start + sloppy[n.id]) % 2]
    shift = sum(odd) / len(odd)  # the sloppy groove's swing, in beats, as the checks read it

    def line(clip, n, *, swung: bool = True) -> float:
        k = _step(clip.start + sloppy[n.id])
        return k * GRID + (shift if swung and k % 2 else 0.0) - clip.start

    instruction = (
        f"The drums ({' and '.join(drums)}) are sloppy. Quantize them to the swung sixteenth grid: move every "
        "hit onto the line of the grid nearest to it (within 30 ms), where the grid's off sixteenths sit as "
        "late as the groove's off sixteenths sit now on average, so the groove stays as swung as it is (swing "
        "within 10 %) but tight (RMS distance from that grid at most 0.004 beats). Keep every hit, with its "
        "pitch and velocity, on the kit (core.drums: its notes are read as the drums of the kit's map), and "
        f"leave the {', '.join(o.lower() for o in others)} alone.")
    checks = [
        {"id": "tight", "label": "RMS distance from the swung 1/16 grid", "kind": "jitter", "unit": "beats",
         "target": [0, 0.004], "soft": 0.008, "gate": True, "tracks": drums, "grid": GRID},
        {"id": "kept", "label": "Hits moved onto their nearest line of the swung grid, pitch and velocity kept",
         "kind": "quantized", "target": [1, 1], "soft": 0.1, "gate": True, "tracks": drums, "grid": GRID},
        {"id": "swing", "label": "Change in swing", "kind": "swing", "target": [0, 0.1], "soft": 0.4,
         "weight": 1, "tracks": drums, "grid": GRID},
        {"id": "voiced", "label": f"Share of {' and '.join(drums)} notes the kit plays as drums", "kind": "voiced",
         "target": [1, 1], "soft": 0.25, "gate": True, "tracks": drums, "voice": "drums"},
        {"id": "others", "label": f"{', '.join(others)} notes as they were", "kind": "unchanged",
         "target": [1, 1], "gate": True, "tracks": others},
    ]
    fields = {"family": "editing", "title": "Quantize, keep the swing", "instruction": instruction,
              "scope": {"tracks": drums, "notes": True}, "setup": setup, "checks": checks}
    oracle = Answer("oracle", "Every hit onto its nearest line of the grid swung by the groove's own swing.",
                    _moved(hits, line))
    bass = truth.part("bass").name
    bass_hits = _hits(song, [bass])
    misses = (
        Answer("straight", "A plain 1/16 quantize: tight, but the swing is gone.",
               _moved(hits, lambda clip, n: line(clip, n, swung=False)), ("tight", "swing")),
        Answer("cheat-reprogrammed", "The part thrown away and a generic swung beat programmed in its place: "
               "tight and swung, and not the drummer's groove.", _reprogrammed(song, drums, shift), ("kept",)),
        Answer("cheat-stacked", "Every hit stacked on its clip's downbeat or the swung sixteenth after it: on "
               "the grid, as swung as before, every hit kept, and the groove gone.",
               _moved(hits, lambda clip, n: GRID + shift if _step(clip.start + sloppy[n.id]) % 2 else 0.0),
               ("kept",)),
        Answer("cheat-bass-too", f"The drums quantized and the {bass.lower()} dragged along by the swing.",
               _moved(hits, line) + _moved(bass_hits, lambda clip, n: n.t + shift), ("others",)),
        Answer("cheat-on-the-pad", "The quantize with the drums switched to core.pad: every note where it should "
               "be, and no drum heard.", _moved(hits, line) + [{"type": "instrument.set", "track": name,
                                                               "device": "core.pad"} for name in drums],
               ("voiced",)),
        Answer("cheat-drop-hardest", "The tenth of the hits farthest from their lines deleted, the rest quantized: "
               "tight and as swung, and not every hit kept.", _dropped(hits, line, sloppy), ("kept",)),
    )
    return fields, oracle, misses


def _dropped(hits, line, sloppy: dict[str, float]) -> list[dict[str, Any]]:
    """The quantize with the tenth of the hits farthest from their lines removed."""
    far = sorted(hits, key=lambda h: (-abs(sloppy[h[2].id] - line(h[1], h[2])), h[2].id))[: len(hits) // DROPPED]
    gone = {n.id for _, _, n in far}
    removes: dict[tuple[str, str], list[str]] = {}
    for track, clip, n in far:
        removes.setdefault((track, clip.id), []).append(n.id)
    return _moved([h for h in hits if h[2].id not in gone], line) + [
        {"type": "notes.remove", "track": track, "clip": clip, "ids": ids} for (track, clip), ids in removes.items()]


def _reprogrammed(song, drums: list[str], shift: float) -> list[dict[str, Any]]:
    """Each drum clip's notes replaced by a stock beat on the swung grid: kick on 1 and 3, snare on 2 and 4,
    a hat on every sixteenth, all at one velocity."""
    ops = []
    for i, name in enumerate(drums):
        for clip in song.track(name).clips:
            notes = []
            for k in range(int(clip.length / GRID)):
                t = k * GRID + (shift if k % 2 else 0.0)
                beat = k * GRID
                if i == 0 and beat % 2 == 0:
                    notes.append({"p": 36, "t": t, "d": 0.5, "v": 0.9})
                if i > 0:
                    notes.append({"p": 42, "t": t, "d": 0.2, "v": 0.7})
                    if beat % 2 == 1:
                        notes.append({"p": 38, "t": t, "d": 0.5, "v": 0.9})
            ops.append({"type": "notes.replace", "track": name, "clip": clip.id, "notes": notes})
    return ops
