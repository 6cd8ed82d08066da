"""An audio task's published file and answers, carried onto generated songs.

A variant of an audio task keeps the published task's checks, answer form, instruction and answers (each
answer is made by code from the inputs alone, :mod:`pytest_overdub.bench.audio.answers`), so a fix to the
published task reaches its variants. What depends on the song is rewritten: every input's ``song`` (a
published song name mapped to a generated one) and ``tracks`` (a published track name mapped to the
generated song's track with the same role). A published song or track the template does not map is an
error, so a change to the published inputs cannot slip through unmapped.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from ....errors import TaskError
from ....generate.truth import GroundTruth
from ...layout import BenchLayout, bundled_root
from ..base import Answer

#: The fields of a published task a variant does not take (the variant sets its own id, song and split).
OWN_FIELDS = ("id", "song", "split")


def published_task(task_id: str) -> dict[str, Any]:
    """The published task file's fields, as written."""
    path = BenchLayout(bundled_root()).tasks_dir / f"{task_id}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def published_answers(task_id: str) -> tuple[Answer, tuple[Answer, ...]]:
    """(oracle, near misses and cheats) of the published task: ``{"why", "make", "fails"?}`` each."""
    bench = BenchLayout(bundled_root())

    def answer(path, name: str) -> Answer:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Answer(name, data["why"], [], tuple(data.get("fails", ())), make=data["make"])

    paths = bench.near_miss_paths(task_id) + bench.cheat_paths(task_id)
    misses = tuple(answer(p, p.stem.split(".", 1)[1]) for p in paths)
    return answer(bench.oracle_path(task_id), "oracle"), misses


def role_tracks(truth: GroundTruth) -> dict[str, str]:
    """The published songs' track names -> the generated song's track of the same role (by name)."""
    drums = truth.parts_with("drums")
    kick_tracks = {n.track_id for n in truth.notes if n.tag == "kick"}
    kick = [p for p in drums if p.track_id in kick_tracks]
    kit = [p for p in drums if p.track_id not in kick_tracks]
    if len(kick) != 1 or len(kit) != 1:
        raise TaskError(f"song {truth.song_id}: expected one kick track and one kit track among the drums, "
                        f"found {[p.name for p in drums]}")
    return {"Kick": kick[0].name, "Kit": kit[0].name, "Bass": truth.part("bass").name,
            "Keys": truth.part("chords").name, "Hook": truth.part("lead").name}


def carried_inputs(task_id: str, inputs: list[dict[str, Any]], *, songs: dict[str, str],
                   tracks: dict[str, str]) -> list[dict[str, Any]]:
    """The published inputs with each ``song`` and ``tracks`` entry mapped onto the generated songs."""
    out = []
    for i, inp in enumerate(inputs):
        if inp["song"] not in songs:
            raise TaskError(f"{task_id}: inputs[{i}].song = {inp['song']!r}: the template maps no generated "
                            f"song to it (maps: {', '.join(songs)})")
        new = {**inp, "song": songs[inp["song"]]}
        if inp.get("tracks") is not None:
            unknown = [t for t in inp["tracks"] if t not in tracks]
            if unknown:
                raise TaskError(f"{task_id}: inputs[{i}].tracks: {unknown} have no role the template maps "
                                f"(maps: {', '.join(tracks)})")
            new["tracks"] = [tracks[t] for t in inp["tracks"]]
        out.append(new)
    return out


def carried(task_id: str, truth: GroundTruth, *, songs: dict[str, str] | None = None,
            replace: tuple[Answer, ...] = ()):
    """The published task on the generated song of ``truth``: (fields, oracle, near misses and cheats).
    ``songs``: published song name -> generated song id (default: the published task's song -> this one).
    ``replace``: answers that take the place of the published answer of the same name (the oracle too)."""
    data = published_task(task_id)
    fields = {k: v for k, v in data.items() if k not in OWN_FIELDS}
    songs = songs if songs is not None else {data["song"]: truth.song_id}
    fields["inputs"] = carried_inputs(task_id, fields["inputs"], songs=songs, tracks=role_tracks(truth))
    oracle, misses = published_answers(task_id)
    by_name = {a.name: a for a in replace}
    unknown = set(by_name) - {a.name for a in (oracle, *misses)}
    if unknown:
        raise TaskError(f"{task_id}: the template replaces {sorted(unknown)}, which the published task does not "
                        "have")
    return fields, by_name.get(oracle.name, oracle), tuple(by_name.get(m.name, m) for m in misses)


def variant_rng(variant_id: str) -> random.Random:
    """A random stream of the variant alone (``random.Random`` seeded with the first 8 bytes of the sha256 of
    its id, the same on every platform), for the choices a template draws beyond its song."""
    return random.Random(int.from_bytes(hashlib.sha256(variant_id.encode()).digest()[:8], "big"))
