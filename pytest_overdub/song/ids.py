"""Stable ids: rename every id the starting song didn't have, by position (docs/formats.md, "Stable ids").

New tracks, clips, inserts, sections and notes get arbitrary ids in a studio, and ids seed devices, so
before rendering each id the starting song did not have is renamed by its position in the song:
tracks ``t_nw0000``…, clips ``c_nw0000``…, inserts ``fx_nw0000``… (track chains in track order, then the
master chain), sections ``s_nw0000``…, notes ``n_nw0000``… (in track, clip and note order). The same ops
therefore score the same however often they are applied. Renaming is idempotent.
"""

from __future__ import annotations

from typing import Any

from .model import Song


def song_ids(song: Song) -> set[str]:
    """Every id in a song: tracks, inserts, clips, notes, master inserts, sections."""
    out: set[str] = set()
    for tr in song.tracks:
        out.add(tr.id)
        out.update(i.id for i in tr.inserts)
        for c in tr.clips:
            out.add(c.id)
            out.update(n.id for n in c.notes)
    out.update(i.id for i in song.master.inserts)
    out.update(s.id for s in song.sections)
    return out


class _Renamer:
    def __init__(self, keep: set[str]):
        self.keep = keep
        self.counts: dict[str, int] = {}

    def __call__(self, ident: str, prefix: str) -> str:
        if ident and ident in self.keep:
            return ident
        n = self.counts.get(prefix, 0)
        while f"{prefix}_nw{n:04d}" in self.keep:  # the start may itself hold renamed ids
            n += 1
        self.counts[prefix] = n + 1
        return f"{prefix}_nw{n:04d}"


def stable_ids(song: Song, *, start: Song) -> Song:
    """``song`` with every id that ``start`` did not have renamed by position."""
    name = _Renamer(song_ids(start))
    data: dict[str, Any] = song.model_dump(mode="json", by_alias=True)
    for tr in data["tracks"]:
        tr["id"] = name(tr["id"], "t")
    for tr in data["tracks"]:
        for c in tr["clips"]:
            c["id"] = name(c["id"], "c")
    for chain in [tr["inserts"] for tr in data["tracks"]] + [data["master"]["inserts"]]:
        for ins in chain:
            ins["id"] = name(ins["id"], "fx")
    for s in data["sections"]:
        s["id"] = name(s["id"], "s")
    for tr in data["tracks"]:
        for c in tr["clips"]:
            for n in c["notes"]:
                n["id"] = name(n["id"], "n")
    return Song.model_validate(data)
