"""core.drums: a synthesised General MIDI drum kit.

Note map (General MIDI): 35/36 kick, 37 side stick, 38/40 snare (40 a rimshot: more ring), 39 clap,
42 closed hat, 44 pedal hat, 46 open hat (choked by the next 42/44), toms 41/43/45/47/48/50 (low to
high), cymbals 49/57 crash, 51/59 ride, 53 ride bell, 52 china, 55 splash, 56 cowbell, 54 tambourine,
69/70/82 shaker. Other pitches are silent.

Kits: FIELD (natural, warm), MACHINE (drum-machine: long sweeping kick, bright metallic hats, a touch
of drive) and DUST (lo-fi: short thick kick, dark snare, heavy drive and 7-bit crush). The studio's
other kits map to the nearest of these: 808 and 909 -> MACHINE, ACOUSTIC -> FIELD.

Params (per note, read at note-on): ``tune`` (semitones, all pitched parts and metal), ``decay``
(scales every decay time), ``tone`` (a tilt around 1 kHz: ±6 dB at the extremes, from a complementary
one-pole split so tone 0 is exactly flat), ``drive`` (tanh), ``width`` (spreads hats, toms and
cymbals; kick, snare, stick and clap stay centred, L == R exactly), ``room`` (a send to a short mono
room of eight early-reflection taps, 6-52 ms, low-passed at 4 kHz, added equally to both sides), and
``cym_model`` (cymbal source: CLASSIC six-square metal cluster, FDN four-line ringing network, MODAL
sixteen inharmonic partials).

Speed: noisy and metallic sources are rendered once per device into seeded banks (a few seconds each,
cached per kit/tune/model); each hit reads its slice at an offset drawn from ``rng_for(seed, index)``
and multiplies an envelope, so a hit costs a few array operations.
"""

from __future__ import annotations

import bisect
import math
from typing import Mapping

import numpy as np

from ..dsp.compiled import rng_for
from ..dsp.jit import njit
from ..dsp.envelopes import LN1000
from ..dsp.signals import square
from .base import Instrument, NoteEvent
from .params import HOUSE_SPECS

#: kit name -> sound constants (kick: end Hz, start Hz, sweep tau s, T60 s, click level; snare: tone Hz,
#: tone T60 s, noise T60 s, noise band centre Hz, noise mix; hats: high-pass Hz and metal mix).
KITS: dict[str, dict] = {
    "FIELD": dict(kick=(52.0, 120.0, 0.020, 0.45, 0.10), snare=(190.0, 0.16, 0.26, 2200.0, 0.55),
                  hat_hp=7500.0, metal=0.3, drive=0.0, crush=0),
    "MACHINE": dict(kick=(46.0, 150.0, 0.030, 0.85, 0.05), snare=(235.0, 0.12, 0.20, 3200.0, 0.65),
                    hat_hp=8000.0, metal=0.8, drive=0.2, crush=0),
    "DUST": dict(kick=(58.0, 105.0, 0.015, 0.32, 0.12), snare=(175.0, 0.14, 0.18, 1400.0, 0.6),
                 hat_hp=7000.0, metal=0.15, drive=0.55, crush=64),
}
#: kit switch index (FIELD, MACHINE, DUST, 808, 909, ACOUSTIC) -> implemented kit.
KIT_OF_INDEX = ("FIELD", "MACHINE", "DUST", "MACHINE", "MACHINE", "FIELD")

KICKS, SNARES, CENTRED = {35, 36}, {38, 40}, {35, 36, 37, 38, 39, 40}
TOMS = {41: 82.0, 43: 98.0, 45: 117.0, 47: 139.0, 48: 165.0, 50: 196.0}
#: pitch -> (bank, T60 s at decay 1, level, stage position -1..1 before width)
METAL = {42: ("hat", 0.09, 0.30, 0.35), 44: ("hat", 0.06, 0.25, 0.35), 46: ("hat", 0.7, 0.28, 0.35),
         49: ("cym", 2.2, 0.30, -0.45), 57: ("cym", 2.0, 0.30, 0.55), 51: ("cym", 3.0, 0.16, 0.45),
         59: ("cym", 2.8, 0.16, 0.6), 53: ("cym", 1.8, 0.20, 0.45), 52: ("cym", 1.6, 0.32, -0.65),
         55: ("cym", 0.8, 0.26, -0.3), 54: ("tamb", 0.28, 0.26, -0.3), 69: ("shaker", 0.12, 0.22, 0.3),
         70: ("shaker", 0.15, 0.22, -0.25), 82: ("shaker", 0.12, 0.2, 0.3)}
#: Every note the kit plays (the map above); any other pitch is silent.
PLAYED_NOTES = frozenset(CENTRED | set(TOMS) | set(METAL))
ROOM_TAPS = ((6.1, 0.5), (9.7, -0.42), (13.3, 0.36), (17.9, -0.3), (23.5, 0.25), (31.1, -0.2),
             (40.7, 0.16), (52.3, -0.12))
BANK_S = {"hat": 1.5, "cym": 4.0, "tamb": 0.6, "shaker": 0.5, "snare": 0.8, "clap": 0.6, "stick": 0.2,
          "tom": 1.0}
#: 808-style metal cluster (Hz), scaled by tune.
CLUSTER_HZ = (205.3, 304.4, 369.6, 522.7, 540.0, 800.0)


@njit(cache=True)
def add_hit(buf, send, s, mono, gain_left, gain_right, panned, room):  # pragma: no cover - compiled
    """A hit added in from frame ``s`` (the caller keeps ``s + len(mono)`` inside ``buf``) in one pass:
    ``buf[0] += gain_left·mono`` and ``buf[1] += gain_right·mono`` (``mono`` itself, unscaled, when not
    ``panned``), and ``send += room·mono`` when ``room > 0``: the numpy steps' products and sums."""
    m = mono.shape[0]
    left = buf[0, s:s + m]
    right = buf[1, s:s + m]
    if panned:
        for i in range(m):
            left[i] = left[i] + gain_left * mono[i]
            right[i] = right[i] + gain_right * mono[i]
    else:
        for i in range(m):
            left[i] = left[i] + mono[i]
            right[i] = right[i] + mono[i]
    if room > 0:
        dst = send[s:s + m]
        for i in range(m):
            dst[i] = dst[i] + room * mono[i]


class Drums(Instrument):
    """General MIDI drum kit (see the module docstring for map, kits and params)."""

    spec = HOUSE_SPECS["core.drums"]
    LEVEL = 0.5

    def __init__(self, *, sr, tempo_bpm, seed, params):
        super().__init__(sr=sr, tempo_bpm=tempo_bpm, seed=seed, params=params)
        self._banks: dict[tuple, np.ndarray] = {}
        self._shapes: dict[tuple, np.ndarray] = {}  # envelopes and noiseless bodies, computed once per shape

    # ------------------------------------------------------------------ render

    def render(self, notes: list[NoteEvent], *, n_frames: int) -> np.ndarray:
        sr = self.sr
        out_by_tone: dict[float, np.ndarray] = {}
        send = np.zeros(n_frames)
        ordered = sorted(notes, key=lambda n: (n.start_s, n.index))
        chokes = [int(round(n.start_s * sr)) for n in ordered if n.pitch in (42, 44)]
        for note in ordered:
            s = int(round(note.start_s * sr))
            if s >= n_frames or s < 0:
                continue
            p = self._p(note)
            mono = self._hit(note, p)
            if mono is None:
                continue
            if note.pitch == 46:  # open hat: choked by the next closed or pedal hat
                later = bisect.bisect_right(chokes, s)  # chokes are in time order: the first one after s
                nxt = chokes[later] if later < len(chokes) else None
                if nxt is not None and nxt - s < mono.shape[0]:
                    mono = mono[: nxt - s].copy()
                    fade = min(mono.shape[0], int(0.004 * sr))
                    mono[mono.shape[0] - fade:] *= np.linspace(1.0, 0.0, fade)
            mono = self._drive(mono, p)
            e = min(n_frames, s + mono.shape[0])
            mono = mono[: e - s]
            buf = out_by_tone.get(p["tone"])
            if buf is None:
                buf = out_by_tone[p["tone"]] = np.zeros((2, n_frames))
            pan = 0.0 if note.pitch in CENTRED else self._position(note.pitch) * p["width"]
            if pan == 0.0:
                add_hit(buf, send, s, mono, 1.0, 1.0, False, p["room"])
            else:
                a = (pan + 1.0) * math.pi / 4.0
                add_hit(buf, send, s, mono, math.cos(a) * math.sqrt(2.0), math.sin(a) * math.sqrt(2.0), True,
                        p["room"])
        out = None
        for tone, buf in out_by_tone.items():
            tilted = self._tilt(buf, tone)
            if out is None:
                out = tilted  # the first tone group is the output (0 + x is x)
            else:
                out += tilted
        if out is None:
            out = np.zeros((2, n_frames))
        if send.any():
            wet = self._room(send)
            out[0] += wet
            out[1] += wet
        return out

    def _p(self, note: NoteEvent) -> dict[str, float]:
        p = self.spec.defaults()
        p.update(self.params)
        p.update(note.params or {})
        return p

    @staticmethod
    def _position(pitch: int) -> float:
        if pitch in TOMS:  # low toms right, high toms left (audience view)
            return 0.6 - 1.2 * (sorted(TOMS).index(pitch) / (len(TOMS) - 1))
        if pitch in METAL:
            return METAL[pitch][3]
        return 0.2  # cowbell

    # ------------------------------------------------------------------ voices

    def _hit(self, note: NoteEvent, p: Mapping[str, float]) -> np.ndarray | None:
        kit = KITS[KIT_OF_INDEX[int(p["kit"])]]
        v = note.velocity * self.LEVEL
        ratio = 2.0 ** (p["tune"] / 12.0)
        pitch = note.pitch
        rng = rng_for(self.seed, note.index)
        if pitch in KICKS:
            return v * self._kick(kit, ratio, p["decay"], rng)
        if pitch in SNARES:
            return v * self._snare(kit, ratio, p, rng, rim=pitch == 40)
        if pitch == 37:
            n = self._n(0.08 * p["decay"])
            t = np.arange(n) / self.sr
            tone = np.sin(2 * np.pi * 1150.0 * ratio * t) + 0.6 * np.sin(2 * np.pi * 1820.0 * ratio * t)
            return v * 0.6 * self._env(n, 0.03 * p["decay"]) * (0.5 * tone + self._slice("stick", kit, p, rng, n))
        if pitch == 39:
            return v * 0.8 * self._clap(kit, p, rng)
        if pitch in TOMS:
            return v * 0.8 * self._tom(TOMS[pitch] * ratio, p, kit, rng)
        if pitch == 56:
            n = self._n(0.35 * p["decay"])
            tone = square(587.0 * ratio, sr=self.sr, n_frames=n) + square(845.0 * ratio, sr=self.sr, n_frames=n)
            return v * 0.12 * self._env(n, 0.3 * p["decay"]) * tone
        if pitch in METAL:
            bank, t60, level, _ = METAL[pitch]
            t60 *= p["decay"]
            n = self._n(t60)
            env = self._env(n, t60, attack_s=0.012 if bank == "shaker" else 0.0005)
            x = self._slice(bank, kit, p, rng, n)
            if pitch == 53:  # ride bell: two bright partials over the ride
                t = np.arange(n) / self.sr
                x = 0.5 * x + 0.4 * np.sin(2 * np.pi * 2370.0 * ratio * t) * np.exp(-t / 0.4)
            return v * level * env * x
        return None

    def _n(self, seconds: float) -> int:
        return max(int(seconds * self.sr), 16)

    def _env(self, n: int, t60: float, attack_s: float = 0.0005) -> np.ndarray:
        """Linear attack then T60 decay, ``n`` samples; cached per shape (callers never write into it)."""
        key = ("env", n, t60, attack_s)
        env = self._shapes.get(key)
        if env is None:
            t = np.arange(n) / self.sr
            env = np.exp(-LN1000 / max(t60, 1e-3) * t)
            a = max(int(attack_s * self.sr), 1)
            env[:a] *= np.arange(a) / a
            env.flags.writeable = False
            self._shapes[key] = env
        return env

    def _kick(self, kit: dict, ratio: float, decay: float, rng) -> np.ndarray:
        f_end, f_start, tau, t60, click = kit["kick"]
        f_end, f_start = f_end * ratio, f_start * ratio
        t60 *= decay
        n = self._n(t60)
        key = ("kick", f_end, f_start, tau, t60)
        body = self._shapes.get(key)
        if body is None:  # the swept sine body is the same for every hit of one shape; only the click varies
            t = np.arange(n) / self.sr
            ph = 2 * np.pi * (f_end * t + (f_start - f_end) * tau * (1.0 - np.exp(-t / tau)))
            body = np.sin(ph) * self._env(n, t60, attack_s=0.001)
            body.flags.writeable = False
            self._shapes[key] = body
        body = body.copy()
        m = min(n, int(0.006 * self.sr))
        t = np.arange(m) / self.sr
        body[:m] += click * rng.uniform(-1.0, 1.0, m) * np.exp(-t / 0.0015)
        return body

    def _snare(self, kit: dict, ratio: float, p: Mapping[str, float], rng, rim: bool) -> np.ndarray:
        f, tone_t60, noise_t60, _, mix = kit["snare"]
        f *= ratio
        n = self._n(max(tone_t60, noise_t60) * p["decay"])
        ring = 1.6 if rim else 1.0
        key = ("snare", f, n, tone_t60 * ring)
        tone = self._shapes.get(key)
        if tone is None:
            t = np.arange(n) / self.sr
            tone = (np.sin(2 * np.pi * f * t) + 0.5 * np.sin(2 * np.pi * 1.62 * f * t)) * self._env(n, tone_t60 * ring)
            tone.flags.writeable = False
            self._shapes[key] = tone
        noise = self._slice("snare", kit, p, rng, n) * self._env(n, noise_t60 * p["decay"])
        return 0.8 * ((1.0 - mix) * tone * (1.3 if rim else 1.0) + mix * 1.6 * noise)

    def _clap(self, kit: dict, p: Mapping[str, float], rng) -> np.ndarray:
        n = self._n(0.3 * p["decay"] + 0.03)
        t = np.arange(n) / self.sr
        env = np.zeros(n)
        for k, d in enumerate((0.0, 0.011, 0.022)):
            env += np.where(t >= d, np.exp(-np.maximum(t - d, 0.0) / 0.004), 0.0) * (1.0 - 0.15 * k)
        env += 0.5 * np.where(t >= 0.03, np.exp(-LN1000 * np.maximum(t - 0.03, 0.0) / (0.25 * p["decay"])), 0.0)
        return 1.4 * env * self._slice("clap", kit, p, rng, n)

    def _tom(self, f: float, p: Mapping[str, float], kit: dict, rng) -> np.ndarray:
        t60 = 0.6 * p["decay"] * (100.0 / f) ** 0.5
        n = self._n(t60)
        t = np.arange(n) / self.sr
        tau = 0.05
        ph = 2 * np.pi * (f * t + 0.3 * f * tau * (1.0 - np.exp(-t / tau)))
        return np.sin(ph) * self._env(n, t60) + 0.15 * self._slice("tom", kit, p, rng, n) * self._env(n, 0.08)

    # ------------------------------------------------------------------ banks

    def _slice(self, kind: str, kit: dict, p: Mapping[str, float], rng, n: int) -> np.ndarray:
        key = (kind, KIT_OF_INDEX[int(p["kit"])], p["tune"], int(p["cym_model"]) if kind == "cym" else 0)
        bank = self._banks.get(key)
        if bank is None:
            bank = self._banks[key] = self._make_bank(kind, kit, 2.0 ** (p["tune"] / 12.0), key[3])
        if n >= bank.shape[0]:
            return np.concatenate([bank, np.zeros(n - bank.shape[0])])
        off = int(rng.integers(0, bank.shape[0] - n + 1))
        return bank[off:off + n]

    def _make_bank(self, kind: str, kit: dict, ratio: float, model: int) -> np.ndarray:
        from ..dsp.compiled import sosfilt
        from ..dsp.filters import butterworth

        sr = self.sr
        n = int(BANK_S[kind] * sr)
        rng = rng_for(self.seed, "drum-bank", kind, model)
        noise = rng.uniform(-1.0, 1.0, n)
        nyq = 0.45 * sr

        def band(x, lo, hi, order=4):
            sos = butterworth("hp", order=order, freq_hz=lo, sr=sr)
            if hi < nyq:
                sos = np.concatenate([sos, butterworth("lp", order=order, freq_hz=hi, sr=sr)])
            return sosfilt(sos, x)

        def cluster() -> np.ndarray:
            """The six squares summed in order (bit for bit ``sum(square(f * ratio, ...)) / 3``), compiled."""
            from .synths import osc_bank_fixed

            incs = np.array([f * ratio for f in CLUSTER_HZ]) / sr
            ones = np.ones(len(CLUSTER_HZ))
            phases = rng.uniform(size=len(CLUSTER_HZ))
            return osc_bank_fixed(1.0, n, incs, phases, ones, ones, 1, 0.5, 0.0)[0] / 3.0

        if kind == "hat":
            x = band(noise + kit["metal"] * cluster(), kit["hat_hp"], 20000.0, order=6)
        elif kind == "cym":
            if model == 1:  # FDN: noise through a short ringing network
                from .synths import fdn4

                delays = (np.array([1.13, 1.71, 2.33, 3.07]) * 1e-3 * sr / ratio).astype(np.int64)
                lines = fdn4(0.3 * noise, delays, np.full(4, 0.93), 0.0)
                x = band(lines[0] - lines[1] + lines[2] - lines[3], 3500.0, 20000.0)
            elif model == 2:  # MODAL: sixteen inharmonic partials plus a little noise
                t = np.arange(n) / sr
                freqs = np.exp(rng.uniform(np.log(3000.0), np.log(13000.0), 16)) * ratio
                freqs = freqs[freqs < nyq]
                x = sum(np.sin(2 * np.pi * (f * t + rng.uniform())) for f in freqs) / 3.0
                x = x + 0.4 * band(noise, 5000.0, 20000.0)
            else:  # CLASSIC: metal cluster and noise
                x = band(0.6 * noise + cluster(), 4500.0, 20000.0)
        elif kind == "tamb":
            x = band(noise + 0.5 * cluster(), 6000.0, 20000.0)
        elif kind == "shaker":
            x = band(noise, 4500.0, 20000.0)
        elif kind == "snare":
            c = kit["snare"][3]
            x = band(noise, c / 2.5, min(c * 3.5, nyq))
        elif kind == "clap":
            x = band(noise, 800.0, 3200.0)
        elif kind == "stick":
            x = band(noise, 1500.0, 5000.0)
        else:  # tom: a soft low thud
            x = band(noise, 80.0, 900.0, order=2)
        peak = np.max(np.abs(x))
        return x / peak if peak > 0 else x

    # ------------------------------------------------------------------ post

    def _drive(self, x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
        kit = KITS[KIT_OF_INDEX[int(p["kit"])]]
        k = 1.0 + 3.0 * min(p["drive"] + kit["drive"], 1.0)
        y = np.multiply(k, x)  # tanh(k x) / k, in one array
        np.tanh(y, out=y)
        y /= k
        if kit["crush"]:
            y *= kit["crush"]
            np.round(y, out=y)
            y /= kit["crush"]
        return y

    def _tilt(self, x: np.ndarray, tone: float) -> np.ndarray:
        """Tilt EQ around 1 kHz: ``low * g**-1 + high * g`` with a complementary one-pole split."""
        if tone == 0:
            return x
        from ..dsp.compiled import sosfilt
        from ..dsp.filters import one_pole

        low = sosfilt(one_pole("lp", freq_hz=1000.0, sr=self.sr)[None, :], x)
        g = 10.0 ** (6.0 * tone / 20.0)
        return low / g + (x - low) * g

    def _room(self, send: np.ndarray) -> np.ndarray:
        from .synths import tapped_lowpassed

        delays = np.array([int(ms * 1e-3 * self.sr) for ms, _ in ROOM_TAPS], dtype=np.int64)
        gains = 0.5 * np.array([g for _, g in ROOM_TAPS])
        coeff = 1.0 - math.exp(-2.0 * math.pi * 4000.0 / self.sr)
        return tapped_lowpassed(send, delays, gains, coeff)
