"""``overdub check-changed``: which tasks a commit's files touch."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_overdub.bench.precommit import bench_root, main, task_ids_for


def _bench(root: Path) -> Path:
    for d in ("tasks", "songs", "oracles", "near_misses"):
        (root / d).mkdir()
    for tid, song in (("mix-a", "night"), ("mix-b", "night"), ("edit-c", "lab")):
        (root / "tasks" / f"{tid}.json").write_text(json.dumps({"id": tid, "song": song}))
    return root


def test_paths_map_to_the_tasks_they_touch(tmp_path):
    root = _bench(tmp_path)
    paths = [root / "songs" / "night.json", root / "README.md", root / "oracles" / "edit-c.json"]
    assert bench_root(paths) == root.resolve()
    assert task_ids_for(paths, root=root) == ["edit-c", "mix-a", "mix-b"]
    assert task_ids_for([root / "near_misses" / "mix-b.too-loud.json"], root=root) == ["mix-b"]
    assert task_ids_for([root / "near_misses" / "mix-b.cheat-mute-all.json"], root=root) == ["mix-b"]
    assert task_ids_for([root / "oracles" / "mix-a.alt-eq.json"], root=root) == ["mix-a"]  # not dropped
    assert task_ids_for([root / "songs" / "lab.json", root / "tasks" / "gone.json"], root=root) == ["edit-c"]
    assert task_ids_for([root / "tools" / "make.py"], root=root) == []


def test_nothing_touched_passes_without_scoring(tmp_path, capsys, monkeypatch):
    root = _bench(tmp_path)
    monkeypatch.chdir(root)
    assert main(["README.md", "docs/x.md"]) == 0
    assert capsys.readouterr().out.strip() == "overdub check-changed: no task touched"


def test_a_song_an_audio_task_reads_as_an_input_touches_that_task(tmp_path):
    root = _bench(tmp_path)
    (root / "tasks" / "master-d.json").write_text(json.dumps(
        {"id": "master-d", "song": "night", "inputs": [{"name": "a.wav", "song": "night"},
                                                      {"name": "b.wav", "song": "groove"}]}))
    assert task_ids_for([root / "songs" / "groove.json"], root=root) == ["master-d"]
