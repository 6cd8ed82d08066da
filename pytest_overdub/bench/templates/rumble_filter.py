"""``device-rumble-filter@<seed>``: the chords part of a generated tier-1 song rumbles; build a filter.

The setup makes the problem on whatever chords part the song has (Keys or Pad): its inserts go (the
low-cut EQ that kept it clean, and its reverb, so that the part's inserts are the agent's alone and the
real-track checks compare the agent's device with nothing else) and a low hum joins it, held through the
song a bar at a time: the key's tonic or, where that lies under E1, its fifth, always E1..A#1 (41-58 Hz,
the 40-60 Hz band), and over it two scale tones in E2..B2 (82-123 Hz, the 80-125 Hz band), neither a
partial of the hum (:func:`drone_pitches`). Several low tones at once, as the published task's low Room
chords are: a kernel that removes only the loudest low peak and its partials (a hum remover, not a
high-pass: the probes are single sines, which it removes) leaves the rest of the 80-125 Hz band and fails.
The checks and the probes are the published task's (on the chords track); the oracle and the near misses
and cheats are its devices (two 2nd-order high-passes at 250 Hz; a 12 dB turn-down; silence; two kernels
that recognise the probe's pure sine and leave the real part alone), and the hum remover.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...generate.build import Generated
from ...generate.harmony import KeySig
from .base import Answer
from .published import published_answers, published_checks

TIER = 1
TASK = "device-rumble-filter"
HUM_LO = 28   # E1: the hum sits in E1..A#1 (41-58 Hz)
HUM_VELOCITY = 0.75
DRONE_BAND = range(40, 48)   # E2..B2: 82-123 Hz, inside 80-125 Hz
DRONE_VELOCITY = 0.6
#: A hum remover, not a high-pass: it zeroes the loudest spectral peak under 130 Hz and its 2nd and 3rd
#: partials. It removes a probe's single sine and a one-note hum, and leaves a drone's other tones.
HUM_REMOVER = """# Removes the loudest peak under 130 Hz and its 2nd and 3rd partials; everything else passes.
def process(x, params, ctx):
    n = x.shape[1]
    m = 1 << (n - 1).bit_length()  # zero-padded to a power of two: a fast FFT
    spec = np.fft.rfft(x, m, axis=1)
    f = np.fft.rfftfreq(m, 1.0 / ctx.sr)
    power = (np.abs(spec) ** 2).sum(axis=0)
    low = (f > 20) & (f < 130)
    if not low.any() or power[low].max() <= 0:
        return x
    f0 = f[low][np.argmax(power[low])]
    for k in (1, 2, 3):
        spec[:, np.abs(f - k * f0) < 0.04 * k * f0] = 0
    return np.fft.irfft(spec, n=m, axis=1)[:, :n]
"""
NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")


def hum_pitch(tonic_pc: int) -> int:
    """The tonic in E1..D#2, or its fifth when the tonic lies above A#1 (the fifth is then in F#1..A#1)."""
    tonic = HUM_LO + (tonic_pc - HUM_LO) % 12
    return tonic if tonic <= HUM_LO + 6 else HUM_LO + (tonic_pc + 7 - HUM_LO) % 12


def drone_pitches(tonic_pc: int, mode: str) -> tuple[int, int, int]:
    """The hum (:func:`hum_pitch`) and two scale tones of the key in E2..B2, neither the hum's 2nd or 3rd
    partial (its octave, its twelfth), a triad tone first, at least a whole step apart."""
    hum = hum_pitch(tonic_pc)
    scale = KeySig(tonic_pc, mode).scale_pcs
    triad = {scale[0], scale[2], scale[4]}
    tones = sorted((p for p in DRONE_BAND if p % 12 in scale and p not in (hum + 12, hum + 19)),
                   key=lambda p: (p % 12 not in triad, p))
    second = next(p for p in tones[1:] if abs(p - tones[0]) >= 2)
    return hum, tones[0], second


def build(made: Generated, variant_id: str):
    truth, song = made.truth, made.song
    chords = truth.part("chords")
    name = chords.name
    hum, *drone = drone_pitches(truth.key.tonic_pc, truth.key.mode)
    hz = 440.0 * 2 ** ((hum - 69) / 12)
    bars = int(truth.length_beats // truth.beats_per_bar)
    bar = truth.beats_per_bar
    notes = [{"p": p, "t": i * bar, "d": bar - 0.25, "v": HUM_VELOCITY if p == hum else DRONE_VELOCITY}
             for i in range(bars) for p in (hum, *drone)]
    setup = [{"type": "insert.remove", "track": chords.track_id, "insert": i.id}
             for i in song.track(chords.track_id).inserts]
    setup.append({"type": "clip.add", "track": chords.track_id,
                  "clip": {"start": 0, "length": truth.length_beats, "name": "hum", "notes": notes}})
    part = name.lower()
    above = " and ".join(f"{NAMES[p % 12]}{p // 12 - 1}" for p in drone)
    instruction = (
        f"The {name} track rumbles: its low cut is gone and a low hum ({NAMES[hum % 12]}{hum // 12 - 1}, about "
        f"{hz:.0f} Hz, with {above} over it) sits under the {part} all through the song. Write your own effect "
        f"that takes the low end out: define it with device.define and insert it on {name} (a house EQ does not "
        f"count). Around 100 Hz down at least 18 dB and around 50 Hz down at least 24 dB, while 1 kHz and 3 kHz come through within a dB "
        f"of where they are now, for any signal at any level; and on the {part} part itself its 80-125 Hz "
        f"comes out at least 18 dB down, its 40-60 Hz at least 24 dB down, and its 1-3 kHz within 1 dB (the "
        f"music passes; silence does not).")
    fields = {"family": "device", "title": "Build a rumble filter", "instruction": instruction,
              "scope": {"tracks": [name]}, "setup": setup,
              "checks": published_checks(TASK, old="Room", new=name)}
    oracle, misses = published_answers(TASK, old="Room", new=name)
    misses = tuple(_comb_on(m, hum) if m.name == "cheat-notch-comb" else m for m in misses)
    return fields, oracle, misses + (_hum_remover(name),)


def _comb_on(comb: Answer, hum: int) -> Answer:
    """The published notch comb on a variant: it notches the notes of its params ``p0``..``p7`` and their
    2nd-4th partials, of which only the notes themselves can lie in the hum's 41-58 Hz (the lowest, G1,
    doubled is 98 Hz). Where the hum is one of those notes the comb does take the part's 40-60 Hz down
    (``real-sub`` reads -30 to -36 dB on seeds 66 and 92, G1 hums), so it is not named there; the probes'
    ``sub`` gate fails it on every variant (its notches leave a drawn sine at about -5 dB)."""
    define = next(op for op in comb.ops if op["type"] == "device.define")
    notes = {int(p["def"]) for p in define["device"]["params"] if re.fullmatch(r"p[0-7]", p["key"])}
    if hum not in notes:
        return comb
    return replace(comb, fails=tuple(c for c in comb.fails if c != "real-sub"))


def _hum_remover(track: str) -> Answer:
    return Answer("cheat-hum-remover", "Removes the loudest low peak and its partials: the probe's single sine "
                  "goes, and a one-note hum would, but it is no high-pass and the drone's other tones stay.",
                  [{"type": "device.define", "device": {"id": "cheat.hum-remover", "kind": "effect",
                                                        "name": "Hum remover", "params": [],
                                                        "kernel": HUM_REMOVER}},
                   {"type": "insert.add", "track": track, "insert": {"device": "cheat.hum-remover"}}],
                  ("real-low",))
