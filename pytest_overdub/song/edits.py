"""One transaction's working state and the readers of op fields, for :mod:`.ops`.

An op handler reads its fields through these readers and edits :class:`Transaction.data` (a plain copy of
the song's JSON). A reader that finds a bad value raises :class:`Refused` with the field's name (a path
inside the op, like ``patch.gain``), the value, and what was allowed; :func:`.ops.apply_ops` adds the
transaction and op index and turns it into an :class:`~pytest_overdub.errors.OpError`.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Iterator

from pydantic import BaseModel, ValidationError

from .limits import LIMITS
from .model import AutoPoint, Song, format_location
from .notation import GRID_VELOCITY, NotationError, parse_grid, parse_notes_text, parse_pitch
from .params import ParamRefused, device_spec, read_param

_NEW_ID = re.compile(r"^(t|c|fx|s|n)_x([0-9]{4,})$")


note_key = itemgetter("t", "p")  # notes are kept sorted by (t, p), stably


def resort_moved(notes: list[dict], keys_before: dict[int, tuple]) -> None:
    """Put the notes whose (t, p) changed (``keys_before``: id() -> old key) where a stable sort of
    ``notes`` (sorted before the change) puts them, without sorting: a stable sort orders by (key, old
    position), so a moved note goes before the notes it now ties with if its key grew (they all lay after
    it), after them if it shrank, and moved notes that tie keep their old order. O(moved x log n)."""
    def old_key(n: dict) -> tuple:
        return keys_before.get(id(n)) or note_key(n)

    moved = []
    for k0 in sorted(set(keys_before.values())):
        lo = bisect_left(notes, k0, key=old_key)
        hi = bisect_right(notes, k0, key=old_key)
        moved += [(j, notes[j]) for j in range(lo, hi) if id(notes[j]) in keys_before]
    moved.sort(key=lambda x: x[0])
    for j, _ in reversed(moved):
        del notes[j]
    side: dict[int, int] = {}  # id() of a placed moved note -> -1 before its ties, +1 after them

    def placed_key(n: dict) -> tuple:
        return note_key(n), side.get(id(n), 0)

    for _, m in moved:
        side[id(m)] = -1 if note_key(m) > keys_before[id(m)] else 1
        notes.insert(bisect_right(notes, placed_key(m), key=placed_key), m)


@dataclass
class _ClipWork:
    """What a transaction has deferred for one clip: a sort, removed notes still in the list, an index."""

    clip: dict  # held, so the id() keying this entry cannot be reused while it lives
    unsorted: bool = False
    dead: set[int] = field(default_factory=set)  # id() of removed notes not yet dropped from the list
    index: dict[str, list[dict]] | None = None  # live notes by note id, in list order when built


def _ids_in(node: Any) -> Iterator[str]:
    """Every non-empty id in a track, insert, clip, section or note dict, or a dict of lists of them."""
    if isinstance(node, list):
        for x in node:
            yield from _ids_in(x)
        return
    if node.get("id"):
        yield node["id"]
    for key in ("tracks", "inserts", "clips", "sections", "notes"):
        if key in node:
            yield from _ids_in(node[key])


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
    """A mutable copy of the song's data plus the refs made so far in this transaction.

    Applying an op costs what the op touches, not the song's size: the ids in use and the counts the
    :mod:`.limits` bound are kept up to date as ops add and remove things; a clip's notes are found by
    id through an index, removed ones dropped from the list and the list sorted when the transaction
    ends or before an op edits existing notes (:meth:`flush`), not after every op. The result is the
    one sorting and filtering after every op would give.
    """

    def __init__(self, song: Song):
        self.data: dict[str, Any] = song.model_dump(mode="json", by_alias=True)
        self.refs: dict[str, str] = {}
        self._used: Counter[str] | None = None
        self._next: dict[str, int] = {}  # prefix -> every {prefix}_x{n:04d} with n below it is in use
        self._work: dict[int, _ClipWork] = {}  # by id() of the clip
        tracks = self.data["tracks"]
        self.n_clips = sum(len(tr["clips"]) for tr in tracks)
        self.n_notes = sum(len(c["notes"]) for tr in tracks for c in tr["clips"])
        self.end_beats = self.content_end_beats()  # never below the true end (raised as spans grow)

    def content_end_beats(self) -> float:
        """The latest clip or section end now, in beats (O(clips))."""
        spans = [c for tr in self.data["tracks"] for c in tr["clips"]] + self.data["sections"]
        return max((x["start"] + x["length"] for x in spans), default=0.0)

    # ids ---------------------------------------------------------------------------------------
    def used_ids(self) -> Counter[str]:
        if self._used is None:
            self._used = Counter(_ids_in({"tracks": self.data["tracks"], "inserts": self.data["master"]["inserts"],
                                          "sections": self.data["sections"]}))
        return self._used

    def claim(self, ident: str) -> str:
        self.used_ids()[ident] += 1
        return ident

    def forget(self, node: Any) -> None:
        """Free the ids of a removed track, insert, clip, section or note (and of all it holds)."""
        used = self.used_ids()
        for ident in _ids_in(node):
            used[ident] -= 1
            if used[ident] <= 0:
                del used[ident]
                m = _NEW_ID.match(ident)
                if m and ident == f"{m[1]}_x{int(m[2]):04d}":
                    self._next[m[1]] = min(self._next.get(m[1], 0), int(m[2]))

    def fresh_id(self, spec: dict, field: str, prefix: str) -> str:
        """``spec["id"]`` if given (a string not used yet), else a new id with ``prefix``; either is
        claimed."""
        ident = spec.get("id")
        if ident is None or ident == "":
            return self.new_id(prefix)
        if not isinstance(ident, str):
            raise Refused(f"{field}.id", ident, "a string id")
        if ident in self.used_ids():
            raise Refused(f"{field}.id", ident, "an id not already used in the song")
        return self.claim(ident)

    def new_id(self, prefix: str) -> str:
        """The first unused ``{prefix}_x0000``, ``{prefix}_x0001``, ...; claimed."""
        used = self.used_ids()
        n = self._next.get(prefix, 0)
        while f"{prefix}_x{n:04d}" in used:
            n += 1
        self._next[prefix] = n + 1
        return self.claim(f"{prefix}_x{n:04d}")

    # notes -------------------------------------------------------------------------------------
    def _clip_work(self, clip: dict) -> _ClipWork:
        work = self._work.get(id(clip))
        if work is None:
            work = self._work[id(clip)] = _ClipWork(clip)
        return work

    def live_notes(self, clip: dict) -> int:
        work = self._work.get(id(clip))
        return len(clip["notes"]) - (len(work.dead) if work else 0)

    def notes_by_id(self, clip: dict) -> dict[str, list[dict]]:
        """The clip's live notes by id (a list: a loaded song may repeat a note id)."""
        work = self._clip_work(clip)
        if work.index is None:
            work.index = {}
            for n in clip["notes"]:
                if id(n) not in work.dead:
                    work.index.setdefault(n["id"], []).append(n)
        return work.index

    def appended(self, clip: dict, notes: list[dict]) -> None:
        work = self._clip_work(clip)
        work.unsorted = True
        if work.index is not None:
            for n in notes:
                work.index.setdefault(n["id"], []).append(n)

    def changed_order(self, clip: dict) -> None:
        self._clip_work(clip).unsorted = True

    def remove_notes(self, clip: dict, ids: list[str]) -> None:
        """Remove every live note with one of ``ids`` (its id is freed)."""
        index, work = self.notes_by_id(clip), self._clip_work(clip)
        gone = [n for nid in dict.fromkeys(ids) for n in index.pop(nid, [])]
        work.dead.update(id(n) for n in gone)
        self.forget(gone)
        self.n_notes -= len(gone)

    def flush(self, clip: dict | None = None) -> None:
        """Drop removed notes from the list and sort it by (t, p), stably, for ``clip`` (None: every clip
        with deferred work)."""
        works = list(self._work.values()) if clip is None else [self._work.get(id(clip))]
        for work in works:
            if work is None:
                continue
            notes = work.clip["notes"]
            if work.dead:
                notes[:] = [n for n in notes if id(n) not in work.dead]
                work.dead.clear()
            if work.unsorted:
                notes.sort(key=note_key)
                work.unsorted = False

    def dropped(self, clips: list[dict]) -> None:
        """Clips whose notes are about to be discarded (clip or track removed, notes replaced): their live
        notes are freed and counted out."""
        for clip in clips:
            self.flush(clip)
            self._work.pop(id(clip), None)
            self.forget(clip["notes"])
            self.n_notes -= len(clip["notes"])

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
        spec = device_spec(device, self.data["devices"])
        out = {}
        for key, value in params.items():
            try:
                out[key] = None if value is None else read_param(spec, device, key, value)
            except ParamRefused as r:
                raise Refused(f"{field}.{key}", value, r.allowed) from None
        return out

    def check_auto(self, device: str, auto: Any, field: str) -> dict:
        """An ``auto`` object ``{param: [{t, v}, ...]}`` checked point by point; returned as given."""
        if not isinstance(auto, dict):
            raise Refused(field, auto, "an object of param: [{t, v}, ...]")
        for key, points in auto.items():
            if not isinstance(points, list) or len(points) > LIMITS.points_per_param:
                raise Refused(f"{field}.{key}", points, f"a list of at most {LIMITS.points_per_param} "
                                                        f"points {{t, v}} (limit points_per_param)")
            for k, pt in enumerate(points):
                validated(AutoPoint, pt, f"{field}.{key}[{k}]")
                self.check_params(device, {key: pt["v"]}, f"{field}.{key}[{k}].v")
        return auto


def validated(model: type[BaseModel], value: Any, field: str) -> None:
    """Refuse ``value`` (what an op wrote at ``field``) unless it is a valid ``model``."""
    try:
        model.model_validate(value)
    except ValidationError as err:
        e = err.errors(include_url=False)[0]
        loc = format_location(tuple(e["loc"])) if e["loc"] else ""
        msg = e["msg"].removeprefix("Value error, ").removeprefix("Input should be ")
        if e["type"] == "missing":
            msg = "a value (this field is required)"
        raise Refused(f"{field}.{loc}" if loc else field, e.get("input"), msg) from None


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
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not finite(v):
        raise Refused(field, v, f"a finite number {_range(lo, hi, unit)}".strip())
    if (lo is not None and (v <= lo if gt else v < lo)) or (hi is not None and v > hi):
        raise Refused(field, v, _range(lo, hi, unit) if not gt else f"more than {lo:g} {unit}".strip())
    return float(v)


def _range(lo: float | None, hi: float | None, unit: str) -> str:
    if hi is None and lo is not None:
        return f">= {lo:g} {unit}".strip()
    return f"{'' if lo is None else f'{lo:g}'}..{'' if hi is None else f'{hi:g}'} {unit}".strip()


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
    """Notes given as a list of {p,t,d,v}, a text string, or (where allowed) ``grid``; more than a clip may
    hold are refused before they are read."""
    most = _most_notes(op_, field, grid_ok)
    if most > LIMITS.notes_per_clip:
        raise Refused("grid" if grid_ok and op_.get("grid") is not None else field, f"up to {most} notes",
                      f"at most {LIMITS.notes_per_clip} notes in a clip (limit notes_per_clip)")
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


def _most_notes(op_: dict, field: str, grid_ok: bool) -> int:
    """An upper bound on the notes an op's ``grid`` or ``notes`` holds, counted without reading them."""
    if grid_ok and isinstance(op_.get("grid"), dict):
        return sum(sum(row.count(c) for c in GRID_VELOCITY) for row in op_["grid"].values() if isinstance(row, str))
    raw = op_.get(field)
    if isinstance(raw, str):
        return raw.count("@")
    if isinstance(raw, list):
        return sum(n.count("@") if isinstance(n, str) else 1 for n in raw)
    return 0


def add_notes(tx: Transaction, clip: dict, notes: list[dict]) -> None:
    """Append ``notes`` to ``clip`` (ids kept where free, else new), within the notes limits."""
    have = tx.live_notes(clip)
    if have + len(notes) > LIMITS.notes_per_clip:
        raise Refused("notes", f"{len(notes)} notes", f"at most {LIMITS.notes_per_clip} notes in a clip (limit "
                                                       f"notes_per_clip); clip {clip['id']} has {have}")
    if tx.n_notes + len(notes) > LIMITS.notes:
        raise Refused("notes", f"{len(notes)} notes", f"at most {LIMITS.notes} notes in the song (limit notes); "
                                                       f"it has {tx.n_notes}")
    used = tx.used_ids()
    added = []
    for note in notes:
        note = {"p": note["p"], "t": note["t"], "d": note["d"], "v": note["v"], "id": note.get("id", "")}
        note["id"] = tx.new_id("n") if not note["id"] or note["id"] in used else tx.claim(note["id"])
        added.append(note)
    clip["notes"].extend(added)
    tx.n_notes += len(added)
    tx.appended(clip, added)


def index_field(op_: dict, length: int, field: str = "index") -> int:
    if op_.get(field) is None:
        return length
    v = op_[field]
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= length:
        raise Refused(field, v, f"a whole number 0..{length}")
    return v
