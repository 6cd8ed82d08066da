"""``render_and_measure``: the song rendered and metered exactly as the scorer does it.

The path is the scorer's (:mod:`pytest_overdub.bench.context`): the song with every id the starting song
did not have renamed by position (:func:`~pytest_overdub.song.ids.stable_ids`; ids seed devices), the heard
tracks by the engine's one rule (:func:`~pytest_overdub.render.heard.heard_tracks`: a muted or soloed-away
track is not heard, named or not), rendered whole through the master chain by the canonical renderer,
cut to the span's frames (:func:`~pytest_overdub.bench.context.span_frames`), and read by
:func:`~pytest_overdub.measure.measure` (the figures of ``overdub measure --json``, same names and units).

Speed: stems come from a stem cache (the process cache once the scorer runtime is entered, as ``overdub``
does; else the session's own), keyed by each track's content, so after an edit to one track only that
stem renders again. The renamed song and the last render are kept for the song they were made from (a
second span of an unchanged song renders nothing), and each stem's ``per_track`` figures for the stem.

Conventions: ``section`` is a section name or id of the current song; ``from_beats``/``to_beats`` are
beats (either may be absent: the render's start / end, the 1.5 s tail included); ``tracks`` are names or
ids of the current song. A figure the span is too short for is ``null`` and ``refused`` says why.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from typing import Any

from ..errors import StudioError
from ..song.ids import stable_ids
from ..song.model import Song

#: The figures read on a span (and each track's stem), besides ``bandRel.*`` and the key; ``overdub
#: measure`` names them the same (its ``onsetsPerSec`` is left out here: no check of a mix reads it).
FIGURES = ("lufs", "lufsShortMax", "lra", "truePeak", "peak", "rms", "crest", "centroid", "correlation", "sideDb")
#: How many (stem, span) figure sets a session keeps for ``per_track``.
STEM_FIGURES_KEPT = 64
#: The short figures of each bar (``series="bars"``).
BAR_FIGURES = ("lufs", "truePeak", "peak", "rms")


class Listener:
    """Renders and measures songs of one session (its starting song decides which ids are new)."""

    def __init__(self, start: Song, *, trusted: bool):
        from .. import runtime
        from ..render.stems import StemCache, default_cache

        self.start = start
        self.trusted = trusted
        self.stems_measured = 0  # stems whose per-track figures were read (not found kept)
        self.cache = default_cache() if runtime.active() else StemCache(max_bytes=runtime.stem_cache_bytes())
        self._renamed: tuple[Song | None, Song | None] = (None, None)
        self._last_render: tuple[Any, ...] = (None, None, None)  # (renamed song, track ids, Render)
        self._stem_figures: OrderedDict[tuple[int, int, int], tuple[Any, dict]] = OrderedDict()

    def renamed(self, song: Song) -> Song:
        """``song`` with new ids renamed by position, as the scorer renders it (kept for the last song)."""
        if self._renamed[0] is not song:
            self._renamed = (song, song if song is self.start else stable_ids(song, start=self.start))
        return self._renamed[1]

    def measure(self, song: Song, *, section: str | None, from_beats: float | None, to_beats: float | None,
                tracks: list[str] | None, per_track: bool, series: str | None) -> dict[str, Any]:
        lo, hi, section_name = _span(song, section, from_beats, to_beats)
        if not isinstance(per_track, bool):
            raise StudioError(f"render_and_measure: per_track = {_shown(per_track)}: allowed true or false")
        if series not in (None, "bars"):
            raise StudioError(f"render_and_measure: series = {_shown(series)}: allowed \"bars\" or none")
        stable = self.renamed(song)
        heard, not_heard = _heard(song, stable, tracks)
        names = {t.id: (t.name or t.id) for t in song.tracks}
        out: dict[str, Any] = {"span": None, "heard": [names[song.tracks[p].id] for p in heard]}
        if not_heard:
            out["not_heard"] = not_heard
        if not heard:
            out["figures"] = None
            out["silent"] = "no track is heard (each named track is muted or soloed away, or the song has none)"
            return out
        from ..bench.context import span_frames

        ids = [stable.tracks[p].id for p in heard]
        r = self._render(stable, ids)
        tl = r.timeline
        a, b = span_frames(tl, lo, hi)
        if a >= b:
            end = round(tl.frames_to_beats(tl.n_frames), 6)
            raise StudioError(f"render_and_measure: from = {lo:g}: allowed a beat before the render's end, "
                              f"{end:g} (the song and its {tl.tail_s:g} s tail)")
        out["span"] = {"from_beats": round(tl.frames_to_beats(a), 6), "to_beats": round(tl.frames_to_beats(b), 6),
                       "seconds": round((b - a) / r.sr, 6), **({"section": section_name} if section_name else {})}
        out.update(_figures(r.mix[:, a:b], r.sr))
        out["units"] = _units()
        if per_track:
            out["tracks"] = [{"track": names[song.tracks[p].id], "id": song.tracks[p].id,
                              **self._stem(r.stems[sid], a, b, r.sr)} for p, sid in zip(heard, ids)]
        if series == "bars":
            out["bars"] = _bars(r.mix, tl, a, b)
        out["warnings"] = _warnings(r.warnings, song, stable)
        return out

    def _render(self, stable: Song, ids: list[str]):
        """The render of ``ids`` on ``stable``: the last one again for the same song and tracks (songs are
        immutable), else a render whose stems come from the stem cache where they can."""
        from ..render.engine import render

        last_song, last_ids, last = self._last_render
        if last_song is stable and last_ids == ids:
            return last
        r = render(stable, tracks=ids, cache=self.cache, trust_kernels=self.trusted)
        self._last_render = (stable, list(ids), r)
        return r

    def _stem(self, stem, a: int, b: int, sr: int) -> dict[str, Any]:
        """A stem's figures on frames [a, b), kept for the stem: a cached stem is the same read-only array
        for as long as its track is unchanged, so only an edited track's figures are read again. An entry
        holds its array, so the ``id`` in its key cannot be reused while the entry lives."""
        key = (id(stem), a, b)
        hit = self._stem_figures.get(key)
        if hit is not None and hit[0] is stem:
            self._stem_figures.move_to_end(key)
            figures = hit[1]
        else:
            figures = _figures(stem[:, a:b], sr)
            self.stems_measured += 1
            self._stem_figures[key] = (stem, figures)
            while len(self._stem_figures) > STEM_FIGURES_KEPT:
                self._stem_figures.popitem(last=False)
        return {"figures": dict(figures["figures"]), "refused": dict(figures["refused"])}  # the kept ones stay ours


def _span(song: Song, section: Any, lo: Any, hi: Any) -> tuple[float | None, float | None, str | None]:
    if section is not None:
        if lo is not None or hi is not None:
            raise StudioError("render_and_measure: give either section or from/to, not both")
        s = song.section(section) if isinstance(section, str) else None
        if s is None:
            names = ", ".join(f"{x.name or x.id}" for x in song.sections) or "none (the song has no sections)"
            raise StudioError(f"render_and_measure: section = {_shown(section)}: allowed a section name or id: {names}")
        return s.start, s.start + s.length, s.name or s.id
    for name, v in (("from", lo), ("to", hi)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0):
            raise StudioError(f"render_and_measure: {name} = {_shown(v)}: allowed a number of beats >= 0")
    if lo is not None and hi is not None and hi <= lo:
        raise StudioError(f"render_and_measure: to = {_shown(hi)}: allowed a beat after from ({_shown(lo)})")
    return (None if lo is None else float(lo)), (None if hi is None else float(hi)), None


def _heard(song: Song, stable: Song, tracks: Any) -> tuple[list[int], list[dict[str, str]]]:
    """Positions of the heard tracks, and the named tracks that are not heard (with why)."""
    from ..render.heard import heard_tracks, plays

    if tracks is None:
        return [p for p, _ in heard_tracks(stable)], []
    if not isinstance(tracks, list) or not all(isinstance(t, str) for t in tracks) or not tracks:
        raise StudioError(f"render_and_measure: tracks = {_shown(tracks)}: allowed a non-empty list of track "
                          f"names or ids")
    positions = []
    for ref in tracks:
        tr = song.track(ref)
        if tr is None:
            known = ", ".join(f"{t.id} ({t.name})" for t in song.tracks) or "none"
            raise StudioError(f"render_and_measure: tracks: {_shown(ref)} is not a track: allowed {known}")
        positions.append(song.tracks.index(tr))
    among = {stable.tracks[p].id for p in positions}
    heard = [p for p, _ in heard_tracks(stable, among)]
    not_heard = [{"track": song.tracks[p].name or song.tracks[p].id,
                  "why": "muted" if song.tracks[p].mute else "another track is soloed"}
                 for p in sorted(set(positions)) if not plays(stable, stable.tracks[p])]
    return heard, not_heard


def _figures(x, sr: int) -> dict[str, Any]:
    """:data:`FIGURES` and the key of ``x``, each by the scorer's own call (``measure_metric``'s code,
    ``detect_key``), so a figure here is bit for bit what a check reads; refused ones null, with reasons."""
    from ..measure.key import detect_key
    from ..measure.metrics import measure_metrics
    from ..measure.minimums import shortfall

    values, refused = measure_metrics(x, sr=sr, metrics=list(figure_names()))
    figures: dict[str, Any] = {k: _finite(v) for k, v in values.items()}
    reason = shortfall("key", x.shape[-1], sr)
    if reason is None:
        k = detect_key(x, sr=sr)
        figures.update(key=f"{k.root} {k.scale}", keyConfidence=_finite(k.confidence),
                       keyRunnerUp=f"{k.runner_up_root} {k.runner_up_scale}")
    else:
        figures.update(key=None, keyConfidence=None, keyRunnerUp=None)
        refused.update(key=reason, keyConfidence=reason, keyRunnerUp=reason)
    return {"figures": figures, "refused": refused}


def figure_names() -> tuple[str, ...]:
    """The metric names ``render_and_measure`` reads (docs/meters.md), in ``overdub measure``'s order."""
    from ..measure.spectrum import BANDS

    return FIGURES + tuple(f"bandRel.{b}" for b in BANDS)


def _bars(mix, tl, a: int, b: int) -> list[dict[str, Any]]:
    """Short figures of each bar that overlaps frames [a, b) (cut to them): loudness, true peak, peak, rms."""
    from ..measure.metrics import measure_metrics

    bpb = tl.beats_per_bar
    first = int(math.floor(tl.frames_to_beats(a) / bpb + 1e-9))
    out = []
    k = first
    while True:
        s = max(tl.beats_to_frames(k * bpb), a)
        e = min(tl.beats_to_frames((k + 1) * bpb), b)
        if s >= b or s >= e:
            break
        row: dict[str, Any] = {"bar": k + 1, "from_beats": round(tl.frames_to_beats(s), 6),
                               "to_beats": round(tl.frames_to_beats(e), 6)}
        values, refused = measure_metrics(mix[:, s:e], sr=tl.sr, metrics=list(BAR_FIGURES))
        row.update({k: _finite(v) for k, v in values.items()})
        if refused:
            row["refused"] = refused
        out.append(row)
        k += 1
    return out


def _warnings(warnings, song: Song, stable: Song) -> list[dict[str, str]]:
    """The render's warnings, with renamed ids put back to the ids the session shows."""
    back = {}
    for t_new, t in zip(stable.tracks, song.tracks):
        if t_new.id != t.id:
            back[t_new.id] = t.id
        back.update({i_new.id: i.id for i_new, i in zip(t_new.inserts, t.inserts) if i_new.id != i.id})
    back.update({i_new.id: i.id for i_new, i in zip(stable.master.inserts, song.master.inserts) if i_new.id != i.id})
    out = []
    for w in warnings:
        where = " ".join(back.get(word, word) for word in w.where.split(" "))
        out.append({"kind": w.kind, "where": where, "message": w.message})
    return out


def _units() -> dict[str, str]:
    from ..measure.units import UNITS
    from ..measure.spectrum import BANDS

    units = {k: v for k, v in UNITS.items() if k in FIGURES or k == "keyConfidence"}
    units.update({f"bandRel.{b}": "dB" for b in BANDS})
    units["key"] = "root and scale"
    return units


def _finite(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
