"""``write-counter-melody@<seed>``: write a counter-melody for the chorus of a generated tier-1 song on a
new track.

Nothing is set up: the song is the problem (a chorus with one melody). The checks are the published task's,
over the chorus the truth has: two to eight notes a bar, at least four pitches, at least three turns, in
the song's key, within an octave and a half, no semitone rub against the hook on a strong beat, at most a
quarter of its notes doubling the hook, no copy of the bass, chords or hook (moved, transposed, or in
another rhythm, forwards, backwards or upside down), heard in the chorus, and the hook as it was. The
oracle is computed from the truth: a half-note line on the strong beats, each note a tone of the bar's
chord that the hook is not sounding there (so it neither doubles nor rubs: a triad's tones lie three to
five semitones apart), in the octave under the hook's lowest chorus note, alternating the higher and the
lower tone left; of four such lines (from the higher or the lower tone, leaving out the bass's tone or not)
the first that copies at most 0.4 of any part, holds five pitches and turns three times, since the plain
alternation can play a run of the bass's or the hook's intervals (a copy of up to 0.71 on 7 of test seeds
1000-1399; 0.5 on train seed 53), and where the tones left repeat it can turn once or twice (the contour
goal: 0.857 on test seeds 1032 and 1370); then four lines that turn at every step they can (an octave
down where one tone is left); where none meets those margins, the one within the checks' own limits that
copies least. Near misses: the hook an octave down (in place, a beat late, in a new rhythm, and
backwards), a diatonic third under the hook (on one new track, dealt note by note over three, and with a click
after each note), one note
on every beat, the oracle in the verse, the oracle on a muted track.
"""

from __future__ import annotations

from typing import Any

from ...generate.build import Generated
from ...generate.harmony import KeySig
from ...notes.melody import copied, turns
from ...notes.selection import PlacedNote, on_beat_tol_beats, placed_notes
from ...notes.theory import scale_pcs
from .base import PLAY_PITCHED, Answer, clip_add_op, track_add_op

TIER = 1
NOTES_PER_BAR = (2, 8)
HALF = 2.0  # beats: the oracle's note length and its strong-beat step
COPY_MARGIN = 0.4  # the oracle's line copies at most this of any part (the check allows 0.5)
PITCHES_MARGIN = 5  # and holds at least this many pitches (the check asks for 4)
TURNS_MIN = 3  # and changes direction at least this often (the check's target)
COPY_MAX, PITCHES_MIN = 0.5, 4  # the checks' own limits, for a line when none meets the margins
ZIGZAG_SPAN = 17  # semitones: the turning lines' range (the check allows 18)


def _placed(song, name: str, span: tuple[float, float]) -> list[tuple[float, int, float, float]]:
    """(start, pitch, dur, velocity) of the notes of ``name`` starting in ``span``, in time order."""
    lo, hi = span
    return sorted((c.start + n.t, n.p, n.d, n.v) for c in song.track(name).clips for n in c.notes
                  if lo <= c.start + n.t < hi)


def _slots(truth, section, hook: list[tuple[float, int, float, float]], *,
           bass: list[tuple[float, int, float, float]] = ()) -> list[tuple[float, int, list[int]]]:
    """(start, index, pitches) of each half note's slot over ``section``: the tones of the bar's chord the
    ``hook`` is not sounding there (and, given the ``bass``, not the bass's either, while one is left), in
    the octave under the hook's lowest note, low to high; ``index`` counts the slots (two a bar)."""
    key = KeySig(section.key.tonic_pc, section.key.mode)
    top = min(p for _, p, _, _ in hook) - 1
    out = []
    for i, ch in enumerate(truth.chords_of(section)):
        pcs = key.chord(ch.degree).pcs
        for k in range(int(truth.beats_per_bar // HALF)):
            beat = ch.start_beats + k * HALF
            heard = {p % 12 for s, p, d, _ in hook if s <= beat + 1e-6 < s + d}
            low = {p % 12 for s, p, d, _ in bass if s <= beat + 1e-6 < s + d}
            left = [pc for pc in pcs if pc not in heard]
            left = [pc for pc in left if pc not in low] or left
            out.append((beat, 2 * i + k, sorted(top - (top - pc) % 12 for pc in left)))
    return out


def _line(slots: list[tuple[float, int, list[int]]], *, phase: int = 0) -> list[tuple[float, int]]:
    """(start, pitch) of the oracle's half notes: the higher and the lower tone left alternating from
    ``phase``."""
    return [(beat, cands[-1] if (j + phase) % 2 == 0 else cands[0]) for beat, j, cands in slots]


def _zigzag(slots: list[tuple[float, int, list[int]]], *, up_first: bool) -> list[tuple[float, int]]:
    """(start, pitch) of half notes that turn at every step they can: each the nearest tone left (or the
    same an octave down, while the line spans at most :data:`ZIGZAG_SPAN` semitones) that moves against the
    last move (up first, or down), else the nearest other one. Where one tone is left a bar running, the
    octave is what lets the line turn."""
    out: list[tuple[float, int]] = []
    up = up_first
    top = max(c for _, _, cands in slots for c in cands)
    for beat, _, tones in slots:
        cands = sorted({*tones, *(c - 12 for c in tones if c - 12 >= top - ZIGZAG_SPAN)})
        if not out:
            out.append((beat, cands[0] if up_first else cands[-1]))
            continue
        prev = out[-1][1]
        ahead = [p for p in cands if (p > prev if up else p < prev)]
        if ahead:
            up = not up
        out.append((beat, min(ahead or [p for p in cands if p != prev] or cands, key=lambda p: abs(p - prev))))
    return out


def _own_line(truth, song, section, hook, against: list[str]) -> list[tuple[float, int]]:
    """The first of the candidate lines (alternating from the high or the low tone, leaving out or not the
    bass's tone; then turning at every step, up or down first) that copies at most :data:`COPY_MARGIN` of any part, holds at least :data:`PITCHES_MARGIN`
    pitches and turns at least :data:`TURNS_MIN` times; else, of those within the checks' own limits
    (a copy of at most 0.5, four pitches, three turns), the one that copies least, and only where none is,
    the one that misses fewest of them. The plain alternation can land on a part's melody: on test seeds it
    copied up to 0.71 of the bass or the hook (a run of its intervals). And where the left-out tones repeat,
    a line can turn once or twice: the oracle scored 0.857 on test seeds 1032 and 1370 (one turn, the
    line that copied least) and 0.929 on train seed 48 and 13 of test seeds 1000-1600 (two)."""
    tol = on_beat_tol_beats(song.tempo)
    scale = scale_pcs(song.key.root, song.key.scale)
    parts = [placed_notes(song, song.track(name)) for name in against]
    bass = _placed(song, truth.part("bass").name, (section.start_beats, section.end_beats))
    slots = {avoid: _slots(truth, section, hook, bass=bass if avoid else ()) for avoid in (False, True)}
    lines = [_line(slots[avoid], phase=phase) for phase, avoid in ((0, False), (1, False), (0, True), (1, True))]
    lines += [_zigzag(slots[avoid], up_first=up) for avoid in (False, True) for up in (True, False)]
    ranked = []
    for line in lines:
        notes = [PlacedNote("new", "new", str(i), p, t, HALF, 0.8) for i, (t, p) in enumerate(line)]
        copy = max(copied(notes, other, tol_beats=tol, scale=scale) for other in parts)
        pitches = len({p for _, p in line})
        bends = turns(notes, tol_beats=tol)
        if copy <= COPY_MARGIN and pitches >= PITCHES_MARGIN and bends >= TURNS_MIN:
            return line
        misses = (copy > COPY_MAX) + (pitches < PITCHES_MIN) + (bends < TURNS_MIN)
        ranked.append(((misses, copy, -pitches, -bends), line))
    return min(ranked, key=lambda r: r[0])[1]


def _track(name: str, *, mute: bool = False) -> dict[str, Any]:
    return track_add_op(name, instrument={"device": "core.keys", "params": {}}, ref="ctr", mute=mute)


def _kit_track(name: str) -> dict[str, Any]:
    op = track_add_op(name, instrument={"device": "core.drums", "params": {}}, ref="ctr")
    return {**op, "track": {**op["track"], "gain": 12}}


def _clip(start: float, length: float, notes: list[dict[str, Any]]) -> dict[str, Any]:
    return clip_add_op("ctr", start=start, length=length, name="counter", notes=notes)


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    chorus, verse = truth.section("Chorus"), truth.section("Verse")
    lo, hi = chorus.start_beats, chorus.end_beats
    hook_name = truth.part("lead").name
    against = [truth.part("bass").name, truth.part("chords").name, hook_name]
    key = truth.key.name
    lo_n, hi_n = NOTES_PER_BAR[0] * chorus.bars, NOTES_PER_BAR[1] * chorus.bars
    sel = {"tracks": "new", "from": lo, "to": hi}
    instruction = (
        f"Write a counter-melody for the chorus (bars {chorus.first_bar + 1}-{chorus.first_bar + chorus.bars}, "
        f"beats {lo:g}-{hi:g}) on a new track: {lo_n} to {hi_n} notes, at least four different pitches, a line "
        f"whose top voice changes direction at least three times, in {key}, within an octave and a half, no "
        f"semitone rubs (minor seconds, major sevenths, minor ninths) against the {hook_name.lower()} on beats "
        f"one and three, at most a quarter of its notes doubling the {hook_name.lower()} (the same pitch class "
        f"starting together, within 30 ms), its own line rather than a copy of the "
        f"{', '.join(a.lower() for a in against)} (no one time shift and transposition, by semitones or by "
        "steps of the scale, may put more than half of it on another part's notes, and no more than half of "
        "it may play runs of five notes of their melody in any rhythm, forwards, backwards or upside down), and "
        "loud enough to hear in the mix (at least -32 LUFS in the chorus, mute and solo honoured). Leave the "
        f"{hook_name.lower()} exactly as it is. {PLAY_PITCHED}")
    checks = [
        {"id": "count", "label": "Notes in the new line, chorus", "kind": "count", "target": [lo_n, hi_n],
         "soft": 1.5 * chorus.bars, "weight": 1, **sel},
        {"id": "pitches", "label": "Different pitches in the new line", "kind": "distinct", "target": [4, None],
         "soft": 2, "gate": True, **sel},
        {"id": "contour", "label": "Changes of direction in the new line", "kind": "turns", "target": [3, None],
         "soft": 2, "weight": 1, **sel},
        {"id": "in-key", "label": f"Share of new notes in {key}", "kind": "inKey", "target": [0.95, 1],
         "soft": 0.4, "weight": 1, **sel},
        {"id": "clashes", "label": f"Strong beats clashing with the {hook_name.lower()}", "kind": "clashes",
         "target": [0, 0], "soft": 3, "weight": 2, **sel, "against": [hook_name]},
        {"id": "span", "label": "Range of the new line", "kind": "span", "unit": "semitones", "target": [0, 18],
         "soft": 6, "weight": 1, **sel},
        {"id": "doubling", "label": f"Share of notes doubling the {hook_name.lower()}", "kind": "doubling",
         "target": [0, 0.25], "soft": 0.5, "weight": 1, **sel, "against": [hook_name]},
        {"id": "copy", "label": f"Largest share of a new track that copies the {', '.join(a.lower() for a in against)} "
         "(moved and transposed)", "kind": "copied", "target": [0, 0.5], "soft": 0.25, "gate": True, **sel,
         "against": against},
        {"id": "heard", "label": "Loudness of the new tracks in the chorus as the mix plays it", "kind": "measure",
         "metric": "lufs", "unit": "LUFS", "target": [-32, None], "soft": 10, "gate": True, "tracks": "new",
         "section": chorus.name},
        {"id": "voiced", "label": "Share of the new notes a pitched house instrument plays at their pitch",
         "kind": "voiced", "target": [1, 1], "soft": 0.25, "gate": True, **sel, "voice": "pitched"},
        {"id": "hook", "label": f"{hook_name} notes as they were", "kind": "unchanged", "target": [1, 1],
         "soft": 0.5, "gate": True, "tracks": [hook_name]},
    ]
    fields = {"family": "writing", "title": "Write a counter-melody", "instruction": instruction,
              "scope": {"new": True}, "setup": [], "checks": checks}
    hook = _placed(song, hook_name, (lo, hi))
    line = [{"p": p, "t": t - lo, "d": HALF, "v": 0.8} for t, p in _own_line(truth, song, chorus, hook, against)]
    length = hi - lo
    oracle = Answer("oracle", f"Half notes on the strong beats under the {hook_name.lower()}: tones of each "
                    f"bar's chord the {hook_name.lower()} is not sounding, alternating high and low.",
                    [_track("Counter"), _clip(lo, length, line)])
    octave_down = [{"p": p - 12, "t": t - lo, "d": d, "v": v} for t, p, d, v in hook]
    late = [{**n, "t": n["t"] + 1} for n in octave_down if n["t"] + 1 < length]
    backwards = [{**n, "p": m["p"]} for n, m in zip(octave_down, reversed(octave_down))]
    scale = KeySig(chorus.key.tonic_pc, chorus.key.mode).scale_pcs
    thirds = [{"p": _third_below(p, scale), "t": t - lo, "d": d, "v": v} for t, p, d, v in hook]
    tops = _merged([p for _, p, _, _ in hook])
    rhythm = [{"p": p - 12, "t": 0.5 + 0.75 * i, "d": 0.75, "v": 0.8} for i, p in enumerate(tops)
              if 0.5 + 0.75 * i + 0.75 <= length]
    tonic = line[0]["p"] - (line[0]["p"] - chorus.key.tonic_pc) % 12
    flicked = [m for n in thirds for m in (
        {**n, "d": max(n["d"] - 0.06, 0.25)},
        {"p": n["p"] + 5, "t": n["t"] + max(n["d"] - 0.06, 0.25), "d": 0.05, "v": 0.5}) if m["t"] < length]
    misses = (
        Answer("cheat-octave-copy", f"The {hook_name.lower()} copied an octave down on a new track.",
               [_track("Counter"), _clip(lo, length, octave_down)], ("copy",)),
        Answer("cheat-delayed-copy", f"The {hook_name.lower()} an octave down and one beat late, a canon.",
               [_track("Counter"), _clip(lo, length, late)], ("copy",)),
        Answer("cheat-hook-new-rhythm", f"The {hook_name.lower()}'s notes an octave down in a new rhythm, a "
               "dotted eighth each from the and of one: the melody is the hook's all the same.",
               [_track("Counter"), _clip(lo, length, rhythm)], ("copy",)),
        Answer("cheat-retrograde", f"The {hook_name.lower()}'s notes backwards, an octave down, in its own rhythm: "
               "a melody of its own to the ear of the time-aligned checks, and the hook all the same.",
               [_track("Counter"), _clip(lo, length, backwards)], ("copy",)),
        Answer("cheat-parallel-thirds", f"The {hook_name.lower()} a diatonic third below, note for note.",
               [_track("Counter"), _clip(lo, length, thirds)], ("copy",)),
        Answer("cheat-split-thirds", f"The {hook_name.lower()} a diatonic third below, dealt note by note over "
               "three new tracks: no one track copies more than a third of it, and the chorus hears the whole.",
               [op for k in range(3) for op in _split(k, lo, length, thirds[k::3])], ("copy",)),
        Answer("cheat-flicked-thirds", f"The {hook_name.lower()} a diatonic third below with a 0.05-beat click "
               "after each note: twice the notes, so the copy's share halves unless clicks are read as what they "
               "are, ornaments.", [_track("Counter"), _clip(lo, length, flicked)], ("copy",)),
        Answer("cheat-one-note", "The tonic on every beat of the chorus: in key, never a melody.",
               [_track("Counter"), _clip(lo, length, [{"p": tonic, "t": float(b), "d": 1, "v": 0.8}
                                                      for b in range(int(length))])], ("pitches", "contour")),
        Answer("in-the-verse", "The oracle's line written into the verse, where nobody asked for it.",
               [_track("Counter"), _clip(verse.start_beats, verse.end_beats - verse.start_beats,
                                         line[:int((verse.end_beats - verse.start_beats) / HALF)])], ("count",)),
        Answer("cheat-muted", "The oracle's line on a muted new track: written, never heard.",
               [_track("Counter", mute=True), _clip(lo, length, line)], ("heard",)),
        Answer("cheat-on-the-kit", "The oracle's line on a new track played by the drum kit, 12 dB up: a "
               "melody written, cymbals and silence heard.",
               [_kit_track("Counter"), _clip(lo, length, line)], ("voiced",)),
    )
    return fields, oracle, misses


def _split(k: int, start: float, length: float, notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A new track ``Counter <k>`` playing ``notes``: one share of a line dealt over several tracks."""
    ref = f"ctr{k}"
    return [track_add_op(f"Counter {k + 1}", instrument={"device": "core.keys", "params": {}}, ref=ref),
            clip_add_op(ref, start=start, length=length, name="counter", notes=notes)]


def _merged(pitches: list[int]) -> list[int]:
    return [p for i, p in enumerate(pitches) if i == 0 or p != pitches[i - 1]]


def _third_below(p: int, scale: tuple[int, ...]) -> int:
    """Two steps of ``scale`` under ``p`` (a scale tone)."""
    below = p - 1
    steps = 0
    while True:
        if below % 12 in scale:
            steps += 1
            if steps == 2:
                return below
        below -= 1
