"""``device-decaying-instrument@<seed>``: a Bell part rings the hook of a generated tier-1 song in the
chorus, on a pad that holds every note; build an instrument that dies away.

The setup adds the part the published task's Bell is: a Bell track on ``core.pad`` (no inserts) playing
one note a bar through every chorus (the sections named Chorus...): the hook's note on the bar's
downbeat, an octave up, held three and a half beats, as the published Bell's one held note a bar. The pad
sustains them all, and the sustaining cheats read at least a bar's gap (2.2 s at 110 bpm) on every note
and the song's tail on its last (the render's 1.5 s tail after a note held 3.5 beats). Computed from the truth:
the chorus sections and the hook part's notes in them. The checks and probes are the published task's on
the Bell track; the oracle and near misses and cheats are its devices (a two-partial struck bar that dies
in under a second; an organ; clicks; a noise burst; a fixed crash sample with a faint tone at the
pitch; a bell on one pitch; two kernels that decay only for
the probe's notes or tempo, which sustain on the real part).
"""

from __future__ import annotations

from ...generate.build import Generated
from .published import published_answers, published_checks

TIER = 1
TASK = "device-decaying-instrument"
OCTAVE = 12
HELD_SHORT_BEATS = 0.5  # each bell note is held to half a beat before the next bar, as the published Bell


def _bell_note(hook: list[tuple[float, int, float, float]], bar_beats: float, bar_len: float) -> dict | None:
    """The hook's note sounding on the bar's downbeat (else its first in the bar), an octave up, struck on
    the downbeat and held to half a beat before the next bar; None for a bar the hook rests through."""
    sounding = [n for n in hook if n[0] <= bar_beats < n[0] + n[2]]
    inside = [n for n in hook if bar_beats <= n[0] < bar_beats + bar_len]
    pick = sounding[0] if sounding else inside[0] if inside else None
    if pick is None:
        return None
    return {"p": pick[1] + OCTAVE, "t": bar_beats, "d": bar_len - HELD_SHORT_BEATS, "v": pick[3]}


def _clips(made: Generated) -> list[dict]:
    truth, song = made.truth, made.song
    hook = sorted((c.start + n.t, n.p, n.d, n.v) for c in song.track(truth.part("lead").track_id).clips
                  for n in c.notes)
    bar_len = truth.beats_per_bar
    clips = []
    for s in truth.sections:
        if not s.name.lower().startswith("chorus"):
            continue
        notes = []
        for i in range(s.bars):
            note = _bell_note(hook, s.start_beats + i * bar_len, bar_len)
            if note is not None:
                notes.append({**note, "t": i * bar_len})
        clips.append({"start": s.start_beats, "length": s.end_beats - s.start_beats, "name": f"{s.name} bell",
                      "notes": notes})
    return clips


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    hook = truth.part("lead")
    setup = [{"type": "track.add", "track": {
        "name": "Bell", "gain": song.track(hook.track_id).gain - 4, "pan": 0,
        "instrument": {"device": "core.pad"}, "clips": _clips(made)}}]
    instruction = (
        f"A Bell track rings the {hook.name.lower()}'s downbeat note an octave up in every bar of the chorus, "
        "but it plays on a pad that holds every note, so the bell smears. Write your own instrument for the "
        "bell track: define it with device.define and set it as Bell's instrument (a house instrument does "
        "not count). Every note, short or held, at any pitch and level, falls under -60 dBFS (and 40 dB under "
        "its own peak) within 1.5 s of being struck, on any notes and on the bell part itself as the track "
        "plays it, through its inserts; every note, on the bell part and elsewhere, sounds at its pitch (its "
        "fundamental a clear partial within 25 cents, no more than 15 dB under its loudest; inharmonic "
        "overtones are fine) and rings for a musical length (at least 0.1 s before it falls 30 dB under its "
        "peak); the quietest note peaks above -30 dBFS and none above -1 dBFS.")
    fields = {"family": "device", "title": "Build an instrument that dies away", "instruction": instruction,
              "scope": {"tracks": ["Bell"]}, "setup": setup,
              "checks": published_checks(TASK, old="Bell", new="Bell")}
    oracle, misses = published_answers(TASK, old="Bell", new="Bell")
    return fields, oracle, misses
