"""The bench's own answers to its audio tasks, made by code from the inputs (docs/audio-tasks.md).

A WAV answer cannot be a small committed file, so an answer file of an audio task (``oracles/<task>.json``,
``oracles/<task>.alt-<what>.json``, ``near_misses/<task>.cheat-<what>.json``) is ``{"task", "why",
"make": "<name>", "fails"?}``: ``make`` names one function registered here (:data:`MAKERS`), which turns
the task's inputs into the answer's files. Each maker is deterministic (seeded dither, the house DSP), so
the files are written once into the cache (keyed by the task, the maker, the inputs and the code) and
scored through the same reader as an agent's folder. ``do_nothing`` is every task's baseline: each
answer file is its input(s) handed back unchanged (laid end to end with the gaps; a 16-bit file rounded
without dither).

A maker returns ``{answer file name: array}``: float64 ``(2, n)`` written as 24-bit PCM (clipped to full
scale, as a DAW's export would), or int16 written as is to a 16-bit file; the cache holds them as FLAC
(lossless), which the reader takes in place of the WAV a task names. A variant's answers are never written:
:func:`as_held` gives what each file would hold, bit for bit, and they are scored from memory.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ...measure import true_peak_db
from ...measure.compare import bus_gain, hit_times_s
from . import chains as ch
from .inputs import SR, cache_root, code_hash, input_key, write_wav

Files = dict[str, np.ndarray]
MAKERS: dict[str, Callable[[dict[str, np.ndarray]], Files]] = {}


def maker(name: str):
    def register(fn):
        MAKERS[name] = fn
        return fn
    return register


def do_nothing(task: Any, inputs: dict[str, np.ndarray]) -> Files:
    out = {}
    for a in task.answer:
        gap = np.zeros((2, int(round(a.gap_s * SR))))
        parts = [inputs[a.from_[0]]]
        for name in a.from_[1:]:
            parts += [gap, inputs[name]]
        x = np.concatenate(parts, axis=1)
        out[a.name] = ch.truncate16(x) if a.bits == 16 else x
    return out


# --- master-streaming-single --------------------------------------------------------------------

def _deliver(master: np.ndarray, *, seed: int = 1) -> Files:
    return {"master.wav": master, "master-16.wav": ch.dither16(master, seed=seed)}


@maker("streaming.oracle")
def _streaming_oracle(i):
    return _deliver(ch.master_to(i["mix.wav"], target_lufs=-14.0, ceiling_db=-1.5))


@maker("streaming.oracle-rebalanced")
def _streaming_rebalanced(i):
    """Limited, EQ'd back onto the mix's octave balance (what the limiter took from the bands its peaks are
    in: a generated mix's bright transients), limited again. The oracle of the template's variants."""
    mix = i["mix.wav"]
    first = ch.master_to(mix, target_lufs=-14.0, ceiling_db=-1.5)
    return _deliver(ch.master_to(ch.match_spectrum(first, mix), target_lufs=-14.0, ceiling_db=-1.5))


@maker("streaming.alt-glue-comp")
def _streaming_glue(i):
    glued = ch.compress(i["mix.wav"], threshold=-26, ratio=2, attack=30, release=200, knee=6)
    return _deliver(ch.master_to(glued, target_lufs=-14.0, ceiling_db=-1.3, release_ms=150))


@maker("streaming.alt-shaped-dither")
def _streaming_shaped(i):
    m = ch.master_to(i["mix.wav"], target_lufs=-14.0, ceiling_db=-1.5)
    return {"master.wav": m, "master-16.wav": ch.shaped_dither16(m, seed=2)}


def _slammed(mix: np.ndarray, *, release_ms: float) -> Files:
    """The house limiter slammed toward -7.5 LUFS at -1 dBTP, then turned down to -14 LUFS, delivered."""
    slammed = ch.master_to(mix, target_lufs=-7.5, ceiling_db=-1.0, release_ms=release_ms)
    return _deliver(ch.gain(slammed, -14.0 - ch.lufs(slammed)))


@maker("streaming.cheat-slammed")
def _streaming_slammed(i):
    return _slammed(i["mix.wav"], release_ms=20)


@maker("streaming.cheat-slammed-fast")
def _streaming_slammed_fast(i):
    """The slam with a 5 ms release (the variants' ``cheat-slammed``): on a generated rough mix the house
    limiter with a 20 ms release levels off near -8.5 LUFS at -1 dBTP, a peak-to-loudness ratio of 7.35-7.55
    (seeds 27 and 78: the gate's soft width let it score up to 0.55); 5 ms squeezes it to about 7.0."""
    return _slammed(i["mix.wav"], release_ms=5)


@maker("streaming.cheat-clipped")
def _streaming_clipped(i):
    x = ch.gain(i["mix.wav"], -13.0 - ch.lufs(i["mix.wav"]) + 2.0)
    return _deliver(np.clip(x, -1.0, 1.0))


@maker("streaming.cheat-tail-noise")
def _streaming_tail_noise(i):
    """Rounded to 16 bits without dither, with dither noise pasted into the silent last second only."""
    m = ch.master_to(i["mix.wav"], target_lufs=-14.0, ceiling_db=-1.5)
    q, tail = ch.truncate16(m), int(1.0 * SR)
    q[:, -tail:] = ch.dither16(m[:, -tail:], seed=1)
    return {"master.wav": m, "master-16.wav": q}


@maker("streaming.cheat-no-dither")
def _streaming_no_dither(i):
    m = ch.master_to(i["mix.wav"], target_lufs=-14.0, ceiling_db=-1.5)
    return {"master.wav": m, "master-16.wav": ch.truncate16(m)}


@maker("streaming.cheat-noise-after-rounding")
def _streaming_noise_after_rounding(i):
    """The oracle's master, its 16-bit copy rounded and then given a random -1, 0 or +1 step: noise at about
    dither's level everywhere (every level gate passed: 1.000), and the rounding's distortion all still there
    (the error follows where each sample falls between two steps: 0.29 steps, TPDF's 0.002)."""
    m = ch.master_to(i["mix.wav"], target_lufs=-14.0, ceiling_db=-1.5)
    rng = np.random.default_rng(3)
    q = ch.truncate16(m).astype(np.int32) + rng.integers(-1, 2, m.shape)
    return {"master.wav": m, "master-16.wav": np.clip(q, -32768, 32767).astype(np.int16)}


@maker("streaming.cheat-planted-peaks")
def _streaming_planted(i):
    """Crushed (the house limiter slammed toward -6 LUFS, 5 ms release), EQ'd back onto the mix's balance,
    turned down to -14 LUFS under -3 dBTP, then peaks planted at -3 dBFS (a whole-file peak to loudness ratio
    of 12 dB): a one-sample click every 400 ms of the music, a 5-sample burst and a 2 ms 3 kHz blip in place of
    the music.
    A whole-file true peak read any one of them (a crushed master EQ'd back scored 1.000 on the published
    task and @78 and @1003 with one sample planted; on the published task and @1003 without it); the ``plr``
    gate reads the median 400 ms block, its clicks and bursts held to the music around them."""
    mix = i["mix.wav"]
    crushed = ch.match_spectrum(ch.master_to(mix, target_lufs=-6.0, ceiling_db=-1.0, release_ms=5), mix)
    m = ch.gain(crushed, -14.0 - ch.lufs(crushed))
    m = ch.gain(m, min(0.0, -3.0 - true_peak_db(m, sr=SR)))
    n, top = m.shape[1], 10.0 ** (-3.0 / 20.0)
    music = n - int(1.5 * SR)  # the clicks stay out of the silent tail (the 16-bit copy's dither is read there)
    m = np.concatenate([_planted_peaks(m[:, :music], every_s=0.4, peak_db=-3.0), m[:, music:]], axis=1)
    m[:, n // 2: n // 2 + 5] = top
    t = np.arange(int(0.002 * SR)) / SR
    blip = np.hanning(t.size) * np.sin(2 * np.pi * 3000.0 * t)
    m[:, 2 * n // 3: 2 * n // 3 + t.size] = top * blip / np.abs(blip).max()
    return _deliver(m)


@maker("streaming.cheat-click-trains")
def _streaming_click_trains(i):
    """The crushed master of ``cheat-planted-peaks`` (slammed toward -6 LUFS, EQ'd back, -14 LUFS under -3 dBTP)
    with a train of 15 one-sample clicks 6 samples apart at -3 dBFS every 400 ms of the music: each click is in
    its neighbours' rings, so each is held in full (:func:`~pytest_overdub.measure.compare.held_magnitudes`);
    two of them (a pair 6 apart) read 11.0 dB on the ``plr`` gate while a block's peak was its largest held
    sample (1.000). Fifteen are one short of a block's peak (16 samples)."""
    return _deliver(_crushed_marked(i["mix.wav"], _click_trains))


@maker("streaming.cheat-ultrasonic-peaks")
def _streaming_ultrasonic_peaks(i):
    """The crushed master of ``cheat-planted-peaks`` with a 2 ms burst at 24 kHz (+A, -A, ...) at -3 dBFS every
    400 ms of the music: 96 samples at the peak level, each 6-54 samples from the others, so the burst was a
    block's peak (plr 11.2-11.5 dB, 1.000 on the published task and seeds 3, 17 and 1005) while a block's peak
    was read on the whole band. Nobody hears 24 kHz: a block's peak is read in the audio band now."""
    return _deliver(_crushed_marked(i["mix.wav"], _ultrasonic_bursts))


def _crushed_marked(mix: np.ndarray, mark) -> np.ndarray:
    """The crushed master of ``cheat-planted-peaks`` (slammed toward -6 LUFS, EQ'd back, -14 LUFS under -3 dBTP)
    with ``mark(music, every_s=0.4, peak_db=-3.0)`` laid on its music (the silent tail stays silent: the 16-bit
    copy's dither is read there)."""
    crushed = ch.match_spectrum(ch.master_to(mix, target_lufs=-6.0, ceiling_db=-1.0, release_ms=5), mix)
    m = ch.gain(crushed, -14.0 - ch.lufs(crushed))
    m = ch.gain(m, min(0.0, -3.0 - true_peak_db(m, sr=SR)))
    music = m.shape[1] - int(1.5 * SR)
    return np.concatenate([mark(m[:, :music], every_s=0.4, peak_db=-3.0), m[:, music:]], axis=1)


def _ultrasonic_bursts(x: np.ndarray, *, every_s: float, peak_db: float, length: int = 96) -> np.ndarray:
    """``x`` plus a burst of ``length`` samples at half the sample rate (+A, -A, ... on both channels, A at
    ``peak_db`` dBFS) every ``every_s`` seconds from the start."""
    y = x.copy()
    burst = 10.0 ** (peak_db / 20.0) * np.where(np.arange(length) % 2 == 0, 1.0, -1.0)
    for a in range(0, y.shape[1] - length, int(round(every_s * SR))):
        y[:, a:a + length] += burst
    return y


def _click_trains(x: np.ndarray, *, every_s: float, peak_db: float, clicks: int = 15, gap: int = 6) -> np.ndarray:
    """``x`` with a train of ``clicks`` one-sample clicks ``gap`` samples apart (both channels, ``peak_db``
    dBFS) every ``every_s`` seconds from the start."""
    y = x.copy()
    for k in range(clicks):
        y[:, k * gap::int(round(every_s * SR))] = 10.0 ** (peak_db / 20.0)
    return y


def _planted_peaks(x: np.ndarray, *, every_s: float, peak_db: float = -1.6, width: int = 1) -> np.ndarray:
    """``x`` with ``width`` samples on both channels set to ``peak_db`` dBFS every ``every_s`` seconds from the
    start (a click each time)."""
    y = x.copy()
    for k in range(width):
        y[:, k::int(round(every_s * SR))] = 10.0 ** (peak_db / 20.0)
    return y


# --- master-match-reference ---------------------------------------------------------------------

@maker("match.oracle")
def _match_oracle(i):
    return {"mix.wav": ch.match_spectrum(i["mix.wav"], i["reference.wav"])}


@maker("match.alt-half-steps")
def _match_half(i):
    return {"mix.wav": ch.match_spectrum(i["mix.wav"], i["reference.wav"], rounds=8, step=0.6)}


@maker("match.cheat-reference")
def _match_reference(i):
    mix, ref = i["mix.wav"], i["reference.wav"]
    return {"mix.wav": np.tile(ref, (1, -(-mix.shape[1] // ref.shape[1])))[:, : mix.shape[1]]}


@maker("match.cheat-blend")
def _match_blend(i):
    mix, ref = i["mix.wav"], i["reference.wav"]
    ref = np.tile(ref, (1, -(-mix.shape[1] // ref.shape[1])))[:, : mix.shape[1]]  # looped to the mix's length
    return {"mix.wav": 0.5 * mix + 0.5 * ch.gain(ref, ch.lufs(mix) - ch.lufs(ref))}


@maker("match.alt-eq-glue")
def _match_glue(i):
    """The oracle's EQ, then glue compression (2:1 from -26 dB, 30 ms attack, 200 ms release): a mastering
    chain, still this mix (the ``other`` gate reads -16 to -17 dB for it, an EQ alone -27 or lower)."""
    return {"mix.wav": ch.compress(_match_oracle(i)["mix.wav"], threshold=-26, ratio=2, attack=30, release=200,
                                   knee=6)}


@maker("match.near-bleed")
def _match_bleed(i):
    """The reference (looped) blended 10 dB under the mix, then matched as the oracle matches: the match done,
    another song audible under it. Its envelope still follows the mix's (likeness 0.93 here, 0.97 on
    ``master-match-reference@1003``, where it scored 1.000 before the ``other`` gate)."""
    mix, ref = i["mix.wav"], i["reference.wav"]
    looped = np.tile(ref, (1, -(-mix.shape[1] // ref.shape[1])))[:, : mix.shape[1]]
    return {"mix.wav": ch.match_spectrum(mix + ch.gain(looped, ch.lufs(mix) - ch.lufs(looped) - 10.0), ref)}


@maker("match.cheat-tilt")
def _match_tilt(i):
    return {"mix.wav": ch.eq(i["mix.wav"], high=-10, highf=5000)}


# --- mixdown-stems-null ---------------------------------------------------------------------------

STEMS = ("stems/drums.wav", "stems/music.wav", "stems/hook.wav")


def _bus_chain(x: np.ndarray) -> np.ndarray:
    return ch.limit(ch.compress(x, threshold=-24, ratio=3, attack=10, release=120, knee=6, makeup=2),
                    gain_db=3, ceiling_db=-1.0)


@maker("stems.oracle")
def _stems_oracle(i):
    raw = [i[s] for s in STEMS]
    g = bus_gain(sum(raw), _bus_chain(sum(raw)))
    stems = {s: x * g for s, x in zip(STEMS, raw)}
    return {"mix.wav": sum(stems.values()), **stems}


@maker("stems.alt-measured-gain")
def _stems_measured(i):
    raw = [i[s] for s in STEMS]
    g = bus_gain(sum(raw), i["master.wav"])
    stems = {s: x * np.clip(g, 0.0, 4.0) for s, x in zip(STEMS, raw)}
    return {"mix.wav": sum(stems.values()), **stems}


@maker("stems.cheat-mix-over-n")
def _stems_over_n(i):
    m = i["master.wav"]
    return {"mix.wav": m.copy(), **{s: m / 3.0 for s in STEMS}}


@maker("stems.cheat-last-stem-is-the-rest")
def _stems_rest(i):
    """Two groups handed back raw and the third printed as the master minus them: it nulls, it is the master."""
    m = i["master.wav"]
    music, hook = i["stems/music.wav"].copy(), i["stems/hook.wav"].copy()
    return {"mix.wav": m.copy(), "stems/drums.wav": m - music - hook, "stems/music.wav": music,
            "stems/hook.wav": hook}


@maker("stems.cheat-raw-sum")
def _stems_raw(i):
    return {"mix.wav": sum(i[s] for s in STEMS), **{s: i[s].copy() for s in STEMS}}


# --- mixdown-sidechain-bass -----------------------------------------------------------------------

@maker("sidechain.oracle")
def _sidechain_oracle(i):
    g = ch.sidechain_gain_db(i["stems/kick.wav"], depth_db=7.0, release_ms=60)
    return {"bass.wav": i["stems/bass.wav"] * (10.0 ** (g / 20.0))[None, :]}


@maker("sidechain.alt-slower")
def _sidechain_slower(i):
    g = ch.sidechain_gain_db(i["stems/kick.wav"], depth_db=6.0, release_ms=80, attack_ms=2.0)
    return {"bass.wav": i["stems/bass.wav"] * (10.0 ** (g / 20.0))[None, :]}


@maker("sidechain.near-inverted")
def _sidechain_inverted(i):
    """The oracle's duck with the bass's polarity flipped: every duck reading is a level and reads the same,
    but against the kick the low end they share cancels (the bass is mono, so no stereo reading sees it)."""
    return {"bass.wav": -_sidechain_oracle(i)["bass.wav"]}


@maker("sidechain.cheat-turned-down")
def _sidechain_down(i):
    return {"bass.wav": ch.gain(i["stems/bass.wav"], -6.0)}


@maker("sidechain.cheat-every-beat")
def _sidechain_every_beat(i):
    """A ducking LFO on the beat grid (half the usual kick spacing), whether a kick is there or not."""
    from ...measure.compare import hit_times_s

    kicks = hit_times_s(i["stems/kick.wav"], sr=SR)
    beat = float(np.median(np.diff(kicks))) / 2.0
    x = i["stems/bass.wav"]
    t = (np.arange(x.shape[1]) / SR) % beat
    g_db = -6.0 * np.exp(-t / 0.05)
    return {"bass.wav": x * (10.0 ** (g_db / 20.0))[None, :]}


@maker("sidechain.cheat-blip")
def _sidechain_blip(i):
    """6 dB down for the first 12 ms of each kick only: the deepest frame reads the depth, the kick's body
    still sits on the full bass."""
    from ...measure.compare import hit_times_s

    x = i["stems/bass.wav"].copy()
    for t in hit_times_s(i["stems/kick.wav"], sr=SR):
        x[:, int(t * SR): int((t + 0.012) * SR)] *= 0.5
    return {"bass.wav": x}


@maker("sidechain.cheat-every-other-kick")
def _sidechain_every_other(i):
    """Every other kick ducks the bass 12 dB and the rest not at all: while ``depth`` and ``hold`` were medians
    over the kicks, half the kicks ducked deep read as every kick ducked (1.000 on the published task and
    seeds 3, 17 and 1005). They read what four kicks in five reach now."""
    from ...measure.compare import hit_times_s

    kick = i["stems/kick.wav"].copy()
    times = hit_times_s(kick, sr=SR)
    for k, t in enumerate(times):
        if k % 2:
            end = times[k + 1] if k + 1 < len(times) else kick.shape[1] / SR
            kick[:, int(t * SR) - int(0.005 * SR): int(end * SR) - int(0.005 * SR)] = 0.0
    g = ch.sidechain_gain_db(kick, depth_db=12.0, release_ms=60)
    return {"bass.wav": i["stems/bass.wav"] * (10.0 ** (g / 20.0))[None, :]}


@maker("sidechain.cheat-flipped-on-kicks")
def _sidechain_flipped_on_kicks(i):
    """The oracle's duck with the bass inverted from 2 ms before to 120 ms after each kick only, where it
    meets the kick: the whole file still correlated +0.81-0.89 with the stem and passed the ``polarity``
    gate (1.000 on the published task and seeds 3, 17 and 1005); its lowest 50 ms block reads -1 now."""
    from ...measure.compare import hit_times_s

    x = _sidechain_oracle(i)["bass.wav"].copy()
    for t in hit_times_s(i["stems/kick.wav"], sr=SR):
        a, b = max(0, int(round((t - 0.002) * SR))), int(round((t + 0.120) * SR))
        x[:, a:b] *= -1.0
    return {"bass.wav": x}


@maker("sidechain.cheat-gated")
def _sidechain_gated(i):
    from ...measure.compare import hit_times_s

    x = i["stems/bass.wav"].copy()
    for t in hit_times_s(i["stems/kick.wav"], sr=SR):
        x[:, int(t * SR): int((t + 0.15) * SR)] = 0.0
    return {"bass.wav": x}


# --- mixdown-parallel-drums -----------------------------------------------------------------------

_SMASH = {"threshold": -40, "ratio": 20, "attack": 0.1, "release": 80, "knee": 0, "makeup": 0}


#: The oracle keeps its smash where the transients move at most this (a quarter of the gate's 1 dB to
#: spare); where they rise more, the smash releases faster (:data:`SMASH_RELEASES_MS`), so its copy follows
#: each hit's decay and lifts the body more than the peak: a variant's kit (seed 92) rose 1.48 dB with the
#: 80 ms release, 0.54 with 40 ms, 0.22 with 20 ms (the dry level barely helps: 0.8-1.5 dB from -1 to -8 dB).
TRANSIENT_SLACK_DB = 0.75
SMASH_RELEASES_MS = (80.0, 40.0, 20.0)


@maker("parallel.cheat-late-copy")
def _parallel_late_copy(i):
    """The drums handed back untouched, 13 ms late: read at the input's hit times, an earlier and louder part
    of each decay sat in the body window with the attack still in the transient's (3.4 dB of body, 1.000 on
    the published task and seed 3). The answer's latency is taken out before any hit is read now."""
    x = i["drums.wav"]
    lag = int(round(0.013 * SR))
    return {"drums.wav": np.concatenate([np.zeros((x.shape[0], lag)), x[:, :-lag]], axis=1)}


#: A gain ride lifts a hit from this long after it (its transient, read to 15 ms, untouched; its body, read
#: from 40 ms, lifted in full) to :data:`RIDE_RAMP_S` before the next hit, ramped in and out over that.
RIDE_FROM_S, RIDE_RAMP_S = 0.03, 0.005
#: The most a ride lifts a hit (dB), and the level no ridden stretch is taken over (dBFS: no clipping).
RIDE_MAX_DB, RIDE_CEILING_DB = 12.0, -1.0


def _ridden(x: np.ndarray, times: np.ndarray, ridden: np.ndarray, *, gain_db: float) -> np.ndarray:
    """``x`` with its gain up ``gain_db`` over each ridden hit (``times[ridden]``, s) from :data:`RIDE_FROM_S`
    after it to :data:`RIDE_RAMP_S` before the next hit, less where that would take the stretch over
    :data:`RIDE_CEILING_DB`; the gain ramps linearly in dB over :data:`RIDE_RAMP_S` at both ends."""
    g_db = np.zeros(x.shape[1])
    ramp = int(round(RIDE_RAMP_S * SR))
    for i in np.flatnonzero(ridden):
        a = int(round((times[i] + RIDE_FROM_S) * SR))
        b = int(round((times[i + 1] - RIDE_RAMP_S) * SR)) if i + 1 < len(times) else x.shape[1]
        if b - a < 2 * ramp:
            continue
        peak = float(np.abs(x[:, a:b]).max())
        room_db = RIDE_CEILING_DB - 20.0 * np.log10(peak) if peak > 0 else RIDE_MAX_DB
        seg = np.full(b - a, min(gain_db, max(room_db, 0.0)))
        seg[:ramp] *= np.linspace(0.0, 1.0, ramp)
        seg[-ramp:] *= np.linspace(1.0, 0.0, ramp)
        g_db[a:b] = seg
    return x * (10.0 ** (g_db / 20.0))[None, :]


def _ride_hits(x: np.ndarray, pick) -> Files:
    """A gain ride on the hits ``pick(times, read)`` chooses (a mask over the hits ``times``; ``read``: the hits
    the readings read, :func:`~.readings.read_hits`), by the gain that puts the median body at 4 dB (bisection,
    at most :data:`RIDE_MAX_DB`): the job done on those hits only, the rest handed back as they were."""
    from .readings import hit_change, read_hits

    times = hit_times_s(x, sr=SR)
    ridden = pick(times, np.isin(times, read_hits(times)))
    lo, hi = 0.0, RIDE_MAX_DB
    for _ in range(20):
        mid = (lo + hi) / 2
        body = hit_change(_ridden(x, times, ridden, gain_db=mid), x, sr=SR, measure="body", times=times,
                          latency=False)
        lo, hi = (mid, hi) if body < 4.0 else (lo, mid)
    return {"drums.wav": _ridden(x, times, ridden, gain_db=(lo + hi) / 2)}


@maker("parallel.cheat-ride-every-other")
def _parallel_ride_every_other(i):
    """Every other hit (of those read) ridden up: the median body of half the hits at 0 dB and half at 8 dB is
    4 dB, which scored 1.000 while the body was read only as that median. On a kick-hat-snare-hat pattern every other hit is
    every kick and snare, the loud hits; on kick-snare-hat, each kind in turn."""
    def every_other(times, read):
        out = np.zeros(times.size, bool)
        out[np.flatnonzero(read)[::2]] = True
        return out
    return _ride_hits(i["drums.wav"], every_other)


@maker("parallel.cheat-ride-loud-half")
def _parallel_ride_loud_half(i):
    """The louder half of the hits (of those read, by the transient's peak: at or over the median) ridden up,
    the quieter ones left as they were."""
    from ...measure.compare import peak_db_in

    x = i["drums.wav"]

    def loud_half(times, read):
        peaks = np.array([peak_db_in(x, sr=SR, start_s=t - 0.002, stop_s=t + 0.015) for t in times])
        return read & (peaks >= np.median(peaks[read]))
    return _ride_hits(x, loud_half)


@maker("parallel.cheat-ride-first-half")
def _parallel_ride_first_half(i):
    """The hits of the first half of the song (of those read) ridden up, the second half's left as they were."""
    x = i["drums.wav"]
    return _ride_hits(x, lambda times, read: read & (times < x.shape[1] / SR / 2))


@maker("parallel.oracle")
def _parallel_oracle(i):
    """The smashed copy under the dry drums (1 dB down) at the level that lifts the body 4 dB, its release
    the first of :data:`SMASH_RELEASES_MS` that keeps the transients within :data:`TRANSIENT_SLACK_DB`, as an
    engineer speeds a smash whose copy pokes through the hits."""
    from .readings import hit_change

    x = i["drums.wav"]
    for release_ms in SMASH_RELEASES_MS:
        comp = {**_SMASH, "release": release_ms}
        y = ch.parallel(x, wet_db=_smash_makeup(x, comp, dry_db=-1.0), dry_db=-1.0, **comp)
        if abs(hit_change(y, x, sr=SR, measure="transient", latency=False)) <= TRANSIENT_SLACK_DB:
            break
    return {"drums.wav": y}


def _smash_makeup(x: np.ndarray, comp: dict, *, dry_db: float) -> float:
    """The wet level that lifts the body by 4 dB, found by measuring (bisection on the level)."""
    return _wet_level(x, ch.compress(x, **comp), dry_db=dry_db)


def _wet_level(x: np.ndarray, wet: np.ndarray, *, dry_db: float) -> float:
    """The level of ``wet`` under the dry ``x`` that lifts the body by 4 dB (bisection on the level). Each
    try mixes only the frames the body reading reads (:func:`~.readings.body_frames`), the hits found in
    ``x`` once: the same samples there as the whole mix, the same reading."""
    from .readings import body_frames, hit_change

    dry = ch.gain(x, dry_db)
    times = hit_times_s(x, sr=SR)
    frames = body_frames(times, sr=SR, n=x.shape[1])
    mix = np.zeros(x.shape)  # never read outside ``frames``
    lo, hi = -30.0, 30.0
    for _ in range(20):
        mid = (lo + hi) / 2
        for a, b in frames:
            mix[:, a:b] = dry[:, a:b] + ch.gain(wet[:, a:b], mid)
        body = hit_change(mix, x, sr=SR, measure="body", times=times, latency=False)
        lo, hi = (mid, hi) if body < 4.0 else (lo, mid)
    return (lo + hi) / 2


@maker("parallel.alt-other-comp")
def _parallel_other(i):
    x = i["drums.wav"]
    comp = {"threshold": -50, "ratio": 12, "attack": 0.1, "release": 50, "knee": 2, "makeup": 0}
    return {"drums.wav": ch.parallel(x, wet_db=_smash_makeup(x, comp, dry_db=-1.5) - 1.0, dry_db=-1.5, **comp)}


@maker("parallel.alt-wet-eq")
def _parallel_wet_eq(i):
    """The smashed copy EQ'd on its own bus (low and high shelves up 3 dB), as engineers often do."""
    x = i["drums.wav"]
    wet = ch.eq(ch.compress(x, **_SMASH), low=3, lowf=100, high=3, highf=6000)
    return {"drums.wav": ch.gain(x, -1.0) + ch.gain(wet, _wet_level(x, wet, dry_db=-1.0))}


@maker("parallel.cheat-reverb")
def _parallel_reverb(i):
    """A reverb under the dry drums at the level that lifts the body 4 dB: tail energy, not the hits."""
    from .inputs import run_effect

    x = i["drums.wav"]
    wet = run_effect(x, "core.verb", {"mix": 1.0, "predelay": 0, "decay": 0.4, "size": 0.2})
    return {"drums.wav": x + ch.gain(wet, _wet_level(x, wet, dry_db=0.0))}


@maker("parallel.cheat-gain")
def _parallel_gain(i):
    return {"drums.wav": ch.gain(i["drums.wav"], 4.0)}


@maker("parallel.cheat-limiter")
def _parallel_limiter(i):
    return {"drums.wav": ch.limit(i["drums.wav"], gain_db=10.0, ceiling_db=-6.0, release_ms=60)}


@maker("parallel.cheat-limiter-under-hits")
def _parallel_limiter_under_hits(i):
    """The limiter (10 dB in) with its ceiling 4 dB under the drums' median hit peak, so the transients come
    down whatever the stem's level; a fixed ceiling can sit at a hot stem's hits and keep them, and one
    under the stem's loudest peak may miss most hits (a variant's cheat)."""
    from ...measure.compare import hit_times_s, peak_db_in

    x = i["drums.wav"]
    hits = [peak_db_in(x, sr=SR, start_s=t - 0.002, stop_s=t + 0.015) for t in hit_times_s(x, sr=SR)]
    ceiling_db = min(max(float(np.median(hits)) - 4.0, -12.0), 0.0)
    return {"drums.wav": ch.limit(x, gain_db=10.0, ceiling_db=ceiling_db, release_ms=60)}


# --- master-mid-side ------------------------------------------------------------------------------

@maker("midside.oracle")
def _midside_oracle(i):
    return {"master.wav": ch.ms_master(i["mix.wav"], mono_below_hz=120, wide_above_hz=4000, wide_db=3.0)}


@maker("midside.alt-lower-split")
def _midside_alt(i):
    return {"master.wav": ch.ms_master(i["mix.wav"], mono_below_hz=120, wide_above_hz=3500, wide_db=2.8)}


@maker("midside.cheat-mono")
def _midside_mono(i):
    mid, _ = ch.mid_side(i["mix.wav"])
    return {"master.wav": ch.left_right(mid, np.zeros_like(mid))}


@maker("midside.cheat-widen-all")
def _midside_widen(i):
    mid, side = ch.mid_side(i["mix.wav"])
    return {"master.wav": ch.left_right(mid, side * 10 ** (3.0 / 20))}


@maker("midside.cheat-noise-widen")
def _midside_noise_widen(i):
    """The lows made mono as the oracle does, and the top "widened" by noise: seeded noise above 4 kHz added
    to the side with as much power as its top already has, so the side-to-mid ratio there rises 3 dB while
    the mix's own side is left as it was."""
    from ...dsp.compiled import SOS
    from ...dsp.filters import Crossover

    base = ch.ms_master(i["mix.wav"], mono_below_hz=120, wide_above_hz=4000, wide_db=0.0)
    mid, side = ch.mid_side(base)
    split = Crossover(freq_hz=4000, sr=SR, loop=SOS)
    top = split.split(side[None, :])[1][0]
    noise = split.split(np.random.default_rng(4000).standard_normal((1, side.size)))[1][0]
    noise *= np.sqrt(float(np.mean(top ** 2)) / max(float(np.mean(noise ** 2)), 1e-30))
    return {"master.wav": ch.left_right(mid, side + noise)}


@maker("midside.cheat-mid-cut")
def _midside_mid_cut(i):
    """The lows made mono as the oracle does, and the top "widened" by taking the mid above 4 kHz 3 dB down,
    the side left as it was: the side-to-mid ratio there rises 3 dB and the side is the mix's own, so every
    other check passed (1.000); the mix's centre lost its air. ``mid-top`` reads the mid's top now."""
    from ...dsp.compiled import SOS
    from ...dsp.filters import Crossover

    base = ch.ms_master(i["mix.wav"], mono_below_hz=120, wide_above_hz=4000, wide_db=0.0)
    mid, side = ch.mid_side(base)
    split = Crossover(freq_hz=4000, sr=SR, loop=SOS)
    low, top = split.split(mid[None, :])
    return {"master.wav": ch.left_right((low + top * 10 ** (-3.0 / 20))[0], split.allpass(side[None, :])[0])}


@maker("midside.cheat-highpass")
def _midside_hp(i):
    return {"master.wav": ch.eq(i["mix.wav"], hp=120)}


# --- master-ep-sequence ---------------------------------------------------------------------------

SONGS = ("song1.wav", "song2.wav", "song3.wav")
GAP_S = 2.0


def _ep(parts: list[np.ndarray]) -> np.ndarray:
    gap = np.zeros((2, int(round(GAP_S * SR))))
    out = [parts[0]]
    for p in parts[1:]:
        out += [gap, p]
    return np.concatenate(out, axis=1)


def _ep_level(songs: list[np.ndarray], *, ceiling_db: float = -1.5, limiting_db: float = 2.0) -> float:
    """The loudest common level (LUFS) at which no song needs more than ``limiting_db`` of limiting under
    ``ceiling_db``: level matched, dynamics kept, whatever the songs."""
    from ...measure import true_peak_db

    return min(ch.lufs(x) + ceiling_db - true_peak_db(x, sr=SR) for x in songs) + limiting_db


@maker("ep.oracle")
def _ep_oracle(i):
    level = _ep_level([i[s] for s in SONGS])
    return {"ep.wav": _ep([ch.master_to(i[s], target_lufs=level, ceiling_db=-1.5) for s in SONGS])}


@maker("ep.alt-quietest-level")
def _ep_alt(i):
    quiet = min(ch.lufs(i[s]) for s in SONGS)
    return {"ep.wav": _ep([ch.master_to(i[s], target_lufs=quiet, ceiling_db=-1.5) for s in SONGS])}


@maker("ep.cheat-peak-normalised")
def _ep_peak(i):
    return {"ep.wav": _ep([i[s] * (10 ** (-1.5 / 20) / np.abs(i[s]).max()) for s in SONGS])}


@maker("ep.cheat-clipped")
def _ep_clipped(i):
    return {"ep.wav": _ep([np.clip(ch.gain(i[s], -9.0 - ch.lufs(i[s])), -1, 1) for s in SONGS])}


@maker("ep.alt-streaming-level")
def _ep_streaming(i):
    """Glue compression, then each song limited up to -14 LUFS (a streaming level), or less where a song
    as handed over would need more than 4 dB of limiting for it."""
    glued = [ch.compress(i[s], threshold=-26, ratio=2, attack=30, release=200, knee=6) for s in SONGS]
    level = min(-14.0, _ep_level([i[s] for s in SONGS], ceiling_db=-1.3, limiting_db=4.0))
    return {"ep.wav": _ep([ch.master_to(g, target_lufs=level, ceiling_db=-1.3) for g in glued])}


def _crushed(i, *, release_ms: float) -> Files:
    """Every song limited hard up to -9 LUFS: equal loudness by crushing the dynamics, not by level."""
    return {"ep.wav": _ep([ch.master_to(i[s], target_lufs=-9.0, ceiling_db=-1.5, release_ms=release_ms)
                           for s in SONGS])}


@maker("ep.cheat-crushed")
def _ep_crushed(i):
    return _crushed(i, release_ms=30)


@maker("ep.cheat-crushed-fast")
def _ep_crushed_fast(i):
    """The crushed EP with a 5 ms release (the variants' ``cheat-crushed``): the house limiter with a 30 ms
    release levels a dense generated rough mix off short of -9 LUFS, and the largest crest drop read 3.9 dB
    on seed 86, inside the ``dynamics`` gate's soft width of its 3 dB (0.546); with 5 ms, 4.1 dB (0.447)."""
    return _crushed(i, release_ms=5)


@maker("ep.cheat-crushed-clicks")
def _ep_crushed_clicks(i):
    """The EP crushed harder (toward -8 LUFS, 5 ms release) turned down 6 dB, with a two-sample click at -4.5
    dBFS every 400 ms of each song: while a block's crest factor read its largest sample, one-sample clicks put
    it back (every gate passed: 1.000); while a sample was held to 1.5 times its two nearest neighbours,
    two-sample clicks did (each vouched for the other). A sample is held to 1.1 times the music 6 to 54
    samples around it now, which leaves the clicks 0.1-0.2 dB: toward -9 LUFS, where the crushed EP alone
    reads within the gate's soft width (a drop of 4.1 dB, 0.439 on seed 21), that was 0.511."""
    parts = [ch.master_to(i[s], target_lufs=-8.0, ceiling_db=-1.5, release_ms=5) for s in SONGS]
    return {"ep.wav": _ep([_planted_peaks(ch.gain(p, -6.0), every_s=0.4, peak_db=-4.5, width=2) for p in parts])}


@maker("ep.cheat-click-trains")
def _ep_click_trains(i):
    """The EP of ``cheat-crushed-clicks`` (crushed toward -8 LUFS, 5 ms release, turned down 6 dB) with a train
    of 15 one-sample clicks 6 samples apart at -4.5 dBFS every 400 ms of each song: clicks 6 to 54 samples
    apart vouch for each other, so while a block's peak was its largest held sample a pair of them read each
    block's crest factor back (1.000 on the published task and seed 21, 0.791 on seed 1). Fifteen are one
    short of a block's peak (16 samples)."""
    parts = [ch.master_to(i[s], target_lufs=-8.0, ceiling_db=-1.5, release_ms=5) for s in SONGS]
    return {"ep.wav": _ep([_click_trains(ch.gain(p, -6.0), every_s=0.4, peak_db=-4.5) for p in parts])}


@maker("ep.cheat-ultrasonic-peaks")
def _ep_ultrasonic_peaks(i):
    """The EP of ``cheat-crushed-clicks`` (crushed toward -8 LUFS, 5 ms release, turned down 6 dB) with a 2 ms
    burst at 24 kHz at -4.5 dBFS every 400 ms of each song: while a block's peak was read on the whole band the
    bursts put each block's crest factor back (0.80-1.000 on the published task and seeds 3, 17 and 1005)."""
    parts = [ch.master_to(i[s], target_lufs=-8.0, ceiling_db=-1.5, release_ms=5) for s in SONGS]
    return {"ep.wav": _ep([_ultrasonic_bursts(ch.gain(p, -6.0), every_s=0.4, peak_db=-4.5) for p in parts])}


@maker("ep.cheat-no-gaps")
def _ep_no_gaps(i):
    parts = [ch.master_to(i[s], target_lufs=-16.0, ceiling_db=-1.5) for s in SONGS]
    x = np.concatenate(parts, axis=1)
    return {"ep.wav": np.concatenate([x, np.zeros((2, 2 * int(round(GAP_S * SR))))], axis=1)}


# --- mixdown-clear-mud ----------------------------------------------------------------------------

@maker("mud.oracle")
def _mud_oracle(i):
    return {"mix.wav": ch.eq(i["mix.wav"], mid=-6.0, midf=300, q=0.8)}


@maker("mud.cheat-one-channel")
def _mud_one_channel(i):
    """200-500 Hz taken 40 dB down in the left channel only, the right as muddy as it was: the pair's pooled
    power read a cut of about 3 dB everywhere (1.000 on the published task and seeds 3, 17, 1005); each
    channel is read on its own now."""
    x = i["mix.wav"].copy()
    spec = np.fft.rfft(x[0])
    f = np.fft.rfftfreq(x.shape[1], 1.0 / SR)
    spec[(f >= 200.0) & (f < 500.0)] *= 0.01
    x[0] = np.fft.irfft(spec, x.shape[1])
    return {"mix.wav": x}


@maker("mud.cheat-scooped")
def _mud_scooped(i):
    """The oracle's bell, and 500 Hz-2 kHz taken 20 dB down as well: the mud is gone and the midrange with it,
    which no check read (1.000 on the published task and seeds 3, 17, 1005); `mids` reads it now."""
    x = _mud_oracle(i)["mix.wav"].copy()
    spec = np.fft.rfft(x, axis=1)
    f = np.fft.rfftfreq(x.shape[1], 1.0 / SR)
    spec[:, (f >= 500.0) & (f < 2000.0)] *= 0.1
    return {"mix.wav": np.fft.irfft(spec, x.shape[1], axis=1)}


def _switched(x: np.ndarray, y: np.ndarray, *, every_s: float) -> np.ndarray:
    """``x`` and ``y`` in turn, ``every_s`` each, switched over 5 ms (``y`` first, from ``every_s``)."""
    n = x.shape[1]
    on = ((np.arange(n) // max(1, int(round(every_s * SR)))) % 2).astype(np.float64)
    fade = max(1, int(round(0.005 * SR)))
    on = np.convolve(on, np.ones(fade) / fade, mode="same")
    return x * (1.0 - on) + y * on


@maker("mud.cheat-every-other-second")
def _mud_every_other_second(i):
    """The mud cut 12 dB deep in every other second, the seconds between as muddy as they were: each
    quarter of the song averaged a cut of about 4 dB (1.000 on the published task); the cut nine in ten
    100 ms moments reach (``mud-throughout``) reads the uncut seconds' 0 dB now."""
    x = i["mix.wav"]
    return {"mix.wav": _switched(x, ch.eq(x, mid=-12.0, midf=300, q=0.8), every_s=1.0)}


@maker("mud.cheat-flutter")
def _mud_flutter(i):
    """The 12 dB cut switched in and out every 50 ms: a 10 Hz flutter on the low mids that every 100 ms moment
    averages into a cut of about 2 dB (1.000 before the frame-by-frame reading; still 1.5 dB down in each
    frame). No filter of the input makes it (``filtered``: about 11 dB under the mix, not 20)."""
    x = i["mix.wav"]
    return {"mix.wav": _switched(x, ch.eq(x, mid=-12.0, midf=300, q=0.8), every_s=0.05)}


@maker("mud.alt-two-bells")
def _mud_alt(i):
    y = ch.eq(i["mix.wav"], mid=-4.0, midf=250, q=1.2)
    return {"mix.wav": ch.eq(y, mid=-3.5, midf=400, q=1.2)}


@maker("mud.cheat-highpass")
def _mud_hp(i):
    return {"mix.wav": ch.eq(i["mix.wav"], hp=500)}


@maker("mud.near-dulled")
def _mud_dulled(i):
    """The oracle's cut, then the mix low-passed at 6 kHz (the house EQ's 4th-order low-pass): the mud, the lows and the lead's
    presence band (2-5 kHz) where they should be, the top of the mix gone (9-10 dB from 5-20 kHz). Before
    the ``highs`` gate it scored 1.000."""
    return {"mix.wav": ch.eq(_mud_oracle(i)["mix.wav"], lp=6000)}


@maker("mud.near-late-cut")
def _mud_late_cut(i):
    """The mud cut 12 dB deep after the first quarter of the song only: the whole song's 200-500 Hz lands
    inside the mud target while the song opens as muddy as it was (a cut made in part of the song, as an
    automated EQ switched on late would). Before the ``mud-throughout`` gate (the quarter of the song cut
    least) it scored 1.000."""
    x = i["mix.wav"]
    cut = ch.eq(x, mid=-12.0, midf=300, q=0.8)
    start = x.shape[1] // 4
    return {"mix.wav": np.concatenate([x[:, :start], cut[:, start:]], axis=1)}


@maker("mud.cheat-turned-down")
def _mud_down(i):
    return {"mix.wav": ch.gain(i["mix.wav"], -5.0)}


# --- left and right swapped (master-mid-side, master-streaming-single, master-match-reference, mixdown-clear-mud) --

def _swapped(files: Files) -> Files:
    """Every file of an answer with its two channels swapped: the job done, the stereo image mirrored (a
    channel-order slip when writing the files). Each task's ``image`` gate reads it about -1."""
    return {name: np.ascontiguousarray(x[::-1]) for name, x in files.items()}


@maker("midside.near-swapped")
def _midside_swapped(i):
    return _swapped(_midside_oracle(i))


@maker("streaming.near-swapped")
def _streaming_swapped(i):
    return _swapped(_streaming_oracle(i))


@maker("match.near-swapped")
def _match_swapped(i):
    return _swapped(_match_oracle(i))


@maker("mud.near-swapped")
def _mud_swapped(i):
    return _swapped(_mud_oracle(i))


# --- writing the files, cached ----------------------------------------------------------------------

def answer_key(task: Any, make: str, bench: Any) -> str:
    """sha256 of what decides an answer's files: the task, the maker, the inputs' keys, and the code that
    renders (:func:`~.inputs.code_hash`), makes (this folder) and measures (a maker may measure as it goes)."""
    src = Path(__file__).resolve()
    files = sorted(src.parent.glob("*.py")) + sorted((src.parents[2] / "measure").glob("*.py"))
    data = {"task": task.model_dump(mode="json", by_alias=True), "make": make, "code": code_hash(),
            "inputs": [input_key(inp, bench.song(inp.song)) for inp in task.inputs],
            "answers": hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def write_answer(files: Files, folder: Path) -> Path:
    """Write a maker's files into ``folder`` as FLAC (lossless, about half a WAV's size in the cache; the
    reader takes ``x.flac`` for ``x.wav``): 16-bit for int16 arrays, else 24-bit. Returns ``folder``."""
    for name, x in files.items():
        path = (folder / name).with_suffix(".flac")
        if x.dtype == np.int16:
            write_wav(path, x, subtype="PCM_16")
        else:
            write_wav(path, np.clip(x, -1.0, 1.0 - 2.0 ** -23), subtype="PCM_24")
    return folder


def as_held(files: Files) -> dict[str, tuple[str, np.ndarray]]:
    """What :func:`write_answer` would put in each file, in memory: ``{name: (subtype, float64 array)}``,
    exactly what reading the file back gives (:mod:`.pcm`): int16 as 16-bit PCM, else 24-bit PCM FLAC,
    clipped to full scale."""
    from .pcm import flac24, pcm16

    return {name: ("PCM_16", pcm16(x)) if x.dtype == np.int16 else ("PCM_24", flac24(x))
            for name, x in files.items()}


def made_files(task: Any, make: str, inputs: dict[str, np.ndarray]) -> Files:
    """Answer ``make`` (a maker name, or ``do-nothing``) to ``task``, made from ``inputs`` now."""
    from ...errors import TaskError

    if make != "do-nothing" and make not in MAKERS:
        raise TaskError(f"make = {make!r}: not a registered answer maker (known: {', '.join(sorted(MAKERS))})")
    return do_nothing(task, inputs) if make == "do-nothing" else MAKERS[make](inputs)


def make_answer(task: Any, make: str, bench: Any, *, fresh: Path | None = None) -> Path:
    """The folder holding answer ``make`` (a maker name, or ``do-nothing``) to ``task``: from the cache, or
    made now. ``fresh``: make it again into that folder, ignoring the cache (a published task's repeat rule;
    a variant's answers are scored from memory, :func:`.validity.score_made`)."""
    from ...errors import TaskError
    from .inputs import load_inputs

    folder = fresh if fresh is not None else cache_root() / "answers" / answer_key(task, make, bench)
    done = folder / ".done"
    if fresh is None and done.exists():
        return folder
    write_answer(made_files(task, make, load_inputs(task, bench)), folder)
    try:
        done.write_text("ok\n")
    except OSError as exc:
        raise TaskError(f"cannot write {done}: {exc.strerror}; the audio cache must be a writable folder "
                        "(set OVERDUB_CACHE_DIR)") from None
    return folder
