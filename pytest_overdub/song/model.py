"""The ``overdub/0`` song format as frozen pydantic models (docs/formats.md).

Field names are the Overdub studio's, so songs exported from the studio load unchanged. Conventions:

* Times are in beats (``start``, ``length``, note ``t`` and ``d``), 0-based; tempo in bpm; gains in dB.
* A note's ``t`` is relative to its clip's start; a note with ``t >= clip.length`` is not heard, and a
  note's heard duration is ``min(d, length - t)``.
* Unknown fields are an error everywhere except inside ``meta``; ``format``, ``id``, ``tempo`` and
  ``tracks`` (and each track's ``id`` and ``name``) are required, never defaulted.
* Numbers are strict, as in ops: a JSON number (an integer where an integer is meant), never a string
  like ``"-6"`` or a boolean; booleans are ``true``/``false``, never ``0``/``1``. Device params are read
  by :meth:`~pytest_overdub.devices.params.Param.check`, the same reading ops use (:mod:`.params`).
* Songs are bounded (:mod:`.limits`): a song over a limit is refused when it is loaded.
* :func:`load_song` collects every problem in a file into one :class:`SongError` whose lines name the
  file, the JSON path (``tracks[2].clips[0].notes[5].v``), the value and what was allowed.
* :func:`dump_song` writes canonical JSON (field order of the models, 2-space indent, trailing newline),
  so our own files round-trip byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, field_validator, model_validator

from ..devices.params import DeviceSpec, Param
from ..errors import SongError

FORMAT = "overdub/0"
DEVICE_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{1,63}$"
KERNEL_MAX_BYTES = 256 * 1024


#: Strict scalars: no string, bool or float-to-int coercion (lists still load as tuples).
Num = Annotated[float, Strict()]
Int = Annotated[int, Strict()]
Bool = Annotated[bool, Strict()]
ParamValue = Annotated[float, Strict()] | str  # a string only as a switch's option name (checked on load)


class _Model(BaseModel):
    # allow_inf_nan=False: JSON has no inf or NaN, and a dumped song must load back the same.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class AutoPoint(_Model):
    """An automation point: at beat ``t`` the param is ``v``; linear between points."""

    t: Num = Field(ge=0)
    v: Num


Auto = dict[str, tuple[AutoPoint, ...]]


class Instrument(_Model):
    device: str
    params: dict[str, ParamValue] = Field(default_factory=dict)
    auto: Auto = Field(default_factory=dict)


class Insert(_Model):
    id: str = Field(min_length=1)
    device: str
    on: Bool = True
    params: dict[str, ParamValue] = Field(default_factory=dict)
    auto: Auto = Field(default_factory=dict)


class Note(_Model):
    """``p`` MIDI pitch, ``t`` beats from the clip start, ``d`` beats, ``v`` velocity 0..1."""

    p: Int = Field(ge=0, le=127)
    t: Num = Field(ge=0)
    d: Num = Field(gt=0)
    v: Num = Field(default=0.8, ge=0, le=1)
    id: str = Field(default="", description="stable note id; empty ids are filled by stable renaming")


class Clip(_Model):
    id: str = Field(min_length=1)
    kind: Literal["notes", "audio"] = "notes"
    start: Num = Field(ge=0)
    length: Num = Field(ge=0.25)
    name: str = ""
    notes: tuple[Note, ...] = ()
    gain: Num = Field(default=0.0, ge=-96, le=24, description="clip gain, dB")
    mute: Bool = False
    asset: str | None = Field(default=None, description="audio clips: the id of an entry in song.assets")
    offset: Num = Field(default=0.0, ge=0, description="audio clips: seconds into the asset")


class Track(_Model):
    id: str = Field(min_length=1)
    name: str
    color: str = ""
    kind: Literal["instrument", "audio"] = "instrument"
    instrument: Instrument | None = None
    inserts: tuple[Insert, ...] = ()
    clips: tuple[Clip, ...] = ()
    gain: Num = Field(default=0.0, ge=-96, le=24, description="dB")
    pan: Num = Field(default=0.0, ge=-1, le=1, description="balance, -1 left .. 1 right")
    mute: Bool = False
    solo: Bool = False
    arm: Bool = False


class Section(_Model):
    id: str = Field(min_length=1)
    name: str = ""
    start: Num = Field(ge=0)
    length: Num = Field(gt=0)


class Key(_Model):
    root: Literal["C", "C#", "Db", "D", "D#", "Eb", "E", "F", "F#", "Gb", "G", "G#", "Ab", "A", "A#",
                  "Bb", "B"]
    scale: Literal["major", "minor", "dorian", "phrygian", "lydian", "mixolydian", "locrian",
                   "harmonicMinor", "melodicMinor", "majorPentatonic", "minorPentatonic", "blues",
                   "chromatic"]


class Loop(_Model):
    on: Bool = False
    start: Num = Field(default=0.0, ge=0)
    length: Num = Field(default=16.0, gt=0)


class Master(_Model):
    gain: Num = Field(default=0.0, ge=-96, le=24, description="dB")
    inserts: tuple[Insert, ...] = ()
    clip: Literal["soft", "clean"] = "soft"


class DeviceParam(_Model):
    key: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
    label: str = ""
    min: Num = 0.0
    max: Num = 1.0
    # ``def`` is a Python keyword: the JSON name is kept through the alias.
    default: Num = Field(default=0.0, alias="def")
    unit: str = ""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, allow_inf_nan=False)

    @model_validator(mode="after")
    def _range(self) -> "DeviceParam":
        if not self.min <= self.default <= self.max:
            raise ValueError(f"def {self.default:g} is outside [min {self.min:g}, max {self.max:g}]")
        return self


class DeviceDef(_Model):
    """A song-defined device: Python source run by the renderer (sandboxed)."""

    id: str = Field(pattern=DEVICE_ID_PATTERN)
    kind: Literal["effect", "instrument"]
    name: str = ""
    kernel: str = Field(max_length=KERNEL_MAX_BYTES)
    params: tuple[DeviceParam, ...] = ()
    version: Int = Field(default=1, ge=1)

    @field_validator("id")
    @classmethod
    def _not_house(cls, v: str) -> str:
        if v.startswith("core."):
            raise ValueError("ids starting with 'core.' are reserved for house devices")
        return v

    @property
    def spec(self) -> DeviceSpec:
        """The parameter table, as house devices have one (ops, loading and the renderer read it)."""
        params = tuple(Param(key=p.key, label=p.label or p.key, min=p.min, max=p.max, default=p.default,
                             unit=p.unit) for p in self.params)
        return DeviceSpec(self.id, self.kind, self.name or self.id, "song-defined device", params)


class Asset(_Model):
    """Embedded audio: ``data`` is base64 of a WAV or FLAC file."""

    kind: Literal["audio"] = "audio"
    name: str = ""
    mime: Literal["audio/wav", "audio/flac"] = "audio/wav"
    data: str


class Song(_Model):
    format: Literal["overdub/0"]
    id: str = Field(min_length=1)
    title: str = ""
    tempo: Num = Field(ge=20, le=400, description="bpm")
    meter: tuple[Annotated[Int, Field(ge=1, le=32)], Annotated[Int, Field(ge=1, le=32)]] = (4, 4)
    key: Key | None = None
    loop: Loop | None = None
    tracks: tuple[Track, ...]
    sections: tuple[Section, ...] = ()
    devices: dict[str, DeviceDef] = Field(default_factory=dict)
    assets: dict[str, Asset] = Field(default_factory=dict)
    master: Master = Field(default_factory=Master)
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_ids(self) -> "Song":
        seen: dict[str, str] = {}
        for i, tr in enumerate(self.tracks):
            _claim(seen, tr.id, f"tracks[{i}].id")
            for j, ins in enumerate(tr.inserts):
                _claim(seen, ins.id, f"tracks[{i}].inserts[{j}].id")
            for j, c in enumerate(tr.clips):
                _claim(seen, c.id, f"tracks[{i}].clips[{j}].id")
        for j, ins in enumerate(self.master.inserts):
            _claim(seen, ins.id, f"master.inserts[{j}].id")
        for j, s in enumerate(self.sections):
            _claim(seen, s.id, f"sections[{j}].id")
        for key, d in self.devices.items():
            if key != d.id:
                raise ValueError(f"devices.{key}: the key must equal the device's id {d.id!r}")
        return self

    # convenience lookups -------------------------------------------------------------------------
    def track(self, ref: str) -> Track | None:
        """A track by id, or by name (case-insensitive)."""
        for tr in self.tracks:
            if tr.id == ref:
                return tr
        low = ref.lower()
        for tr in self.tracks:
            if tr.name.lower() == low:
                return tr
        return None

    def section(self, ref: str) -> Section | None:
        for s in self.sections:
            if s.id == ref:
                return s
        low = ref.lower()
        for s in self.sections:
            if s.name.lower() == low:
                return s
        return None

    @property
    def beats_per_bar(self) -> float:
        return self.meter[0] * 4.0 / self.meter[1]


def _claim(seen: dict[str, str], ident: str, where: str) -> None:
    if ident in seen:
        raise ValueError(f"id {ident!r} at {where} is already used at {seen[ident]}")
    seen[ident] = where


# --- loading and saving ---------------------------------------------------------------------------

def format_location(loc: tuple[Any, ...]) -> str:
    """``('tracks', 2, 'clips', 0)`` -> ``tracks[2].clips[0]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def describe_validation_error(err: ValidationError, *, source: str) -> str:
    """Every problem of a pydantic error as one line each: path, value, what was allowed."""
    lines = [f"{source}: {err.error_count()} problem(s)"]
    for e in err.errors(include_url=False):
        loc = format_location(tuple(p for p in e["loc"] if not _is_union_tag(p)))
        value = e.get("input")
        shown = _shown(value) if not isinstance(value, (dict, list)) else type(value).__name__
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown field (not part of overdub/0; free-form data belongs in meta)"
        elif e["type"] == "missing":
            lines.append(f"  {loc}: missing; this field is required")
            continue
        lines.append(f"  {loc} = {shown}: {msg}")
    return "\n".join(lines)


def _is_union_tag(part: Any) -> bool:
    # pydantic inserts the chosen union member / function name into locations; they are noise for users.
    return isinstance(part, str) and (part.startswith("function-") or part in {"float", "str", "int"})


def song_from_data(data: Any, *, source: str = "<song>") -> Song:
    """Validate a parsed JSON value as a Song (fields, device params, :mod:`.limits`), raising one
    :class:`SongError` listing every problem."""
    from .limits import LimitError, problem_lines, raw_problems

    if isinstance(data, dict) and data.get("format", FORMAT) != FORMAT:
        raise SongError(f"{source}: format = {json.dumps(data.get('format'))}: expected \"{FORMAT}\"")
    too_big = raw_problems(data)
    if too_big:
        raise LimitError(problem_lines(source, too_big))
    try:
        song = Song.model_validate(data)
    except ValidationError as err:
        raise SongError(describe_validation_error(err, source=source)) from None
    check_song(song, source=source)
    return song


def check_song(song: Song, *, source: str) -> None:
    """Raise :class:`SongError` for device params the song's devices refuse or limits it exceeds."""
    from .limits import LimitError, problem_lines, song_problems
    from .params import param_problems

    bad = [f"{where} = {_shown(value)}: allowed {allowed}" for where, value, allowed in param_problems(song)]
    over = list(song_problems(song))
    if bad or over:
        raise (SongError if bad else LimitError)(problem_lines(source, bad + over))


def _shown(value: Any) -> str:
    shown = json.dumps(value, default=str)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def read_json(path: str | Path, *, error: type[Exception] = SongError) -> Any:
    """Parse a JSON file, turning I/O and syntax problems into ``error`` naming file, line and column;
    a file over the ``file_bytes`` limit is refused unread."""
    from .limits import check_file_size

    p = Path(path)
    try:
        check_file_size(p.stat().st_size, source=str(p), error=error)
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise error(f"{p}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{p}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None


def load_song(path: str | Path) -> Song:
    return song_from_data(read_json(path), source=str(path))


def song_to_data(song: Song) -> dict[str, Any]:
    return song.model_dump(mode="json", by_alias=True)


def dumps_song(song: Song) -> str:
    return json.dumps(song_to_data(song), indent=2, ensure_ascii=False) + "\n"


def dump_song(song: Song, path: str | Path) -> None:
    Path(path).write_text(dumps_song(song), encoding="utf-8")
