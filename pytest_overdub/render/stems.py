"""The stem cache: each track's stem is rendered once per song state (docs/rendering.md).

A stem is one track after its instrument, inserts, gain and pan (pre-master), plus the render warnings
its devices raised. Its key is a sha256 over everything the stem depends on and nothing else:

* the track's own JSON (clips, notes, devices, params, automation, gain, pan, id and name), canonical
  (sorted keys, no whitespace);
* the definitions of the song-defined devices the track uses (``song.devices[id]``, with its version);
* the embedded assets its audio clips play;
* the tempo, the sample rate and the render length in frames (the song's end plus tail: a stem is only
  reused for a render of exactly the same length, so a cached stem is bit-identical to a fresh one);
* whether kernels run trusted (in-process) or sandboxed, and any test-only device overrides.

Mute, solo and the track's position are not part of the key: they decide which stems are mixed, not
how a stem sounds. So rendering a subset of tracks, or the same song again, costs only the mix.

:data:`PROCESS_CACHE` is the one explicit, documented process-wide cache that :func:`render` uses when it
is given no cache in a process that entered the scorer runtime (:mod:`pytest_overdub.runtime`); it is
bounded (an LRU by bytes, default :data:`DEFAULT_MAX_BYTES`, overridable with the environment variable
``OVERDUB_STEM_CACHE_MB``) and emptied with ``PROCESS_CACHE.clear()``. A library render keeps no stems.
Cached arrays are read-only so no caller can change what the next render reads.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ..song.model import Song, Track

DEFAULT_MAX_BYTES = int(1.5 * 1024 ** 3)
#: Bumped when the engine changes how a stem sounds, so keys from an older engine never match.
ENGINE_VERSION = "overdub-render/1"


@dataclass(frozen=True)
class StemWarning:
    """A warning raised while rendering one stem; ``where`` is relative to the track
    (``"insert fx_ab12 core.verb"``); the engine prefixes the track's position and name."""

    kind: str
    where: str
    message: str


@dataclass(frozen=True, eq=False)
class Stem:
    audio: np.ndarray  # (2, n) float64, read-only
    warnings: tuple[StemWarning, ...]


def _canon(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def stem_key(song: Song, track: Track, *, sr: int, n_frames: int, trusted: bool,
             overrides: Iterable[str] = ()) -> str:
    """The sha256 (hex) of everything ``track``'s stem depends on (see the module docstring)."""
    h = hashlib.sha256()
    h.update(ENGINE_VERSION.encode())
    h.update(_canon({"tempo": float(song.tempo), "sr": int(sr), "n_frames": int(n_frames),
                     "trusted": bool(trusted), "overrides": sorted(overrides)}))
    h.update(_canon(track.model_dump(mode="json", by_alias=True)))
    used = [track.instrument.device] if track.instrument is not None else []
    used += [ins.device for ins in track.inserts]
    for dev_id in sorted(set(used)):
        defn = song.devices.get(dev_id)
        if defn is not None:
            h.update(_canon({"device": defn.model_dump(mode="json", by_alias=True)}))
    for asset_id in sorted({c.asset for c in track.clips if c.kind == "audio" and c.asset}):
        asset = song.assets.get(asset_id)
        digest = hashlib.sha256(asset.data.encode()).hexdigest() if asset is not None else None
        h.update(_canon({"asset": asset_id, "sha256": digest}))
    return h.hexdigest()


def mix_key(song: Song, track_ids: Iterable[str], *, sr: int, trusted: bool,
            overrides: Iterable[str] = ()) -> str:
    """The sha256 (hex) of everything a render of ``song`` playing exactly ``track_ids`` depends on: each
    played track's :func:`stem_key` with its position (the warnings name it), the master chain with the
    definitions of the song-defined devices on it, the song's timeline (tempo, bar, end), the sample rate,
    the render length and the trust.

    Two songs built separately with equal content share a key; so do two songs that differ only in
    tracks the render does not play. Mute and solo are not in it: the caller chose ``track_ids``.
    """
    from ..song.timing import Timeline

    tl = Timeline.of(song, sr=sr)
    n_frames = tl.n_frames
    wanted = set(track_ids)
    h = hashlib.sha256()
    h.update(ENGINE_VERSION.encode())
    h.update(_canon({"tempo": tl.tempo_bpm, "sr": tl.sr, "n_frames": int(n_frames), "end": tl.end_beats,
                     "bar": tl.beats_per_bar, "trusted": bool(trusted), "overrides": sorted(overrides)}))
    h.update(_canon({"master": song.master.model_dump(mode="json", by_alias=True)}))
    for dev_id in sorted({ins.device for ins in song.master.inserts}):
        defn = song.devices.get(dev_id)
        if defn is not None:
            h.update(_canon({"device": defn.model_dump(mode="json", by_alias=True)}))
    for pos, track in enumerate(song.tracks):
        if track.id in wanted:
            key = stem_key(song, track, sr=sr, n_frames=n_frames, trusted=trusted, overrides=overrides)
            h.update(_canon({"position": pos, "stem": key}))
    return h.hexdigest()


class StemCache:
    """An LRU of stems bounded by their total size in bytes. ``max_bytes=0`` caches nothing.

    ``hits`` and ``misses`` count lookups, so a caller (or a test) can see what a render cost.

    ``keep_parts``: also keep, in :attr:`parts` (a cache of its own, half the size, emptied with this
    one), each stem's two earlier stages: the track's source (its instrument and audio clips, before
    the inserts) and the source through the inserts before the track's gain and pan. A track whose gain
    or pan alone changed then costs a multiply, and one whose inserts changed costs the inserts, not
    the instrument again (the scorer's cache: a task's answers, near misses and probes change a track's
    level or inserts far more often than its notes). The parts' keys are :func:`stem_key` of the track
    at 0 dB and centred, with and without its inserts, so they are exact like a stem's.
    """

    def __init__(self, *, max_bytes: int = DEFAULT_MAX_BYTES, keep_parts: bool = False):
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[str, Stem] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.parts = StemCache(max_bytes=self.max_bytes // 2) if keep_parts else None

    def resize(self, max_bytes: int) -> None:
        """Set the limit (the parts' to half of it); stems over it go at the next ``put``."""
        self.max_bytes = int(max_bytes)
        if self.parts is not None:
            self.parts.max_bytes = self.max_bytes // 2

    def get(self, key: str) -> Stem | None:
        with self._lock:
            stem = self._items.get(key)
            if stem is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return stem

    def put(self, key: str, audio: np.ndarray, warnings: tuple[StemWarning, ...]) -> Stem:
        """Store a stem (made read-only) and return it; evicts least-recently-used stems over the limit."""
        audio.setflags(write=False)
        stem = Stem(audio, tuple(warnings))
        size = audio.nbytes
        if size > self.max_bytes:
            return stem
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.audio.nbytes
            self._items[key] = stem
            self._bytes += size
            while self._bytes > self.max_bytes and self._items:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.audio.nbytes
        return stem

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self.hits = 0
            self.misses = 0
        if self.parts is not None:
            self.parts.clear()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items


#: The process-wide stem cache ``render`` uses when given no ``cache`` in a scorer (see the module docstring).
PROCESS_CACHE = StemCache(max_bytes=DEFAULT_MAX_BYTES, keep_parts=True)
_sized: list[bool] = []


def default_cache() -> StemCache:
    """The cache ``render()`` uses when given none: :data:`PROCESS_CACHE` in a process that entered the
    scorer runtime (sized from ``OVERDUB_STEM_CACHE_MB`` at its first use), else a cache that keeps
    nothing, so a library render leaves no stems behind in the process."""
    from .. import runtime

    if not runtime.active():
        return StemCache(max_bytes=0)
    if not _sized:
        PROCESS_CACHE.resize(runtime.stem_cache_bytes())
        _sized.append(True)
    return PROCESS_CACHE
