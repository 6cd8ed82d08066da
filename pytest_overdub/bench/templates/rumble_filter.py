"""``device-rumble-filter@<seed>``: the chords part of a generated tier-1 song rumbles; build a filter.

The setup makes the problem on whatever chords part the song has (Keys or Pad): its inserts go (the
low-cut EQ that kept it clean, and its reverb, so that the part's inserts are the agent's alone and the
real-track checks compare the agent's device with nothing else) and a low hum joins it, one note a bar
held through the song on the key's tonic or, where that lies under E1, its fifth: always E1..A#1
(41-58 Hz), so the part has energy in the 40-60 Hz band and, through its instrument's second partial, in
80-125 Hz. The checks and the probes are the published task's (on the chords track); the oracle and the
near misses and cheats are its devices (two 2nd-order high-passes at 250 Hz; a 12 dB turn-down; silence;
two kernels that recognise the probe's pure sine and leave the real part alone).
"""

from __future__ import annotations

from ...generate.build import Generated
from .published import published_answers, published_checks

TIER = 1
TASK = "device-rumble-filter"
HUM_LO = 28   # E1: the hum sits in E1..A#1 (41-58 Hz)
HUM_VELOCITY = 0.75
NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")


def hum_pitch(tonic_pc: int) -> int:
    """The tonic in E1..D#2, or its fifth when the tonic lies above A#1 (the fifth is then in F#1..A#1)."""
    tonic = HUM_LO + (tonic_pc - HUM_LO) % 12
    return tonic if tonic <= HUM_LO + 6 else HUM_LO + (tonic_pc + 7 - HUM_LO) % 12


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    chords = truth.part("chords")
    name = chords.name
    hum = hum_pitch(truth.key.tonic_pc)
    hz = 440.0 * 2 ** ((hum - 69) / 12)
    bars = int(truth.length_beats // truth.beats_per_bar)
    bar = truth.beats_per_bar
    notes = [{"p": hum, "t": i * bar, "d": bar - 0.25, "v": HUM_VELOCITY} for i in range(bars)]
    setup = [{"type": "insert.remove", "track": chords.track_id, "insert": i.id}
             for i in song.track(chords.track_id).inserts]
    setup.append({"type": "clip.add", "track": chords.track_id,
                  "clip": {"start": 0, "length": truth.length_beats, "name": "hum", "notes": notes}})
    part = name.lower()
    instruction = (
        f"The {name} track rumbles: its low cut is gone and a low hum ({NAMES[hum % 12]}{hum // 12 - 1}, about "
        f"{hz:.0f} Hz) sits under the {part} all through the song. Write your own effect that takes the low end out: "
        f"define it with device.define and insert it on {name} (a house EQ does not count). Around 100 Hz down "
        f"at least 18 dB and around 50 Hz down at least 24 dB, while 1 kHz and 3 kHz come through within a dB "
        f"of where they are now, for any signal at any level; and on the {part} part itself its 80-125 Hz "
        f"comes out at least 18 dB down, its 40-60 Hz at least 24 dB down, and its 1-3 kHz within 1 dB (the "
        f"music passes; silence does not).")
    fields = {"family": "device", "title": "Build a rumble filter", "instruction": instruction,
              "scope": {"tracks": [name]}, "setup": setup,
              "checks": published_checks(TASK, old="Room", new=name)}
    oracle, misses = published_answers(TASK, old="Room", new=name)
    return fields, oracle, misses
