"""The house gate ``scope``: an answer changes what its task allows and leaves everything else as it was
(docs/scoring.md, "The house gate scope"; a task declares it in ``scope``, docs/formats.md).

The gate compares the starting song (after setup) with the agent's song. Its value is the number of
findings (out-of-scope changes); its target is ``[0, 0]``, pass/fail. Each finding is a phrase naming what
was touched (``Keys muted``); the result's ``detail`` joins them and says what the task allows.

Conventions, in the order they are applied:

* **Another song.** An answer whose song id differs from the starting song's, or whose tracks include
  none of the starting song's (by id), is not an edit of the task's song: that is the one finding, and
  nothing else is compared.
* **Tempo** (and meter), **key** and **length** (the song's end, rounded up to a bar,
  :func:`~pytest_overdub.song.timing.song_end_beats`) may change only where the task allows.
* **A track** is compared by everything its stem depends on except its name, colour and arm (clips, notes,
  instrument, inserts, params, automation, gain, pan, the song devices it uses and the audio it plays).
  Mute and solo are compared as what is heard: a starting track the engine plays (mute and solo honoured)
  may not be removed, muted or soloed away, whatever the scope. A track outside the scope that changed
  must null: its stem in both songs, the residual's loudest :data:`BLOCK_S` block at least
  :data:`NULL_DB` under the stem's own level (the RMS of the louder of the two stems over the song), so a
  change that makes no sound (a reordering, a parameter at its default) is no finding.
* **A track in scope** may change how it sounds; its **notes** (the heard notes, ``(pitch, onset, heard
  duration, velocity)``, and its audio clips) only with ``notes: true``. It may not be made inaudible: its
  stem's level may not fall more than :data:`INAUDIBLE_DB` under its starting level, over the song or in
  any section where it played. With ``sections`` it must null outside those sections of the starting
  song.
* **The master chain** (gain, inserts, clip, the song devices it uses) counts as touching every track: it
  may change only with ``master: true``, else it must null (the starting tracks through the answer's
  master against the starting mix). With ``sections`` that null is required outside them.
* **New tracks** need ``new: true``, and must be music: a part played by a house instrument through
  house effects, or one whose stem is pitched or rhythmic (:func:`is_music`), never a steady noise bed.
  With ``sections`` they must be silent outside them (their stem :data:`NULL_DB` under its own level).
* **Audio** an answer adds must be from the starting song: every audio clip plays an asset whose bytes
  the starting song had.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from typing import Any

from ..errors import OverdubError, TaskError
from ..song.model import Song, Track
from .model import ChangeScope
from .scoring import CheckResult

#: A stem nulls when its residual is at least this far under the stem's own level, dB.
NULL_DB = 60.0
#: Where changes are confined to sections, the stretch on either side of an allowed section that still
#: belongs to it, beats (a 16th note): an automation ramp into the downbeat, or a fade out of the last
#: beat, is how a musician makes a change in that section.
SECTION_EDGE_BEATS = 0.25
#: A track in scope is made inaudible when its stem falls more than this under its starting level, dB.
INAUDIBLE_DB = 30.0
#: The block of the residual's loudest stretch and of the music test's level curve, seconds.
BLOCK_S = 0.05
#: The music test: a part is pitched when at least this share of its power lies in spectral peaks...
PITCHED_SHARE = 0.5
#: ...that stand at least this far above the median of the spectrum within ±1/3 octave of them, dB...
PEAK_DB = 3.0
#: ...and rhythmic when its level over 50 ms blocks (above 40 Hz), while it plays, spreads at least this
#: far between its 10th and 90th percentiles, dB.
RHYTHM_SPREAD_DB = 10.0
#: The music test's spectrum: Welch segments of this many frames (2.9 Hz bins at 48 kHz, fine enough to
#: resolve a bass note's partials), half overlapping.
WELCH_FRAMES = 16384
#: The band both halves of the music test read, Hz.
MUSIC_BAND_HZ = (40.0, 12000.0)
#: ...and a pitched part must move: its spectrum in :data:`CHANGE_FRAME_S` frames, summed into semitone
#: bands over the music band and each frame's bands taken as shares of it, differs from the part's mean
#: shares by at least this much on average (half the summed absolute difference, 0 to 1): a steady tone or
#: a drone (one pitch or one chord held all through, retriggered or not) stays under it, a line or a chord
#: progression does not.
CHANGE_MIN = 0.15
#: The frames of the change reading, seconds: longer than a vibrato's cycle, shorter than a bar.
CHANGE_FRAME_S = 0.5
#: ...and a pitched part must have notes: at least this many onsets (the meter's ``onsetsPerSec`` onsets,
#: its first note's included), so a tone that only glides (a siren) has no second note and is a drone.
MIN_ONSETS = 2
#: Silence: a stem whose level is under this is not judged as music (it adds nothing), dBFS.
SILENT_DB = -100.0

LABEL = "changes only what the task allows"


def scope_result(scope: ChangeScope, ctx: Any) -> CheckResult:
    """The house gate ``scope`` for the context's two songs (``ctx.start``, ``ctx.song``)."""
    error = None
    try:
        findings = scope_findings(scope, ctx)
        value = float(len(findings))
    except OverdubError as exc:
        findings, value, error = [], math.nan, str(exc)
    except Exception as exc:  # a bug in the gate must not take the task's other checks down
        findings, value, error = [], math.nan, f"{type(exc).__name__}: {exc}"
    detail = None
    if findings:
        detail = "; ".join(findings) + f"; this task may change: {describe(scope)}"
    return CheckResult(id="scope", label=LABEL, kind="scope", value=value, unit="changes",
                       target=(0.0, 0.0), soft=None, weight=None, gate=True,
                       score=1.0 if value == 0.0 else 0.0, error=error, detail=detail)


def check_declaration(scope: ChangeScope, start: Song) -> None:
    """Raise :class:`TaskError` when the scope names a track or section the starting song does not have."""
    _allowed_ids(scope, start)
    _outside_spans(scope, start)


def describe(scope: ChangeScope) -> str:
    """What a scope allows, in words: ``Bass (sound only, not notes), the master chain``."""
    parts = []
    if scope.tracks:
        names = "every track" if scope.tracks == "all" else ", ".join(scope.tracks)
        parts.append(names + ("" if scope.notes else " (sound only, not notes)"))
    if scope.new:
        parts.append("new tracks")
    for flag, words in (("master", "the master chain"), ("tempo", "the tempo"), ("key", "the key"),
                        ("length", "the song's length")):
        if getattr(scope, flag):
            parts.append(words)
    text = ", ".join(parts) or "nothing"
    if scope.sections:
        text += f", in {', '.join(scope.sections)} only"
    return text


# --- the comparison -------------------------------------------------------------------------------

def scope_findings(scope: ChangeScope, ctx: Any) -> list[str]:
    """Every out-of-scope change from ``ctx.start`` to ``ctx.song``, as phrases (empty = in scope)."""
    start, song = ctx.start, ctx.song
    foreign = _foreign(start, song)
    if foreign:
        return [foreign]
    allowed = _allowed_ids(scope, start)
    outside = _outside_spans(scope, start)
    findings = _song_level(scope, start, song)
    findings += _master(scope, ctx, outside)
    heard_start, heard_now = _heard(start), _heard(song)
    soloed = [t.name or t.id for t in song.tracks if t.solo and t.id in heard_now]
    for old in start.tracks:
        findings += _track(scope, ctx, old, allowed=old.id in allowed, outside=outside,
                           was_heard=old.id in heard_start, heard=old.id in heard_now, soloed=soloed)
    start_ids = {t.id for t in start.tracks}
    for new in song.tracks:
        if new.id not in start_ids:
            findings += _new_track(scope, ctx, new, outside=outside)
    findings += _foreign_audio(start, song)
    return findings


def _foreign(start: Song, song: Song) -> str | None:
    if song.id != start.id:
        return (f"this is another song (id {song.id!r}), not an edit of the task's song {start.id!r}: "
                f"nothing else was compared")
    if start.tracks and song.tracks and not {t.id for t in start.tracks} & {t.id for t in song.tracks}:
        return (f"this song shares no track with the task's song {start.id!r}: it is not an edit of it; "
                f"nothing else was compared")
    return None


def _allowed_ids(scope: ChangeScope, start: Song) -> set[str]:
    if scope.tracks == "all":
        return {t.id for t in start.tracks}
    ids = set()
    for ref in scope.tracks:
        tr = start.track(ref)
        if tr is None:
            names = ", ".join(t.name or t.id for t in start.tracks) or "none"
            raise TaskError(f"scope.tracks: {ref!r} is not a track of the starting song (tracks: {names})")
        ids.add(tr.id)
    return ids


def _outside_spans(scope: ChangeScope, start: Song) -> list[tuple[float, float | None]] | None:
    """The beat spans of the starting song outside ``scope.sections`` (``None`` when changes are not
    confined), each allowed section widened by :data:`SECTION_EDGE_BEATS` on either side. The render's
    tail after the song's end belongs to what ends there: it is outside only when the last stretch of the
    song is (``None`` as the end of the last span)."""
    from ..song.timing import song_end_beats

    if not scope.sections:
        return None
    inside = []
    for ref in scope.sections:
        sec = start.section(ref)
        if sec is None:
            names = ", ".join(s.name or s.id for s in start.sections) or "none"
            raise TaskError(f"scope.sections: {ref!r} is not a section of the starting song (sections: {names})")
        inside.append((sec.start - SECTION_EDGE_BEATS, sec.start + sec.length + SECTION_EDGE_BEATS))
    end = song_end_beats(start)
    spans: list[tuple[float, float | None]] = []
    at = 0.0
    for lo, hi in sorted(inside):
        if lo > at:
            spans.append((at, lo))
        at = max(at, hi)
    if at < end:
        spans.append((at, None))
    return spans


def _master(scope: ChangeScope, ctx: Any, outside) -> list[str]:
    """The master chain: unchanged, allowed, or nulling (the starting tracks through the answer's master
    against the starting mix; over the spans outside the sections when changes are confined there)."""
    start, song = ctx.start, ctx.song
    if master_signature(start) == master_signature(song) or (scope.master and outside is None):
        return []
    used = _devices(song, [i.device for i in song.master.inserts])
    devices = {**start.devices, **{k: song.devices[k] for k in used}}
    hybrid = start.model_copy(update={"master": song.master, "devices": devices})
    ids = tuple(t.id for t in start.tracks if t.id in _heard(start))
    a, b = ctx.render(start, ids).mix, ctx.render(hybrid, ids).mix
    ref = max(_level_db(a), _level_db(b))
    frames = None if (outside is None or not scope.master) else _frames(start, outside, ctx.sr, a.shape[-1])
    if ref <= -120.0 or _residual_db(a, b, frames, ctx.sr) <= ref - NULL_DB:
        return []
    if not scope.master:
        return ["master chain changed (it touches every track)"]
    return [f"master chain changed {_where(scope)}"]


def _where(scope: ChangeScope) -> str:
    return "outside " + ", ".join(scope.sections or ())


def _song_level(scope: ChangeScope, start: Song, song: Song) -> list[str]:
    from ..song.timing import song_end_beats

    out = []
    if not scope.tempo and (song.tempo != start.tempo or tuple(song.meter) != tuple(start.meter)):
        out.append(f"tempo/meter changed ({start.tempo:g} bpm {start.meter[0]}/{start.meter[1]} -> "
                   f"{song.tempo:g} bpm {song.meter[0]}/{song.meter[1]})")
    if not scope.key and song.key != start.key:
        out.append(f"key changed ({_key(start)} -> {_key(song)})")
    a, b = song_end_beats(start), song_end_beats(song)
    if not scope.length and a != b:
        out.append(f"length changed ({a:g} -> {b:g} beats)")
    return out


def _key(song: Song) -> str:
    return f"{song.key.root} {song.key.scale}" if song.key else "none"


def _heard(song: Song) -> set[str]:
    from ..render.engine import heard_tracks

    return {t.id for _, t in heard_tracks(song, None)}


# --- signatures: what a stem (or the master) depends on, minus cosmetics -------------------------

def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _devices(song: Song, ids: list[str]) -> dict[str, Any]:
    return {d: song.devices[d].model_dump(mode="json", by_alias=True) for d in sorted(set(ids))
            if d in song.devices}


def _asset(song: Song, asset_id: str | None) -> str | None:
    asset = song.assets.get(asset_id) if asset_id else None
    return hashlib.sha256(asset.data.encode()).hexdigest() if asset is not None else None


def track_signature(song: Song, track: Track) -> dict[str, Any]:
    """What ``track``'s stem depends on, by part (``gain``, ``inserts``, ``notes``, …), without its name,
    colour, arm, mute and solo."""
    data = track.model_dump(mode="json", by_alias=True)
    for k in ("id", "name", "color", "arm", "mute", "solo"):
        data.pop(k)
    used = ([track.instrument.device] if track.instrument else []) + [i.device for i in track.inserts]
    data["devices"] = _devices(song, used)
    data["clips"] = [{**c, "asset": _asset(song, c["asset"])} for c in data["clips"]]
    return data


def played(song: Song, track: Track) -> Counter:
    """What a track plays: its heard notes ``(pitch, onset, heard duration, velocity)`` and its audio
    clips (asset bytes, start, length, offset), as a multiset."""
    from ..notes.selection import placed_notes

    out: Counter = Counter((n.p, round(n.start_beats, 9), round(n.dur_beats, 9), n.v)
                           for n in placed_notes(song, track))
    for c in track.clips:
        if c.kind == "audio" and not c.mute:
            out[("audio", _asset(song, c.asset), c.start, c.length, c.offset)] += 1
    return out


def master_signature(song: Song) -> dict[str, Any]:
    data = song.master.model_dump(mode="json", by_alias=True)
    data["devices"] = _devices(song, [i.device for i in song.master.inserts])
    return data


def _changed_parts(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    names = {"clips": "clips or notes", "instrument": "instrument", "inserts": "inserts", "devices": "devices"}
    return [names.get(k, k) for k in a if a[k] != b.get(k)]


# --- one starting track ---------------------------------------------------------------------------

def _track(scope: ChangeScope, ctx: Any, old: Track, *, allowed: bool, outside, was_heard: bool,
           heard: bool, soloed: list[str]) -> list[str]:
    name = old.name or old.id
    new = next((t for t in ctx.song.tracks if t.id == old.id), None)
    if new is None:
        return [f"{name} removed"] if was_heard else []
    if was_heard and not heard:
        return [f"{name} muted" if new.mute else f"{name} soloed away ({', '.join(soloed)} soloed)"]
    if heard and not was_heard and not allowed:
        return [f"{name} unmuted" if old.mute else f"{name} soloed in"]
    a, b = track_signature(ctx.start, old), track_signature(ctx.song, new)
    if a == b:
        return []
    if not allowed:
        if _nulls(ctx, old.id, None):
            return []
        return [f"{name} changed ({', '.join(_changed_parts(a, b))})"]
    out = []
    if not scope.notes:
        before, after = played(ctx.start, old), played(ctx.song, new)
        if before != after:
            moved = sum((before - after).values()) + sum((after - before).values())
            out.append(f"{name} plays other notes ({moved} notes differ; a mix changes how a part sounds, "
                       f"not what it plays)")
    if outside is not None and not _nulls(ctx, old.id, outside):
        out.append(f"{name} changed {_where(scope)}")
    silenced = _silenced(ctx, old.id) if was_heard and heard else None
    if silenced:
        out.append(f"{name} {silenced}")
    return out


def _new_track(scope: ChangeScope, ctx: Any, track: Track, *, outside) -> list[str]:
    name = track.name or track.id
    if not scope.new:
        return [f"new track {name!r} added"]
    from ..notes.selection import placed_notes

    notes = placed_notes(ctx.song, track)
    stem = _stem(ctx, ctx.song, track.id)
    level = _level_db(stem)
    out = []
    span = _note_frames(ctx.song, notes, ctx.sr)
    judged = level > SILENT_DB and not _house_part(ctx.song, track)
    if judged and not is_music(stem, sr=ctx.sr, span_frames=span):
        out.append(f"new track {name!r} is a steady noise bed or a drone, not a part (neither rhythmic nor "
                   f"pitched and moving)")
    if outside is not None and level > SILENT_DB:
        residual = _residual_db(stem, None, _frames(ctx.song, outside, ctx.sr, stem.shape[-1]), ctx.sr)
        if residual > level - NULL_DB:
            out.append(f"new track {name!r} plays {_where(scope)}")
    return out


def _house_part(song: Song, track: Track) -> bool:
    """A part played by a house instrument through house effects, on notes only: music by construction
    (every sound it makes is a note of a house instrument)."""
    devices = ([track.instrument.device] if track.instrument else [""]) + [i.device for i in track.inserts]
    return all(d.startswith("core.") for d in devices) and all(c.kind == "notes" for c in track.clips)


def _foreign_audio(start: Song, song: Song) -> list[str]:
    had = {_asset(start, a) for a in start.assets}
    out = []
    for tr in song.tracks:
        if any(c.kind == "audio" and _asset(song, c.asset) not in had for c in tr.clips):
            out.append(f"{tr.name or tr.id} plays audio that is not from the starting song")
    return out


# --- audio ------------------------------------------------------------------------------------------

def _stem(ctx: Any, song: Song, track_id: str):
    return ctx.render(song, (track_id,)).stems[track_id]


def _level_db(x) -> float:
    import numpy as np

    from ..dsp.levels import power_db

    return float(power_db(float(np.mean(x * x)) * 2.0)) if x.size else -120.0


def _silenced(ctx: Any, track_id: str) -> str | None:
    """How a track in scope was made inaudible, or None: in the whole song, or in a section of the
    starting song where it played (within 20 dB of its own level there), its stem fell more than
    :data:`INAUDIBLE_DB` under where it was."""
    a, b = _stem(ctx, ctx.start, track_id), _stem(ctx, ctx.song, track_id)
    key = ("scope.level", ctx.render_key(ctx.start, (track_id,)))
    whole = ctx.value((*key, None), lambda: _level_db(a))  # the starting stem's levels: once per process
    if whole <= SILENT_DB:
        return None
    drop = whole - _level_db(b)
    if drop > INAUDIBLE_DB:
        return f"made inaudible ({drop:.0f} dB quieter)"
    for sec in ctx.start.sections:
        (lo, hi), = _frames(ctx.start, [(sec.start, sec.start + sec.length)], ctx.sr, a.shape[-1])
        before = ctx.value((*key, lo, hi), lambda: _level_db(a[:, lo:hi]))
        if before >= whole - 20.0 and before - (after := _level_db(b[:, lo:hi])) > INAUDIBLE_DB:
            return f"made inaudible in {sec.name or sec.id} ({before - after:.0f} dB quieter)"
    return None


def _nulls(ctx: Any, track_id: str, spans) -> bool:
    """Whether the track's stem in the answer nulls against its starting stem (over ``spans`` of the
    starting song's beats, or the whole render)."""
    a, b = _stem(ctx, ctx.start, track_id), _stem(ctx, ctx.song, track_id)
    ref = max(_level_db(a), _level_db(b))
    if ref <= -120.0:
        return True
    n = max(a.shape[-1], b.shape[-1])
    frames = None if spans is None else _frames(ctx.start, spans, ctx.sr, n)
    return _residual_db(a, b, frames, ctx.sr) <= ref - NULL_DB


def _frames(song: Song, spans, sr: int, n: int) -> list[tuple[int, int]]:
    from ..song.timing import beats_to_seconds, seconds_to_frames

    def f(beats):
        return n if beats is None else min(n, seconds_to_frames(beats_to_seconds(beats, tempo_bpm=song.tempo),
                                                                  sr=sr))

    return [(f(lo), f(hi)) for lo, hi in spans]


def _residual_db(a, b, frames, sr: int) -> float:
    """The level of ``a - b`` (zero-padded to one length) in its loudest :data:`BLOCK_S` block, over
    ``frames`` (a list of ``(first, end)``, blocks counted from each ``first``) or the whole length;
    ``b=None`` reads ``a`` alone."""
    import numpy as np

    from ..dsp.levels import power_db

    n = a.shape[-1] if b is None else max(a.shape[-1], b.shape[-1])
    d = np.zeros((2, n))
    d[:, :a.shape[-1]] += a
    if b is not None:
        d[:, :b.shape[-1]] -= b
    block = max(1, int(round(BLOCK_S * sr)))
    loudest = 0.0
    for lo, hi in frames if frames is not None else [(0, n)]:
        if hi <= lo:
            continue
        energy = (d[:, lo:hi] ** 2).sum(axis=0)
        starts = np.arange(0, hi - lo, block)
        sums = np.add.reduceat(energy, starts)
        counts = np.minimum(block, (hi - lo) - starts)
        loudest = max(loudest, float((sums / counts).max()))
    return float(power_db(loudest))


def _note_frames(song: Song, notes, sr: int) -> tuple[int, int] | None:
    if not notes:
        return None
    lo = min(n.start_beats for n in notes)
    hi = max(n.end_beats for n in notes)
    return _frames(song, [(lo, hi)], sr, 1 << 62)[0]


def is_music(stem, *, sr: int, span_frames: tuple[int, int] | None) -> bool:
    """Whether a part's stem is music: **pitched** (at least :data:`PITCHED_SHARE` of its power, summed
    over both channels and averaged over the part in :data:`WELCH_FRAMES`-frame Welch segments, lies in
    spectral peaks :data:`PEAK_DB` above the median of the spectrum within ±1/3 octave, 40 Hz-12 kHz:
    partials, not noise of any colour, whose averaged spectrum is smooth) or **rhythmic** (its level in
    :data:`BLOCK_S` blocks, above 40 Hz, from its first note's onset to its last note's end, spreads at
    least :data:`RHYTHM_SPREAD_DB` between the 10th and 90th percentiles: it comes and goes); a pitched part
    must also move (:func:`spectral_change` at least :data:`CHANGE_MIN`) and have a second note (at least
    :data:`MIN_ONSETS` onsets): a steady tone, one pitch or one chord held all through, or a tone that only
    glides, is a drone, not a part. A part
    without notes (an effect that makes sound from silence), or shorter than half a second, is judged
    over the whole render. A steady noise bed, of any colour or width, is neither."""
    lo, hi = span_frames if span_frames is not None else (0, stem.shape[-1])
    x = stem[:, lo:min(hi, stem.shape[-1])]
    if x.shape[-1] < int(sr * 0.5):
        x = stem
    if _spread_db(x, sr) >= RHYTHM_SPREAD_DB:
        return True
    if _pitched_share(x, sr) < PITCHED_SHARE or spectral_change(x, sr) < CHANGE_MIN:
        return False
    from ..measure.onsets import onset_times_of

    return onset_times_of(x, sr=sr).size >= MIN_ONSETS


def _pitched_share(x, sr: int) -> float:
    import numpy as np
    from scipy.signal import welch

    f, p = welch(x, fs=sr, nperseg=min(WELCH_FRAMES, x.shape[-1]), axis=-1)
    p = p.sum(axis=0)
    band = (f >= MUSIC_BAND_HZ[0]) & (f <= MUSIC_BAND_HZ[1])
    idx = np.flatnonzero(band)
    total = float(p[idx].sum())
    if total <= 0.0:
        return 0.0
    lo = np.searchsorted(f, f[idx] * 2 ** (-1 / 3))
    hi = np.searchsorted(f, f[idx] * 2 ** (1 / 3), side="right")
    med = sliding_medians(p, lo, hi)
    peaks = p[idx] > med * 10 ** (PEAK_DB / 10)
    return float(p[idx][peaks].sum()) / total


def sliding_medians(p, lo, hi):
    """``[np.median(p[a:b]) for a, b in zip(lo, hi)]``, the same floats, for windows whose both ends never
    move back: one sorted window updated by what leaves and enters it, not a sort per window (a part's
    spectrum has thousands of bins, each window up to two thirds of an octave wide). An even count's median
    is the mean of the middle two, ``(a + b) / 2``, as numpy takes it. A spectrum holding a NaN, or windows
    that move back, take numpy's own median."""
    import bisect

    import numpy as np

    if (not np.isfinite(p).all() or np.any(hi <= lo) or np.any(np.diff(lo) < 0)
            or np.any(np.diff(hi) < 0)):
        return np.array([np.median(p[a:b]) for a, b in zip(lo, hi)])
    vals, window, a0, b0 = p.tolist(), [], 0, 0
    out = np.empty(len(lo))
    for i, (a, b) in enumerate(zip(lo.tolist(), hi.tolist())):
        if a >= b0:
            window = sorted(vals[a:b])
        else:
            for v in vals[a0:a]:
                del window[bisect.bisect_left(window, v)]
            for v in vals[b0:b]:
                bisect.insort(window, v)
        a0, b0 = a, b
        n = len(window)
        out[i] = window[n // 2] if n % 2 else (window[n // 2 - 1] + window[n // 2]) / 2
    return out


def spectral_change(x, sr: int) -> float:
    """How far a part's spectrum moves (see :data:`CHANGE_MIN`): the mean, over its
    :data:`CHANGE_FRAME_S` frames within 40 dB of its loudest, of half the summed absolute difference
    between a frame's semitone-band shares and the mean shares; 0 for a steady sound, fewer than two
    frames, or silence."""
    import numpy as np

    n = int(CHANGE_FRAME_S * sr)
    frames = x.shape[-1] // n
    if frames < 2:
        return 0.0
    seg = x[:, :frames * n].reshape(x.shape[0], frames, n) * np.hanning(n)
    power = (np.abs(np.fft.rfft(seg, axis=-1)) ** 2).sum(axis=0)
    f = np.fft.rfftfreq(n, 1 / sr)
    lo, hi = MUSIC_BAND_HZ
    band = np.floor(12 * np.log2(np.maximum(f, 1e-9) / lo) + 0.5).astype(int)
    keep = (f >= lo) & (f <= hi)
    bands = np.zeros((frames, band[keep].max() + 1))
    for i in range(frames):
        np.add.at(bands[i], band[keep], power[i, keep])
    total = bands.sum(axis=1)
    loud = total > total.max() * 1e-4
    if total.max() <= 0.0 or loud.sum() < 2:
        return 0.0
    shares = bands[loud] / total[loud, None]
    return float(0.5 * np.abs(shares - shares.mean(axis=0)).sum(axis=1).mean())


def _spread_db(x, sr: int) -> float:
    import numpy as np
    from scipy.signal import butter, sosfilt

    x = sosfilt(butter(4, MUSIC_BAND_HZ[0], "highpass", fs=sr, output="sos"), x, axis=-1)
    block = max(1, int(round(BLOCK_S * sr)))
    n = x.shape[-1] // block
    if n < 2:
        return 0.0
    power = (x[:, :n * block] ** 2).reshape(2, n, block).mean(axis=(0, 2))
    db = 10 * np.log10(np.maximum(power, 1e-12))
    p10, p90 = np.percentile(db, [10, 90])
    return float(p90 - p10)
