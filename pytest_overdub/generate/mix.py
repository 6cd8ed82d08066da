"""The rough mix of a generated song: instruments, inserts, levels and pans on house devices.

Conventions: gains in dB (on a 0.5 dB grid), pans -1..1 (rounded to 0.05), device params rounded to 2
decimals (whole numbers for switches, Hz and ms where the device reads whole units makes no difference).
Every value is drawn from a range a mixing engineer would start from, so two seeds sound like two rough
mixes, never like a test signal: the kick a little over the kit, the bass under the kick, chords back and
to one side with a room, the lead up front and the other side with a delay (one reverb, on the chords: reverbs are the
renderer's dearest effect, and a second one made a song render half again slower per second than the
hand-made night-shift), a gentle glue compressor on
the master and headroom left for mastering (no limiter). The gain ranges are set from each device's
loudness at 0 dB (measured on rendered stems: kick about -20 LUFS, kit -34, bass -22, keys -15, pad -17,
pluck -23, poly -11) so the stems land near kick -20, kit -29, bass -21, chords -23 and lead -20 LUFS
before the master, and the mix near -20 LUFS with its peaks under 0 dBFS, like the bench's hand-made
night-shift.
"""

from __future__ import annotations

import random
from typing import Any


def _u(rng: random.Random, lo: float, hi: float, step: float = 0.01) -> float:
    """A value in lo..hi on a grid of ``step`` (no float drawn from rng reaches the song unrounded)."""
    n = int(round((hi - lo) / step))
    return round(lo + step * rng.randrange(n + 1), 2)


def _insert(iid: str, device: str, **params: float) -> dict[str, Any]:
    return {"id": iid, "device": device, "params": params}


def mix(rng: random.Random, *, pad: bool, pluck: bool) -> dict[str, dict[str, Any]]:
    """Role -> track settings: ``instrument``, ``inserts``, ``gain``, ``pan`` (``kick`` and ``kit`` for drums)."""
    kit = rng.randrange(6)
    kick = {"instrument": {"device": "core.drums",
                           "params": {"kit": float(kit), "drive": _u(rng, 0.3, 0.7), "decay": _u(rng, 0.9, 1.8)}},
            "inserts": [_insert("fx_kick_eq", "core.eq", hp=25.0, lowf=80.0, low=_u(rng, 1.0, 3.0, 0.5))],
            "gain": _u(rng, 0.0, 1.5, 0.5), "pan": 0.0}
    kit_t = {"instrument": {"device": "core.drums",
                            "params": {"kit": float(kit), "drive": _u(rng, 0.1, 0.4), "room": _u(rng, 0.2, 0.4)}},
             "inserts": [_insert("fx_kit_comp", "core.comp", threshold=-18.0, ratio=3.0, attack=8.0,
                                 release=120.0)],
             "gain": _u(rng, 4.0, 6.0, 0.5), "pan": 0.0}
    bass = {"instrument": {"device": "core.bass",
                           "params": {"cutoff": float(rng.randrange(300, 901, 10)), "drive": _u(rng, 0.1, 0.4),
                                      "sub": _u(rng, 0.4, 0.7)}},
            "inserts": [_insert("fx_bass_eq", "core.eq", hp=30.0),
                        _insert("fx_bass_comp", "core.comp", threshold=-20.0, ratio=4.0, attack=15.0,
                                release=120.0, makeup=2.0)],
            "gain": _u(rng, 0.5, 2.0, 0.5), "pan": 0.0}
    side = rng.choice((-1.0, 1.0))
    if pad:
        chord_inst = {"device": "core.pad", "params": {"tone": float(rng.randrange(1500, 3501, 50)),
                                                       "attack": _u(rng, 0.2, 0.6), "release": _u(rng, 0.8, 1.6)}}
    else:
        chord_inst = {"device": "core.keys", "params": {"bright": _u(rng, 0.3, 0.6), "trem": _u(rng, 0.1, 0.3)}}
    chords = {"instrument": chord_inst,
              "inserts": [_insert("fx_chords_eq", "core.eq", hp=120.0, low=-2.0),
                          _insert("fx_chords_verb", "core.verb", mix=_u(rng, 0.18, 0.3), decay=_u(rng, 1.6, 2.8))],
              "gain": _u(rng, -7.0, -5.0, 0.5) if pad else _u(rng, -8.0, -6.0, 0.5), "pan": round(side * _u(rng, 0.1, 0.35, 0.05), 2)}
    if pluck:
        lead_inst = {"device": "core.pluck", "params": {"tone": _u(rng, 0.45, 0.7), "decay": _u(rng, 1.5, 3.5)}}
    else:
        lead_inst = {"device": "core.poly", "params": {"wave": float(rng.randrange(2)),
                                                       "cutoff": float(rng.randrange(2500, 5001, 50)),
                                                       "release": 0.25}}
    lead = {"instrument": lead_inst,
            "inserts": [_insert("fx_lead_eq", "core.eq", hp=200.0),
                        _insert("fx_lead_delay", "core.delay", div=float(rng.choice((6, 7))),
                                mix=_u(rng, 0.15, 0.25), feedback=_u(rng, 0.25, 0.4))],
            "gain": _u(rng, 2.0, 4.0, 0.5) if pluck else _u(rng, -10.0, -8.0, 0.5),
            "pan": round(-side * _u(rng, 0.1, 0.3, 0.05), 2)}
    return {"kick": kick, "kit": kit_t, "bass": bass, "chords": chords, "lead": lead}


def master() -> dict[str, Any]:
    """A glue compressor, and 2 dB of headroom under it."""
    return {"gain": -2.0, "inserts": [_insert("fx_master_glue", "core.comp", threshold=-14.0, ratio=2.0,
                                              attack=30.0, release=200.0)], "clip": "soft"}
