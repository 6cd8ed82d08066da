"""JSON Schemas generated from the models, so agents and editors can validate files.

``overdub schema song|ops|task`` prints them. The ops schema is a discriminated union on ``type``: one object
schema per op in :data:`.ops.OPS` (the same field names, required or optional as the op registers them),
``additionalProperties: false`` at every level the op code refuses unknown fields; an optional op field may
be ``null`` (read as absent), a required one may not. Its ranges are read from the song models
(:mod:`.model`: gain, pan, tempo, meter, clip length, note fields, sections, keys, loops, song-defined
devices) and :data:`.limits.LIMITS` (the longest lists), never retyped, so the schema and the code cannot
drift apart. Each op's ``description`` is :data:`OP_DESCRIPTIONS`, which ``docs/ops.md`` repeats verbatim (a
test holds them equal). Device params depend on the device, so they are typed as an object of numbers (or a
switch's option name, or ``null`` to remove a key); each device's ranges are what ``overdub devices``
prints. The op code stays the authority on what needs the song (names that exist, limits over the whole
song, a device's own param ranges). A whole float like ``2.0`` is an integer to JSON Schema but not to the
op code, which wants an integer written as one (``p``, ``meter``, ``index``).
"""

from __future__ import annotations

import json
from typing import Any

#: One sentence per op; the schema's ``description`` and the first line of the op's section in docs/ops.md.
OP_DESCRIPTIONS = {
    "project.set": "Set the song's title, tempo, meter, key or loop.",
    "master.set": "Set the master's gain or its clip mode.",
    "track.add": "Add a track, with its instrument, inserts and clips if given.",
    "track.remove": "Remove a track and everything on it.",
    "track.move": "Move a track to a position in the track list.",
    "track.set": "Set a track's name, color, gain, pan, mute, solo or arm.",
    "instrument.set": "Set a track's instrument device, or merge params into its current one.",
    "insert.add": "Add an insert (effect) to a track's chain or the master's.",
    "insert.remove": "Remove an insert from a chain.",
    "insert.move": "Move an insert to a position in its chain.",
    "insert.set": "Turn an insert on or off, or merge params into it.",
    "clip.add": "Add a clip to a track, with its notes if given.",
    "clip.remove": "Remove a clip from a track.",
    "clip.set": "Set a clip's start, length, name, gain or mute.",
    "clip.move": "Move a clip to another start, another track, or both.",
    "notes.add": "Add notes (or a drum grid) to a clip.",
    "notes.remove": "Remove notes from a clip by id.",
    "notes.set": "Change notes of a clip, each named by its id.",
    "notes.replace": "Replace all the notes of a clip.",
    "section.add": "Add a section (a named span of beats).",
    "section.set": "Set a section's name, start or length.",
    "section.remove": "Remove a section.",
    "device.define": "Define (or redefine) a song-defined device: a Python kernel and its params.",
    "device.remove": "Remove a song-defined device.",
    "auto.write": "Write automation points for one param of an instrument or insert.",
    "auto.clear": "Clear automation of one param, or of every param of a device, between two beats.",
}

PARAMS_NOTE = "each device's params and ranges are what `overdub devices` prints"


class _Builder:
    """Field schemas read from the song models; their ``$defs`` are collected for the top level."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def model(self, model: Any) -> dict[str, Any]:
        schema = dict(model.model_json_schema(by_alias=True))
        self.defs.update(schema.pop("$defs", {}))
        return schema

    def field(self, model: Any, name: str, **extra: Any) -> dict[str, Any]:
        prop = {k: v for k, v in self.model(model)["properties"][name].items() if k not in ("title", "default")}
        return {**prop, **extra}

    def patch(self, model: Any, names: tuple[str, ...], **overrides: Any) -> dict[str, Any]:
        props = {n: overrides.get(n) or self.field(model, n) for n in names}
        return _obj(props)


def _obj(props: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return {**out, **extra}


STRING = {"type": "string"}
TRACK_REF = {"type": "string", "description": "a track id or name (case-insensitive), or \"$ref\""}
CHAIN_REF = {"type": "string", "description": "a track id or name, \"master\" for the master's chain, or \"$ref\""}
INSERT_REF = {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}],
              "description": "an insert id, a device id used once in the chain, its index, or \"$ref\""}
CLIP_REF = {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}],
            "description": "a clip id, name (case-insensitive) or index on its track, or \"$ref\""}
SECTION_REF = {"type": "string", "description": "a section id or name, or \"$ref\""}
INDEX = {"type": "integer", "minimum": 0, "description": "a position, 0 = first (default: last)"}
REF = {"type": "string", "description": "a name later ops in this transaction use as \"$name\""}
BEATS = {"type": "number", "minimum": 0, "description": "beats"}
PARAMS = {"type": "object", "description": f"device params: numbers (a switch also takes its option's name; "
                                          f"null removes a key); {PARAMS_NOTE}",
          "additionalProperties": {"type": ["number", "string", "null"]}}


def _notes(b: _Builder) -> dict[str, Any]:
    from .limits import LIMITS
    from .model import Note

    from .notation import _PITCH  # the text format's own pitch reader: a name, or a MIDI number as text

    name = {"type": "string", "pattern": rf"^\s*([0-9]{{1,3}}|{_PITCH.pattern[1:-1]})\s*$",
            "description": "a note name like C4, F#3, Bb2 (MIDI 0..127)"}
    pitch = {"anyOf": [b.field(Note, "p"), name]}
    note = _obj({"p": pitch, "t": b.field(Note, "t", description="beats from the clip's start"),
                 "d": b.field(Note, "d", description="beats"), "v": b.field(Note, "v", description="velocity"),
                 "id": {"type": ["string", "null"]}}, ("p", "t", "d"))
    text = {"type": "string", "description": "text notes like \"A3@0:2*0.8 C4@2:2\" (pitch@beat:length*velocity)"}
    return {"anyOf": [text, {"type": "array", "items": {"anyOf": [note, text]}, "maxItems": LIMITS.notes_per_clip}]}


def _grid() -> dict[str, Any]:
    return {"grid": {"type": "object", "additionalProperties": {"type": "string"},
                     "description": "a drum grid, row: pattern, e.g. {\"kick\": \"X...X...\"}"},
            "step": {"type": "number", "exclusiveMinimum": 0, "description": "beats per grid step (default 0.25)"}}


def _fields(b: _Builder) -> dict[str, dict[str, Any]]:
    """Each op's field schemas, by op type (the op table says which are required)."""
    from .limits import LIMITS
    from .model import Clip, DeviceDef, Instrument, Key, Loop, Master, Section, Song, Track

    auto = b.field(Instrument, "auto", description=f"param: [{{t, v}}]; {PARAMS_NOTE}")
    insert = _obj({"id": STRING, "device": STRING, "params": PARAMS, "on": {"type": "boolean"}, "auto": auto},
                  ("device",))
    notes = _notes(b)
    clip = _obj({"id": STRING, "kind": b.field(Clip, "kind"), "start": b.field(Clip, "start", description="beats"),
                 "length": b.field(Clip, "length", description="beats"), "name": STRING, "notes": notes, **_grid(),
                 "gain": b.field(Clip, "gain"), "mute": b.field(Clip, "mute"), "asset": b.field(Clip, "asset"),
                 "offset": b.field(Clip, "offset")}, ("start", "length"))
    instrument = {"anyOf": [_obj({"device": STRING, "params": PARAMS, "auto": auto}, ("device",)),
                            {"type": "null"}]}
    track = _obj({"id": STRING, **b.patch(Track, ("name", "color", "kind"))["properties"],
                  "instrument": instrument,
                  "inserts": {"type": "array", "items": insert, "maxItems": LIMITS.inserts_per_chain},
                  "clips": {"type": "array", "items": clip, "maxItems": LIMITS.clips},
                  **b.patch(Track, ("gain", "pan", "mute", "solo", "arm"))["properties"]})
    track_patch = b.patch(Track, ("name", "color", "gain", "pan", "mute", "solo", "arm"))
    nullable = {k: {"anyOf": [b.model(m), {"type": "null"}]} for k, m in (("key", Key), ("loop", Loop))}
    project = b.patch(Song, ("title", "tempo", "meter"))
    project["properties"].update(nullable)
    edit = _obj({"id": STRING, **{k: v for k, v in notes["anyOf"][1]["items"]["anyOf"][0]["properties"].items()
                                  if k != "id"}}, ("id",))
    device = b.model(DeviceDef)
    device["description"] = "a song-defined device, as in song files (docs/formats.md)"
    # ids starting with "core." are reserved for house devices (DeviceDef's own validator, not in its schema)
    device["properties"]["id"] = {**device["properties"]["id"], "not": {"pattern": "^core\\."}}
    points = {"anyOf": [{"type": "string", "description": "\"beat:value\" pairs like \"0:-60 16:-6\""},
                        {"type": "array", "items": _obj({"t": BEATS, "v": {"type": "number"}}, ("t", "v")),
                         "maxItems": LIMITS.points_per_param}],
              "description": f"each value within the param's range; {PARAMS_NOTE}"}
    span = {"from": BEATS, "to": BEATS}
    section = _obj({"id": STRING, **b.patch(Section, ("name", "start", "length"))["properties"]},
                   ("start", "length"))
    return {
        "project.set": {"patch": project},
        "master.set": {"patch": b.patch(Master, ("gain", "clip"))},
        "track.add": {"track": track, "index": INDEX, "ref": REF},
        "track.remove": {"track": TRACK_REF},
        "track.move": {"track": TRACK_REF, "index": INDEX},
        "track.set": {"track": TRACK_REF, "patch": track_patch},
        "instrument.set": {"track": TRACK_REF, "device": STRING, "params": PARAMS},
        "insert.add": {"track": CHAIN_REF, "insert": insert, "index": INDEX, "ref": REF},
        "insert.remove": {"track": CHAIN_REF, "insert": INSERT_REF},
        "insert.move": {"track": CHAIN_REF, "insert": INSERT_REF, "index": INDEX},
        "insert.set": {"track": CHAIN_REF, "insert": INSERT_REF,
                       "patch": _obj({"params": PARAMS, "on": {"type": "boolean"}})},
        "clip.add": {"track": TRACK_REF, "clip": clip, "ref": REF},
        "clip.remove": {"track": TRACK_REF, "clip": CLIP_REF},
        "clip.set": {"track": TRACK_REF, "clip": CLIP_REF,
                     "patch": b.patch(Clip, ("start", "length", "name", "gain", "mute"))},
        "clip.move": {"track": TRACK_REF, "clip": CLIP_REF, "toTrack": TRACK_REF, "start": b.field(Clip, "start")},
        "notes.add": {"track": TRACK_REF, "clip": CLIP_REF, "notes": notes, **_grid()},
        "notes.remove": {"track": TRACK_REF, "clip": CLIP_REF, "ids": {"type": "array", "items": STRING}},
        "notes.set": {"track": TRACK_REF, "clip": CLIP_REF,
                      "notes": {"type": "array", "items": edit, "maxItems": LIMITS.notes_per_clip}},
        "notes.replace": {"track": TRACK_REF, "clip": CLIP_REF, "notes": notes, **_grid()},
        "section.add": {"section": section, "ref": REF},
        "section.set": {"section": SECTION_REF, "patch": b.patch(Section, ("name", "start", "length"))},
        "section.remove": {"section": SECTION_REF},
        "device.define": {"device": device},
        "device.remove": {"id": b.field(DeviceDef, "id")},
        "auto.write": {"track": CHAIN_REF, "insert": INSERT_REF, "param": STRING, "points": points, **span},
        "auto.clear": {"track": CHAIN_REF, "insert": INSERT_REF, "param": STRING, **span},
    }


def _given(field: str) -> dict[str, Any]:
    return {"required": [field], "properties": {field: {"not": {"type": "null"}}}}


#: Ops whose optional fields are optional one at a time: notes come as ``notes`` or as a drum ``grid``.
_EITHER = {name: {"anyOf": [_given("notes"), _given("grid")]} for name in ("notes.add", "notes.replace")}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional op field may be ``null``, which the op code reads as absent."""
    return {"anyOf": [schema, {"type": "null"}]}


def op_schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    """``({op type: its object schema}, the $defs they refer to)``."""
    from .ops import OPS

    b = _Builder()
    fields = _fields(b)
    out = {}
    for name, (_, registered) in sorted(OPS.items()):
        props = {"type": {"const": name}, **{k: _nullable(fields[name][k]) if need == "optional" else fields[name][k]
                                             for k, need in registered.items() if k != "type"}}
        out[name] = {"type": "object", "title": name, "description": OP_DESCRIPTIONS[name], "properties": props,
                     "required": [k for k, need in registered.items() if need == "required"],
                     "additionalProperties": False, **_EITHER.get(name, {})}
    return out, b.defs


def song_schema() -> dict[str, Any]:
    from .model import Song

    schema = Song.model_json_schema(by_alias=True)
    schema["$id"] = "https://pytest-overdub/schemas/song.json"
    schema["title"] = "overdub/0 song"
    return schema


def ops_schema() -> dict[str, Any]:
    from .limits import LIMITS

    ops, defs = op_schemas()
    # ``discriminator`` is OpenAPI's annotation (ignored by JSON Schema validators) for tools that map
    # ``type`` straight to its variant.
    op = {"type": "object", "required": ["type"], "properties": {"type": {"enum": sorted(ops)}},
          "oneOf": [{"$ref": f"#/$defs/{name}"} for name in sorted(ops)],
          "discriminator": {"propertyName": "type", "mapping": {name: f"#/$defs/{name}" for name in sorted(ops)}},
          "description": "One op; `type` says which (a discriminated union)."}
    listed = {"type": "array", "items": {"$ref": "#/$defs/op"}, "maxItems": LIMITS.ops}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "overdub ops submission",
        "description": "A list of ops, {ops: [...]}, a list of {ops}, or {calls: [...]}.",
        "$defs": {**defs, **ops, "op": op},
        "anyOf": [
            listed,
            {"type": "object", "properties": {"ops": listed}, "required": ["ops"]},
            {"type": "array", "items": {"type": "object", "required": ["ops"], "properties": {"ops": listed}},
             "maxItems": LIMITS.transactions},
            {"type": "object", "required": ["calls"],
             "properties": {"calls": {"type": "array", "items": {"type": "object"}}}},
        ],
    }
def task_schema() -> dict[str, Any]:
    """A task file: a song-editing task, or a transcription task (``family: "transcription"``)."""
    from typing import Annotated, Union

    from pydantic import Field, TypeAdapter

    from ..bench.tasks import Task
    from ..transcribe.task import TranscriptionTask

    either = Annotated[Union[Task, TranscriptionTask], Field(discriminator="family")]
    schema = TypeAdapter(either).json_schema(by_alias=True)
    schema["title"] = "pytest-overdub task"
    return schema


SCHEMAS = {"song": song_schema, "ops": ops_schema, "task": task_schema}


def main(argv: list[str]) -> int:
    from ..cliargs import Parser

    parser = Parser(
        prog="overdub schema",
        description="Print the JSON Schema of a file kind.",
        epilog="example: overdub schema song > song.schema.json",
    )
    parser.add_argument("kind", choices=sorted(SCHEMAS))
    args = parser.parse_args(argv)
    print(json.dumps(SCHEMAS[args.kind](), indent=2, allow_nan=False))
    return 0
