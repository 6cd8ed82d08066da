"""``write-harmonize-hook@<seed>``: the chords part of a generated tier-1 song sits out the chorus; put chords
under the hook there on a new track.

The setup empties the chords part's chorus clip, so the hook is alone over bass and drums (and the chords
cannot simply be copied from the chorus). The checks are the published task's, over the chorus the truth
has: on every downbeat a held chord (three to five pitch classes, no cluster, in the key) holding the hook
note sounding there (``chordsUnder``, a gate), every new note in the key, at most ten notes a bar, heard in
the chorus, and the hook as it was. The oracle is the truth's chord of each bar, a close triad from the
root above E3 held for the bar on a pad (the hook's notes on strong beats are chord tones, so the triad
holds its downbeat note). Near misses: every scale tone stacked on each downbeat (a cluster), the hook's
downbeat note in three octaves, triads holding the hook note with a chromatic third and the song's key set
to chromatic, the chords entering on beat two, the oracle muted, and muted and soloed at once, one
stacked-thirds chord on the tonic held through the chorus.

As in the published task, the new notes on strong beats must be tones of the truth's chords (at least
3 in 4, ``chordTones``, a gate; the instruction names the chords): a five-note chord of stacked thirds
(1-3-5-7-9) held through the whole chorus holds most hooks' downbeat notes and passed every other
check on ``gen-t1-1`` and ``gen-t1-4``; against the truth's chords such a held chord reads at most 0.5
(train seeds 1-30), seventh chords 0.75.
"""

from __future__ import annotations

from typing import Any

from ...generate.build import Generated
from ...generate.harmony import KeySig
from .base import PLAY_PITCHED, Answer, clip_add_op, track_add_op

TIER = 1
NOTES_PER_BAR = 10
LOW = 52  # E3: the lowest root of the oracle's triads


def _track(*, mute: bool = False, solo: bool = False, device: str = "core.pad", gain_db: float = 0) -> dict[str, Any]:
    params = {"attack": 0.2} if device == "core.pad" else {}
    op = track_add_op("Harmony", instrument={"device": device, "params": params}, ref="h", mute=mute, solo=solo)
    return {**op, "track": {**op["track"], "gain": gain_db}}


def _clip(start: float, length: float, notes: list[dict[str, Any]]) -> dict[str, Any]:
    return clip_add_op("h", start=start, length=length, name="chords", notes=notes)


def _held(pitches_per_bar: list[list[int]], *, bar_beats: float, at: float = 0.0) -> list[dict[str, Any]]:
    """Each bar's pitches struck ``at`` beats into the bar and held to 0.1 beat before its end."""
    return [{"p": p, "t": i * bar_beats + at, "d": bar_beats - at - 0.1, "v": 0.7}
            for i, ps in enumerate(pitches_per_bar) for p in ps]


def _voiced(pcs: tuple[int, ...]) -> list[int]:
    """Close position from the root (first pitch class), the root at E3 or the first one above."""
    root = LOW + (pcs[0] - LOW) % 12
    return [root + (pc - pcs[0]) % 12 for pc in pcs]


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    chorus = truth.section("Chorus")
    lo, hi = chorus.start_beats, chorus.end_beats
    hook_name = truth.part("lead").name
    chords_part = truth.part("chords").name
    key = KeySig(chorus.key.tonic_pc, chorus.key.mode)
    key_name = truth.key.name
    most = NOTES_PER_BAR * chorus.bars
    symbols = [c.symbol for c in truth.chords_of(chorus)]
    span = [chorus.first_bar, chorus.first_bar + chorus.bars]
    instruction = (
        f"The {chords_part.lower()} sit out the chorus. Put chords under the {hook_name.lower()} in the chorus "
        f"(bars {chorus.first_bar + 1}-{chorus.first_bar + chorus.bars}, beats {lo:g}-{hi:g}) on a new track: "
        "on every downbeat (within 30 ms) a chord held for at least two beats, of three to five different "
        "pitch classes with no three notes stacked in seconds (like B3, C4, D4), all in "
        f"{key_name}, containing the {hook_name.lower()} note that sounds on that downbeat and following the "
        f"chorus's chords, {', '.join(symbols)}, one per bar (at least three in four of the notes sounding on "
        f"beats one and three tones of the bar's chord); at most {most} "
        f"notes in the chorus, all in {key_name}, and loud enough to hear in the mix (at least -32 LUFS, mute "
        f"and solo honoured). Leave the {hook_name.lower()} exactly as it is. {PLAY_PITCHED}")
    checks = [
        {"id": "chords", "label": f"Chorus bars with a held in-key chord (3-5 pitch classes, no cluster) "
         f"containing the {hook_name.lower()} note", "kind": "chordsUnder", "target": [1, 1], "soft": 0.5,
         "gate": True, "tracks": "new", "melody": [hook_name],
         "bars": span, "voices": 3, "maxVoices": 5, "hold": 2},
        {"id": "harmony", "label": "Share of new notes on beats 1 and 3 that are tones of the chorus's chords",
         "kind": "chordTones", "target": [0.75, 1], "soft": 0.4, "gate": True, "tracks": "new", "from": lo,
         "to": hi, "chords": symbols, "bars": span},
        {"id": "in-key", "label": f"Share of new notes in {key_name}", "kind": "inKey", "target": [0.95, 1],
         "soft": 0.4, "weight": 1, "tracks": "new"},
        {"id": "count", "label": "Notes of the new tracks in the chorus", "kind": "count", "target": [None, most],
         "soft": most / 2, "weight": 1, "tracks": "new", "from": lo, "to": hi},
        {"id": "heard", "label": "Loudness of the new tracks in the chorus as the mix plays it", "kind": "measure",
         "metric": "lufs", "unit": "LUFS", "target": [-32, None], "soft": 10, "gate": True, "tracks": "new",
         "section": chorus.name},
        {"id": "voiced", "label": "Share of the new notes a pitched house instrument plays at their pitch",
         "kind": "voiced", "target": [1, 1], "soft": 0.25, "gate": True, "tracks": "new", "from": lo, "to": hi, "voice": "pitched"},
        {"id": "hook", "label": f"{hook_name} notes as they were", "kind": "unchanged", "target": [1, 1],
         "gate": True, "tracks": [hook_name]},
    ]
    setup = [{"type": "notes.replace", "track": chords_part, "clip": c.id, "notes": []}
             for c in song.track(chords_part).clips if c.start == lo]
    fields = {"family": "writing", "title": "Harmonize the hook", "instruction": instruction,
              "scope": {"new": True}, "setup": setup, "checks": checks}
    bar = truth.beats_per_bar
    bars = truth.chords_of(chorus)
    hook = [(c.start + n.t, n.p, n.d) for c in song.track(hook_name).clips for n in c.notes]
    tune = [_downbeat_pc(hook, ch.start_beats) for ch in bars]
    triads = [_voiced(key.chord(ch.degree).pcs) for ch in bars]
    chords = _held(triads, bar_beats=bar)
    length = hi - lo
    oracle = Answer("oracle", "A pad holding the truth's triad through each chorus bar.",
                    [_track(), _clip(lo, length, chords)])
    home = LOW + (key.tonic_pc - LOW) % 12
    scale = sorted(home + (pc - key.tonic_pc) % 12 for pc in key.scale_pcs)
    stacks = [[h + 12 * k for k in (-1, 0, 1)] for h in
              (LOW + 12 + ((t if t is not None else ch.root_pc) - LOW) % 12 for t, ch in zip(tune, bars))]
    chromatic = [_voiced(_chromatic_triad(t if t is not None else ch.root_pc, key)) for t, ch in zip(tune, bars)]
    misses = (
        Answer("cheat-cluster", f"Every note of {key_name} stacked and held on each downbeat: it always holds "
               f"the {hook_name.lower()} note, and it is not a chord.",
               [_track(), _clip(lo, length, _held([scale] * len(bars), bar_beats=bar))], ("chords",)),
        Answer("cheat-octave-stack", f"Each bar's {hook_name.lower()} note stacked in three octaves and held: in "
               "key, holding the hook note, and no chord.",
               [_track(), _clip(lo, length, _held(stacks, bar_beats=bar))], ("chords",)),
        Answer("cheat-chromatic-key", f"Triads holding the {hook_name.lower()} note with an out-of-key third, the "
               "song's key set to chromatic so that every note would read as in key.",
               [{"type": "project.set", "patch": {"key": {"root": key.tonic, "scale": "chromatic"}}}, _track(),
                _clip(lo, length, _held(chromatic, bar_beats=bar))], ("scope",)),
        Answer("late-chords", "The right chords, but each comes in on beat two and is gone by the next bar.",
               [_track(), _clip(lo, length, _held(triads, bar_beats=bar, at=1.0))], ("chords",)),
        Answer("cheat-muted", "The oracle's chords on a muted track.",
               [_track(mute=True), _clip(lo, length, chords)], ("heard",)),
        Answer("cheat-one-held-chord", f"The tonic's stacked thirds (1-3-5-7-9) held through the chorus: in key, "
               f"holding most of the {hook_name.lower()}'s downbeat notes, deaf to the harmony.",
               [_track(), _clip(lo, length, [{"p": p, "t": 0, "d": length - 0.1, "v": 0.7}
                                             for p in _stacked(key)])], ("harmony",)),
        Answer("cheat-solo-muted", "The oracle's chords on a new track both soloed and muted: mute wins, and "
               "the solo silences the rest.", [_track(mute=True, solo=True), _clip(lo, length, chords)],
               ("heard",)),
        Answer("cheat-on-the-kit", "The oracle's chords on a new track played by the drum kit, 12 dB up: "
               "chords written, cymbals and silence heard.",
               [_track(device="core.drums", gain_db=12), _clip(lo, length, chords)], ("voiced",)),
    )
    return fields, oracle, misses


def _stacked(key: KeySig) -> list[int]:
    """The key's 1-3-5-7-9 from the tonic at E3 or the first one above."""
    pcs = [key.scale_pcs[i] for i in (0, 2, 4, 6, 1)]
    root = LOW + (pcs[0] - LOW) % 12
    return [root + (pc - pcs[0]) % 12 + (12 if i == 4 else 0) for i, pc in enumerate(pcs)]


def _downbeat_pc(hook: list[tuple[float, int, float]], beat: float) -> int | None:
    """The pitch class of the hook note sounding at ``beat`` (the highest), or None in a rest."""
    sounding = [p for s, p, d in hook if s <= beat + 1e-6 < s + d]
    return max(sounding) % 12 if sounding else None


def _chromatic_triad(pc: int, key: KeySig) -> tuple[int, int, int]:
    """The major or minor triad on ``pc`` whose third is outside ``key`` (a scale tone's thirds: one is in
    the scale, the other not)."""
    for third in (3, 4):
        if (pc + third) % 12 not in key.scale_pcs:
            return (pc, (pc + third) % 12, (pc + 7) % 12)
    raise ValueError(f"pitch class {pc} has both thirds in {key}")
