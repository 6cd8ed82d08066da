"""The ops language: an agent's edits to a song (docs/ops.md).

An op is ``{"type": "<name>", ...fields}``. :func:`apply_ops` applies one list of ops as one transaction:
all of it applies or none does. A refused op raises :class:`OpError` naming the transaction, the op
index and type, the field, the value and what was allowed; nothing else escapes for bad input.

Conventions:

* Tracks are named by id or by name (case-insensitive); ``"master"`` names the master insert chain.
* Ops that create things may carry ``ref: "name"``; later ops in the same transaction say ``"$name"``.
* New things get ids of the form ``t_x0000`` (tracks), ``c_x0000``, ``fx_x0000``, ``s_x0000``, ``n_x0000``:
  deterministic, and renamed by position before rendering (:mod:`.ids`).
* Params are validated against the device's table (house devices: docs/rendering.md; song-defined devices:
  their declared params); a device id that is neither is accepted and bypassed at render time.
* Values: gain -96..24 dB, pan -1..1, tempo 20..400 bpm, clip length >= 0.25 beats; numbers are JSON
  numbers (never strings), as in song files.
* Each op is checked where it writes, against the :mod:`.limits` too (a clip or section ending past
  ``song_s``, the 65th track, the note over ``notes_per_clip`` are refused at that op); the song is
  validated whole once, after the last transaction, so applying ops is linear in what they carry.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable

from pydantic import ValidationError

from ..errors import OpError, SongError
from .edits import (
    Refused, Transaction, add_notes, bool_field, finite, index_field, merge_params, note_key, number, number_field,
    obj_field, only_fields, read_notes, resort_moved, show, str_field, validated,
)
from .limits import LIMITS, ops_refusal, song_end_s, span_refusal, track_seconds
from .model import Clip, DeviceDef, Insert, Key, Loop, Section, Song, Track, check_song, describe_validation_error

Handler = Callable[[Transaction, dict[str, Any]], None]
OPS: dict[str, tuple[Handler, dict[str, str]]] = {}


def op(name: str, **fields: str):
    """Register an op handler; ``fields`` maps each allowed field to 'required' or 'optional'."""

    def register(fn: Handler) -> Handler:
        OPS[name] = (fn, {"type": "required", **fields})
        return fn

    return register


# --- the ops ------------------------------------------------------------------------------------

@op("project.set", patch="required")
def _project_set(tx: Transaction, o: dict) -> None:
    patch = obj_field(o, "patch")
    only_fields(patch, "patch", {"title", "tempo", "meter", "key", "loop"})
    d = tx.data
    if "title" in patch:
        d["title"] = str_field(patch, "title", "patch")
    if "tempo" in patch:
        d["tempo"] = number_field(patch, "tempo", "patch", 20, 400, "bpm")
        _within_song(tx, 0.0, tx.content_end_beats(), "patch.tempo", patch["tempo"])
    if "meter" in patch:
        m = patch["meter"]
        if not (isinstance(m, list) and len(m) == 2 and all(isinstance(x, int) and 1 <= x <= 32 for x in m)):
            raise Refused("patch.meter", m, "[beats, unit] like [4, 4]")
        d["meter"] = m
    for key, model in (("key", Key), ("loop", Loop)):
        if key in patch:
            if patch[key] is not None:
                validated(model, patch[key], f"patch.{key}")
            d[key] = patch[key]


def _within_song(tx: Transaction, start: float, length: float, field: str, value: Any) -> None:
    """Refuse a clip or section (just written) that ends past the song_s limit or makes tracks x seconds
    exceed track_s."""
    refusal = span_refusal(start, length, tx.data["tempo"])
    if refusal is not None:
        raise Refused(field, value, refusal)
    tx.end_beats = max(tx.end_beats, start + length)
    _track_seconds(tx, field, value)


def _track_seconds(tx: Transaction, field: str, value: Any) -> None:
    n, tempo = len(tx.data["tracks"]), tx.data["tempo"]
    if n * song_end_s(tx.end_beats, tempo) <= LIMITS.track_s:
        return
    tx.end_beats = tx.content_end_beats()  # the bound may be stale after removals: the exact end decides
    end_s = song_end_s(tx.end_beats, tempo)
    if n * end_s > LIMITS.track_s:
        raise Refused(field, value, f"at most {LIMITS.track_s:g} track-seconds (limit track_s); this makes "
                                    f"{track_seconds(n, end_s)}")


@op("track.add", track="required", index="optional", ref="optional")
def _track_add(tx: Transaction, o: dict) -> None:
    spec = dict(obj_field(o, "track"))
    tid = tx.fresh_id(spec, "track", "t")
    track = {"id": tid, "name": spec.get("name", ""), "color": spec.get("color", ""),
             "kind": spec.get("kind", "instrument"), "instrument": None, "inserts": [], "clips": [],
             "gain": 0.0, "pan": 0.0, "mute": False, "solo": False, "arm": False}
    only_fields(spec, "track", set(track))
    if len(tx.data["tracks"]) >= LIMITS.tracks:
        raise Refused("track", spec, f"at most {LIMITS.tracks} tracks in a song (limit tracks)")
    for key in ("name", "color"):
        if key in spec:
            track[key] = str_field(spec, key, "track")
    for key in ("gain", "pan"):
        if key in spec:
            lo, hi, unit = (-96, 24, "dB") if key == "gain" else (-1, 1, "")
            track[key] = number_field(spec, key, "track", lo, hi, unit)
    for key in ("mute", "solo", "arm"):
        if key in spec:
            track[key] = bool_field(spec, key, "track")
    inst = spec.get("instrument")
    if inst is not None:
        if not isinstance(inst, dict) or not isinstance(inst.get("device"), str):
            raise Refused("track.instrument", inst, "{device, params}")
        only_fields(inst, "track.instrument", {"device", "params", "auto"})
        track["instrument"] = {"device": inst["device"],
                               "auto": tx.check_auto(inst["device"], inst.get("auto", {}), "track.instrument.auto"),
                               "params": tx.check_params(inst["device"], inst.get("params", {}),
                                                         "track.instrument.params")}
    validated(Track, track, "track")
    tracks = tx.data["tracks"]
    tracks.insert(index_field(o, len(tracks)), track)
    _track_seconds(tx, "track", spec)
    for key in ("inserts", "clips"):
        if spec.get(key) is not None and not isinstance(spec[key], list):
            raise Refused(f"track.{key}", spec[key], "a list")
    for i, ins in enumerate(spec.get("inserts") or []):
        _add_insert(tx, track["inserts"], ins, None, f"track.inserts[{i}]")
    for i, clip in enumerate(spec.get("clips") or []):
        _add_clip(tx, track, clip, f"track.clips[{i}]")
    tx.remember(o.get("ref"), tid)


@op("track.remove", track="required")
def _track_remove(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    tx.data["tracks"].remove(tr)
    tx.dropped(tr["clips"])
    tx.forget(tr)
    tx.n_clips -= len(tr["clips"])


@op("track.move", track="required", index="required")
def _track_move(tx: Transaction, o: dict) -> None:
    tracks = tx.data["tracks"]
    tr = tx.track(o.get("track"))
    tracks.remove(tr)
    tracks.insert(index_field(o, len(tracks)), tr)


@op("track.set", track="required", patch="required")
def _track_set(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    patch = obj_field(o, "patch")
    only_fields(patch, "patch", {"name", "color", "gain", "pan", "mute", "solo", "arm"})
    for key in ("name", "color"):
        if key in patch:
            tr[key] = str_field(patch, key, "patch")
    if "gain" in patch:
        tr["gain"] = number_field(patch, "gain", "patch", -96, 24, "dB")
    if "pan" in patch:
        tr["pan"] = number_field(patch, "pan", "patch", -1, 1, "")
    for key in ("mute", "solo", "arm"):
        if key in patch:
            tr[key] = bool_field(patch, key, "patch")


@op("instrument.set", track="required", device="optional", params="optional")
def _instrument_set(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    device = o.get("device")
    if device is not None and not isinstance(device, str):
        raise Refused("device", device, "a device id")
    current = tr["instrument"]
    if device is None and current is None:
        raise Refused("device", None, "a device id (the track has no instrument yet)")
    if device is not None and (current is None or current["device"] != device):
        current = {"device": device, "params": {}, "auto": {}}
    patch = tx.check_params(current["device"], o.get("params") or {}, "params")
    merge_params(current["params"], patch)
    tr["instrument"] = current


def _add_insert(tx: Transaction, chain: list, spec: Any, index: int | None, field: str) -> dict:
    if not isinstance(spec, dict) or not isinstance(spec.get("device"), str):
        raise Refused(field, spec, "{device, params, on?, id?}")
    only_fields(spec, field, {"id", "device", "params", "on", "auto"})
    if len(chain) >= LIMITS.inserts_per_chain:
        raise Refused(field, spec, f"at most {LIMITS.inserts_per_chain} inserts in a chain (limit inserts_per_chain)")
    iid = tx.fresh_id(spec, field, "fx")
    on = spec.get("on", True)
    if not isinstance(on, bool):
        raise Refused(f"{field}.on", on, "true or false")
    params = {k: v for k, v in tx.check_params(spec["device"], spec.get("params") or {},
                                               f"{field}.params").items() if v is not None}
    ins = {"id": iid, "device": spec["device"], "on": on, "params": params,
           "auto": tx.check_auto(spec["device"], spec.get("auto", {}), f"{field}.auto")}
    validated(Insert, ins, field)
    chain.insert(len(chain) if index is None else index, ins)
    return ins


@op("insert.add", track="required", insert="required", index="optional", ref="optional")
def _insert_add(tx: Transaction, o: dict) -> None:
    chain = tx.chain(o.get("track"))
    ins = _add_insert(tx, chain, o.get("insert"), index_field(o, len(chain)), "insert")
    tx.remember(o.get("ref"), ins["id"])


@op("insert.remove", track="required", insert="required")
def _insert_remove(tx: Transaction, o: dict) -> None:
    chain = tx.chain(o.get("track"))
    ins = tx.insert(chain, o.get("insert"))
    chain.remove(ins)
    tx.forget(ins)


@op("insert.move", track="required", insert="required", index="required")
def _insert_move(tx: Transaction, o: dict) -> None:
    chain = tx.chain(o.get("track"))
    ins = tx.insert(chain, o.get("insert"))
    chain.remove(ins)
    chain.insert(index_field(o, len(chain)), ins)


@op("insert.set", track="required", insert="required", patch="required")
def _insert_set(tx: Transaction, o: dict) -> None:
    chain = tx.chain(o.get("track"))
    ins = tx.insert(chain, o.get("insert"))
    patch = obj_field(o, "patch")
    only_fields(patch, "patch", {"params", "on"})
    if "on" in patch:
        ins["on"] = bool_field(patch, "on", "patch")
    if "params" in patch:
        merge_params(ins["params"], tx.check_params(ins["device"], patch["params"], "patch.params"))


def _add_clip(tx: Transaction, track: dict, spec: Any, field: str) -> dict:
    if not isinstance(spec, dict):
        raise Refused(field, spec, "{kind, start, length, name, notes}")
    only_fields(spec, field, {"id", "kind", "start", "length", "name", "notes", "grid", "step", "gain", "mute",
                        "asset", "offset"})
    if tx.n_clips >= LIMITS.clips:
        raise Refused(field, spec, f"at most {LIMITS.clips} clips in a song (limit clips)")
    cid = tx.fresh_id(spec, field, "c")
    kind = spec.get("kind", "notes")
    if kind not in ("notes", "audio"):
        raise Refused(f"{field}.kind", kind, "\"notes\" or \"audio\"")
    clip = {"id": cid, "kind": kind, "start": number_field(spec, "start", field, 0, None, "beats"),
            "length": number_field(spec, "length", field, 0.25, None, "beats"), "name": spec.get("name", ""),
            "notes": [], "gain": 0.0, "mute": False, "asset": spec.get("asset"),
            "offset": spec.get("offset", 0.0)}
    if "gain" in spec:
        clip["gain"] = number_field(spec, "gain", field, -96, 24, "dB")
    if "mute" in spec:
        clip["mute"] = bool_field(spec, "mute", field)
    validated(Clip, clip, field)
    _within_song(tx, clip["start"], clip["length"], f"{field}.length", spec["length"])
    track["clips"].append(clip)
    tx.n_clips += 1
    if spec.get("notes") is not None or spec.get("grid") is not None:
        try:
            add_notes(tx, clip, read_notes(tx, spec))
        except Refused as r:
            raise Refused(f"{field}.{r.field}", r.value, r.allowed) from None
    track["clips"].sort(key=lambda c: c["start"])
    return clip


@op("clip.add", track="required", clip="required", ref="optional")
def _clip_add(tx: Transaction, o: dict) -> None:
    clip = _add_clip(tx, tx.track(o.get("track")), o.get("clip"), "clip")
    tx.remember(o.get("ref"), clip["id"])


@op("clip.remove", track="required", clip="required")
def _clip_remove(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    tr["clips"].remove(clip)
    tx.dropped([clip])
    tx.forget(clip)
    tx.n_clips -= 1


@op("clip.set", track="required", clip="required", patch="required")
def _clip_set(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    patch = obj_field(o, "patch")
    only_fields(patch, "patch", {"start", "length", "name", "gain", "mute"})
    if "start" in patch:
        clip["start"] = number_field(patch, "start", "patch", 0, None, "beats")
    if "length" in patch:
        clip["length"] = number_field(patch, "length", "patch", 0.25, None, "beats")
    if "name" in patch:
        clip["name"] = str_field(patch, "name", "patch")
    if "gain" in patch:
        clip["gain"] = number_field(patch, "gain", "patch", -96, 24, "dB")
    if "mute" in patch:
        clip["mute"] = bool_field(patch, "mute", "patch")
    if "start" in patch or "length" in patch:
        field = "patch.length" if "length" in patch else "patch.start"
        _within_song(tx, clip["start"], clip["length"], field, patch[field.split(".")[1]])
    tr["clips"].sort(key=lambda c: c["start"])


@op("clip.move", track="required", clip="required", toTrack="optional", start="optional")
def _clip_move(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    if o.get("start") is not None:
        clip["start"] = number(o, "start", lo=0, unit="beats")
        _within_song(tx, clip["start"], clip["length"], "start", o["start"])
    if o.get("toTrack") is not None:
        dest = tx.track(o["toTrack"], "toTrack")
        tr["clips"].remove(clip)
        dest["clips"].append(clip)
        tr = dest
    tr["clips"].sort(key=lambda c: c["start"])


@op("notes.add", track="required", clip="required", notes="optional", grid="optional", step="optional")
def _notes_add(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    add_notes(tx, tx.clip(tr, o.get("clip")), read_notes(tx, o))


@op("notes.remove", track="required", clip="required", ids="required")
def _notes_remove(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    ids = o.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise Refused("ids", ids, "a list of note ids")
    have = tx.notes_by_id(clip)
    for i, nid in enumerate(ids):
        if nid not in have:
            raise Refused(f"ids[{i}]", nid, f"a note id in clip {clip['id']}")
    tx.remove_notes(clip, ids)


@op("notes.set", track="required", clip="required", notes="required")
def _notes_set(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    edits = o.get("notes")
    if not isinstance(edits, list):
        raise Refused("notes", edits, "a list of {id, p?, t?, d?, v?}")
    tx.flush(clip)  # edits see the notes in order, as if every earlier op had sorted them
    by_id = tx.notes_by_id(clip)
    keys_before: dict[int, tuple[dict, tuple]] = {}
    for i, e in enumerate(edits):
        where = f"notes[{i}]"
        if not isinstance(e, dict) or not isinstance(e.get("id"), str) or e["id"] not in by_id:
            raise Refused(f"{where}.id", e.get("id") if isinstance(e, dict) else e,
                           f"a note id in clip {clip['id']}")
        only_fields(e, where, {"id", "p", "t", "d", "v"})
        same = by_id[e["id"]]  # a loaded song may repeat an id: the last in order is edited
        note = same[0] if len(same) == 1 else [n for n in clip["notes"] if n["id"] == e["id"]][-1]
        merged = {**note, **{k: v for k, v in e.items() if k != "id"}}
        checked = read_notes(tx, {"notes": [merged]}, grid_ok=False)[0]
        keys_before.setdefault(id(note), (note, note_key(note)))
        note.update({k: checked[k] for k in ("p", "t", "d", "v")})
    resort_moved(clip["notes"], {i: k0 for i, (n, k0) in keys_before.items() if note_key(n) != k0})


@op("notes.replace", track="required", clip="required", notes="optional", grid="optional",
    step="optional")
def _notes_replace(tx: Transaction, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    notes = read_notes(tx, o)
    tx.dropped([clip])
    clip["notes"] = []
    add_notes(tx, clip, notes)


@op("section.add", section="required", ref="optional")
def _section_add(tx: Transaction, o: dict) -> None:
    spec = obj_field(o, "section")
    only_fields(spec, "section", {"id", "name", "start", "length"})
    sid = tx.fresh_id(spec, "section", "s")
    s = {"id": sid, "name": spec.get("name", ""), "start": number_field(spec, "start", "section", 0, None, "beats"),
         "length": number_field(spec, "length", "section", 0, None, "beats")}
    if s["length"] <= 0:
        raise Refused("section.length", s["length"], "more than 0 beats")
    if len(tx.data["sections"]) >= LIMITS.sections:
        raise Refused("section", spec, f"at most {LIMITS.sections} sections in a song (limit sections)")
    validated(Section, s, "section")
    _within_song(tx, s["start"], s["length"], "section.length", spec["length"])
    tx.data["sections"].append(s)
    tx.data["sections"].sort(key=lambda x: x["start"])
    tx.remember(o.get("ref"), sid)


@op("section.set", section="required", patch="required")
def _section_set(tx: Transaction, o: dict) -> None:
    s = tx.section(o.get("section"))
    patch = obj_field(o, "patch")
    only_fields(patch, "patch", {"name", "start", "length"})
    if "name" in patch:
        s["name"] = str_field(patch, "name", "patch")
    if "start" in patch:
        s["start"] = number_field(patch, "start", "patch", 0, None, "beats")
    if "length" in patch:
        s["length"] = number_field(patch, "length", "patch", 0, None, "beats")
        if s["length"] <= 0:
            raise Refused("patch.length", s["length"], "more than 0 beats")
    if "start" in patch or "length" in patch:
        field = "patch.length" if "length" in patch else "patch.start"
        _within_song(tx, s["start"], s["length"], field, patch[field.split(".")[1]])
    tx.data["sections"].sort(key=lambda x: x["start"])


@op("section.remove", section="required")
def _section_remove(tx: Transaction, o: dict) -> None:
    s = tx.section(o.get("section"))
    tx.data["sections"].remove(s)
    tx.forget(s)


@op("master.set", patch="required")
def _master_set(tx: Transaction, o: dict) -> None:
    patch = obj_field(o, "patch")
    only_fields(patch, "patch", {"gain", "clip"})
    if "gain" in patch:
        tx.data["master"]["gain"] = number_field(patch, "gain", "patch", -96, 24, "dB")
    if "clip" in patch:
        if patch["clip"] not in ("soft", "clean"):
            raise Refused("patch.clip", patch["clip"], "\"soft\" or \"clean\"")
        tx.data["master"]["clip"] = patch["clip"]


@op("device.define", device="required")
def _device_define(tx: Transaction, o: dict) -> None:
    spec = dict(obj_field(o, "device"))
    only_fields(spec, "device", {"id", "kind", "name", "kernel", "params", "version"})
    spec.pop("version", None)
    try:
        defn = DeviceDef.model_validate(spec)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        msg = first["msg"].removeprefix("Value error, ")
        raise Refused(f"device.{loc}" if loc else "device", first.get("input"), msg) from None
    old = tx.data["devices"].get(defn.id)
    data = defn.model_dump(mode="json", by_alias=True)
    if old is not None:
        same = {k: v for k, v in old.items() if k != "version"} == {k: v for k, v in data.items()
                                                                     if k != "version"}
        data["version"] = old["version"] if same else old["version"] + 1
    tx.data["devices"][defn.id] = data
    _recheck_users(tx, defn.id)


def _recheck_users(tx: Transaction, device: str) -> None:
    """Refuse a definition that the params already set on its users would break."""
    d = tx.data
    holders = [tr["instrument"] for tr in d["tracks"] if tr["instrument"] is not None]
    holders += [ins for chain in [tr["inserts"] for tr in d["tracks"]] + [d["master"]["inserts"]] for ins in chain]
    for h in holders:
        if h["device"] == device:
            try:
                tx.check_params(device, h["params"], "params")
                tx.check_auto(device, h["auto"], "auto")
            except Refused as r:
                raise Refused("device.params", r.value, f"params its users have set ({r.field} "
                                                        f"on {h.get('id', 'an instrument')}): {r.allowed}") from None


@op("device.remove", id="required")
def _device_remove(tx: Transaction, o: dict) -> None:
    did = o.get("id")
    if not isinstance(did, str) or did not in tx.data["devices"]:
        have = ", ".join(tx.data["devices"]) or "none"
        raise Refused("id", did, f"a song-defined device id: {have}")
    del tx.data["devices"][did]


def _auto_target(tx: Transaction, o: dict) -> tuple[dict, str]:
    """The instrument or insert dict that holds the automation, and its device id."""
    target = o.get("insert", "instrument")
    if target == "instrument" or target is None:
        tr = tx.track(o.get("track"))
        if tr["instrument"] is None:
            raise Refused("track", o.get("track"), "a track with an instrument")
        return tr["instrument"], tr["instrument"]["device"]
    ins = tx.insert(tx.chain(o.get("track")), target)
    return ins, ins["device"]


def _param_name(param: Any) -> str:
    if not isinstance(param, str) or not param:
        raise Refused("param", param, "a param name like \"cutoff\"")
    return param


def _points(raw: Any) -> list[dict]:
    if isinstance(raw, str):
        pts = []
        for tok in raw.replace(",", " ").split():
            t, _, v = tok.partition(":")
            try:
                pts.append({"t": float(t), "v": float(v)})
            except ValueError:
                raise Refused("points", raw, "\"beat:value\" pairs like \"0:-60 16:-6\"") from None
        return pts
    if isinstance(raw, list) and all(isinstance(p, dict) and set(p) == {"t", "v"} for p in raw):
        for i, p in enumerate(raw):
            for key in ("t", "v"):
                if isinstance(p[key], bool) or not isinstance(p[key], (int, float)) or not finite(p[key]):
                    raise Refused(f"points[{i}].{key}", p[key], "a finite number")
        return [{"t": float(p["t"]), "v": float(p["v"])} for p in raw]
    raise Refused("points", raw, "\"beat:value\" pairs like \"0:-60 16:-6\" or [{t, v}]")


@op("auto.write", track="required", insert="optional", param="required", points="required",
    **{"from": "optional", "to": "optional"})
def _auto_write(tx: Transaction, o: dict) -> None:
    holder, device = _auto_target(tx, o)
    param = _param_name(o.get("param"))
    pts = _points(o.get("points"))
    for i, p in enumerate(pts):
        if p["t"] < 0:
            raise Refused(f"points[{i}].t", p["t"], "a beat >= 0")
        try:
            p["v"] = tx.check_params(device, {param: p["v"]}, "points")[param]
        except Refused as r:
            raise Refused(f"points[{i}].v", r.value, r.allowed) from None
    lo = number(o, "from", lo=0, unit="beats", default=min((p["t"] for p in pts), default=0.0))
    hi = number(o, "to", lo=0, unit="beats", default=max((p["t"] for p in pts), default=0.0))
    kept = [p for p in holder.setdefault("auto", {}).get(param, []) if not lo <= p["t"] <= hi]
    if len(kept) + len(pts) > LIMITS.points_per_param:
        raise Refused("points", f"{len(pts)} points", f"at most {LIMITS.points_per_param} points per param "
                                                     f"(limit points_per_param); {param} keeps {len(kept)}")
    holder["auto"][param] = sorted(kept + pts, key=lambda p: p["t"])


@op("auto.clear", track="required", insert="optional", param="optional",
    **{"from": "optional", "to": "optional"})
def _auto_clear(tx: Transaction, o: dict) -> None:
    holder, _ = _auto_target(tx, o)
    auto = holder.setdefault("auto", {})
    params = [_param_name(o["param"])] if o.get("param") is not None else list(auto)
    lo = number(o, "from", lo=0, unit="beats", default=0.0)
    hi = number(o, "to", lo=0, unit="beats", default=float("inf"))
    for param in params:
        kept = [p for p in auto.get(param, []) if not lo <= p["t"] <= hi]
        if kept:
            auto[param] = kept
        else:
            auto.pop(param, None)


# --- applying -----------------------------------------------------------------------------------

def known_op_types() -> list[str]:
    return sorted(OPS)


def _refuse(tx_index: int, i: int, kind: str, field: str, value: Any, allowed: str) -> OpError:
    where = f"transaction {tx_index}, op {i} ({kind})"
    return _placed(OpError(f"{where}: {field} = {show(value)}: allowed {allowed}"), tx_index=tx_index, i=i,
                   kind=kind, field=field, value=value, allowed=allowed)


def _placed(err: OpError, *, tx_index: int, i: int, kind: str, field: str, value: Any, allowed: str) -> OpError:
    """``err`` carrying its place as attributes (``transaction``, ``op_index``, ``op_type``, ``field``,
    ``value``, ``allowed``), for callers that show a refusal structurally (the studio)."""
    err.transaction, err.op_index, err.op_type = tx_index, i, kind
    err.field, err.value, err.allowed = field, value, allowed
    return err


def apply_op_data(tx: Transaction, o: Any, *, tx_index: int, i: int) -> None:
    if not isinstance(o, dict):
        raise _refuse(tx_index, i, "?", "op", o, "an object {\"type\": ..., ...}")
    kind = o.get("type")
    if kind not in OPS:
        close = difflib.get_close_matches(str(kind), OPS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise _refuse(tx_index, i, str(kind), "type", kind, f"one of {', '.join(known_op_types())}{hint}")
    handler, fields = OPS[kind]
    for key in o:
        if key not in fields:
            raise _refuse(tx_index, i, kind, key, o[key], f"the fields of {kind}: {', '.join(fields)}")
    for key, need in fields.items():
        if need == "required" and o.get(key) is None:
            takes = ", ".join(f"{k}{'' if n == 'required' else '?'}" for k, n in fields.items())
            state = "is missing" if key not in o else "is null"
            raise _placed(OpError(f"transaction {tx_index}, op {i} ({kind}): {key} {state}: {kind} requires it "
                                  f"(fields: {takes})"), tx_index=tx_index, i=i, kind=kind, field=key,
                          value=o.get(key), allowed=f"{kind} requires it (fields: {takes})")
    try:
        handler(tx, o)
    except Refused as r:
        raise _refuse(tx_index, i, kind, r.field, r.value, r.allowed) from None


def apply_ops(song: Song, ops: Any, *, transaction: int = 0) -> Song:
    """Apply one transaction; returns a new Song, or raises OpError and leaves ``song`` as it was."""
    return apply_transactions(song, [ops], first=transaction)


def apply_transactions(song: Song, transactions: list[list[Any]], *, first: int = 0) -> Song:
    """Apply several transactions in order (numbered from ``first``); the first refused op raises OpError
    and nothing is applied. Each op is checked where it writes; the whole song is validated once, at the
    end, so the cost is linear in the number of ops."""
    too_many = ops_refusal(transactions, first=first)
    if too_many is not None:
        raise OpError(too_many)
    tx = Transaction(song)
    for k, ops in enumerate(transactions, start=first):
        if not isinstance(ops, list):
            raise OpError(f"transaction {k}: expected a list of ops, got {type(ops).__name__}")
        tx.refs = {}
        for i, o in enumerate(ops):
            apply_op_data(tx, o, tx_index=k, i=i)
    tx.flush()
    last = f"transaction {first + len(transactions) - 1}" if transactions else "the transactions"
    try:
        out = Song.model_validate(tx.data)
        check_song(out, source=f"{last}: the song after it")
    except ValidationError as err:
        raise OpError(describe_validation_error(err, source=f"{last}: the song after it")) from None
    except SongError as exc:
        raise OpError(str(exc)) from None
    return out


__all__ = ["apply_ops", "apply_transactions", "apply_op_data", "known_op_types", "OPS"]
