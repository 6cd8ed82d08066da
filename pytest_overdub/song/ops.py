"""The ops language: an agent's edits to a song (SPEC section 4).

An op is ``{"type": "<name>", ...fields}``. :func:`apply_ops` applies one list of ops as one transaction:
all of it applies or none does. A refused op raises :class:`OpError` naming the transaction, the op
index and type, the field, the value and what was allowed; nothing else escapes for bad input.

Conventions:

* Tracks are named by id or by name (case-insensitive); ``"master"`` names the master insert chain.
* Ops that create things may carry ``ref: "name"``; later ops in the same transaction say ``"$name"``.
* New things get ids of the form ``t_x0000`` (tracks), ``c_x0000``, ``fx_x0000``, ``s_x0000``, ``n_x0000``:
  deterministic, and renamed by position before rendering (:mod:`.ids`).
* Params are validated against the device's table (house devices: appendix A; song-defined devices:
  their declared params); a device id that is neither is accepted and bypassed at render time.
* Values: gain -96..24 dB, pan -1..1, tempo 20..400 bpm, clip length >= 0.25 beats.
"""

from __future__ import annotations

import difflib
import json
import math
from typing import Any, Callable

from pydantic import ValidationError

from ..devices.params import house_spec
from ..errors import DeviceError, OpError, SongError
from .model import DeviceDef, Song, describe_validation_error
from .notation import NotationError, parse_grid, parse_notes_text

Handler = Callable[["_Tx", dict[str, Any]], None]
OPS: dict[str, tuple[Handler, dict[str, str]]] = {}


def op(name: str, **fields: str):
    """Register an op handler; ``fields`` maps each allowed field to 'required' or 'optional'."""

    def register(fn: Handler) -> Handler:
        OPS[name] = (fn, {"type": "required", **fields})
        return fn

    return register


class _Refused(Exception):
    """Raised inside a handler; turned into OpError with the op's place by :func:`apply_ops`."""

    def __init__(self, field: str, value: Any, allowed: str):
        super().__init__(field)
        self.field, self.value, self.allowed = field, value, allowed


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


# --- the transaction state ----------------------------------------------------------------------

class _Tx:
    """A mutable copy of the song's data plus the refs made so far in this transaction."""

    def __init__(self, song: Song):
        self.data: dict[str, Any] = song.model_dump(mode="json", by_alias=True)
        self.refs: dict[str, str] = {}
        self._used: set[str] | None = None

    # ids ---------------------------------------------------------------------------------------
    def used_ids(self) -> set[str]:
        ids = set()
        for tr in self.data["tracks"]:
            ids.add(tr["id"])
            ids.update(i["id"] for i in tr["inserts"])
            for c in tr["clips"]:
                ids.add(c["id"])
                ids.update(n["id"] for n in c["notes"] if n["id"])
        ids.update(i["id"] for i in self.data["master"]["inserts"])
        ids.update(s["id"] for s in self.data["sections"])
        return ids

    def fresh_id(self, spec: dict, field: str, prefix: str) -> str:
        """``spec["id"]`` if given (a string not used yet), else a new id with ``prefix``."""
        ident = spec.get("id")
        if ident is None or ident == "":
            return self.new_id(prefix)
        if not isinstance(ident, str):
            raise _Refused(f"{field}.id", ident, "a string id")
        if ident in self.used_ids():
            raise _Refused(f"{field}.id", ident, "an id not already used in the song")
        return ident

    def new_id(self, prefix: str) -> str:
        used = self.used_ids()
        n = 0
        while f"{prefix}_x{n:04d}" in used:
            n += 1
        return f"{prefix}_x{n:04d}"

    def deref(self, value: Any, field: str = "ref") -> Any:
        if isinstance(value, str) and value.startswith("$"):
            if value[1:] not in self.refs:
                known = ", ".join("$" + r for r in self.refs) or "none yet"
                raise _Refused(field, value, f"a ref made earlier in this transaction ({known})")
            return self.refs[value[1:]]
        return value

    def remember(self, ref: Any, ident: str) -> None:
        if ref is not None:
            if not isinstance(ref, str) or not ref:
                raise _Refused("ref", ref, "a non-empty name")
            self.refs[ref] = ident

    # lookups -----------------------------------------------------------------------------------
    def track(self, ref: Any, field: str = "track") -> dict:
        ref = self.deref(ref, field)
        if not isinstance(ref, str):
            raise _Refused(field, ref, "a track id or name")
        tracks = self.data["tracks"]
        for tr in tracks:
            if tr["id"] == ref:
                return tr
        for tr in tracks:
            if tr["name"].lower() == ref.lower():
                return tr
        names = ", ".join(f"{t['name']!r} ({t['id']})" for t in tracks) or "no tracks"
        raise _Refused(field, ref, f"an existing track: {names}")

    def chain(self, ref: Any) -> list:
        """The insert list of a track, or of the master for ``"master"``."""
        ref = self.deref(ref, "track")
        if isinstance(ref, str) and ref.lower() == "master":
            return self.data["master"]["inserts"]
        return self.track(ref)["inserts"]

    def insert(self, chain: list, ref: Any, field: str = "insert") -> dict:
        ref = self.deref(ref, field)
        if isinstance(ref, int) and not isinstance(ref, bool) and 0 <= ref < len(chain):
            return chain[ref]
        for ins in chain:
            if ins["id"] == ref:
                return ins
        matches = [ins for ins in chain if ins["device"] == ref]
        if len(matches) == 1:
            return matches[0]
        have = ", ".join(f"{i['id']} ({i['device']})" for i in chain) or "no inserts"
        raise _Refused(field, ref, f"an insert id, a device id used once, or an index; this chain has {have}")

    def clip(self, track: dict, ref: Any, field: str = "clip") -> dict:
        ref = self.deref(ref, field)
        for c in track["clips"]:
            if c["id"] == ref:
                return c
        for c in track["clips"]:
            if isinstance(ref, str) and c["name"] and c["name"].lower() == ref.lower():
                return c
        if isinstance(ref, int) and not isinstance(ref, bool) and 0 <= ref < len(track["clips"]):
            return track["clips"][ref]
        have = ", ".join(c["id"] for c in track["clips"]) or "no clips"
        raise _Refused(field, ref, f"a clip id, name or index on track {track['name']!r}: {have}")

    def section(self, ref: Any, field: str = "section") -> dict:
        ref = self.deref(ref, field)
        for s in self.data["sections"]:
            if s["id"] == ref or (isinstance(ref, str) and s["name"].lower() == ref.lower()):
                return s
        have = ", ".join(f"{s['name']!r} ({s['id']})" for s in self.data["sections"]) or "no sections"
        raise _Refused(field, ref, f"an existing section: {have}")

    # devices -----------------------------------------------------------------------------------
    def check_params(self, device: str, params: Any, field: str) -> dict:
        """Validate a params patch against the device's table; ``None`` values remove keys."""
        if not isinstance(params, dict):
            raise _Refused(field, params, "an object of param: value")
        spec = house_spec(device)
        defined = self.data["devices"].get(device)
        out = {}
        for key, value in params.items():
            where = f"{field}.{key}"
            if value is None:
                out[key] = None
                continue
            if spec is not None:
                try:
                    param = spec.param(key)
                except DeviceError:
                    raise _Refused(where, value, f"a param of {device}: "
                                   + ", ".join(p.key for p in spec.params)) from None
                try:
                    out[key] = param.check(value)
                except (DeviceError, OverflowError):
                    raise _Refused(where, value, f"{device} {key}: {param.allowed()}") from None
            elif defined is not None:
                out[key] = _check_defined_param(defined, key, value, where)
            else:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value):
                    raise _Refused(where, value, "a finite number")
                out[key] = float(value)
        return out


def _check_defined_param(defn: dict, key: str, value: Any, where: str) -> float:
    for p in defn["params"]:
        if p["key"] == key:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    p["min"] - 1e-9 <= value <= p["max"] + 1e-9):
                raise _Refused(where, value, f"{p['min']:g}..{p['max']:g} {p.get('unit', '')}".rstrip())
            return float(value)
    keys = ", ".join(p["key"] for p in defn["params"]) or "none"
    raise _Refused(where, value, f"a param declared by {defn['id']}: {keys}")


def _merge_params(target: dict, patch: dict) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value


# --- field readers ------------------------------------------------------------------------------

def _num(op_: dict, field: str, *, lo: float | None = None, hi: float | None = None, unit: str = "",
         default: Any = ..., gt: bool = False) -> float:
    if field not in op_ or op_[field] is None:
        if default is ...:
            raise _Refused(field, None, "a number (required)")
        return default
    v = op_[field]
    if hi is None and lo is not None:
        rng = f">= {lo:g} {unit}".strip()
    else:
        rng = f"{'' if lo is None else f'{lo:g}'}..{'' if hi is None else f'{hi:g}'} {unit}".strip()
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v):
        raise _Refused(field, v, f"a finite number {rng}".strip())
    if (lo is not None and (v <= lo if gt else v < lo)) or (hi is not None and v > hi):
        raise _Refused(field, v, rng if not gt else f"more than {lo:g} {unit}".strip())
    return float(v)


def _finite(v: int | float) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an int too large for a float
        return False


def _obj(op_: dict, field: str, *, required: bool = True) -> dict:
    v = op_.get(field)
    if v is None and not required:
        return {}
    if not isinstance(v, dict):
        raise _Refused(field, v, "an object")
    return v


def _only(obj: dict, field: str, allowed: set[str]) -> None:
    for key in obj:
        if key not in allowed:
            raise _Refused(f"{field}.{key}", obj[key], f"one of the fields {', '.join(sorted(allowed))}")


def _num_field(obj: dict, key: str, field: str, lo: float, hi: float, unit: str) -> float:
    try:
        return _num(obj, key, lo=lo, hi=hi, unit=unit)
    except _Refused as r:
        raise _Refused(f"{field}.{key}", r.value, r.allowed) from None


def _bool_field(obj: dict, key: str, field: str) -> bool:
    if not isinstance(obj[key], bool):
        raise _Refused(f"{field}.{key}", obj[key], "true or false")
    return obj[key]


def _str_field(obj: dict, key: str, field: str) -> str:
    if not isinstance(obj[key], str):
        raise _Refused(f"{field}.{key}", obj[key], "a string")
    return obj[key]


def _notes(tx: _Tx, op_: dict, field: str = "notes", *, grid_ok: bool = True) -> list[dict]:
    """Notes given as a list of {p,t,d,v}, a text string, or (where allowed) ``grid``."""
    if grid_ok and op_.get("grid") is not None:
        grid = op_["grid"]
        if not isinstance(grid, dict):
            raise _Refused("grid", grid, "an object of row: pattern, e.g. {\"kick\": \"X...X...\"}")
        step = _num(op_, "step", lo=0, unit="beats", default=0.25, gt=True)
        try:
            return parse_grid(grid, step_beats=step)
        except NotationError as exc:
            raise _Refused("grid", grid, str(exc)) from None
    raw = op_.get(field)
    if isinstance(raw, str):
        try:
            return parse_notes_text(raw)
        except NotationError as exc:
            raise _Refused(field, raw, str(exc)) from None
    if not isinstance(raw, list):
        raise _Refused(field, raw, "a list of {p, t, d, v} or a text like 'C4@0:0.5*0.8 E4@1:1'")
    out = []
    for i, n in enumerate(raw):
        where = f"{field}[{i}]"
        if isinstance(n, str):
            try:
                out.extend(parse_notes_text(n))
            except NotationError as exc:
                raise _Refused(where, n, str(exc)) from None
            continue
        if not isinstance(n, dict):
            raise _Refused(where, n, "an object {p, t, d, v}")
        _only(n, where, {"p", "t", "d", "v", "id"})
        p = n.get("p")
        if isinstance(p, str):
            try:
                from .notation import parse_pitch
                p = parse_pitch(p)
            except NotationError as exc:
                raise _Refused(f"{where}.p", n.get("p"), str(exc)) from None
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 127:
            raise _Refused(f"{where}.p", n.get("p"), "a MIDI pitch 0..127 (or a name like C4)")
        note = {"p": p, "t": _num_field(n, "t", where, 0, None, "beats"),
                "d": _num_field(n, "d", where, 0, None, "beats"),
                "v": _num_field(n, "v", where, 0, 1, "") if "v" in n else 0.8}
        if note["d"] <= 0:
            raise _Refused(f"{where}.d", n["d"], "more than 0 beats")
        if "id" in n and n["id"] is not None:
            note["id"] = _str_field(n, "id", where)
        out.append(note)
    return out


def _add_notes(tx: _Tx, clip: dict, notes: list[dict]) -> None:
    used = tx.used_ids()
    n = 0
    for note in notes:
        note = {"p": note["p"], "t": note["t"], "d": note["d"], "v": note["v"], "id": note.get("id", "")}
        if not note["id"] or note["id"] in used:
            while f"n_x{n:04d}" in used:
                n += 1
            note["id"] = f"n_x{n:04d}"
        used.add(note["id"])
        clip["notes"].append(note)
    clip["notes"].sort(key=lambda x: (x["t"], x["p"]))


def _index(op_: dict, length: int, field: str = "index") -> int:
    if op_.get(field) is None:
        return length
    v = op_[field]
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= length:
        raise _Refused(field, v, f"a whole number 0..{length}")
    return v


# --- the ops ------------------------------------------------------------------------------------

@op("project.set", patch="required")
def _project_set(tx: _Tx, o: dict) -> None:
    patch = _obj(o, "patch")
    _only(patch, "patch", {"title", "tempo", "meter", "key", "loop"})
    d = tx.data
    if "title" in patch:
        d["title"] = _str_field(patch, "title", "patch")
    if "tempo" in patch:
        d["tempo"] = _num_field(patch, "tempo", "patch", 20, 400, "bpm")
    if "meter" in patch:
        m = patch["meter"]
        if not (isinstance(m, list) and len(m) == 2 and all(isinstance(x, int) and 1 <= x <= 32 for x in m)):
            raise _Refused("patch.meter", m, "[beats, unit] like [4, 4]")
        d["meter"] = m
    if "key" in patch:
        d["key"] = patch["key"]  # validated by the Song model after the op
    if "loop" in patch:
        d["loop"] = patch["loop"]


@op("track.add", track="required", index="optional", ref="optional")
def _track_add(tx: _Tx, o: dict) -> None:
    spec = dict(_obj(o, "track"))
    tid = tx.fresh_id(spec, "track", "t")
    track = {"id": tid, "name": spec.get("name", ""), "color": spec.get("color", ""),
             "kind": spec.get("kind", "instrument"), "instrument": None, "inserts": [], "clips": [],
             "gain": 0.0, "pan": 0.0, "mute": False, "solo": False, "arm": False}
    _only(spec, "track", set(track))
    for key in ("gain", "pan"):
        if key in spec:
            lo, hi, unit = (-96, 24, "dB") if key == "gain" else (-1, 1, "")
            track[key] = _num_field(spec, key, "track", lo, hi, unit)
    for key in ("mute", "solo", "arm"):
        if key in spec:
            track[key] = _bool_field(spec, key, "track")
    inst = spec.get("instrument")
    if inst is not None:
        if not isinstance(inst, dict) or not isinstance(inst.get("device"), str):
            raise _Refused("track.instrument", inst, "{device, params}")
        _only(inst, "track.instrument", {"device", "params", "auto"})
        track["instrument"] = {"device": inst["device"], "auto": inst.get("auto", {}),
                               "params": tx.check_params(inst["device"], inst.get("params", {}),
                                                         "track.instrument.params")}
    tracks = tx.data["tracks"]
    tracks.insert(_index(o, len(tracks)), track)
    for key in ("inserts", "clips"):
        if spec.get(key) is not None and not isinstance(spec[key], list):
            raise _Refused(f"track.{key}", spec[key], "a list")
    for i, ins in enumerate(spec.get("inserts") or []):
        _add_insert(tx, track["inserts"], ins, None, f"track.inserts[{i}]")
    for i, clip in enumerate(spec.get("clips") or []):
        _add_clip(tx, track, clip, f"track.clips[{i}]")
    tx.remember(o.get("ref"), tid)


@op("track.remove", track="required")
def _track_remove(tx: _Tx, o: dict) -> None:
    tx.data["tracks"].remove(tx.track(o.get("track")))


@op("track.move", track="required", index="required")
def _track_move(tx: _Tx, o: dict) -> None:
    tracks = tx.data["tracks"]
    tr = tx.track(o.get("track"))
    tracks.remove(tr)
    tracks.insert(_index(o, len(tracks)), tr)


@op("track.set", track="required", patch="required")
def _track_set(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    patch = _obj(o, "patch")
    _only(patch, "patch", {"name", "color", "gain", "pan", "mute", "solo", "arm"})
    for key in ("name", "color"):
        if key in patch:
            tr[key] = _str_field(patch, key, "patch")
    if "gain" in patch:
        tr["gain"] = _num_field(patch, "gain", "patch", -96, 24, "dB")
    if "pan" in patch:
        tr["pan"] = _num_field(patch, "pan", "patch", -1, 1, "")
    for key in ("mute", "solo", "arm"):
        if key in patch:
            tr[key] = _bool_field(patch, key, "patch")


@op("instrument.set", track="required", device="optional", params="optional")
def _instrument_set(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    device = o.get("device")
    if device is not None and not isinstance(device, str):
        raise _Refused("device", device, "a device id")
    current = tr["instrument"]
    if device is None and current is None:
        raise _Refused("device", None, "a device id (the track has no instrument yet)")
    if device is not None and (current is None or current["device"] != device):
        current = {"device": device, "params": {}, "auto": {}}
    patch = tx.check_params(current["device"], o.get("params") or {}, "params")
    _merge_params(current["params"], patch)
    tr["instrument"] = current


def _add_insert(tx: _Tx, chain: list, spec: Any, index: int | None, field: str) -> dict:
    if not isinstance(spec, dict) or not isinstance(spec.get("device"), str):
        raise _Refused(field, spec, "{device, params, on?, id?}")
    _only(spec, field, {"id", "device", "params", "on", "auto"})
    iid = tx.fresh_id(spec, field, "fx")
    on = spec.get("on", True)
    if not isinstance(on, bool):
        raise _Refused(f"{field}.on", on, "true or false")
    params = {k: v for k, v in tx.check_params(spec["device"], spec.get("params") or {},
                                               f"{field}.params").items() if v is not None}
    ins = {"id": iid, "device": spec["device"], "on": on, "params": params, "auto": spec.get("auto", {})}
    chain.insert(len(chain) if index is None else index, ins)
    return ins


@op("insert.add", track="required", insert="required", index="optional", ref="optional")
def _insert_add(tx: _Tx, o: dict) -> None:
    chain = tx.chain(o.get("track"))
    ins = _add_insert(tx, chain, o.get("insert"), _index(o, len(chain)), "insert")
    tx.remember(o.get("ref"), ins["id"])


@op("insert.remove", track="required", insert="required")
def _insert_remove(tx: _Tx, o: dict) -> None:
    chain = tx.chain(o.get("track"))
    chain.remove(tx.insert(chain, o.get("insert")))


@op("insert.move", track="required", insert="required", index="required")
def _insert_move(tx: _Tx, o: dict) -> None:
    chain = tx.chain(o.get("track"))
    ins = tx.insert(chain, o.get("insert"))
    chain.remove(ins)
    chain.insert(_index(o, len(chain)), ins)


@op("insert.set", track="required", insert="required", patch="required")
def _insert_set(tx: _Tx, o: dict) -> None:
    chain = tx.chain(o.get("track"))
    ins = tx.insert(chain, o.get("insert"))
    patch = _obj(o, "patch")
    _only(patch, "patch", {"params", "on"})
    if "on" in patch:
        ins["on"] = _bool_field(patch, "on", "patch")
    if "params" in patch:
        _merge_params(ins["params"], tx.check_params(ins["device"], patch["params"], "patch.params"))


def _add_clip(tx: _Tx, track: dict, spec: Any, field: str) -> dict:
    if not isinstance(spec, dict):
        raise _Refused(field, spec, "{kind, start, length, name, notes}")
    _only(spec, field, {"id", "kind", "start", "length", "name", "notes", "grid", "step", "gain", "mute",
                        "asset", "offset"})
    cid = tx.fresh_id(spec, field, "c")
    kind = spec.get("kind", "notes")
    if kind not in ("notes", "audio"):
        raise _Refused(f"{field}.kind", kind, "\"notes\" or \"audio\"")
    clip = {"id": cid, "kind": kind, "start": _num_field(spec, "start", field, 0, None, "beats"),
            "length": _num_field(spec, "length", field, 0.25, None, "beats"), "name": spec.get("name", ""),
            "notes": [], "gain": 0.0, "mute": False, "asset": spec.get("asset"),
            "offset": spec.get("offset", 0.0)}
    if "gain" in spec:
        clip["gain"] = _num_field(spec, "gain", field, -96, 24, "dB")
    if "mute" in spec:
        clip["mute"] = _bool_field(spec, "mute", field)
    track["clips"].append(clip)
    if spec.get("notes") is not None or spec.get("grid") is not None:
        try:
            notes = _notes(tx, spec)
        except _Refused as r:
            raise _Refused(f"{field}.{r.field}", r.value, r.allowed) from None
        _add_notes(tx, clip, notes)
    track["clips"].sort(key=lambda c: c["start"])
    return clip


@op("clip.add", track="required", clip="required", ref="optional")
def _clip_add(tx: _Tx, o: dict) -> None:
    clip = _add_clip(tx, tx.track(o.get("track")), o.get("clip"), "clip")
    tx.remember(o.get("ref"), clip["id"])


@op("clip.remove", track="required", clip="required")
def _clip_remove(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    tr["clips"].remove(tx.clip(tr, o.get("clip")))


@op("clip.set", track="required", clip="required", patch="required")
def _clip_set(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    patch = _obj(o, "patch")
    _only(patch, "patch", {"start", "length", "name", "gain", "mute"})
    if "start" in patch:
        clip["start"] = _num_field(patch, "start", "patch", 0, None, "beats")
    if "length" in patch:
        clip["length"] = _num_field(patch, "length", "patch", 0.25, None, "beats")
    if "name" in patch:
        clip["name"] = _str_field(patch, "name", "patch")
    if "gain" in patch:
        clip["gain"] = _num_field(patch, "gain", "patch", -96, 24, "dB")
    if "mute" in patch:
        clip["mute"] = _bool_field(patch, "mute", "patch")
    tr["clips"].sort(key=lambda c: c["start"])


@op("clip.move", track="required", clip="required", toTrack="optional", start="optional")
def _clip_move(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    if o.get("start") is not None:
        clip["start"] = _num(o, "start", lo=0, unit="beats")
    if o.get("toTrack") is not None:
        dest = tx.track(o["toTrack"], "toTrack")
        tr["clips"].remove(clip)
        dest["clips"].append(clip)
        tr = dest
    tr["clips"].sort(key=lambda c: c["start"])


@op("notes.add", track="required", clip="required", notes="optional", grid="optional", step="optional")
def _notes_add(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    _add_notes(tx, tx.clip(tr, o.get("clip")), _notes(tx, o))


@op("notes.remove", track="required", clip="required", ids="required")
def _notes_remove(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    ids = o.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise _Refused("ids", ids, "a list of note ids")
    have = {n["id"] for n in clip["notes"]}
    for i, nid in enumerate(ids):
        if nid not in have:
            raise _Refused(f"ids[{i}]", nid, f"a note id in clip {clip['id']}")
    clip["notes"] = [n for n in clip["notes"] if n["id"] not in set(ids)]


@op("notes.set", track="required", clip="required", notes="required")
def _notes_set(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    edits = o.get("notes")
    if not isinstance(edits, list):
        raise _Refused("notes", edits, "a list of {id, p?, t?, d?, v?}")
    by_id = {n["id"]: n for n in clip["notes"]}
    for i, e in enumerate(edits):
        where = f"notes[{i}]"
        if not isinstance(e, dict) or not isinstance(e.get("id"), str) or e["id"] not in by_id:
            raise _Refused(f"{where}.id", e.get("id") if isinstance(e, dict) else e,
                           f"a note id in clip {clip['id']}")
        _only(e, where, {"id", "p", "t", "d", "v"})
        merged = {**by_id[e["id"]], **{k: v for k, v in e.items() if k != "id"}}
        checked = _notes(tx, {"notes": [merged]}, grid_ok=False)[0]
        by_id[e["id"]].update({k: checked[k] for k in ("p", "t", "d", "v")})
    clip["notes"].sort(key=lambda x: (x["t"], x["p"]))


@op("notes.replace", track="required", clip="required", notes="optional", grid="optional",
    step="optional")
def _notes_replace(tx: _Tx, o: dict) -> None:
    tr = tx.track(o.get("track"))
    clip = tx.clip(tr, o.get("clip"))
    notes = _notes(tx, o)
    clip["notes"] = []
    _add_notes(tx, clip, notes)


@op("section.add", section="required", ref="optional")
def _section_add(tx: _Tx, o: dict) -> None:
    spec = _obj(o, "section")
    _only(spec, "section", {"id", "name", "start", "length"})
    sid = tx.fresh_id(spec, "section", "s")
    s = {"id": sid, "name": spec.get("name", ""), "start": _num_field(spec, "start", "section", 0, None, "beats"),
         "length": _num_field(spec, "length", "section", 0, None, "beats")}
    if s["length"] <= 0:
        raise _Refused("section.length", s["length"], "more than 0 beats")
    tx.data["sections"].append(s)
    tx.data["sections"].sort(key=lambda x: x["start"])
    tx.remember(o.get("ref"), sid)


@op("section.set", section="required", patch="required")
def _section_set(tx: _Tx, o: dict) -> None:
    s = tx.section(o.get("section"))
    patch = _obj(o, "patch")
    _only(patch, "patch", {"name", "start", "length"})
    if "name" in patch:
        s["name"] = _str_field(patch, "name", "patch")
    if "start" in patch:
        s["start"] = _num_field(patch, "start", "patch", 0, None, "beats")
    if "length" in patch:
        s["length"] = _num_field(patch, "length", "patch", 0, None, "beats")
    tx.data["sections"].sort(key=lambda x: x["start"])


@op("section.remove", section="required")
def _section_remove(tx: _Tx, o: dict) -> None:
    tx.data["sections"].remove(tx.section(o.get("section")))


@op("master.set", patch="required")
def _master_set(tx: _Tx, o: dict) -> None:
    patch = _obj(o, "patch")
    _only(patch, "patch", {"gain", "clip"})
    if "gain" in patch:
        tx.data["master"]["gain"] = _num_field(patch, "gain", "patch", -96, 24, "dB")
    if "clip" in patch:
        if patch["clip"] not in ("soft", "clean"):
            raise _Refused("patch.clip", patch["clip"], "\"soft\" or \"clean\"")
        tx.data["master"]["clip"] = patch["clip"]


@op("device.define", device="required")
def _device_define(tx: _Tx, o: dict) -> None:
    spec = dict(_obj(o, "device"))
    _only(spec, "device", {"id", "kind", "name", "kernel", "params", "version"})
    spec.pop("version", None)
    try:
        defn = DeviceDef.model_validate(spec)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        msg = first["msg"].removeprefix("Value error, ")
        raise _Refused(f"device.{loc}" if loc else "device", first.get("input"), msg) from None
    old = tx.data["devices"].get(defn.id)
    data = defn.model_dump(mode="json", by_alias=True)
    if old is not None:
        same = {k: v for k, v in old.items() if k != "version"} == {k: v for k, v in data.items()
                                                                     if k != "version"}
        data["version"] = old["version"] if same else old["version"] + 1
    tx.data["devices"][defn.id] = data


@op("device.remove", id="required")
def _device_remove(tx: _Tx, o: dict) -> None:
    did = o.get("id")
    if not isinstance(did, str) or did not in tx.data["devices"]:
        have = ", ".join(tx.data["devices"]) or "none"
        raise _Refused("id", did, f"a song-defined device id: {have}")
    del tx.data["devices"][did]


def _auto_target(tx: _Tx, o: dict) -> tuple[dict, str]:
    """The instrument or insert dict that holds the automation, and its device id."""
    target = o.get("insert", "instrument")
    if target == "instrument" or target is None:
        tr = tx.track(o.get("track"))
        if tr["instrument"] is None:
            raise _Refused("track", o.get("track"), "a track with an instrument")
        return tr["instrument"], tr["instrument"]["device"]
    ins = tx.insert(tx.chain(o.get("track")), target)
    return ins, ins["device"]


def _param_name(param: Any) -> str:
    if not isinstance(param, str) or not param:
        raise _Refused("param", param, "a param name like \"cutoff\"")
    return param


def _points(raw: Any) -> list[dict]:
    if isinstance(raw, str):
        pts = []
        for tok in raw.replace(",", " ").split():
            t, _, v = tok.partition(":")
            try:
                pts.append({"t": float(t), "v": float(v)})
            except ValueError:
                raise _Refused("points", raw, "\"beat:value\" pairs like \"0:-60 16:-6\"") from None
        return pts
    if isinstance(raw, list) and all(isinstance(p, dict) and set(p) == {"t", "v"} for p in raw):
        for i, p in enumerate(raw):
            for key in ("t", "v"):
                if isinstance(p[key], bool) or not isinstance(p[key], (int, float)) or not _finite(p[key]):
                    raise _Refused(f"points[{i}].{key}", p[key], "a finite number")
        return [{"t": float(p["t"]), "v": float(p["v"])} for p in raw]
    raise _Refused("points", raw, "\"beat:value\" pairs like \"0:-60 16:-6\" or [{t, v}]")


@op("auto.write", track="required", insert="optional", param="required", points="required",
    **{"from": "optional", "to": "optional"})
def _auto_write(tx: _Tx, o: dict) -> None:
    holder, device = _auto_target(tx, o)
    param = _param_name(o.get("param"))
    pts = _points(o.get("points"))
    for i, p in enumerate(pts):
        if p["t"] < 0:
            raise _Refused(f"points[{i}].t", p["t"], "a beat >= 0")
        try:
            p["v"] = tx.check_params(device, {param: p["v"]}, "points")[param]
        except _Refused as r:
            raise _Refused(f"points[{i}].v", r.value, r.allowed) from None
    lo = _num(o, "from", lo=0, unit="beats", default=min((p["t"] for p in pts), default=0.0))
    hi = _num(o, "to", lo=0, unit="beats", default=max((p["t"] for p in pts), default=0.0))
    kept = [p for p in holder.setdefault("auto", {}).get(param, []) if not lo <= p["t"] <= hi]
    holder["auto"][param] = sorted(kept + pts, key=lambda p: p["t"])


@op("auto.clear", track="required", insert="optional", param="optional",
    **{"from": "optional", "to": "optional"})
def _auto_clear(tx: _Tx, o: dict) -> None:
    holder, _ = _auto_target(tx, o)
    auto = holder.setdefault("auto", {})
    params = [_param_name(o["param"])] if o.get("param") is not None else list(auto)
    lo = _num(o, "from", lo=0, unit="beats", default=0.0)
    hi = _num(o, "to", lo=0, unit="beats", default=float("inf"))
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
    return OpError(f"{where}: {field} = {_show(value)}: allowed {allowed}")


def apply_op_data(tx: _Tx, o: Any, *, tx_index: int, i: int) -> None:
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
            raise OpError(f"transaction {tx_index}, op {i} ({kind}): {key} {state}: {kind} requires it "
                          f"(fields: {takes})")
    try:
        handler(tx, o)
    except _Refused as r:
        raise _refuse(tx_index, i, kind, r.field, r.value, r.allowed) from None


def apply_ops(song: Song, ops: Any, *, transaction: int = 0) -> Song:
    """Apply one transaction; returns a new Song, or raises OpError and leaves ``song`` as it was."""
    if not isinstance(ops, list):
        raise OpError(f"transaction {transaction}: expected a list of ops, got {type(ops).__name__}")
    tx = _Tx(song)
    for i, o in enumerate(ops):
        apply_op_data(tx, o, tx_index=transaction, i=i)
        try:
            Song.model_validate(tx.data)
        except ValidationError as err:
            text = describe_validation_error(err, source="the song after this op")
            raise OpError(f"transaction {transaction}, op {i} ({o.get('type')}): {text}") from None
    return Song.model_validate(tx.data)


def apply_transactions(song: Song, transactions: list[list[Any]]) -> Song:
    """Apply several transactions in order; the first refused one raises OpError."""
    for k, ops in enumerate(transactions):
        song = apply_ops(song, ops, transaction=k)
    return song


__all__ = ["apply_ops", "apply_transactions", "known_op_types", "OPS", "SongError"]
