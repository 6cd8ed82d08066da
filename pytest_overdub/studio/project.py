"""What the studio tells about a song and its devices, as JSON data (``get_project``, ``list_devices``,
``get_device``).

Times are beats (as in the song), the length also in seconds and bars; gains dB; pan -1..1. A track is
shown by its id (what ops may name it by, with its name) and its devices with their stored params (a
param not stored plays at the device's default, which ``get_device`` lists). Pure Python: no numpy.
"""

from __future__ import annotations

import json
from typing import Any

from ..devices.params import HOUSE_SPECS, DeviceSpec
from ..errors import StudioError
from ..song.model import Clip, Insert, Song, Track
from ..song.timing import Timeline, content_end_beats

DETAILS = ("summary", "full")
KINDS = ("instrument", "effect")


def project_summary(song: Song, *, detail: str = "summary", track: str | None = None) -> dict[str, Any]:
    """The song's summary (``detail="full"``: with every clip's notes and automation), optionally one track."""
    if detail not in DETAILS:
        raise StudioError(f"get_project: detail = {json.dumps(detail)}: allowed one of {', '.join(DETAILS)}")
    tracks = list(song.tracks)
    if track is not None:
        found = song.track(track) if isinstance(track, str) else None
        if found is None:
            raise StudioError(f"get_project: track = {json.dumps(track)}: allowed a track id or name: "
                              f"{_track_names(song)}")
        tracks = [found]
    tl = Timeline.of(song)
    full = detail == "full"
    out: dict[str, Any] = {
        "id": song.id, "title": song.title, "tempo": song.tempo, "meter": list(song.meter),
        "key": None if song.key is None else f"{song.key.root} {song.key.scale}",
        "length": {"content_beats": content_end_beats(song), "beats": tl.end_beats,
                   "bars": tl.end_beats / song.beats_per_bar, "seconds": round(tl.end_s, 3),
                   "render_seconds": round(tl.n_frames / tl.sr, 3)},
        "sections": [{"id": s.id, "name": s.name, "start": s.start, "length": s.length} for s in song.sections],
        "tracks": [_track(song, t, full=full) for t in tracks],
        "master": {"gain": song.master.gain, "clip": song.master.clip,
                   "inserts": [_insert(i, full=full) for i in song.master.inserts]},
        "devices": [{"id": d.id, "kind": d.kind, "name": d.name, "version": d.version,
                     "params": [p.key for p in d.params]} for d in song.devices.values()],
    }
    if song.loop is not None:
        out["loop"] = song.loop.model_dump()
    if song.meta:
        out["meta"] = song.meta
    return out


def _track(song: Song, t: Track, *, full: bool) -> dict[str, Any]:
    inst = t.instrument
    out: dict[str, Any] = {
        "id": t.id, "name": t.name, "kind": t.kind,
        "instrument": None if inst is None else {"device": inst.device, "params": dict(inst.params),
                                                  **({"automated": sorted(inst.auto)} if inst.auto else {})},
        "inserts": [_insert(i, full=full) for i in t.inserts],
        "gain": t.gain, "pan": t.pan, "mute": t.mute, "solo": t.solo,
        "clip_count": len(t.clips), "note_count": sum(len(c.notes) for c in t.clips),
    }
    if full and inst is not None and inst.auto:
        out["instrument"]["auto"] = _auto(inst.auto)
    out["clips"] = [_clip(c, full=full) for c in t.clips]
    return out


def _insert(i: Insert, *, full: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"id": i.id, "device": i.device, "on": i.on, "params": dict(i.params)}
    if i.auto:
        out["automated"] = sorted(i.auto)
        if full:
            out["auto"] = _auto(i.auto)
    return out


def _auto(auto) -> dict[str, list[dict[str, float]]]:
    return {k: [{"t": p.t, "v": p.v} for p in pts] for k, pts in auto.items()}


def _clip(c: Clip, *, full: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"id": c.id, "name": c.name, "kind": c.kind, "start": c.start, "length": c.length,
                           "note_count": len(c.notes)}
    if c.gain:
        out["gain"] = c.gain
    if c.mute:
        out["mute"] = True
    if c.kind == "audio":
        out.update(asset=c.asset, offset=c.offset)
    if full:
        out["notes"] = [{"id": n.id, "p": n.p, "t": n.t, "d": n.d, "v": n.v} for n in c.notes]
    return out


def _track_names(song: Song) -> str:
    return ", ".join(f"{t.id} ({t.name})" for t in song.tracks) or "none (the song has no tracks)"


# --- devices ----------------------------------------------------------------------------------------

def spec_data(spec: DeviceSpec) -> dict[str, Any]:
    """A parameter table as data: each param's key, label, range, default, unit, and a switch's options."""
    params = []
    for p in spec.params:
        row: dict[str, Any] = {"key": p.key, "label": p.label, "min": p.min, "max": p.max, "default": p.default,
                               "unit": p.unit, "allowed": p.allowed()}
        if p.options:
            row["options"] = list(p.options)
        if p.step is not None:
            row["step"] = p.step
        if p.log:
            row["log"] = True
        params.append(row)
    return {"id": spec.id, "kind": spec.kind, "name": spec.name, "description": spec.description, "params": params}


def device_list(song: Song, *, kind: str | None = None) -> dict[str, Any]:
    """The house devices and the song-defined ones (of one ``kind`` if given), without their params."""
    if kind is not None and kind not in KINDS:
        raise StudioError(f"list_devices: kind = {json.dumps(kind)}: allowed one of {', '.join(KINDS)} (or none)")
    house = [{"id": s.id, "kind": s.kind, "name": s.name, "description": s.description, "source": "house"}
             for s in HOUSE_SPECS.values() if kind in (None, s.kind)]
    own = [{"id": d.id, "kind": d.kind, "name": d.name, "version": d.version, "source": "song"}
           for d in song.devices.values() if kind in (None, d.kind)]
    return {"devices": house + own}


def device_detail(song: Song, device: str) -> dict[str, Any]:
    """One device's table: a house device type (``core.eq``) or a song-defined id (with its kernel source)
    and where the song uses it."""
    if not isinstance(device, str):
        raise StudioError(f"get_device: device = {json.dumps(device, default=str)}: allowed a device id")
    spec = HOUSE_SPECS.get(device)
    if spec is not None:
        return {"source": "house", **spec_data(spec), "used_on": _users(song, device)}
    defn = song.devices.get(device)
    if defn is None:
        known = ", ".join(list(HOUSE_SPECS) + list(song.devices))
        raise StudioError(f"get_device: device = {json.dumps(device)}: allowed a house device or a song-defined "
                          f"device: {known}")
    return {"source": "song", **spec_data(defn.spec), "name": defn.name, "version": defn.version,
            "kernel": defn.kernel, "used_on": _users(song, device)}


def _users(song: Song, device: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in song.tracks:
        if t.instrument is not None and t.instrument.device == device:
            out.append({"track": t.name or t.id, "as": "instrument"})
        out += [{"track": t.name or t.id, "as": "insert", "insert": i.id, "index": k}
                for k, i in enumerate(t.inserts) if i.device == device]
    out += [{"track": "master", "as": "insert", "insert": i.id, "index": k}
            for k, i in enumerate(song.master.inserts) if i.device == device]
    return out
