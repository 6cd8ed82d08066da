"""What a check reads: the two songs, and a scope turned into heard tracks, a span, frames and a render
(docs/checks.md, "Scopes and selections").

Conventions:

* Tracks in a scope are names or ids, resolved on the starting song first so a track the agent renamed is
  still found by its starting id; ``"new"`` = tracks the starting song didn't have
  (:func:`~pytest_overdub.notes.selection.resolve_tracks`).
* **What an audio scope hears** is decided by :func:`pytest_overdub.render.heard.heard_tracks`, the rule
  the engine plays the song by: without ``tracks``, the mix as the song plays it; with ``tracks``, those of
  the named tracks the song plays. A named track that is muted, or soloed away by another track's solo, is
  not heard (a scope of only such tracks reads as silence), whether the figure is absolute or relative.
* A span is ``from``/``to`` in beats or a ``section`` name, read from the starting song (so an agent
  moving sections cannot move the goalposts). It becomes frames with the song timeline's rounding
  (:meth:`~pytest_overdub.song.timing.Timeline.beats_to_frames`, half up), clamped to the render; an absent
  bound is the render's start or end (the tail included).
* Renders and values are cached by content, never by object identity: a render by
  :func:`~pytest_overdub.render.stems.mix_key` of the song and its heard tracks, a value by that key, the
  span and the metric. Two equal songs built separately share entries; a song that differs in what a
  scope plays does not.
* In a scorer (the runtime entered) those caches outlive one context: :data:`PROCESS_MEMO` keeps the last
  renders and every value by the same content keys, so the rules of a variant, which all render and measure
  the same starting song, do it once. The repeat rule empties it (:func:`clear_process_caches`) to score
  from fresh renders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import TaskError
from ..notes.selection import PlacedNote, resolve_tracks, select
from ..render.heard import heard_tracks, plays
from ..song.model import Song


#: A note is heard when its track's stem over its first :data:`NOTE_WINDOW_S` reaches
#: :data:`AUDIBLE_FLOOR_DBFS` and is within :data:`AUDIBLE_BELOW_DB` of the level nine in ten of the track's
#: note windows stay under (:meth:`Context.audible`): a ghost note 18 dB under the rest is heard; a root a
#: gain insert automated to -60 dB over each downbeat (-81 dB against -21) is not.
NOTE_WINDOW_S = 0.1
AUDIBLE_FLOOR_DBFS = -80.0
AUDIBLE_BELOW_DB = 40.0


@dataclass(frozen=True)
class Heard:
    """What a scope hears on one song: the heard tracks' ids (song order), the span in beats (``None`` =
    the render's start / end) and the render's content key (``None`` when no track is heard)."""

    song: Song
    track_ids: tuple[str, ...]
    from_beats: float | None
    to_beats: float | None
    key: str | None

    @property
    def silent(self) -> bool:
        return not self.track_ids


@dataclass
class Context:
    """What checks read: the starting song (after setup), the candidate song, and caches by content."""

    start: Song
    song: Song
    trusted: bool = False
    sr: int = 48000
    warnings: list[Any] = field(default_factory=list)
    _renders: dict[str, Any] = field(default_factory=dict)
    _values: dict[tuple, float] = field(default_factory=dict)

    # --- audio scopes ---------------------------------------------------------------------------

    def hear(self, song: Song, scope: Any) -> "Heard":
        """What ``scope`` (``tracks``, ``from``/``to`` or ``section``) hears on ``song``: the one path from
        a scope to audio that every audio check takes (then :meth:`audio`)."""
        ids = self.heard_ids(song, getattr(scope, "tracks", None))
        lo, hi = self.span(scope)
        return Heard(song, ids, lo, hi, self.render_key(song, ids) if ids else None)

    def audio(self, heard: "Heard", *, stem: bool = False):
        """``(samples (2, n), sr)``: the heard tracks rendered through the master chain (``stem``: before
        it, :func:`scope_audio`), cut to the span. A scope that hears no track has no audio (its checks
        read their floor instead)."""
        if heard.key is None:
            raise ValueError("a scope that hears no track has no audio")
        r = self.render(heard.song, heard.track_ids, key=heard.key)
        a, b = span_frames(r.timeline, heard.from_beats, heard.to_beats)
        return scope_audio(r, stem=stem)[:, a:b], r.sr

    def heard_ids(self, song: Song, tracks: Any) -> tuple[str, ...]:
        """Ids of the tracks of ``song`` a scope with ``tracks`` hears (see the module docstring)."""
        among = None if tracks is None else [t.id for t in resolve_tracks(song, tracks, start_song=self.start)]
        return tuple(t.id for _, t in heard_tracks(song, among))

    def render_key(self, song: Song, track_ids: tuple[str, ...]) -> str:
        from ..render.stems import mix_key

        return mix_key(song, track_ids, sr=self.sr, trusted=self.trusted)

    def render(self, song: Song, track_ids: tuple[str, ...], *, key: str | None = None):
        """``song`` rendered with exactly ``track_ids`` playing, cached by content (``key`` if known)."""
        key = self.render_key(song, track_ids) if key is None else key
        if key not in self._renders:
            r = PROCESS_MEMO.render(key)
            if r is None:
                from ..render import render

                r = PROCESS_MEMO.keep_render(key, render(song, sr=self.sr, tracks=list(track_ids),
                                                         trust_kernels=self.trusted))
            self._renders[key] = r
            self.warnings.extend(r.warnings)
        return self._renders[key]

    def value(self, key: tuple, compute: Callable[[], float]) -> float:
        """The cached value under ``key`` (a content key), computed once."""
        if key not in self._values:
            value = PROCESS_MEMO.value(key)
            self._values[key] = PROCESS_MEMO.keep_value(key, float(compute())) if value is None else value
        return self._values[key]

    def span(self, scope: Any) -> tuple[float | None, float | None]:
        """The scope's ``(from, to)`` in beats; a ``section`` is read from the starting song."""
        section = getattr(scope, "section", None)
        if section is not None:
            s = self.start.section(section)
            if s is None:
                names = ", ".join(x.name for x in self.start.sections) or "none"
                raise TaskError(f"section {section!r} is not in the starting song (sections: {names})")
            return s.start, s.start + s.length
        return getattr(scope, "from_beats", None), getattr(scope, "to_beats", None)

    def problems(self) -> int:
        """Render problems for the house gate ``clean``: faults and errors (NaN, bad params)."""
        return sum(1 for w in self.warnings if w.kind in ("fault", "error"))

    # --- note selections ------------------------------------------------------------------------

    def select(self, check: Any, *, song: Song | None = None, tracks: Any = ..., pitches: Any = ...,
               spanned: bool = True) -> list[PlacedNote]:
        """The check's note selection on ``song`` (default: the agent's); ``tracks``/``pitches`` replace
        the check's own; ``spanned=False`` reads the whole song (for ``against``/``melody`` parts, whose
        notes may start before the span and still sound inside it)."""
        lo, hi = self.span(check) if spanned else (None, None)
        song = self.song if song is None else song
        notes = select(song, start_song=self.start, tracks=check.tracks if tracks is ... else tracks,
                       from_beats=lo, to_beats=hi, pitches=check.pitches if pitches is ... else pitches,
                       track_plays=plays)
        return notes if song is self.start else self.audible(song, notes)

    def audible(self, song: Song, notes: list[PlacedNote]) -> list[PlacedNote]:
        """``notes`` less those their track does not let anyone hear: the track's stem (rendered alone,
        post-fader) over a note's first :data:`NOTE_WINDOW_S` is under :data:`AUDIBLE_FLOOR_DBFS`, or more
        than :data:`AUDIBLE_BELOW_DB` under the level nine in ten of the track's note windows stay under.
        The selection's rules read a note's own velocity and clip gain; this reads what reaches the ear, so
        an insert or its automation that silences the roots (a gain at -60 dB over each downbeat) silences
        them for the checks too. The starting song's notes are read as written."""
        by_track: dict[str, list[PlacedNote]] = {}
        for n in notes:
            by_track.setdefault(n.track_id, []).append(n)
        heard: set[tuple[str, str, str, float]] = set()
        for track_id, group in by_track.items():
            for n, ok in zip(group, self._audible_in(song, track_id, group)):
                if ok:
                    heard.add((n.track_id, n.clip_id, n.note_id, n.start_beats))
        return [n for n in notes if (n.track_id, n.clip_id, n.note_id, n.start_beats) in heard]

    def _audible_in(self, song: Song, track_id: str, group: list[PlacedNote]) -> list[bool]:
        import numpy as np

        r = self.render(song, (track_id,))
        x = scope_audio(r, stem=True)
        n = x.shape[-1]
        window = max(1, int(round(NOTE_WINDOW_S * r.sr)))
        levels = []
        for note in group:
            a = min(max(r.timeline.beats_to_frames(note.start_beats), 0), n)
            seg = x[:, a:min(a + window, n)]
            rms = float(np.sqrt(np.mean(seg * seg))) if seg.size else 0.0
            levels.append(20.0 * np.log10(rms) if rms > 0 else -np.inf)
        levels_arr = np.array(levels)
        finite = levels_arr[np.isfinite(levels_arr)]
        top = float(np.quantile(finite, 0.9)) if finite.size else -np.inf
        return [bool(v >= AUDIBLE_FLOOR_DBFS and v >= top - AUDIBLE_BELOW_DB) for v in levels_arr]

    @property
    def key(self) -> tuple[str | None, str | None]:
        """(root, scale) of the task's key: the starting song's (after setup), never the agent's, so an answer
        cannot move what is in key; (None, None) without one (read as chromatic)."""
        key = self.start.key
        return (key.root, key.scale) if key else (None, None)

    @property
    def on_beat_tol_beats(self) -> float:
        """The one on-beat tolerance (30 ms) in beats at the starting song's tempo."""
        from ..notes.selection import on_beat_tol_beats

        return on_beat_tol_beats(self.start.tempo)

    @property
    def beats_per_bar(self) -> float:
        return self.start.beats_per_bar


def span_frames(timeline: Any, lo: float | None, hi: float | None) -> tuple[int, int]:
    """``(first, stop)`` frames of the beats ``[lo, hi)`` on a render's timeline: the timeline's rounding
    (half up), clamped to the render; ``None`` is the render's start / end."""
    n = timeline.n_frames
    a = 0 if lo is None else min(max(timeline.beats_to_frames(lo), 0), n)
    b = n if hi is None else min(max(timeline.beats_to_frames(hi), a), n)
    return a, b


def scope_audio(r: Any, *, stem: bool = False):
    """What a scope hears of a render of its tracks: the mix through the master chain, or with ``stem``
    the tracks' own stems (post-fader, post-pan) summed in song order, before the master's inserts, gain
    and clip: "the keys on their own", which no master insert can change."""
    if not stem:
        return r.mix
    import numpy as np

    out = np.zeros_like(r.mix)
    for audio in r.stems.values():
        out += audio
    return out


class ProcessMemo:
    """Renders and values a scorer process keeps across contexts, by the contexts' content keys: the most
    recently used renders that hold up to :attr:`max_bytes` of audio, mixes and stems counted (their mixes
    made read-only: a reader cannot change what the next one reads; their stems are the stem cache's,
    read-only already, and counted though the stem cache may hold them too: a kept render keeps its stems)
    and the :attr:`max_values` values kept last. Outside the scorer runtime it keeps nothing."""

    def __init__(self, *, max_bytes: int = 384 << 20, max_values: int = 20000):
        self.max_bytes, self.max_values = max_bytes, max_values
        self._renders: dict[str, Any] = {}
        self._values: dict[tuple, float] = {}

    @staticmethod
    def _on() -> bool:
        from .. import runtime

        return runtime.active()

    def render(self, key: str) -> Any:
        r = self._renders.pop(key, None)
        if r is not None:
            self._renders[key] = r  # the most recent last
        return r

    def keep_render(self, key: str, r: Any) -> Any:
        if self._on() and _nbytes(r) <= self.max_bytes:
            r.mix.setflags(write=False)
            self._renders[key] = r
            while sum(map(_nbytes, self._renders.values())) > self.max_bytes:
                del self._renders[next(iter(self._renders))]  # the least recently used first
        return r

    def value(self, key: tuple) -> float | None:
        return self._values.get(key)

    def keep_value(self, key: tuple, value: float) -> float:
        if self._on():
            self._values[key] = value
            if len(self._values) > self.max_values:
                del self._values[next(iter(self._values))]  # the oldest kept first, as renders go
        return value

    def clear(self) -> None:
        self._renders.clear()
        self._values.clear()


def _nbytes(r: Any) -> int:
    return r.mix.nbytes + sum(a.nbytes for a in r.stems.values())


#: The scorer process's memo of renders and values (see the module docstring).
PROCESS_MEMO = ProcessMemo()


def clear_process_caches() -> None:
    """Forget every render, stem and value the process keeps, so what is scored next is rendered afresh."""
    from ..measure.kept import clear as clear_kept
    from ..render.stems import PROCESS_CACHE

    PROCESS_CACHE.clear()
    PROCESS_MEMO.clear()
    clear_kept()
