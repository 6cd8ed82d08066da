"""Meters over delivered audio files: octave bands, a residual, likeness, clipped samples, hits and gain.

Conventions (docs/audio-tasks.md):

* A signal is a float ``(channels, n)`` array at ``sr`` (full scale 1.0); dB figures floor at -120.
* ``octave_levels_db``: the power in each octave band (``c/√2 <= f < c·√2`` around the centre ``c``) of
  the long-term spectrum (:mod:`.spectrum`'s one STFT), as dB relative to the signal's total power, so a
  gain change leaves them unchanged ("at equal loudness" up to K-weighting).
* ``residual_db``: ``10 log10(Σ (a - b)² / Σ b²)``, the difference of two signals against ``b``.
* ``bus_gain``: the per-sample gain a bus applied to a sum of parts, from the bus's output (see there).
* ``envelope_correlation``: Pearson correlation of the two signals' 10 ms level envelopes (dB, mono sum,
  floor at 80 dB under the loudest frame), best over lags of ±100 ms: 1 for the same music whatever its
  EQ, about 0 for other music.
* ``clipped_samples``: samples at a flat top, ``|x| >= 0.999`` with a neighbour of the same sign there.
* ``hit_times_s``: onsets of a clean percussive part. Its envelope is the peak over the last 25 ms (1 ms
  steps: a held peak, smooth through a 40 Hz kick's cycles); an onset is a step where the envelope is
  within 30 dB of the part's peak and more than 12 dB over its value 20 ms before (so a hit on the tail
  of another counts), at least ``gap_s`` (80 ms) after the last onset.
* ``gain_curve_db``: answer over input level per 5 ms frame (dB), NaN where the input frame is more than
  30 dB under its loudest frame (a ratio of near-silences says nothing).
* ``dither_floor_db``: the quietest the requantisation error ``x16 - x24`` is anywhere: the lowest, over
  channels and 100 ms frames, of the error's standard deviation (its mean taken out per frame), dBFS. TPDF
  dither of ±1 LSB at 16 bits makes the error 0.5 LSB rms whatever the signal (-96.3 dBFS); plain rounding
  leaves LSB/√12 (-101.1 dBFS) on busy music and nothing on silence; truncation the same spread around an
  offset; noise shaping more. One frame or one channel without dither sets the figure.
* ``held_magnitudes``: each sample's magnitude held to :data:`CLICK_RATIO` (1.1, 0.8 dB) times the largest
  magnitude among the samples :data:`CLICK_NEAR` to :data:`CLICK_FAR` (6 to 54, 0.125 to 1.1 ms) away on either
  side. A band-limited peak has samples near its size within a period of its content (a pure tone's ring holds
  a sample at 0.71 of its peak or more, so it counts up to 0.78 of it; music, whose peaks ride on low notes,
  loses 0.6 dB or less of its block peaks), while a planted click or a burst of up to 5 samples is held to the
  music around it. The ring skips the 5 nearest samples, so a burst's samples do not vouch for each other: with
  the two nearest neighbours (and 1.5, as this was) a two-sample click passed whole, and a sample raised 3.5 dB
  (the largest in every 400 ms of a crushed master) counted in full. Clicks farther apart do vouch for
  each other (two single samples 6 to 54 apart are each in the other's ring), so a block's peak is not its
  largest held magnitude but its :data:`PEAK_SAMPLES`-th largest (16): the level that at least 16 of its
  samples reach, each vouched for by the music around it.
* A **block's peak**: over each 400 ms block, the frames' held magnitudes (:func:`held_magnitudes`, the
  louder channel), and of those the :data:`PEAK_SAMPLES`-th largest. A crushed master EQ'd back with a pair of
  one-sample clicks 6 samples apart planted at -3 dBFS in every block read the clicks as its peaks (its
  ``plr`` 11.0 dB against 6.8 without them, 1.000 on master-streaming-single; a crushed EP so clicked scored
  1.000 on master-ep-sequence@21). Sixteen samples that vouch for each other are a pulse of 16 samples or more
  (0.33 ms at 48 kHz) or a train of 16 clicks: a tick that is heard, in every 400 ms. Music's peaks ride on
  notes that last, but a generated master's also on hats and plucks a few samples wide: the 16th largest
  held magnitude of its blocks reads 1.1-2.4 dB under the largest (the streaming oracles' ``plr`` 8.9-10.6 dB
  over seeds 1-49, 10.0-12.2 with the largest), a crushed master's 0.0-0.1 dB (its samples sit at the
  limiter's ceiling; about 1 dB once EQ'd back onto the mix's balance). Fifteen planted samples take
  fifteen of the sixteen places, so they can lift a block's peak to the music's own largest sample and no
  further (the crushed master EQ'd back with a 15-click train: 7.4 dB on master-streaming-single@56, under
  the gate).
* ``block_crest_db``: the median over 400 ms blocks (those within 20 dB rms of the loudest) of each block's
  peak over its rms (dB, every channel): a short-term peak to loudness ratio that a limiter lowers. With the
  largest sample as the peak, a crushed song turned down 6 dB with one sample planted at -1.6 dBFS in every
  block (a click every 400 ms) read its crest factor back from those clicks (master-ep-sequence: a drop of
  -0.9 dB against 5.0 without them).
* ``block_peak_db``: the median over the same loud 400 ms blocks of each block's peak, dBFS: the level a
  master's peaks reach through the song, which no few planted peaks move (a whole-file true peak is one
  sample's).
* ``audio_band``: the signal with nothing above 20 kHz (a zero-phase low-pass, flat to 19.5 kHz, a raised
  cosine to nothing at 20 kHz): what a listener can hear of it. Readings that content no one hears must not
  move (a block's peak, a hit's body, a song's loudness in a sequence, the side's width) read this.
* ``incoherent_db``: how much of ``answer`` over ``[start_s, stop_s)`` is not ``source`` through some filter
  or gain: over 1024-sample Hann frames (hop 512, every channel) the coherent power is ``Σ_f |Σ A·S*|² /
  Σ|S|²`` per frequency bin, and the figure is ``10 log10(1 - coherent / Σ|A|²)`` (dB, floor -120). A gain,
  an EQ or a compressor's slowly moving gain on the source reads about -20 dB or lower; a reverb tail or an
  echo of an earlier moment, which is not the source of that moment, about -2 dB.
* ``unexplained_db``: ``incoherent_db`` over a whole file in 8192-sample frames (170 ms: a steep low bell
  rings longer than 1024 samples), after the answer's lag within ±100 ms is taken out (the largest
  correlation in size, so an inverted or a linear-phase EQ's late answer is placed). An EQ reads -27 to -35
  dB, an EQ with glue compression or limiting -16 to -26, another song blended 10 dB under the music -9.
* ``polarity_correlation``: the sample correlation of ``answer`` with ``source`` at the lag within ±20 ms where
  it is largest in size, its sign kept: +1 for a gain or a duck of the source, -1 for it inverted.
  ``polarity_blocks_low``: the same correlation (about zero mean, at the file's lag) in each 50 ms block where
  the source plays (its block power within 40 dB of its 90th-percentile block), the lowest block's. A gain,
  however it moves, never turns a block over (``Σ g·s² >= 0`` for ``g >= 0``), so an honest duck reads
  about +1 in every block; a bass inverted around each kick reads about -1 there, though the whole file
  still correlates +0.8.
* ``latency_samples``: the lag (samples, positive when ``answer`` is late) within ±20 ms at which the mono
  sums of ``answer`` and ``source`` correlate best: a chain's uncompensated latency, taken out before a
  frame-by-frame comparison.
"""

from __future__ import annotations

import math

import numpy as np

from pytest_overdub.dsp.levels import FLOOR_DB, amplitude_db, power_db
from pytest_overdub.dsp.sums import dot

OCTAVES_HZ = (63.0, 125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)
CLIP_LEVEL = 0.999
RISE_WINDOW_MS = 20
HOLD_MS = 25
#: A sample counts in a block's peak (:func:`held_magnitudes`) up to this many times the largest magnitude
#: among the samples ``CLICK_NEAR`` to ``CLICK_FAR`` away on either side.
CLICK_RATIO = 1.1
CLICK_NEAR, CLICK_FAR = 6, 54
#: A block's peak is the level this many of its frames reach (held magnitudes, the louder channel): fewer
#: samples, even ones that vouch for each other, are a click, not the music's peak.
PEAK_SAMPLES = 16
#: The top of the audio band (Hz), and where :func:`audio_band`'s roll-off to it starts.
AUDIO_TOP_HZ, AUDIO_ROLLOFF_HZ = 20000.0, 19500.0


def audio_band(x: np.ndarray, *, sr: int) -> np.ndarray:
    """``x`` with nothing above :data:`AUDIO_TOP_HZ` (see module): zero phase, flat to
    :data:`AUDIO_ROLLOFF_HZ`, a raised cosine to 0 at the top. ``x`` itself where ``sr / 2`` is no higher.
    A 24 kHz burst or a 23 kHz tone is gone; the music below 19.5 kHz is the same samples to rounding."""
    from scipy.fft import irfft, next_fast_len, rfft

    x = np.asarray(x, dtype=np.float64)
    if sr / 2 <= AUDIO_TOP_HZ or x.shape[-1] == 0:
        return x
    n = x.shape[-1]
    m = next_fast_len(n, real=True)
    f = np.fft.rfftfreq(m, 1.0 / sr)
    w = np.clip((AUDIO_TOP_HZ - f) / (AUDIO_TOP_HZ - AUDIO_ROLLOFF_HZ), 0.0, 1.0)
    w = 0.5 - 0.5 * np.cos(np.pi * w)
    return irfft(rfft(x, n=m, axis=-1) * w, n=m, axis=-1)[..., :n]


def octave_levels_db(x: np.ndarray, *, sr: int, centres_hz: tuple[float, ...] = OCTAVES_HZ) -> np.ndarray:
    """Each octave band's share of the total power, dB (see module conventions)."""
    from pytest_overdub.measure.spectrum import spectrum_of

    spec = spectrum_of(np.asarray(x, dtype=np.float64), sr=sr)
    total = float(spec.power.sum())
    out = []
    for c in centres_hz:
        mask = (spec.freqs_hz >= c / np.sqrt(2.0)) & (spec.freqs_hz < c * np.sqrt(2.0))
        out.append(power_db(float(spec.power[mask].sum()) / total) if total > 0 else FLOOR_DB)
    return np.array(out)


def band_level_db(x: np.ndarray, *, sr: int, lo_hz: float, hi_hz: float) -> float:
    """Absolute level (dBFS, mean power) of the bins in ``lo_hz <= f < hi_hz``."""
    from pytest_overdub.measure.spectrum import spectrum_of

    x = np.asarray(x, dtype=np.float64)
    spec = spectrum_of(x, sr=sr)
    total = float(spec.power.sum())
    if total <= 0:
        return FLOOR_DB
    mask = (spec.freqs_hz >= lo_hz) & (spec.freqs_hz < hi_hz)
    return power_db(float(np.mean(x * x)) * float(spec.power[mask].sum()) / total)


def residual_db(a: np.ndarray, b: np.ndarray) -> float:
    """``a - b`` against ``b``, dB; -120 when equal, +120 when ``b`` is silent and ``a`` is not."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    num, den = float(np.sum(d * d)), float(np.sum(np.square(b, dtype=np.float64)))
    if num == 0.0:
        return FLOOR_DB
    return power_db(num / den) if den > 0 else -FLOOR_DB


def bus_gain(parts_sum: np.ndarray, bus: np.ndarray, *, floor: float = 1e-6) -> np.ndarray:
    """The per-sample gain a bus applied: ``bus / parts_sum`` on the louder channel of ``parts_sum``
    (the same gain on both channels, as a linked compressor or limiter applies); 1 where that channel is
    under ``floor`` (a ratio of near-silences says nothing)."""
    total, out = np.asarray(parts_sum, dtype=np.float64), np.asarray(bus, dtype=np.float64)
    if total.ndim == 2 and total.shape[0] == 2 and out.shape == total.shape:
        # two channels: np.argmax's choice (the first of equals, a NaN first) as a mask, then a selection
        a0, a1 = np.abs(total[0]), np.abs(total[1])
        second = (a1 > a0) | (np.isnan(a1) & ~np.isnan(a0))
        t, m = np.where(second, total[1], total[0]), np.where(second, out[1], out[0])
    else:
        loud = np.argmax(np.abs(total), axis=0)[None, :]
        t = np.take_along_axis(total, loud, 0)[0]
        m = np.take_along_axis(out, loud, 0)[0]
    g = np.ones_like(t)
    ok = np.abs(t) > floor
    g[ok] = m[ok] / t[ok]
    return g


def rms_dbfs(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=np.float64)
    return power_db(float(np.mean(x * x))) if x.size else FLOOR_DB


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two equal-shaped signals, every channel's samples together (0 if one is flat)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    a, b = a - a.mean(), b - b.mean()
    den = math.sqrt(dot(a, a) * dot(b, b))
    return dot(a, b) / den if den > 0 else 0.0


def _envelope_db(x: np.ndarray, *, sr: int, frame_s: float = 0.01) -> np.ndarray:
    mono = np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1]).sum(axis=0)
    hop = max(1, int(round(frame_s * sr)))
    n = mono.size // hop
    p = np.mean(mono[: n * hop].reshape(n, hop) ** 2, axis=1) if n else np.zeros(1)
    top = float(p.max()) if p.size else 0.0
    if top <= 0:
        return np.full(max(n, 1), -80.0)
    return 10.0 * np.log10(np.maximum(p / top, 1e-8))


def envelope_correlation(a: np.ndarray, b: np.ndarray, *, sr: int, max_lag_s: float = 0.1) -> float:
    """Best Pearson correlation of the 10 ms level envelopes over lags of ±``max_lag_s`` (see module)."""
    from pytest_overdub.measure.kept import kept

    ea, eb = _envelope_db(a, sr=sr), kept(b, f"envelope {sr}", lambda: _envelope_db(b, sr=sr))
    n = min(ea.size, eb.size)
    ea, eb = ea[:n], eb[:n]
    lags = int(round(max_lag_s / 0.01))
    best = -1.0
    for lag in range(-lags, lags + 1):
        x, y = (ea[lag:], eb[: n - lag]) if lag >= 0 else (ea[: n + lag], eb[-lag:])
        if x.size > 10:
            best = max(best, correlation(x, y))
    return best


def clipped_samples(x: np.ndarray) -> int:
    """Samples on a flat top: ``|x| >= 0.999`` with a neighbour of the same sign as high (every channel)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1])
    hi, lo = x >= CLIP_LEVEL, x <= -CLIP_LEVEL
    count = 0
    for m in (hi, lo):
        pair = m[:, 1:] & m[:, :-1]
        flagged = np.zeros_like(m)
        flagged[:, 1:] |= pair
        flagged[:, :-1] |= pair
        count += int(flagged.sum())
    return count


def hit_times_s(x: np.ndarray, *, sr: int, gap_s: float = 0.08, under_db: float = 30.0,
                rise_db: float = 12.0) -> np.ndarray:
    """Onset times (s) of a clean percussive part (see module conventions)."""
    from numpy.lib.stride_tricks import sliding_window_view

    mono = np.abs(np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1])).max(axis=0)
    hop = max(1, sr // 1000)
    n = mono.size // hop
    env = mono[: n * hop].reshape(n, hop).max(axis=1)
    if not n or env.max() <= 0:
        return np.zeros(0)
    held = sliding_window_view(np.concatenate([np.zeros(HOLD_MS - 1), env]), HOLD_MS).max(axis=1)
    before = np.concatenate([np.zeros(RISE_WINDOW_MS), held[:-RISE_WINDOW_MS]])
    onset = (held >= env.max() * 10.0 ** (-under_db / 20.0)) & (held > before * 10.0 ** (rise_db / 20.0))
    times, last = [], -np.inf
    for i in np.flatnonzero(onset):
        if (i - last) * hop / sr >= gap_s:
            times.append(i * hop / sr)
            last = i
    return np.array(times)


def frame_rms(x: np.ndarray, *, sr: int, frame_s: float = 0.005) -> np.ndarray:
    mono = np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1])
    hop = max(1, int(round(frame_s * sr)))
    n = mono.shape[1] // hop
    return np.sqrt(np.mean(mono[:, : n * hop].reshape(mono.shape[0], n, hop) ** 2, axis=(0, 2)))


def gain_curve_db(answer: np.ndarray, source: np.ndarray, *, sr: int, frame_s: float = 0.005) -> np.ndarray:
    """Answer level over source level per frame, dB (NaN where the source is 30 dB under its top)."""
    from pytest_overdub.measure.kept import kept

    a = frame_rms(answer, sr=sr, frame_s=frame_s)
    s = kept(source, f"frame-rms {sr} {frame_s!r}", lambda: frame_rms(source, sr=sr, frame_s=frame_s))
    n = min(a.size, s.size)
    a, s = a[:n], s[:n]
    valid = s >= s.max() * 10.0 ** (-30.0 / 20.0) if n and s.max() > 0 else np.zeros(n, bool)
    out = np.full(n, np.nan)
    with np.errstate(divide="ignore"):
        out[valid] = np.maximum(20.0 * np.log10(a[valid] / s[valid]), FLOOR_DB)
    return out


def peak_db_in(x: np.ndarray, *, sr: int, start_s: float, stop_s: float) -> float:
    a, b = int(round(max(start_s, 0.0) * sr)), int(round(stop_s * sr))
    seg = np.asarray(x)[..., a:b]
    return amplitude_db(float(np.abs(seg).max())) if seg.size else FLOOR_DB


def rms_db_in(x: np.ndarray, *, sr: int, start_s: float, stop_s: float) -> float:
    a, b = int(round(max(start_s, 0.0) * sr)), int(round(stop_s * sr))
    return rms_dbfs(np.asarray(x)[..., a:b])


def dither_floor_db(x16: np.ndarray, x24: np.ndarray, *, sr: int, frame_s: float = 0.1) -> float:
    """The lowest frame-and-channel standard deviation of ``x16 - x24``, dBFS (see module conventions)."""
    d = np.asarray(x16, dtype=np.float64) - np.asarray(x24, dtype=np.float64)
    d = d.reshape(-1, d.shape[-1])
    hop = max(1, int(round(frame_s * sr)))
    n = d.shape[1] // hop
    if not n:
        return FLOOR_DB
    sd = d[:, : n * hop].reshape(d.shape[0], n, hop).std(axis=2)
    return amplitude_db(float(sd.min()))


#: The 16-bit step, full scale 1.0.
LSB16 = 1.0 / 32768.0


def rounding_dependence_lsb(x16: np.ndarray, x24: np.ndarray, *, bins: int = 16) -> float:
    """How much the requantisation error ``x16 - x24`` depends on where each sample of ``x24`` falls between two
    16-bit steps, in 16-bit steps: the error's mean in each of ``bins`` slices of that position (those with at
    least 100 samples), and their RMS spread about their mean. Rounding, truncating or rounding then adding noise
    leave the error a sawtooth of the position (about 0.29); TPDF or RPDF dither, noise-shaped or not, makes its
    mean independent of the signal (about 0). 0 with fewer than two slices read."""
    x24 = np.asarray(x24, dtype=np.float64).ravel() / LSB16
    e = (np.asarray(x16, dtype=np.float64).ravel() / LSB16) - x24
    where = np.minimum((x24 - np.floor(x24)) * bins, bins - 1).astype(np.int64)
    count = np.bincount(where, minlength=bins)
    total = np.bincount(where, weights=e, minlength=bins)
    seen = count >= 100
    if seen.sum() < 2:
        return 0.0
    means = total[seen] / count[seen]
    return float(np.sqrt(np.mean((means - means.mean()) ** 2)))


def held_magnitudes(x: np.ndarray) -> np.ndarray:
    """``|x|``, each sample held to :data:`CLICK_RATIO` times the largest magnitude :data:`CLICK_NEAR` to
    :data:`CLICK_FAR` samples away on either side (see module): a click or a short burst is not a peak."""
    from scipy.ndimage import maximum_filter1d

    mag = np.abs(np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1]))
    half = (CLICK_FAR - CLICK_NEAR) // 2
    centre = CLICK_NEAR + half  # the ring's half is a window of 2 * half + 1 samples this far away
    ring = maximum_filter1d(mag, size=2 * half + 1, axis=1, mode="constant")
    near = np.zeros_like(ring)
    near[:, centre:] = ring[:, :-centre]  # the samples before
    near[:, :-centre] = np.maximum(near[:, :-centre], ring[:, centre:])  # and after
    return np.minimum(mag, CLICK_RATIO * near)


def _loud_blocks(x: np.ndarray, *, sr: int, block_s: float, under_db: float) -> tuple[np.ndarray, np.ndarray]:
    """(peak, rms) of each 400 ms block within ``under_db`` rms of the loudest (none: empty arrays); a block's
    peak is the :data:`PEAK_SAMPLES`-th largest of its frames' held magnitudes (see module)."""
    hop = max(1, int(round(block_s * sr)))
    n = np.shape(x)[-1] // hop
    if not n:
        return np.zeros(0), np.zeros(0)
    peak, rms = _block_peaks(x, hop=hop, blocks=n)
    loud = _loud(rms, under_db=under_db)
    return peak[loud], rms[loud]


def _block_peaks(x: np.ndarray, *, hop: int, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """(peak, rms) of each of the first ``blocks`` blocks of ``hop`` frames; a block's peak is the
    :data:`PEAK_SAMPLES`-th largest of its frames' held magnitudes (see module)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1])[:, : blocks * hop]
    frames = held_magnitudes(x).max(axis=0).reshape(blocks, hop)
    kth = hop - min(PEAK_SAMPLES, hop)  # the PEAK_SAMPLES-th largest frame of each block
    peak = np.partition(frames, kth, axis=1)[:, kth]
    seg = x.reshape(x.shape[0], blocks, hop)
    return peak, np.sqrt(np.mean(seg * seg, axis=(0, 2)))


def _loud(rms: np.ndarray, *, under_db: float) -> np.ndarray:
    """The blocks within ``under_db`` rms of the loudest (none when all are silent)."""
    return rms >= rms.max() * 10.0 ** (-under_db / 20.0) if rms.max() > 0 else np.zeros(rms.size, bool)


def block_crest_db(x: np.ndarray, *, sr: int, block_s: float = 0.4, under_db: float = 20.0) -> float:
    """Median over loud 400 ms blocks of the block's peak (16 samples that the music vouches for) minus its rms,
    dB (see module)."""
    peak, rms = _loud_blocks(x, sr=sr, block_s=block_s, under_db=under_db)
    if not peak.size:
        return 0.0
    with np.errstate(divide="ignore"):  # a loud block of lone clicks in silence: its peak 0, -inf
        return float(np.median(20.0 * np.log10(peak / rms)))


def block_crest_loss_db(answer: np.ndarray, before: np.ndarray, *, sr: int, block_s: float = 0.4,
                        under_db: float = 20.0) -> float:
    """The most crest factor any loud 400 ms block of ``before`` lost in ``answer`` (dB, >= 0 when one lost
    some): over the blocks of ``before`` within ``under_db`` rms of its loudest, its block crest (the block's
    peak, 16 samples the music vouches for, minus its rms) minus ``answer``'s in the same frames; the largest.
    A master that shaves the loudest transients loses crest where they are; a sample planted in one block
    gives that block's back and no other's (see module). Both in the audio band is the caller's choice."""
    n = min(np.shape(answer)[-1], np.shape(before)[-1])
    hop = max(1, int(round(block_s * sr)))
    m = n // hop
    if not m:
        return 0.0

    def crests(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        peak, rms = _block_peaks(x, hop=hop, blocks=m)
        with np.errstate(divide="ignore", invalid="ignore"):
            return 20.0 * np.log10(peak / rms), rms

    c0, rms0 = crests(before)
    c1, _ = crests(answer)
    loss = (c0 - c1)[_loud(rms0, under_db=under_db)]
    loss = loss[np.isfinite(loss)]
    return float(loss.max()) if loss.size else 0.0


def block_peak_db(x: np.ndarray, *, sr: int, block_s: float = 0.4, under_db: float = 20.0) -> float:
    """Median over loud 400 ms blocks of the block's peak (16 samples that the music vouches for), dBFS (see
    module)."""
    peak, _ = _loud_blocks(x, sr=sr, block_s=block_s, under_db=under_db)
    return amplitude_db(float(np.median(peak))) if peak.size else FLOOR_DB


def incoherent_db(answer: np.ndarray, source: np.ndarray, *, sr: int, start_s: float, stop_s: float,
                  n_fft: int = 1024, band_hz: tuple[float, float] | None = None) -> float:
    """The share of ``answer`` in the span that no filter of ``source`` explains, dB (see module);
    ``band_hz``: of ``answer``'s power in [lo, hi) Hz only."""
    a0, b0 = int(round(max(start_s, 0.0) * sr)), int(round(stop_s * sr))
    hop = n_fft // 2

    def frames(x: np.ndarray) -> np.ndarray:
        seg = np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1])[:, a0:b0]
        n = (seg.shape[1] - n_fft) // hop + 1
        if n < 1:
            return np.zeros((0, n_fft // 2 + 1), complex)
        idx = np.arange(n_fft)[None, :] + hop * np.arange(n)[:, None]
        return np.fft.rfft(seg[:, idx] * np.hanning(n_fft), axis=-1).reshape(-1, n_fft // 2 + 1)

    spec_a, spec_s = frames(answer), frames(source)
    if band_hz is not None:
        f = np.fft.rfftfreq(n_fft, 1.0 / sr)
        keep = (f >= band_hz[0]) & (f < band_hz[1])
        spec_a, spec_s = spec_a[:, keep], spec_s[:, keep]
    total = float(np.sum(np.abs(spec_a) ** 2))
    if total <= 0:
        return FLOOR_DB
    sxy = np.sum(spec_a * spec_s.conj(), axis=0)
    sxx = np.sum(np.abs(spec_s) ** 2, axis=0)
    ok = sxx > 0
    coherent = float(np.sum(np.abs(sxy[ok]) ** 2 / sxx[ok]))
    return power_db(max(1.0 - coherent / total, 0.0))


def latency_samples(answer: np.ndarray, source: np.ndarray, *, sr: int, max_lag_s: float = 0.02,
                    either_polarity: bool = False) -> int:
    """The lag within ±``max_lag_s`` at which ``answer`` best matches ``source`` (see module conventions);
    ``either_polarity``: the largest correlation in size, so an answer in inverted polarity is placed too."""
    from scipy.fft import next_fast_len

    from pytest_overdub.measure.kept import kept

    a = np.asarray(answer, dtype=np.float64).reshape(-1, np.shape(answer)[-1]).sum(axis=0)
    n = min(a.size, np.shape(source)[-1])
    lags = int(round(max_lag_s * sr))
    size = next_fast_len(n + lags + 1, real=True)  # no lag within ±lags wraps around: the linear correlation

    def source_fft() -> np.ndarray:  # the same source for every answer a scorer reads: kept
        b = np.asarray(source, dtype=np.float64).reshape(-1, np.shape(source)[-1]).sum(axis=0)
        return np.fft.rfft(b[:n], size)

    xc = np.fft.irfft(np.fft.rfft(a[:n], size) * np.conj(kept(source, f"latency-fft {n} {size}", source_fft)), size)
    cand = np.concatenate([xc[-lags:], xc[: lags + 1]]) if lags else xc[:1]
    return int(np.argmax(np.abs(cand) if either_polarity else cand)) - lags


def polarity_correlation(answer: np.ndarray, source: np.ndarray, *, sr: int, max_lag_s: float = 0.02) -> float:
    """The sample correlation of ``answer`` with ``source`` at ``answer``'s lag within ±``max_lag_s`` where it is
    largest in size (:func:`latency_samples`, either polarity), its sign kept: about +1 for the source through
    a gain, a duck or a gentle EQ, about -1 for it inverted (a bass flipped against its kick). Read at the
    best lag, so a chain's latency or a delay of half a bass cycle does not turn it over."""
    lag = latency_samples(answer, source, sr=sr, max_lag_s=max_lag_s, either_polarity=True)
    return correlation(shifted(answer, lag), source)


#: ``polarity_blocks_low``'s block and the level under the source's loud blocks below which a block is not
#: read (the source is between notes there: no polarity to keep).
POLARITY_BLOCK_S = 0.05
POLARITY_UNDER_DB = 40.0


def polarity_blocks_low(answer: np.ndarray, source: np.ndarray, *, sr: int, max_lag_s: float = 0.02,
                        block_s: float = POLARITY_BLOCK_S, under_db: float = POLARITY_UNDER_DB) -> float:
    """The lowest, over the ``block_s`` blocks where ``source`` plays, of ``answer``'s sample correlation with
    ``source`` in that block, ``answer`` brought back by its lag within ±``max_lag_s`` (the largest
    correlation in size over the whole file, :func:`latency_samples`). A block plays when its ``source``
    power is within ``under_db`` of the 90th percentile of ``source``'s blocks; a block ``answer`` leaves
    silent reads 0. About +1 for a gain or a duck (a gain never turns a block over), -1 where the source is
    inverted, however briefly; 1.0 when ``source`` never plays (nothing to keep)."""
    lag = latency_samples(answer, source, sr=sr, max_lag_s=max_lag_s, either_polarity=True)
    a = shifted(answer, lag).reshape(-1, np.shape(answer)[-1])
    s = np.asarray(source, dtype=np.float64).reshape(-1, np.shape(source)[-1])
    size = max(1, int(round(block_s * sr)))
    n = min(a.shape[1], s.shape[1]) // size
    if n < 1 or a.shape[0] != s.shape[0]:
        return polarity_correlation(answer, source, sr=sr, max_lag_s=max_lag_s)
    a = a[:, : n * size].reshape(a.shape[0], n, size)
    s = s[:, : n * size].reshape(s.shape[0], n, size)
    a = a - a.mean(axis=(0, 2), keepdims=True)
    s = s - s.mean(axis=(0, 2), keepdims=True)
    ss = np.einsum("cnk,cnk->n", s, s)
    plays = ss > 0
    if not plays.any():
        return 1.0
    plays &= ss >= np.percentile(ss, 90) * 10.0 ** (-under_db / 10.0)
    aa = np.einsum("cnk,cnk->n", a, a)[plays]
    den = np.sqrt(aa * ss[plays])
    r = np.divide(np.einsum("cnk,cnk->n", a, s)[plays], den, out=np.zeros_like(den), where=den > 0)
    return float(r.min())


#: Band changes read moment by moment (:func:`band_change_blocks_db`): 100 ms Hann frames, half
#: overlapped; a frame counts where the source's band plays (within 30 dB of its 90th-percentile frame), and
#: the value is the change nine in ten of those frames reach.
BAND_BLOCK_S = 0.1
BAND_UNDER_DB = 30.0
BAND_SHARE = 0.9


def band_change_blocks_db(answer: np.ndarray, source: np.ndarray, *, sr: int, lo_hz: float, hi_hz: float,
                          block_s: float = BAND_BLOCK_S, share: float = BAND_SHARE,
                          under_db: float = BAND_UNDER_DB, max_lag_s: float = 0.02) -> float:
    """The change (dB) of ``answer``'s power in ``lo_hz <= f < hi_hz`` over ``source``'s, frame by frame, that
    a ``share`` of the frames where ``source``'s band plays reach: the ``share`` percentile of the changes (0.9:
    nine in ten frames cut at least this much, or raised at most this much).

    Frames are ``block_s`` long (Hann window, hop half a frame), channels pooled, ``answer`` brought back by
    its lag within ±``max_lag_s`` (:func:`latency_samples`, either polarity) first. A frame plays when its
    ``source`` band power is within ``under_db`` of the 90th percentile of ``source``'s frames; a frame
    ``answer`` leaves silent in the band reads -120 dB. A gain of g dB reads g; a static EQ reads its gain
    over the band, frame by frame as the music moves in the band; a cut made in every other bar, second or
    tenth of a second reads the uncut frames' 0 dB. 0.0 when ``source``'s band never plays (nothing to
    change)."""
    lag = latency_samples(answer, source, sr=sr, max_lag_s=max_lag_s, either_polarity=True)
    a = shifted(answer, lag).reshape(-1, np.shape(answer)[-1])
    s = np.asarray(source, dtype=np.float64).reshape(-1, np.shape(source)[-1])
    size = max(8, int(round(block_s * sr)))
    hop = size // 2
    n = min(a.shape[1], s.shape[1])
    if n < size or a.shape[0] != s.shape[0]:
        return band_level_db(answer, sr=sr, lo_hz=lo_hz, hi_hz=hi_hz) - band_level_db(source, sr=sr, lo_hz=lo_hz,
                                                                                       hi_hz=hi_hz)
    freqs = np.fft.rfftfreq(size, 1.0 / sr)
    bins = (freqs >= lo_hz) & (freqs < hi_hz)
    starts = np.arange(0, n - size + 1, hop)
    window = np.hanning(size)

    def band_power(x: np.ndarray) -> np.ndarray:  # (channels * frames,)
        frames = x[:, starts[:, None] + np.arange(size)] * window
        spec = np.fft.rfft(frames, axis=-1)[..., bins]
        return (spec.real ** 2 + spec.imag ** 2).sum(axis=-1).ravel()

    pa, ps = band_power(a), band_power(s)
    if not (ps > 0).any():
        return 0.0
    plays = (ps > 0) & (ps >= np.percentile(ps, 90) * 10.0 ** (-under_db / 10.0))
    change = 10.0 * np.log10(np.maximum(pa[plays], ps[plays] * 1e-12) / ps[plays])
    return float(np.percentile(change, 100.0 * share))


def unexplained_db(answer: np.ndarray, source: np.ndarray, *, sr: int, max_lag_s: float = 0.1,
                   n_fft: int = 8192, band_hz: tuple[float, float] | None = None) -> float:
    """The share of the whole ``answer`` that no filter of ``source`` explains, dB (:func:`incoherent_db` over
    8192-sample frames, after ``answer``'s lag within ±``max_lag_s`` is taken out, either polarity): an EQ,
    however steep, reads -27 dB or lower; another song blended 10 dB under the music about -9 dB.
    ``band_hz``: the share of ``answer``'s power in that band."""
    lag = latency_samples(answer, source, sr=sr, max_lag_s=max_lag_s, either_polarity=True)
    n = np.shape(source)[-1]
    return incoherent_db(shifted(answer, lag), source, sr=sr, start_s=0.0, stop_s=n / sr, n_fft=n_fft,
                         band_hz=band_hz)


#: A source whose side (L-R) is this far under its mid (L+R) has no stereo image to keep (a mono source).
IMAGE_MONO_DB = -35.0


def image_correlation(answer: np.ndarray, source: np.ndarray, *, sr: int, n_fft: int = 4096) -> float:
    """Whether ``answer`` keeps ``source``'s left and right where they were (see module): the correlation,
    over the frequency bins of 63 Hz-16 kHz, of the two files' side-to-mid cross-spectra (``Σ S·M*`` over
    ``n_fft`` Hann frames, hop ``n_fft / 2``, ``S = L - R``, ``M = L + R``). A part panned left puts the
    same sound in the mid and, in phase, in the side; panned right, out of phase: the cross-spectrum holds
    which side each part of the spectrum sits on. +1 for the image as it was (an EQ, compression or a gain
    on the side changes the figures' size, not their sign; the file's own delay or a polarity flip of both
    channels cancels out), -1 for left and right swapped. 1.0 when ``source`` is mono
    (:data:`IMAGE_MONO_DB`) or one of the two is one channel: there is nothing to mirror."""
    a = np.asarray(answer, dtype=np.float64).reshape(-1, np.shape(answer)[-1])
    s = np.asarray(source, dtype=np.float64).reshape(-1, np.shape(source)[-1])
    if a.shape[0] != 2 or s.shape[0] != 2:
        return 1.0

    def cross(x: np.ndarray) -> np.ndarray:
        hop = n_fft // 2
        frames = (x.shape[1] - n_fft) // hop + 1
        if frames < 1:
            return np.zeros(n_fft // 2 + 1, complex)
        idx = np.arange(n_fft)[None, :] + hop * np.arange(frames)[:, None]
        win = np.hanning(n_fft)
        side = np.fft.rfft((x[0] - x[1])[idx] * win, axis=-1)
        mid = np.fft.rfft((x[0] + x[1])[idx] * win, axis=-1)
        return np.sum(side * mid.conj(), axis=0)

    side_s, mid_s = s[0] - s[1], s[0] + s[1]
    if dot(side_s, side_s) <= dot(mid_s, mid_s) * 10.0 ** (IMAGE_MONO_DB / 10.0):
        return 1.0
    f = np.fft.rfftfreq(n_fft, 1.0 / sr)
    sel = (f >= 63.0) & (f < 16000.0)
    ca, cs = cross(a)[sel], cross(s)[sel]
    den = float(np.sqrt(np.sum(np.abs(ca) ** 2) * np.sum(np.abs(cs) ** 2)))
    return float(np.sum(ca * cs.conj()).real / den) if den > 0 else 0.0


def shifted(x: np.ndarray, lag: int) -> np.ndarray:
    """``x`` moved ``lag`` samples earlier (zeros after), the same length: a late answer brought back."""
    x = np.asarray(x, dtype=np.float64)
    if lag <= 0:
        return np.concatenate([np.zeros(x.shape[:-1] + (-lag,)), x[..., : x.shape[-1] + lag]], axis=-1) if lag else x
    return np.concatenate([x[..., lag:], np.zeros(x.shape[:-1] + (lag,))], axis=-1)
