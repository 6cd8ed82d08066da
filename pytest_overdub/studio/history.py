"""The studio's undo history: the songs before each applied step, sharing what did not change.

A song is an immutable pydantic model, and applying ops builds a whole new one; kept as it comes, every
undo step would hold a full copy of the song. :func:`share` rebuilds the new song around the previous
one's unchanged parts (a track, a clip, the sections, the devices, the master equal to the old one is the
old object), so a step costs what it changed. The history also keeps at most :data:`MAX_UNDO` steps (the
oldest are dropped, and ``undo`` past them is refused), so a session of any length holds a bounded number
of songs, each mostly shared with the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..song.model import Song, Track

#: The most undo steps a session keeps; older ones are dropped (their changes stay applied).
MAX_UNDO = 100


@dataclass(frozen=True)
class Step:
    """One applied tool call: the song before it, its label, its tool, its op count and its input."""

    before: Song
    label: str
    tool: str
    n_ops: int


def share(new: Song, old: Song) -> Song:
    """``new`` with each part equal to ``old``'s replaced by ``old``'s own object (tracks and their clips
    by id; sections, devices, assets, master whole). Equal content, less memory: the result ``==`` ``new``."""
    old_tracks = {t.id: t for t in old.tracks}
    tracks = tuple(_share_track(t, old_tracks.get(t.id)) for t in new.tracks)
    update: dict[str, Any] = {"tracks": tracks}
    for name in ("sections", "devices", "assets", "master", "meta"):
        if getattr(new, name) == getattr(old, name):
            update[name] = getattr(old, name)
    if all(a is b for a, b in zip(tracks, new.tracks)) and len(update) == 1:
        return new
    return new.model_copy(update=update)


def _share_track(new: Track, old: Track | None) -> Track:
    if old is None:
        return new
    if new == old:
        return old
    old_clips = {c.id: c for c in old.clips}
    clips = tuple(old_clips[c.id] if c.id in old_clips and old_clips[c.id] == c else c for c in new.clips)
    update: dict[str, Any] = {"clips": clips}
    for name in ("instrument", "inserts"):
        if getattr(new, name) == getattr(old, name):
            update[name] = getattr(old, name)
    return new.model_copy(update=update)


class History:
    """The undo stack: :meth:`push` a step after it applied, :meth:`pop` to step back."""

    def __init__(self, *, max_steps: int = MAX_UNDO):
        self.max_steps = int(max_steps)
        self._steps: list[Step] = []
        self.dropped = 0  # steps applied before the oldest one kept (no longer undoable)

    def push(self, step: Step) -> None:
        self._steps.append(step)
        if len(self._steps) > self.max_steps:
            del self._steps[0]
            self.dropped += 1

    def pop(self) -> Step | None:
        return self._steps.pop() if self._steps else None

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self._steps)

    def __len__(self) -> int:
        return len(self._steps)
