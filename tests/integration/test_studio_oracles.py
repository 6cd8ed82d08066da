"""Replaying each task's oracle through the studio writes a log that scores bit for bit like the oracle file.

The oracle's ops become the calls an agent would make: a ``device.define`` followed by the op that installs
it becomes one ``define_device`` with ``use_on``; every other op is its own ``apply_ops``, except that an op
naming a ``$ref`` joins the call that made the ref (refs live within one transaction). After the oracle,
one more edit is applied and undone, so the log also holds an ``undo`` that the scorer must honour.
"""

from __future__ import annotations

import json

import pytest

from pytest_overdub.bench.tasks import bundled_bench, score_path, score_task
from pytest_overdub.song.submission import load_submission
from pytest_overdub.studio import Studio

BENCH = bundled_bench()


def oracle_calls(ops: list[dict]) -> list[tuple[str, dict]]:
    """The oracle's ops as (tool, input) calls (see the module docstring)."""
    calls: list[tuple[str, dict]] = []
    i = 0
    while i < len(ops):
        op = ops[i]
        if op["type"] == "device.define":
            device = op["device"]
            use_on = _installs(device, ops[i + 1] if i + 1 < len(ops) else None)
            calls.append(("define_device", {"device": device, **({"use_on": use_on} if use_on else {})}))
            i += 2 if use_on else 1
            continue
        if "\"$" in json.dumps(op) and calls and calls[-1][0] == "apply_ops":
            calls[-1][1]["ops"].append(op)
        else:
            calls.append(("apply_ops", {"ops": [op]}))
        i += 1
    return calls


def _installs(device: dict, op: dict | None) -> dict | None:
    """``use_on`` when ``op`` is exactly what define_device's use_on makes for ``device``, else None."""
    if op is None:
        return None
    if op == {"type": "instrument.set", "track": op.get("track"), "device": device["id"]}:
        return {"track": op["track"]}
    if op.get("type") == "insert.add" and op.get("insert") == {"device": device["id"]} and \
            set(op) <= {"type", "track", "insert", "index"}:
        return {"track": op["track"], **({"index": op["index"]} if "index" in op else {})}
    return None


def _figures(result) -> list[tuple[str, str, str]]:
    """Every check's value and score as exact text (repr round-trips a float; NaN reads nan)."""
    return [(c.id, repr(c.value), repr(c.score)) for c in result.checks]


def test_the_calls_cover_the_ops():
    ops = [{"type": "device.define", "device": {"id": "my.x", "kind": "effect"}},
           {"type": "insert.add", "track": "Room", "insert": {"device": "my.x"}, "index": 0},
           {"type": "track.add", "track": {"name": "Pad"}, "ref": "p"},
           {"type": "clip.add", "track": "$p", "clip": {"start": 0, "length": 4}},
           {"type": "track.set", "track": "Bass", "patch": {"gain": -3}}]
    assert [(t, list(i)) for t, i in oracle_calls(ops)] == [
        ("define_device", ["device", "use_on"]), ("apply_ops", ["ops"]), ("apply_ops", ["ops"])]
    assert oracle_calls(ops)[0][1]["use_on"] == {"track": "Room", "index": 0}
    assert len(oracle_calls(ops)[1][1]["ops"]) == 2


#: The song tasks: their oracles are ops (the audio and transcription tasks are answered with files).
SONG_TASKS = [t for t in BENCH.task_ids()
              if BENCH.task(t).family != "transcription" and not BENCH.task(t).is_audio]


@pytest.mark.slow
@pytest.mark.parametrize("task_id", SONG_TASKS)
def test_an_oracle_replayed_through_the_studio_scores_like_the_oracle(task_id, tmp_path):
    task = BENCH.task(task_id)
    oracle = BENCH.oracle_path(task_id)
    log = tmp_path / "calls.json"
    studio = Studio.for_task(task_id, log_path=log)
    calls = oracle_calls(json.loads(oracle.read_text())["ops"])
    for tool, tool_input in calls:
        getattr(studio, tool)(**tool_input)
    studio.apply_ops(ops=[{"type": "master.set", "patch": {"gain": -9}}], label="a step to take back")
    studio.undo()
    assert [c["tool"] for c in json.loads(log.read_text())["calls"]] == [t for t, _ in calls] + ["apply_ops", "undo"]
    want = score_path(task, oracle, bench=BENCH)
    got = score_task(task, load_submission(log), bench=BENCH)
    assert got.error is None and want.error is None
    assert repr(got.score) == repr(want.score)
    assert _figures(got) == _figures(want)
    assert got.warnings == want.warnings
