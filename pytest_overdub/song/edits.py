"""One transaction's working state and the readers of op fields, for :mod:`.ops`.

An op handler reads its fields through these readers and edits :class:`Transaction.data` (a plain copy of
the song's JSON). A reader that finds a bad value raises :class:`Refused` with the field's name (a path
inside the op, like ``patch.gain``), the value, and what was allowed; :func:`.ops.apply_ops` adds the
transaction and op index and turns it into an :class:`~pytest_overdub.errors.OpError`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..devices.params import house_spec
from ..errors import DeviceError
from .model import Song
from .notation import NotationError, parse_grid, parse_notes_text, parse_pitch


class Refused(Exception):
    """Raised inside a handler; turned into OpError with the op's place by :func:`apply_ops`."""

    def __init__(self, field: str, value: Any, allowed: str):
        super().__init__(field)
        self.field, self.value, self.allowed = field, value, allowed


def show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


# --- the transaction state ----------------------------------------------------------------------

class Transaction:
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
            raise Refused(f"{field}.id", ident, "a string id")
        if ident in self.used_ids():
            raise Refused(f"{field}.id", ident, "an id not already used in the song")
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
                raise Refused(field, value, f"a ref made earlier in this transaction ({known})")
            return self.refs[value[1:]]
        return value

    def remember(self, ref: Any, ident: str) -> None:
        if ref is not None:
            if not isinstance(ref, str) or not ref:
                raise Refused("ref", ref, "a non-empty name")
            self.refs[ref] = ident

    # lookups -----------------------------------------------------------------------------------
    def track(self, ref: Any, field: str = "track") -> dict:
        ref = self.deref(ref, field)
        if not isinstance(ref, str):
            raise Refused(field, ref, "a track id or name")
        tracks = self.data["tracks"]
        for tr in tracks:
            if tr["id"] == ref:
                return tr
        for tr in tracks:
            if tr["name"].lower() == ref.lower():
                return tr
        names = ", ".join(f"{t['name']!r} ({t['id']})" for t in tracks) or "no tracks"
        raise Refused(field, ref, f"an existing track: {names}")

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
        raise Refused(field, ref, f"an insert id, a device id used once, or an index; this chain has {have}")

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
        raise Refused(field, ref, f"a clip id, name or index on track {track['name']!r}: {have}")

    def section(self, ref: Any, field: str = "section") -> dict:
        ref = self.deref(ref, field)
        for s in self.data["sections"]:
            if s["id"] == ref or (isinstance(ref, str) and s["name"].lower() == ref.lower()):
                return s
        have = ", ".join(f"{s['name']!r} ({s['id']})" for s in self.data["sections"]) or "no sections"
        raise Refused(field, ref, f"an existing section: {have}")

    # devices -----------------------------------------------------------------------------------
    def check_params(self, device: str, params: Any, field: str) -> dict:
        """Validate a params patch against the device's table; ``None`` values remove keys."""
        if not isinstance(params, dict):
            raise Refused(field, params, "an object of param: value")
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
                    raise Refused(where, value, f"a param of {device}: "
                                   + ", ".join(p.key for p in spec.params)) from None
                try:
                    out[key] = param.check(value)
                except (DeviceError, OverflowError):
                    raise Refused(where, value, f"{device} {key}: {param.allowed()}") from None
            elif defined is not None:
                out[key] = check_defined_param(defined, key, value, where)
            else:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not finite(value):
                    raise Refused(where, value, "a finite number")
                out[key] = float(value)
        return out


def check_defined_param(defn: dict, key: str, value: Any, where: str) -> float:
    for p in defn["params"]:
        if p["key"] == key:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    p["min"] - 1e-9 <= value <= p["max"] + 1e-9):
                raise Refused(where, value, f"{p['min']:g}..{p['max']:g} {p.get('unit', '')}".rstrip())
            return float(value)
    keys = ", ".join(p["key"] for p in defn["params"]) or "none"
    raise Refused(where, value, f"a param declared by {defn['id']}: {keys}")


def merge_params(target: dict, patch: dict) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value


# --- field readers ------------------------------------------------------------------------------

def number(op_: dict, field: str, *, lo: float | None = None, hi: float | None = None, unit: str = "",
         default: Any = ..., gt: bool = False) -> float:
    if field not in op_ or op_[field] is None:
        if default is ...:
            raise Refused(field, None, "a number (required)")
        return default
    v = op_[field]
    if hi is None and lo is not None:
        rng = f">= {lo:g} {unit}".strip()
    else:
        rng = f"{'' if lo is None else f'{lo:g}'}..{'' if hi is None else f'{hi:g}'} {unit}".strip()
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not finite(v):
        raise Refused(field, v, f"a finite number {rng}".strip())
    if (lo is not None and (v <= lo if gt else v < lo)) or (hi is not None and v > hi):
        raise Refused(field, v, rng if not gt else f"more than {lo:g} {unit}".strip())
    return float(v)


def finite(v: int | float) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an int too large for a float
        return False


def obj_field(op_: dict, field: str, *, required: bool = True) -> dict:
    v = op_.get(field)
    if v is None and not required:
        return {}
    if not isinstance(v, dict):
        raise Refused(field, v, "an object")
    return v


def only_fields(obj: dict, field: str, allowed: set[str]) -> None:
    for key in obj:
        if key not in allowed:
            raise Refused(f"{field}.{key}", obj[key], f"one of the fields {', '.join(sorted(allowed))}")


def number_field(obj: dict, key: str, field: str, lo: float, hi: float, unit: str) -> float:
    try:
        return number(obj, key, lo=lo, hi=hi, unit=unit)
    except Refused as r:
        raise Refused(f"{field}.{key}", r.value, r.allowed) from None


def bool_field(obj: dict, key: str, field: str) -> bool:
    if not isinstance(obj[key], bool):
        raise Refused(f"{field}.{key}", obj[key], "true or false")
    return obj[key]


def str_field(obj: dict, key: str, field: str) -> str:
    if not isinstance(obj[key], str):
        raise Refused(f"{field}.{key}", obj[key], "a string")
    return obj[key]


def read_notes(tx: Transaction, op_: dict, field: str = "notes", *, grid_ok: bool = True) -> list[dict]:
    """Notes given as a list of {p,t,d,v}, a text string, or (where allowed) ``grid``."""
    if grid_ok and op_.get("grid") is not None:
        grid = op_["grid"]
        if not isinstance(grid, dict):
            raise Refused("grid", grid, "an object of row: pattern, e.g. {\"kick\": \"X...X...\"}")
        step = number(op_, "step", lo=0, unit="beats", default=0.25, gt=True)
        try:
            return parse_grid(grid, step_beats=step)
        except NotationError as exc:
            raise Refused("grid", grid, str(exc)) from None
    raw = op_.get(field)
    if isinstance(raw, str):
        try:
            return parse_notes_text(raw)
        except NotationError as exc:
            raise Refused(field, raw, str(exc)) from None
    if not isinstance(raw, list):
        raise Refused(field, raw, "a list of {p, t, d, v} or a text like 'C4@0:0.5*0.8 E4@1:1'")
    out = []
    for i, n in enumerate(raw):
        where = f"{field}[{i}]"
        if isinstance(n, str):
            try:
                out.extend(parse_notes_text(n))
            except NotationError as exc:
                raise Refused(where, n, str(exc)) from None
            continue
        if not isinstance(n, dict):
            raise Refused(where, n, "an object {p, t, d, v}")
        only_fields(n, where, {"p", "t", "d", "v", "id"})
        p = n.get("p")
        if isinstance(p, str):
            try:
                p = parse_pitch(p)
            except NotationError as exc:
                raise Refused(f"{where}.p", n.get("p"), str(exc)) from None
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 127:
            raise Refused(f"{where}.p", n.get("p"), "a MIDI pitch 0..127 (or a name like C4)")
        note = {"p": p, "t": number_field(n, "t", where, 0, None, "beats"),
                "d": number_field(n, "d", where, 0, None, "beats"),
                "v": number_field(n, "v", where, 0, 1, "") if "v" in n else 0.8}
        if note["d"] <= 0:
            raise Refused(f"{where}.d", n["d"], "more than 0 beats")
        if "id" in n and n["id"] is not None:
            note["id"] = str_field(n, "id", where)
        out.append(note)
    return out


def add_notes(tx: Transaction, clip: dict, notes: list[dict]) -> None:
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


def index_field(op_: dict, length: int, field: str = "index") -> int:
    if op_.get(field) is None:
        return length
    v = op_[field]
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= length:
        raise Refused(field, v, f"a whole number 0..{length}")
    return v
