"""Which tracks a listener hears: the one rule the engine and the bench's checks share (docs/rendering.md).

* **The mix.** A track plays unless it is muted; when any track is soloed, only soloed tracks play. Mute
  wins over solo: a track both soloed and muted plays nothing, and its solo still silences the tracks that
  are not soloed (so a song whose only solo is also muted plays nothing at all).
* **A part of the mix.** :func:`heard_tracks` with ``among`` gives the tracks of that set that play, as
  the listener hears them in the song: a named track that is muted or soloed away is not heard.
* :func:`named_tracks` is the engine's export mode (``render(song, tracks=[...])``, ``overdub render
  --tracks``): exactly the tracks asked for, mute and solo ignored. The bench never uses it for a scope: it
  narrows a scope to what is heard here first.

Pure Python: importing this module does not import numpy.
"""

from __future__ import annotations

from typing import Iterable

from ..errors import RenderError
from ..song.model import Song, Track


def plays(song: Song, track: Track) -> bool:
    """Whether ``track`` (one of ``song``'s) sounds in the song's mix (mute and solo, see above)."""
    soloed = any(t.solo for t in song.tracks)
    return not track.mute and (track.solo or not soloed)


def heard_tracks(song: Song, among: Iterable[str] | None = None) -> list[tuple[int, Track]]:
    """(position, track) of each track of ``song`` the listener hears, in song order: every track that
    plays, or with ``among`` (track ids) only those of them that play."""
    wanted = None if among is None else set(among)
    return [(i, t) for i, t in enumerate(song.tracks)
            if plays(song, t) and (wanted is None or t.id in wanted)]


def named_tracks(song: Song, refs: Iterable[str]) -> list[tuple[int, Track]]:
    """(position, track) of each track ``refs`` names (ids or names), in song order, mute and solo
    ignored (the engine's export mode). :class:`RenderError` for a reference the song does not know."""
    if isinstance(refs, str):
        raise RenderError(f"tracks must be a list of track ids or names, not the string {refs!r}")
    wanted: set[str] = set()
    for ref in refs:
        tr = song.track(ref)
        if tr is None:
            known = ", ".join(f"{t.id} ({t.name})" for t in song.tracks) or "none"
            raise RenderError(f"track {ref!r} is not in song {song.id!r}; its tracks are: {known}")
        wanted.add(tr.id)
    return [(i, t) for i, t in enumerate(song.tracks) if t.id in wanted]
