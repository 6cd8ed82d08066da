"""Devices on the music: real-track checks, the seeded probe families, a note's pitch and length.

docs/checks.md, "Devices on the real track" and "Probe families". Conventions:

* **The real track** is the agent's track as it plays in the song (its instrument, clips and notes) with
  track gain 0 dB, centred, unmuted, through a default master (0 dB, no inserts, soft clip), at the song's
  tempo; rendered with its inserts and without them (bypass). Effects are compared on the same input.
* **Seeds.** Probe parameters are drawn from ``numpy.random.default_rng(seed)``, the seed the first 8 bytes
  of a SHA-256 over the submitted song's device definitions (id, kind, kernel, params, sorted by id), the
  track's instrument and inserts, and the check's id: the same submission always gets the same probes
  (independent of ``PYTHONHASHSEED``), another submission gets others.
* **Draws cover their range by construction.** A submission can carry a spare param and re-hash itself
  offline (no render, about a millisecond a try) until the draws land where it likes, so no check's pass
  may hinge on where one draw lands: tempos are stratified (:func:`draw_tempos`: one draw in each of
  ``n`` strata of the range, kept apart), and a pitch the pass depends on is not drawn at all: every
  pitch of the span is measured and the worst for the check's target counts (:func:`pitch_span`,
  :func:`worst`); a decay probe note plays at every pitch of its span, at velocities and lengths one in
  each stratum of their ranges (:func:`draw_strata`). What stays drawn (a tone's velocity, the echo
  click's pitch and level, which velocity and length goes with which pitch) only varies the probe.
* Levels are peak |x| over both channels; spectra are the power of the whole signal's FFT summed over
  both channels; dB is ``gain_to_db`` (floored at -120).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from typing import Any

import numpy as np

from ..dsp.levels import gain_to_db
from ..dsp.sums import dot
from ..errors import TaskError
from ..song.model import Master, Song, Track

CENTS_WINDOW = 100.0       # notePitch looks for partials within a semitone of the fundamental
PROMINENCE_DB = 15.0       # a partial stands this far above the median of the half octave around it
PARTIAL_RANGE_DB = 15.0    # ... and within this of the note's loudest partial (docs/checks.md)
PITCH_WINDOW_S = 0.5       # notePitch reads the first half second after the strike
TONAL_WINDOW_S = 1.5       # ... and the note's tonal share over its first 1.5 s (it must be gone by then)
TONAL_MIN = 0.25           # a pitched note holds at least this share of its energy in clear partials
LENGTH_DROP_DB = 30.0      # noteLength: time until the note falls this far under its own peak
DECAY_UNDER_PEAK_DB = 40.0  # trackDecay: a note also dies away 40 dB under its own peak ...
DECAY_FLOOR_DB = -100.0    # ... reading no lower than this
REPEAT_FLOOR_DB = -30.0    # echo checks: wet sound within this of the dry hit is a repeat (docs/checks.md)
HIT_S = 0.1                # trackEcho*: the first hit's dry, correlated with the wet part


# --- seeds --------------------------------------------------------------------------------------

def probe_seed(song: Song, track: Track, *, salt: str) -> int:
    """An int from the song's device definitions, the track's devices and ``salt`` (sha256, stable)."""
    devices = {k: song.devices[k].model_dump(mode="json") for k in sorted(song.devices)}
    chain = {"instrument": track.instrument.model_dump(mode="json") if track.instrument else None,
             "inserts": [i.model_dump(mode="json") for i in track.inserts]}
    blob = json.dumps({"devices": devices, "chain": chain, "salt": salt}, sort_keys=True,
                      separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big")


def probe_rng(song: Song, track: Track, *, salt: str) -> np.random.Generator:
    return np.random.default_rng(probe_seed(song, track, salt=salt))


def tempo_strata(*, lo: float, hi: float, n: int) -> list[tuple[float, float]]:
    """The ``n`` ranges :func:`draw_tempos` draws from: :func:`strata` with a gap, so two drawn tempos are
    at least ``w / 2`` apart whatever the seed (``w = (hi - lo) / n``)."""
    return strata(lo=lo, hi=hi, n=n, gap=True)


def strata(*, lo: float, hi: float, n: int, gap: bool) -> list[tuple[float, float]]:
    """[lo, hi] cut into ``n`` equal strata of width ``w = (hi - lo) / n``, in order; with ``gap`` each is
    shrunk by ``w / 4`` at every boundary it shares with a neighbour (not at ``lo`` or ``hi``)."""
    if n == 0:
        return []
    w = (hi - lo) / n
    cut = w / 4 if gap else 0.0
    return [(lo + i * w + (cut if i > 0 else 0.0), lo + (i + 1) * w - (cut if i < n - 1 else 0.0))
            for i in range(n)]


def draw_tempos(rng: np.random.Generator, *, lo: float, hi: float, n: int) -> list[float]:
    """``n`` tempos, one uniform in each of :func:`tempo_strata` (in order), rounded to 0.1 bpm.

    Stratified so that no seed can put two draws near one tempo: whatever a submission's hash, the
    draws span [lo, hi], and a device whose delay ignores the tempo matches at most one of them. The
    published dotted echo (0.75 beat, target within 3 ms, soft 15: no credit 18 ms off) draws two in
    [70, 170]: strata [70, 107.5] and [132.5, 170], i.e. delays of at least 45000 / 107.5 = 418.6 ms
    and at most 45000 / 132.5 = 339.6 ms, 79 ms apart, more than the 2 x 18 = 36 ms one fixed time
    would need to get credit at both."""
    return [round(float(rng.uniform(a, b)), 1) for a, b in tempo_strata(lo=lo, hi=hi, n=n)]


def pitch_span(pitch: int, *, spread: int) -> list[int]:
    """Every pitch in [pitch - spread, pitch + spread], clamped to MIDI 0..127 (each once)."""
    return sorted({min(127, max(0, pitch + k)) for k in range(-spread, spread + 1)})


def worst(values: list[float], target: tuple[float | None, float | None]) -> float:
    """The value of ``values`` a check's ``target`` [lo|null, hi|null] likes least: the largest for an
    upper bound only (a cut), the smallest for a lower bound only, else the farthest from the range
    (ties, e.g. all inside, broken by the distance from its middle)."""
    lo, hi = target
    if len(values) == 1:
        return values[0]
    if lo is None and hi is None:
        raise TaskError("a check measured over a pitch span needs a target with a bound")
    if lo is None:
        return max(values)
    if hi is None:
        return min(values)
    mid = (lo + hi) / 2
    return max(values, key=lambda v: (max(lo - v, v - hi, 0.0), abs(v - mid)))


def draw_strata(rng: np.random.Generator, lo: float, hi: float, *, n: int) -> list[float]:
    """``n`` values, one uniform in each of ``n`` equal strata of [lo, hi], in a drawn order (``lo`` each
    when lo == hi): whatever the seed, every part of the range is played."""
    if lo == hi:
        return [float(lo)] * n
    values = [float(rng.uniform(a, b)) for a, b in strata(lo=lo, hi=hi, n=n, gap=False)]
    return [values[i] for i in rng.permutation(n)]


def draw_pitch(rng: np.random.Generator, pitch: int, *, spread: int) -> int:
    """One pitch uniform in [pitch - spread, pitch + spread] (clamped to 0..127): only for parameters a
    check's pass does not hinge on (the echo checks' click); a check that does measures the whole span
    (:func:`pitch_span`, :func:`worst`)."""
    return int(min(127, max(0, pitch + int(rng.integers(-spread, spread + 1)))))


def draw_in(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(lo if lo == hi else rng.uniform(lo, hi))


# --- the real track -----------------------------------------------------------------------------

def track_song(song: Song, track: Track, *, inserts: bool) -> Song:
    """``track`` alone as it plays in ``song`` (0 dB, centred, unmuted), with or without its inserts."""
    alone = track.model_copy(update={"inserts": track.inserts if inserts else (), "gain": 0.0, "pan": 0.0,
                                     "mute": False, "solo": False})
    return song.model_copy(update={"tracks": (alone,), "sections": (), "master": Master(), "loop": None})


def onsets_s(song: Song, track: Track) -> list[float]:
    """The heard notes' onsets in seconds, sorted, each once."""
    return sorted({s for s, _ in struck(song, track)})


def struck(song: Song, track: Track) -> list[tuple[float, int]]:
    """The heard notes as (onset in seconds, pitch), in time order."""
    from ..notes.selection import placed_notes

    spb = 60.0 / song.tempo
    return sorted((round(n.start_beats * spb, 9), n.p) for n in placed_notes(song, track))


def same_length(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` zero-padded to the longer's length (themselves, not copies, when they match)."""
    n = max(x.shape[-1], y.shape[-1])
    if x.shape[-1] == y.shape[-1]:
        return x, y
    pad = lambda a: np.pad(a, ((0, 0), (0, n - a.shape[-1])))  # noqa: E731
    return pad(x), pad(y)


def band_gain_db(x: np.ndarray, y: np.ndarray, *, sr: int, band: tuple[float, float]) -> float:
    """Power of ``y`` over power of ``x`` in ``band`` = [lo, hi) Hz, dB (whole-signal FFT, both zero-padded
    to :func:`fft_length` of the longer)."""
    x, y = same_length(x, y)
    n = fft_length(x.shape[-1])
    f = np.fft.rfftfreq(n, 1.0 / sr)
    m = (f >= band[0]) & (f < band[1])
    px = float(np.sum(power_spectrum(x, n)[:, m]))
    py = float(np.sum(power_spectrum(y, n)[:, m]))
    if px <= 0:
        raise TaskError(f"the track has no energy in {band[0]:g}-{band[1]:g} Hz to compare")
    return 10.0 * math.log10(max(py / px, 1e-12))


def fft_length(n: int) -> int:
    """The smallest length of at least ``n`` samples whose real FFT is fast (2, 3 and 5 smooth:
    ``scipy.fft.next_fast_len``). A render's length is seldom one: a song-length FFT of a length with a
    large prime factor took 0.4-2.4 s here, padded to this length 0.09-0.24 s."""
    from scipy.fft import next_fast_len

    return int(next_fast_len(int(n), real=True))


def power_spectrum(x: np.ndarray, n: int) -> np.ndarray:
    """``|rfft(x, n)|²`` per channel (``x`` zero-padded to ``n`` samples), read-only: the same samples give
    the same array, so a scorer process (:mod:`pytest_overdub.runtime`) keeps the last few by a digest of
    the samples (:data:`SPECTRA`). A device task reads the spectra of one bypass and one insert render for
    each band it checks, for every answer the self-check scores."""
    from .. import runtime

    if not runtime.active():
        return np.abs(np.fft.rfft(x, n, axis=-1)) ** 2
    return SPECTRA.get(x, f"power{n}", lambda a: np.abs(np.fft.rfft(a, n, axis=-1)) ** 2)


def _rfft(x: np.ndarray, nfft: int) -> np.ndarray:
    """``np.fft.rfft(x, nfft)`` of a 1-D ``x``, kept like :func:`power_spectrum`'s (``echo_repeat`` reads
    the same dry hit for every answer)."""
    from .. import runtime

    if not runtime.active():
        return np.fft.rfft(x, nfft)
    return SPECTRA.get(x, f"rfft{nfft}", lambda a: np.fft.rfft(a, nfft))


class ArrayMemo:
    """A small LRU of pure functions of an array, keyed by the function's name and a digest of the
    array's samples (its dtype, shape and bytes); the values are kept read-only. ``hits``/``misses``
    count lookups."""

    def __init__(self, *, size: int):
        self.size = size
        self._items: dict[bytes, np.ndarray] = {}
        self.hits = self.misses = 0

    def get(self, x: np.ndarray, what: str, make: Any) -> np.ndarray:
        """``make(x)``, ``what`` naming the function (part of the key)."""
        a = np.ascontiguousarray(x)
        h = hashlib.sha256(f"{what}:{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))
        key = h.digest()
        value = self._items.pop(key, None)
        if value is None:
            self.misses += 1
            value = make(a)
            value.setflags(write=False)
        else:
            self.hits += 1
        self._items[key] = value
        while len(self._items) > self.size:
            self._items.pop(next(iter(self._items)))
        return value

    def clear(self) -> None:
        self._items.clear()
        self.hits = self.misses = 0


#: The scorer's spectra of recent device-check renders (:func:`power_spectrum`, :func:`_rfft`); 23-34 MB
#: each for a minute of audio.
SPECTRA = ArrayMemo(size=8)


def echo_lag_ms(dry: np.ndarray, out: np.ndarray, *, sr: int, lo_ms: float = 40.0,
                hi_ms: float = 2000.0, hit: tuple[float, float] | None = None) -> float:
    """The first repeat's delay, ms (``echo_repeat``'s first figure)."""
    return echo_repeat(dry, out, sr=sr, lo_ms=lo_ms, hi_ms=hi_ms, hit=hit)[0]


def echo_repeat(dry: np.ndarray, out: np.ndarray, *, sr: int, lo_ms: float = 40.0,
                hi_ms: float = 2000.0, hit: tuple[float, float] | None = None) -> tuple[float, float]:
    """(delay ms, level dB) of the first repeat: cross-correlate the wet part (out − dry) with the dry
    hit ``hit`` = (start s, end s) (the whole dry when None), mono sums.

    Correlating with one hit, the part's first, keeps the repeats of the hits before it out of the
    window (with hits every 1.2 s, a third repeat at 1.35 s would otherwise read as a repeat at 0.15 s).
    The first lag in [lo_ms, hi_ms] whose |correlation| is within 3 dB of the window's largest, moved to
    the largest |correlation| in the 20 ms that follow. The level is that correlation over the hit's own
    energy (its correlation at lag 0): a copy of the hit at gain g reads 20·log10 g. No wet signal (under
    10⁻⁶ of the hit's energy): (∞, -120)."""
    dry, out = same_length(dry, out)
    w = out.sum(axis=0) - dry.sum(axis=0)
    d = dry.sum(axis=0)
    if hit is not None:
        a_hit, b_hit = int(round(hit[0] * sr)), int(round(hit[1] * sr))
        d = np.concatenate([np.zeros(a_hit), d[a_hit:b_hit], np.zeros(max(0, len(d) - b_hit))])[: len(w)]
    n = len(d)
    nfft = 1 << int(math.ceil(math.log2(2 * n)))
    c = np.fft.irfft(_rfft(w, nfft) * np.conj(_rfft(d, nfft)), nfft)[:n]
    a, b = int(lo_ms * sr / 1000), min(n, int(hi_ms * sr / 1000))
    win = np.abs(c[a:b])
    energy = float(np.sum(d ** 2))
    if win.size == 0 or energy <= 0 or win.max() <= 1e-6 * energy:
        return math.inf, -120.0
    first = a + int(np.argmax(win >= 10 ** (-3 / 20) * win.max()))
    end = min(b, first + int(0.020 * sr))
    at = first + int(np.argmax(np.abs(c[first:end])))
    return at / sr * 1000.0, float(gain_to_db(abs(c[at]) / energy))


def early_wet_ms(dry: np.ndarray, out: np.ndarray, *, sr: int, start_s: float, before_ms: float,
                 floor_db: float = REPEAT_FLOOR_DB) -> float:
    """When the wet part sounds before its first repeat: the first 1 ms frame in the ``before_ms`` after the
    hit at ``start_s`` where the wet part (out − dry, less its projection on the dry there, so that a dry
    passed at another gain adds nothing) peaks within ``floor_db`` of the dry hit's peak, in ms after the
    hit; ∞ when none does. A flam 30 ms after each hit, or a quieter sixteenth before the dotted eighth,
    is heard as the first repeat; the cross-correlation (:func:`echo_repeat`) looks past both."""
    dry, out = same_length(dry, out)
    d = dry.sum(axis=0)
    a = int(round(start_s * sr))
    b = min(len(d), a + int(before_ms * sr / 1000.0))
    frame = sr // 1000
    if b - a < frame:
        return math.inf
    d_span = d[a:b]
    w = out.sum(axis=0)[a:b] - d_span
    energy = float(np.sum(d_span ** 2))
    if energy > 0:
        w = w - (dot(w, d_span) / energy) * d_span
    peak = float(np.max(np.abs(d_span)))
    n = (b - a) // frame
    env = np.abs(w[: n * frame]).reshape(n, frame).max(axis=1)
    over = np.nonzero(env > peak * 10 ** (floor_db / 20))[0]
    return float(over[0]) if over.size else math.inf


def repeat_levels_db(dry: np.ndarray, out: np.ndarray, *, sr: int, hits: list[tuple[float, float]],
                     lag_ms: float) -> list[float]:
    """Each hit's repeat at ``lag_ms``: the wet part's correlation with the hit (start s, end s) shifted
    by the lag, over the hit's own energy, dB (mono sums; a copy at gain g reads 20·log10 g). Hits under
    10⁻⁶ of energy are skipped. Earlier hits' repeats mostly meet a hit's window at other lags and add
    nothing at this one; one that lands exactly there (the 9th repeat of a hit 3.6 s earlier, at 100 bpm)
    moves the reading by its own level (0.003 dB at feedback 0.35)."""
    dry, out = same_length(dry, out)
    d = dry.sum(axis=0)
    w = out.sum(axis=0) - d
    lag = int(round(lag_ms * sr / 1000.0))
    levels = []
    for start, end in hits:
        a, b = int(round(start * sr)), int(round(end * sr))
        b = min(b, len(d), len(w) - lag)
        energy = float(np.sum(d[a:b] ** 2)) if a < b else 0.0
        if energy <= 1e-6:
            continue
        levels.append(float(gain_to_db(abs(dot(w[a + lag:b + lag], d[a:b])) / energy)))
    return levels


def hit_change_db(dry: np.ndarray, out: np.ndarray, *, sr: int, onsets: list[float],
                  window_s: float = 0.020) -> float:
    """The worst |change| over the hits of the peak in the ``window_s`` after each onset, dB."""
    dry, out = same_length(dry, out)
    md, mo = np.max(np.abs(dry), axis=0), np.max(np.abs(out), axis=0)
    worst = 0.0
    for s in onsets:
        a = int(round(s * sr))
        b = min(len(md), a + int(window_s * sr))
        if a >= b or md[a:b].max() < 1e-3:  # a hit under -60 dBFS says nothing
            continue
        worst = max(worst, abs(float(gain_to_db(mo[a:b].max()) - gain_to_db(md[a:b].max()))))
    return worst


def note_decay_s(x: np.ndarray, *, sr: int, onsets: list[float], threshold_db: float,
                 max_s: float = 4.0, under_peak_db: float | None = None) -> float:
    """The slowest note's time from its strike to its last 10 ms frame above ``threshold_db`` dBFS,
    read up to the next onset (or ``max_s``): a note still sounding when the next one strikes reads the
    whole gap. With ``under_peak_db`` a note's threshold is the lower of ``threshold_db`` and its own peak
    less ``under_peak_db`` (never under :data:`DECAY_FLOOR_DB`): a part played too quietly to cross
    ``threshold_db`` must still die away."""
    mono = np.max(np.abs(x), axis=0)
    frame = sr // 100
    worst = 0.0
    for i, s in enumerate(onsets):
        a = int(round(s * sr))
        end_s = min(onsets[i + 1] if i + 1 < len(onsets) else s + max_s, s + max_s)
        seg = mono[a: int(round(end_s * sr))]
        n = len(seg) // frame
        if n == 0:
            continue
        env = seg[: n * frame].reshape(n, frame).max(axis=1)
        limit_db = threshold_db
        if under_peak_db is not None:
            limit_db = max(DECAY_FLOOR_DB, min(threshold_db, float(gain_to_db(env.max())) - under_peak_db))
        above = np.nonzero(env > 10 ** (limit_db / 20))[0]
        worst = max(worst, (above[-1] + 1) * frame / sr if above.size else 0.0)
    return worst


# --- a note's pitch and length --------------------------------------------------------------------

def partial_cents(x: np.ndarray, *, sr: int, f0_hz: float) -> float:
    """|cents| from ``f0_hz`` to the nearest prominent partial of ``x`` within a semitone; ∞ if none.

    A partial is a local maximum of the Hann-windowed magnitude spectrum (zero-padded to at least 2^16
    points) standing ``PROMINENCE_DB`` above the median of the half octave either side of ``f0_hz`` and
    within ``PARTIAL_RANGE_DB`` of the loudest peak, its frequency refined by a parabola through the peak
    bin and its neighbours (dB). A sine, a plucked string or a bell whose partial
    set includes the fundamental has one; a click or a noise burst does not."""
    mono = x.sum(axis=0) if x.ndim == 2 else x
    if mono.size < 16 or not np.any(mono):
        return math.inf
    nfft = max(1 << 16, 1 << int(math.ceil(math.log2(mono.size))))
    mag = np.abs(np.fft.rfft(mono * _hann(mono.size), nfft))
    db = 20.0 * np.log10(mag + 1e-12 * mag.max())
    f = np.fft.rfftfreq(nfft, 1.0 / sr)
    ctx_band = (f >= f0_hz / math.sqrt(2)) & (f <= f0_hz * math.sqrt(2))
    floor_db = float(np.median(db[ctx_band]))
    near = np.nonzero((f >= f0_hz * 2 ** (-CENTS_WINDOW / 1200)) & (f <= f0_hz * 2 ** (CENTS_WINDOW / 1200)))[0]
    near = near[(near > 0) & (near < len(db) - 1)]
    peaks = near[(db[near] >= db[near - 1]) & (db[near] >= db[near + 1])
                 & (db[near] >= floor_db + PROMINENCE_DB) & (db[near] >= db.max() - PARTIAL_RANGE_DB)]
    if peaks.size == 0:
        return math.inf
    # each peak's frequency refined by a parabola through its bin and the two beside it (in dB)
    left, mid, right = db[peaks - 1], db[peaks], db[peaks + 1]
    curve = left - 2 * mid + right
    shift = np.where(curve < 0, 0.5 * (left - right) / np.where(curve < 0, curve, -1.0), 0.0)
    hz = (peaks + shift) * sr / nfft
    return float(np.min(np.abs(1200.0 * np.log2(hz / f0_hz))))


def tonal_share(x: np.ndarray, *, sr: int) -> float:
    """The share of ``x``'s energy (a note from its strike) that lies in clear partials: spectrum bins
    standing ``PROMINENCE_DB`` above the median of their octave band (octaves from 20 Hz; the median
    interpolated between band centres on a log-frequency axis). The window falls as the second half of a
    Hann window, so the strike (where a noisy attack lives) keeps its full weight. A sine, a bell, a
    plucked string hold most of their energy there (0.4 to 1); a noise burst holds none, and a faint tone
    inside one only its own small share; 0.0 for silence."""
    mono = x.sum(axis=0) if x.ndim == 2 else x
    if mono.size < 16 or not np.any(mono):
        return 0.0
    nfft = max(1 << 16, 1 << int(math.ceil(math.log2(mono.size))))
    power = np.abs(np.fft.rfft(mono * _hann(2 * mono.size)[mono.size:], nfft)) ** 2
    db = 10.0 * np.log10(power + 1e-12 * power.max())
    log_f, bands, centres = _octave_bands(nfft, sr)
    medians = [float(np.median(db[a:b])) for a, b in bands]
    floor_db = np.interp(log_f, centres, medians)
    return float(power[db >= floor_db + PROMINENCE_DB].sum() / power.sum())


@functools.lru_cache(maxsize=8)
def _octave_bands(nfft: int, sr: int) -> tuple[np.ndarray, list[tuple[int, int]], list[float]]:
    """:func:`tonal_share`'s octaves for an ``nfft``-point spectrum: the log of each bin's frequency (1 Hz
    at least), read-only; each octave from 20 Hz holding more than 4 bins as its bins' index range
    ``[a, b)`` (the frequencies rise, so an octave's bins are contiguous); and the log of its centre."""
    f = np.fft.rfftfreq(nfft, 1.0 / sr)
    bands, centres = [], []
    lo = 20.0
    while lo < sr / 2:
        a, b = (int(i) for i in np.searchsorted(f, [lo, 2 * lo], side="left"))
        if b - a > 4:
            bands.append((a, b))
            centres.append(math.log(lo * math.sqrt(2)))
        lo *= 2
    log_f = np.log(np.maximum(f, 1.0))
    log_f.setflags(write=False)
    return log_f, bands, centres


def note_pitch_cents(x: np.ndarray, *, sr: int, f0_hz: float) -> float:
    """A struck note's pitch reading: :func:`partial_cents` of its first ``PITCH_WINDOW_S``, or ∞ when
    under ``TONAL_MIN`` of its energy (over ``x``, at most ``TONAL_WINDOW_S`` from the strike) lies in
    clear partials (:func:`tonal_share`): a noise burst or a fixed sample with a faint tone at the
    note's pitch is not a note at that pitch."""
    if tonal_share(x[..., : int(TONAL_WINDOW_S * sr)], sr=sr) < TONAL_MIN:
        return math.inf
    return partial_cents(x[..., : int(PITCH_WINDOW_S * sr)], sr=sr, f0_hz=f0_hz)


@functools.lru_cache(maxsize=8)
def _hann(n: int) -> np.ndarray:
    """``np.hanning(n)``, read-only, kept: every probe note of a check has the same window length."""
    w = np.hanning(n)
    w.setflags(write=False)
    return w


def sounding_s(x: np.ndarray, *, sr: int, drop_db: float = LENGTH_DROP_DB) -> float:
    """Seconds from the start of ``x`` (a strike) to its last 10 ms frame within ``drop_db`` of its peak."""
    mono = np.max(np.abs(x), axis=0) if x.ndim == 2 else np.abs(x)
    frame = sr // 100
    n = len(mono) // frame
    if n == 0 or mono.max() <= 0:
        return 0.0
    env = mono[: n * frame].reshape(n, frame).max(axis=1)
    above = np.nonzero(env >= env.max() * 10 ** (-drop_db / 20))[0]
    return float((above[-1] + 1) * frame / sr)


def real_notes_value(x: np.ndarray, *, sr: int, notes: list[tuple[float, int]], kind: str) -> float:
    """``trackPitch``: the worst note's |cents| to its nearest prominent partial; ``trackLength``: the
    shortest note's time to fall ``LENGTH_DROP_DB`` under its peak. Each note is read from its onset to
    the next onset (:func:`note_pitch_cents`: ``TONAL_WINDOW_S`` at most, its first ``PITCH_WINDOW_S`` for
    the partial; 4 s for the length); notes struck together
    (a chord) are read together, each for its own pitch."""
    onsets = sorted({s for s, _ in notes})
    values = []
    for s, p in notes:
        later = [o for o in onsets if o > s]
        end = later[0] if later else s + 4.0
        if kind == "trackPitch":
            seg = x[:, int(round(s * sr)): int(round(min(end, s + TONAL_WINDOW_S) * sr))]
            values.append(note_pitch_cents(seg, sr=sr, f0_hz=440.0 * 2 ** ((p - 69) / 12)))
        else:
            values.append(sounding_s(x[:, int(round(s * sr)): int(round(min(end, s + 4.0) * sr))], sr=sr))
    if not values:
        raise TaskError("the track plays no notes to read")
    return max(values) if kind == "trackPitch" else min(values)


# --- the real-track check kinds -----------------------------------------------------------------

def _render(ctx: Any, song: Song) -> np.ndarray:
    from ..render import render

    r = render(song, sr=ctx.sr, trust_kernels=ctx.trusted)
    ctx.warnings.extend(r.warnings)
    return r.mix


def real_pair(ctx: Any, track: Track, *, inserts_too: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """(bypass, with inserts) renders of the real track, cached on the context for its other checks."""
    key = ("device_checks.real", track.model_dump_json(), inserts_too)
    if key not in ctx._values:
        other = ctx._values.get(key[:2] + (not inserts_too,))  # the bypass either way renders once
        dry = other[0] if other else _render(ctx, track_song(ctx.song, track, inserts=False))
        out = _render(ctx, track_song(ctx.song, track, inserts=True)) if inserts_too else None
        ctx._values[key] = (dry, out)
    return ctx._values[key]


def _played(ctx: Any, track: Track, ref: str) -> np.ndarray:
    """The real part through its instrument alone (the instrument kinds read it)."""
    if track.instrument is None:
        raise TaskError(f"track {ref!r} has no instrument to play its notes")
    return real_pair(ctx, track, inserts_too=False)[0]


def track_band_db(ctx: Any, track: Track, *, band: tuple[float, float]) -> float:
    """``trackBand``: the real part's power in ``band`` with its inserts over without, dB."""
    dry, out = real_pair(ctx, track)
    return band_gain_db(dry, out, sr=ctx.sr, band=band)


def track_dry_kept_db(ctx: Any, track: Track) -> float:
    """``trackDryKept``: how the inserts change the real part's hits (:func:`hit_change_db`)."""
    dry, out = real_pair(ctx, track)
    return hit_change_db(dry, out, sr=ctx.sr, onsets=onsets_s(ctx.song, track))


def track_echo(ctx: Any, track: Track, ref: str, *, beats: float) -> tuple[float, list[float]]:
    """``trackEcho*``: (|first-repeat lag - ``beats``| in ms, the repeat level of every hit in dB) on the
    real part, the lag read against its first hit (:func:`echo_repeat`)."""
    key = ("device_checks.echo", track.model_dump_json(), float(beats))
    if key in ctx._values:  # the time check and the level check read the same figures
        return ctx._values[key]
    dry, out = real_pair(ctx, track)
    want_ms = beats * 60000.0 / ctx.song.tempo
    onsets = onsets_s(ctx.song, track)
    if not onsets:
        raise TaskError(f"track {ref!r} plays no notes to echo")
    hits = [(s, min(s + HIT_S, onsets[i + 1] if i + 1 < len(onsets) else math.inf))
            for i, s in enumerate(onsets)]
    lag_ms, _ = echo_repeat(dry, out, sr=ctx.sr, hi_ms=min(2000.0, 2.0 * want_ms), hit=hits[0])
    if math.isfinite(lag_ms):
        lag_ms = min(lag_ms, early_wet_ms(dry, out, sr=ctx.sr, start_s=onsets[0], before_ms=lag_ms - 10.0))
    levels = repeat_levels_db(dry, out, sr=ctx.sr, hits=hits, lag_ms=lag_ms) if math.isfinite(lag_ms) else []
    ctx._values[key] = (abs(lag_ms - want_ms), levels)
    return ctx._values[key]


def track_decay_s(ctx: Any, track: Track, ref: str, *, threshold_db: float) -> float:
    """``trackDecay``: the slowest real note's time to fall under ``threshold_db``, or 40 dB under its own
    peak if that is lower (:func:`note_decay_s`), through the track's inserts: a reverb that rings the
    notes on, or an instrument played 64 dB down and brought back up by gain inserts, is what is heard."""
    x = _played(ctx, track, ref)
    if track.inserts:
        x = real_pair(ctx, track)[1]
    return note_decay_s(x, sr=ctx.sr, onsets=onsets_s(ctx.song, track), threshold_db=threshold_db,
                        under_peak_db=DECAY_UNDER_PEAK_DB)


def track_notes_value(ctx: Any, track: Track, ref: str, *, kind: str) -> float:
    """``trackPitch``/``trackLength`` on the real part (:func:`real_notes_value`)."""
    return real_notes_value(_played(ctx, track, ref), sr=ctx.sr, notes=struck(ctx.song, track), kind=kind)
