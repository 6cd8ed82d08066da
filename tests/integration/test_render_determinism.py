"""A song rendered in two separate Python processes is bit-identical (docs/rendering.md).

Each process gets a different ``PYTHONHASHSEED`` so anything seeded from Python's ``hash()`` would differ.
The first song uses devices defined in the child script (one draws noise from its seed); the second
uses the house devices.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHILD = r'''
import hashlib, json, sys
import numpy as np
from pytest_overdub.devices.base import Effect, Instrument
from pytest_overdub.devices.params import DeviceSpec
from pytest_overdub.render import render
from pytest_overdub.song.model import song_from_data

class Noise(Instrument):
    spec = DeviceSpec("test.noise", "instrument", "Noise", "", ())
    def render(self, notes, *, n_frames):
        out = np.zeros((2, n_frames))
        for ev in notes:
            rng = np.random.default_rng([self.seed, ev.index])
            a = int(round(ev.start_s * self.sr)); b = min(a + int(ev.dur_s * self.sr), n_frames)
            out[:, a:b] = ev.velocity * rng.standard_normal((2, b - a)) * 0.3
        return out

class Smear(Effect):
    spec = DeviceSpec("test.smear", "effect", "Smear", "", ())
    def process(self, x, params):
        k = np.exp(-np.arange(400) / 80.0); k /= k.sum()
        return np.vstack([np.convolve(x[0], k)[:x.shape[1]], np.convolve(x[1], k)[:x.shape[1]]])

mode = sys.argv[1]
if mode == "test":
    notes = [{"p": 60 + i % 12, "t": i * 0.5, "d": 0.4, "v": 0.5 + 0.05 * (i % 7)} for i in range(16)]
    song = song_from_data({"format": "overdub/0", "id": "det", "tempo": 97, "tracks": [
        {"id": f"t_{k}", "name": f"T{k}", "instrument": {"device": "test.noise"}, "pan": 0.3 * k - 0.3, "gain": -3 * k,
         "inserts": [{"id": f"fx_{k}", "device": "test.smear"}],
         "clips": [{"id": f"c_{k}", "start": 0, "length": 8, "notes": notes}]} for k in range(3)],
        "master": {"gain": 6}})
    r = render(song, sr=16000, devices={"test.noise": Noise, "test.smear": Smear})
else:
    drums = [{"p": 36 if i % 4 == 0 else 42, "t": i * 0.5, "d": 0.25, "v": 0.9} for i in range(16)]
    keys = [{"p": p, "t": 0, "d": 4, "v": 0.7} for p in (57, 60, 64)]
    song = song_from_data({"format": "overdub/0", "id": "det-house", "tempo": 92, "tracks": [
        {"id": "t_kit", "name": "Kit", "instrument": {"device": "core.drums"},
         "clips": [{"id": "c_kit", "start": 0, "length": 8, "notes": drums}]},
        {"id": "t_keys", "name": "Keys", "instrument": {"device": "core.keys"}, "pan": -0.15,
         "inserts": [{"id": "fx_verb", "device": "core.verb"}],
         "clips": [{"id": "c_keys", "start": 0, "length": 8, "notes": keys}]},
        {"id": "t_hook", "name": "Hook", "instrument": {"device": "core.pluck"}, "pan": 0.15,
         "inserts": [{"id": "fx_dly", "device": "core.delay"}],
         "clips": [{"id": "c_hook", "start": 0, "length": 8,
                    "notes": [{"p": 69 + 2 * i, "t": i, "d": 0.5, "v": 0.8} for i in range(6)]}]}]})
    r = render(song)
print(json.dumps({"sha256": hashlib.sha256(np.ascontiguousarray(r.mix).tobytes()).hexdigest(),
                  "peak": float(np.abs(r.mix).max()), "shape": list(r.mix.shape),
                  "warnings": [[w.kind, w.where, w.message] for w in r.warnings]}))
'''


def _run(mode: str, hash_seed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_two_processes_render_the_same_bits():
    import json
    a, b = _run("test", "1"), _run("test", "2")
    assert a == b
    out = json.loads(a)
    assert out["warnings"] == [] and out["shape"] == [2, int(round((8 * 60 / 97 + 1.5) * 16000))]
    assert out["peak"] > 0.1            # something was actually rendered


@pytest.mark.slow
def test_house_song_renders_the_same_bits_in_two_processes():
    import json
    a, b = _run("house", "1"), _run("house", "3")
    assert a == b
    assert json.loads(a)["peak"] > 0.01
