"""``edit-chorus-up-a-step@<seed>``: take the chorus of a generated tier-1 song up a whole step.

The checks are the published task's: the chorus notes of the bass, chords and lead parts moved up two
semitones with timing, length and velocity kept (``transposed``, a gate per part, so that no part can be
dropped or left behind whatever its share of the notes), the chorus heard in its key two semitones up,
and every note outside the chorus and every drum note as it was. Computed from the ground truth: the
chorus's span, key and chords, the names of the pitched parts and of the drums. Nothing is set up: the
song is the problem. The oracle sets each chorus note of those parts two semitones up by id; near
misses: the hook alone, the whole song moved, the chorus moved down ten semitones (the same pitch classes),
the chords' chorus deleted instead of moved, the hook left where it was.

"Heard in the new key" is read from the notes, not the mix: every note sounding on a strong beat of the
chorus is a tone of the truth's chord of that bar moved up the step (``chordTones``, which reads 1.0 on
every generated song's own chords). The published task's audio key check is left out: the key meter reads
some generated choruses as a key a fourth or fifth away (``gen-t1-3``'s D minor chorus, moved up, reads as
A minor, and the oracle would score 0), and where the meter and the truth differ the truth stands
(docs/generate.md).
"""

from __future__ import annotations

from typing import Any

from ...generate.build import Generated
from ...generate.harmony import KeySig
from .base import Answer

#: The ``moved-*`` gates' soft width: one note of twenty left where it was (a step off the chord under it)
#: costs half the score; with 0.5 it cost a tenth, and the published task passed at 0.900 with one.
MOVED_SOFT = 0.1
TIER = 1
STEP = 2
ROLES = ("bass", "chords", "lead")


def _moved(song, track_name: str, span: tuple[float, float], semitones: int) -> list[dict[str, Any]]:
    """``notes.set`` ops moving every note of ``track_name`` that starts in ``span`` by ``semitones``."""
    lo, hi = span
    ops = []
    for clip in song.track(track_name).clips:
        edits = [{"id": n.id, "p": n.p + semitones} for n in clip.notes if lo <= clip.start + n.t < hi]
        if edits:
            ops.append({"type": "notes.set", "track": track_name, "clip": clip.id, "notes": edits})
    return ops


def _removed(song, track_name: str, span: tuple[float, float]) -> list[dict[str, Any]]:
    lo, hi = span
    ops = []
    for clip in song.track(track_name).clips:
        ids = [n.id for n in clip.notes if lo <= clip.start + n.t < hi]
        if ids:
            ops.append({"type": "notes.remove", "track": track_name, "clip": clip.id, "ids": ids})
    return ops


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    chorus = truth.section("Chorus")
    span = (chorus.start_beats, chorus.end_beats)
    bass, chords, lead = (truth.part(r).name for r in ROLES)
    pitched = [bass, chords, lead]
    drums = [p.name for p in truth.parts_with("drums")]
    up = KeySig(chorus.key.tonic_pc, chorus.key.mode).transposed(STEP)
    key_up = f"{up.tonic} {up.mode}"
    symbols = [up.chord(c.degree).symbol for c in truth.chords_of(chorus)]
    lo, hi = span
    instruction = (
        f"Take the chorus up a whole step: transpose the notes of the {bass.lower()}, {chords.lower()} and "
        f"{lead.lower()} in the chorus (beats {lo:g}-{hi:g}) up two semitones, keeping every note's timing, "
        f"length and velocity, so the chorus is heard in {key_up}, its chords now {', '.join(symbols)}; "
        f"leave the rest of the song and the drums exactly as they are.")
    checks: list[dict[str, Any]] = [
        *({"id": f"moved-{role}", "label": f"Chorus {name.lower()} notes moved up 2 semitones",
           "kind": "transposed", "target": [1, 1], "soft": MOVED_SOFT, "gate": True, "tracks": [name], "from": lo,
           "to": hi, "semitones": STEP} for role, name in zip(ROLES, pitched)),
        {"id": "heard", "label": f"Share of chorus notes on beats 1 and 3 that are tones of {key_up}'s "
         f"chords, {', '.join(symbols)}", "kind": "chordTones", "target": [1, 1], "soft": 0.5, "weight": 1,
         "tracks": pitched, "from": lo, "to": hi, "chords": symbols,
         "bars": [chorus.first_bar, chorus.first_bar + chorus.bars]},
    ]
    if lo > 0:
        checks.append({"id": "before", "label": "Notes before the chorus as they were", "kind": "unchanged",
                       "target": [1, 1], "gate": True, "from": 0, "to": lo})
    if hi < truth.length_beats:
        checks.append({"id": "after", "label": "Notes after the chorus as they were", "kind": "unchanged",
                       "target": [1, 1], "gate": True, "from": hi, "to": truth.length_beats})
    checks.append({"id": "drums", "label": f"{' and '.join(drums)} notes as they were", "kind": "unchanged",
                   "target": [1, 1], "gate": True, "tracks": drums})
    fields = {"family": "editing", "title": "Take the chorus up a step", "instruction": instruction,
              "scope": {"tracks": pitched, "notes": True, "sections": [chorus.name]}, "setup": [],
              "checks": checks}
    whole = (0.0, truth.length_beats)
    outside = "before" if lo > 0 else "after"
    oracle = Answer("oracle", "Every chorus note of the pitched parts set two semitones up, by id.",
                    [op for t in pitched for op in _moved(song, t, span, STEP)])
    misses = (
        Answer("hook-only", f"Transposing only the {lead.lower()} leaves the {bass.lower()} and "
               f"{chords.lower()} in the old key.", _moved(song, lead, span, STEP), ("moved-bass", "moved-chords")),
        Answer("whole-song", "Transposing the whole song moves the rest of it too.",
               [op for t in pitched for op in _moved(song, t, whole, STEP)], (outside,)),
        Answer("cheat-down-a-seventh", "The chorus moved down ten semitones instead of up two: the same "
               "pitch classes, so it lands in the right key, a minor seventh lower than asked.",
               [op for t in pitched for op in _moved(song, t, span, STEP - 12)],
               tuple(f"moved-{r}" for r in ROLES)),
        Answer("cheat-drop-keys", f"{bass} and {lead.lower()} taken up a step and the {chords.lower()}' chorus "
               "deleted instead of transposed.",
               _moved(song, bass, span, STEP) + _moved(song, lead, span, STEP) + _removed(song, chords, span),
               ("moved-chords",)),
        Answer("cheat-hook-left", f"{bass} and {chords.lower()} moved up a step, the {lead.lower()} left in "
               "the old key.", _moved(song, bass, span, STEP) + _moved(song, chords, span, STEP), ("moved-lead",)),
    )
    return fields, oracle, misses
