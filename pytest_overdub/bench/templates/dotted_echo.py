"""``device-dotted-echo@<seed>``: a clap part doubles the snare of a generated tier-1 song; build its
dotted-eighth echo.

The setup adds the part the published task's Snaps are: a Clap track (``core.drums``, the Kit's kit, no
room send, no inserts) playing a clap (39) on every snare hit the truth tags in the Kit, at its velocity:
the backbeat, a hit every two beats, as the published snaps. Computed from the truth: those hits, and the
song's tempo (the probes' fixed tempo and the dotted eighth in ms). The checks are the published task's
on the Clap track, the probe tempo the song's own instead of 100 bpm, and the repeat's time drawn at eight
tempos instead of two: the draws are seeded from the submission's devices, so a spare param can be tried
offline until two draws land on the song's tempo (about 1 try in 15 000), and an echo at a fixed time in
ms, the song's dotted eighth, then passes (1.000 on seed 2); eight draws make that 1 try in 6 x 10^16.
The oracle and near misses and cheats are its devices (a tempo-locked feedback delay at 0.75 beat; the
house delay; a quarter-note echo; a tempo table; the repeats alone; three kernels that echo only a
probe-like click or the first hit).
"""

from __future__ import annotations

from ...generate.build import Generated
from .published import published_answers, published_checks

TIER = 1
TASK = "device-dotted-echo"
CLAP = 39
PROBE_TEMPO = 100  # the published task's probe tempo, the lab song's
TIME_DRAWS = 8     # drawn tempos for the repeat's time (the published task draws 2)


def _clips(made: Generated) -> list[dict]:
    """One clip per section of the Kit: its snare hits (the truth's ``snare`` tags) as claps."""
    truth, song = made.truth, made.song
    tags = {n.id: n.tag for n in truth.notes}
    kit = next(p for p in truth.parts_with("drums") if p.name == "Kit")
    return [{"start": c.start, "length": c.length, "name": f"{c.name} claps",
             "notes": [{"p": CLAP, "t": n.t, "d": 0.25, "v": n.v} for n in c.notes if tags[n.id] == "snare"]}
            for c in song.track(kit.track_id).clips]


def _checks(tempo: float) -> list[dict]:
    checks = published_checks(TASK, old="Snaps", new="Clap")
    for c in checks:
        c["label"] = c["label"].replace("snap", "clap")
        if c.get("tempos") == [PROBE_TEMPO]:
            c["tempos"] = [tempo]
            c["label"] = c["label"].replace(f"{PROBE_TEMPO} bpm", f"the song's {tempo:g} bpm")
        if c["id"] == "time":
            c["draws"] = TIME_DRAWS
            c["label"] = c["label"].replace("two drawn tempos", "eight drawn tempos")
    return checks


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    kit = song.track(next(p for p in truth.parts_with("drums") if p.name == "Kit").track_id)
    tempo = truth.tempo_bpm
    setup = [{"type": "track.add", "track": {
        "name": "Clap", "gain": kit.gain - 3, "pan": 0,
        "instrument": {"device": "core.drums", "params": {"kit": kit.instrument.params["kit"]}},
        "clips": _clips(made)}}]
    dotted_ms = 0.75 * 60000.0 / tempo
    instruction = (
        "A clap now doubles the snare on the Clap track. Write your own echo effect for it: define it with "
        "device.define and insert it on Clap (a house delay does not count). Its first repeat lands a dotted "
        f"eighth (0.75 beat, {dotted_ms:.0f} ms at the song's {tempo:g} bpm) after each hit, within 3 ms, both "
        "on the claps themselves at the song's tempo and at any other tempo, since it must follow the tempo; "
        "each repeat sits 6 to 30 dB under the dry hit, on the claps and on any other sound; and the dry "
        "claps pass through as they are (within 1.5 dB).")
    fields = {"family": "device", "title": "Build a dotted-eighth echo", "instruction": instruction,
              "scope": {"tracks": ["Clap"]}, "setup": setup, "checks": _checks(tempo)}
    oracle, misses = published_answers(TASK, old="Snaps", new="Clap")
    return fields, oracle, misses
