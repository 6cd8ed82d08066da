"""JSON Schemas generated from the models, so agents and editors can validate files.

``overdub schema song|ops|task`` prints them. The ops schema is written by hand from the op table in
:mod:`.ops` (each op's fields), because op fields are validated by code that gives better messages than a
schema can; it is a faithful outline for editors, and the op code remains the authority.
"""

from __future__ import annotations

import json
from typing import Any


def song_schema() -> dict[str, Any]:
    from .model import Song

    schema = Song.model_json_schema(by_alias=True)
    schema["$id"] = "https://pytest-overdub/schemas/song.json"
    schema["title"] = "overdub/0 song"
    return schema


def ops_schema() -> dict[str, Any]:
    from .ops import OPS

    variants = []
    for name, (_, fields) in sorted(OPS.items()):
        props: dict[str, Any] = {"type": {"const": name}}
        for key in fields:
            if key != "type":
                props[key] = {}
        variants.append({
            "type": "object",
            "properties": props,
            "required": [k for k, need in fields.items() if need == "required"],
            "additionalProperties": False,
        })
    op = {"oneOf": variants}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "overdub ops submission",
        "description": "A list of ops, {ops: [...]}, a list of {ops}, or {calls: [...]}.",
        "$defs": {"op": op},
        "anyOf": [
            {"type": "array", "items": {"$ref": "#/$defs/op"}},
            {"type": "object", "properties": {"ops": {"type": "array", "items": {"$ref": "#/$defs/op"}}},
             "required": ["ops"]},
            {"type": "array", "items": {"type": "object", "required": ["ops"],
                                        "properties": {"ops": {"type": "array",
                                                               "items": {"$ref": "#/$defs/op"}}}}},
            {"type": "object", "required": ["calls"],
             "properties": {"calls": {"type": "array", "items": {"type": "object"}}}},
        ],
    }


def task_schema() -> dict[str, Any]:
    from ..bench.tasks import Task

    schema = Task.model_json_schema(by_alias=True)
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
