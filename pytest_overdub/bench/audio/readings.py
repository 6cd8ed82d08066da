"""The readings of the ``duck``, ``hits`` and ``sequence`` checks (docs/audio-tasks.md), over arrays.

Windows (a duck is read on the answer with its latency within 5 ms taken out, :func:`duck_aligned`): a
duck's ``depth`` is read over the first 80 ms after a hit, its ``hold`` 20-50 ms after it (a duck held
through the kick, not a blip at its start), its ``recovery`` 250-350 ms after it
(hits followed by another within 350 ms are skipped); ``depth`` and ``hold`` are what four kicks in five
reach (:data:`DUCK_SHARE`), ``between`` is the 2nd percentile of the gain over
the frames from 350 ms after a hit to 20 ms before the next (so a duck where there is no hit shows,
however short, and a kick on every beat still leaves frames to read). A hit's
``transient`` is the peak from 2 ms before to 15 ms after it, its ``body`` the rms 40-150 ms after it,
its ``incoherent`` the share of the answer's body that is not the source's body through a filter or a
slow gain (:func:`~pytest_overdub.measure.compare.incoherent_db`: a compressor's lift is the hit itself,
a reverb tail or an echo is not); the answer's latency within ±20 ms is taken out first for all three;
hits followed by another within 150 ms are skipped. Medians over hits, so one odd hit does not decide;
``quietBody`` is the body lift that four in five of the half of the hits with the quieter bodies reach
(:func:`quiet_body_lift`: a median can be met by lifting half the hits). A sequence's ``crest`` is the largest drop of a part's block crest factor
(:func:`~pytest_overdub.measure.compare.block_crest_db`) from its input's: level matched by crushing a
song's dynamics shows there.
"""

from __future__ import annotations

import numpy as np

from ...dsp.levels import FLOOR_DB
from ...measure.kept import kept
from ...measure.compare import (block_crest_db, envelope_correlation, gain_curve_db, hit_times_s,
                                incoherent_db, latency_samples, peak_db_in, rms_db_in, rms_dbfs, shifted)

FRAME_S = 0.005
#: ``between`` reads a low percentile, not the median: a duck anywhere away from the hits shows.
BETWEEN_PERCENTILE = 2.0
#: ``between`` reads the frames from 350 ms after a hit (the duck is over: ``recovery`` reads 250-350 ms)
#: to 20 ms before the next (a look-ahead sidechain may start early), so a kick on every beat up to
#: 160 bpm leaves frames to read.
BETWEEN_AFTER_S, BETWEEN_BEFORE_S = 0.35, 0.02


def _hit_times(x: np.ndarray, *, sr: int) -> np.ndarray:
    """:func:`hit_times_s` of an input, kept for the next answer (:mod:`~pytest_overdub.measure.kept`)."""
    return kept(x, f"hit-times {sr}", lambda: hit_times_s(x, sr=sr))


def _median(values: list[float]) -> float:
    vals = [v for v in values if np.isfinite(v)]
    return float(np.median(vals)) if vals else float("nan")


#: A duck is read after the answer's latency up to this is taken out (either polarity: the ``polarity`` gate
#: reads that): a look-ahead's 1-5 ms, which a DAW compensates. Read sample-aligned, a bass 0.25 ms late
#: moved the 5 ms frames' gain at every note's start by 3 dB and failed ``between``; a bass later than
#: this is late against its kick.
DUCK_LAG_S = 0.005


def duck_aligned(answer: np.ndarray, source: np.ndarray, *, sr: int) -> np.ndarray:
    """``answer`` moved back by its latency against ``source`` within ±:data:`DUCK_LAG_S`."""
    return shifted(answer, latency_samples(answer, source, sr=sr, max_lag_s=DUCK_LAG_S, either_polarity=True))


def duck(answer: np.ndarray, source: np.ndarray, hits: np.ndarray, *, sr: int, measure: str) -> float:
    g = gain_curve_db(answer, source, sr=sr, frame_s=FRAME_S)
    times = _hit_times(hits, sr=sr)
    frame_t = np.arange(g.size) * FRAME_S
    if measure == "between":
        far = np.ones(g.size, bool)
        for t in times:
            far &= (frame_t < t - BETWEEN_BEFORE_S) | (frame_t >= t + BETWEEN_AFTER_S)
        vals = g[far]
        vals = vals[np.isfinite(vals)]
        return float(np.percentile(vals, BETWEEN_PERCENTILE)) if vals.size else float("nan")
    out = []
    for i, t in enumerate(times):
        nxt = times[i + 1] if i + 1 < len(times) else np.inf
        if measure == "depth":
            seg = g[(frame_t >= t) & (frame_t < t + 0.08)]
            seg = seg[np.isfinite(seg)]
            if seg.size:
                out.append(float(seg.min()))
        elif measure == "hold":
            out.append(_median(list(g[(frame_t >= t + 0.02) & (frame_t < t + 0.05)])))
        elif nxt - t > 0.35:
            out.append(_median(list(g[(frame_t >= t + 0.25) & (frame_t < t + 0.35)])))
    if measure in ("depth", "hold"):
        return _every(out)
    return _median(out)


#: ``depth`` and ``hold`` read the duck that this share of the kicks reach (the percentile toward 0 dB), not
#: the median: with the median, every other kick ducked read as every kick ducked (1.000).
DUCK_SHARE = 0.8


def _every(values: list[float]) -> float:
    vals = [v for v in values if np.isfinite(v)]
    return float(np.quantile(vals, DUCK_SHARE)) if vals else float("nan")


#: Where a hit's ``body`` is read: from ``BODY_S[0]`` to ``BODY_S[1]`` s after it.
BODY_S = (0.04, 0.15)


def body_frames(times: np.ndarray, *, sr: int, n: int) -> list[tuple[int, int]]:
    """Frame ranges (within ``n``) that hold every sample :func:`hit_change`'s ``body`` reads after the hits
    at ``times`` (a frame's margin either side of each window)."""
    return [(max(0, int(round((t + BODY_S[0]) * sr)) - 1), min(n, int(round((t + BODY_S[1]) * sr)) + 1))
            for t in times]


def hits_aligned(answer: np.ndarray, source: np.ndarray, *, sr: int, measure: str) -> np.ndarray:
    """``answer`` with its latency against ``source`` (within 20 ms) taken out, as ``measure`` reads hits. Read
    at the input's hit times, the input handed back 13 ms late put an earlier, louder part of each decay in the
    body window with its attack still in the transient's (1.000), and an honest smash 15 ms late lost its
    transients (0.000). ``incoherent`` takes either polarity; the levels take the largest same-polarity match,
    which a kick's low end inverted half a period away cannot take (a compressed copy matched that way 9 ms
    off)."""
    return shifted(answer, latency_samples(answer, source, sr=sr, either_polarity=measure == "incoherent"))


def read_hits(times: np.ndarray) -> np.ndarray:
    """The hits the ``hits`` readings read: those not followed by another within 150 ms (whose body would
    hold the next hit's attack)."""
    return np.array([t for i, t in enumerate(times) if not (i + 1 < len(times) and times[i + 1] - t < 0.15)])


def body_db(x: np.ndarray, t: float, *, sr: int) -> float:
    """The rms (dBFS) of ``x`` over the body of the hit at ``t`` s (:data:`BODY_S`)."""
    return rms_db_in(x, sr=sr, start_s=t + BODY_S[0], stop_s=t + BODY_S[1])


#: ``quietBody`` reads the body lift that this share of the quieter-bodied half of the hits reach (the
#: percentile toward no lift), as a duck's ``depth`` reads what four kicks in five reach (:data:`DUCK_SHARE`).
LIFT_SHARE = 0.8


def quiet_body_lift(answer: np.ndarray, source: np.ndarray, *, sr: int, times: np.ndarray) -> float:
    """The body lift (dB, ``answer`` less ``source``) that :data:`LIFT_SHARE` of the quieter half of the read
    hits reach, the half taken by the source's body level (the quietest ``n // 2`` of the ``n`` read hits,
    earlier first among equals); NaN with fewer than two hits.

    A compressed copy's body sits at about the same level whatever the hit (the compressor has flattened it),
    so under the dry drums it lifts a quiet body most and a loud one least: one honest smash lifted the
    published kit's kicks about 1 dB, its snares 4 and its hats 8, and a lower threshold left the kicks
    unlifted. So the median over hits (``body``) can be met by lifting half the hits (every other one, the
    louder half, the first half of the song) by twice the target, and a low quantile over all hits fails
    honest answers; the quieter bodies, which every compressor lifts most, are where a ride leaves hits out."""
    read = read_hits(times)
    src = np.array([body_db(source, t, sr=sr) for t in read])
    lift = np.array([body_db(answer, t, sr=sr) for t in read]) - src
    quiet = np.argsort(src, kind="stable")[: read.size // 2]
    return float(np.quantile(lift[quiet], 1.0 - LIFT_SHARE)) if quiet.size else float("nan")


def hit_change(answer: np.ndarray, source: np.ndarray, *, sr: int, measure: str,
               times: np.ndarray | None = None, latency: bool = True) -> float:
    """The median over hits of ``measure`` in ``answer`` less in ``source`` (see the module; ``quietBody``:
    :func:`quiet_body_lift`); ``times``: the source's :func:`hit_times_s`, when the caller has them.
    ``latency=False``: ``answer`` is known to be sample-aligned (the bench's own chains, calibrating
    themselves), so no lag is searched for: a smash far louder than the dry drums, tried on the way to its
    level, could match them a few ms off."""
    times = _hit_times(source, sr=sr) if times is None else times
    if latency:
        answer = hits_aligned(answer, source, sr=sr, measure=measure)
    if measure == "quietBody":
        return quiet_body_lift(answer, source, sr=sr, times=times)
    out = []
    for t in read_hits(times):
        if measure == "transient":
            a, b = t - 0.002, t + 0.015
            out.append(peak_db_in(answer, sr=sr, start_s=a, stop_s=b) - peak_db_in(source, sr=sr, start_s=a, stop_s=b))
        elif measure == "incoherent":
            out.append(incoherent_db(answer, source, sr=sr, start_s=t + 0.04, stop_s=t + 0.15))
        else:
            out.append(body_db(answer, t, sr=sr) - body_db(source, t, sr=sr))
    return _median(out)


def sequence(answer: np.ndarray, parts: list[np.ndarray], *, sr: int, gap_s: float, measure: str) -> float:
    from ...measure import integrated_lufs

    gap = int(round(gap_s * sr))
    spans, at = [], 0
    for p in parts:
        spans.append((at, at + p.shape[1]))
        at += p.shape[1] + gap
    if measure == "gaps":
        gaps = [answer[:, b: b + gap] for (_, b) in spans[:-1]]
        return max((rms_dbfs(x) for x in gaps), default=FLOOR_DB)
    if measure == "likeness":
        return min(envelope_correlation(answer[:, a:b], p, sr=sr) for (a, b), p in zip(spans, parts))
    if measure == "crest":
        return max(kept(p, f"block-crest {sr}", lambda: block_crest_db(p, sr=sr))
                   - block_crest_db(answer[:, a:b], sr=sr) for (a, b), p in zip(spans, parts))
    loud = [integrated_lufs(answer[:, a:b], sr=sr) for a, b in spans]
    return max(loud) - min(loud) if measure == "spread" else min(loud)
