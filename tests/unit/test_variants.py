"""Task variants ``<task>@<seed>``: ids and splits, the generated song behind a variant, and the validity
rules on each template's variants (oracle >= 0.9, doing nothing and every near miss or cheat < 0.5, an
exact repeat). Each variant scores five or six answers (a few renders each), so the examples are few."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_overdub.bench.tasks import bundled_bench, start_song
from pytest_overdub.bench.variant_checks import check_variant
from pytest_overdub.bench.variant_rules import variant_rules, variant_verdict
from pytest_overdub.bench.variants import (TRAIN_SEEDS, parse_variant_id, split_of, templates,
                                           train_ids, variant)
from pytest_overdub.cli import main
from pytest_overdub.errors import TaskError
from pytest_overdub.generate import generate

FEW = settings(max_examples=1, deadline=None, derandomize=True)


def test_variant_ids_and_splits():
    assert parse_variant_id("write-bassline@17") == ("write-bassline", 17)
    assert split_of(1) == split_of(99) == "train" and split_of(1000) == split_of(10**9) == "test"
    for seed in (0, 100, 999):
        with pytest.raises(TaskError, match="not in a split"):
            split_of(seed)
    for bad in ("write-bassline", "write-bassline@", "write-bassline@x", "Write-bassline@1", "nope@3"):
        with pytest.raises(TaskError):
            parse_variant_id(bad)
    assert len(train_ids()) == len(TRAIN_SEEDS) * len(templates())
    assert train_ids("write-bassline")[:2] == ["write-bassline@1", "write-bassline@2"]


def test_a_variant_is_its_generated_song_with_the_templates_setup():
    bench = bundled_bench()
    v = variant("write-bassline@17")
    assert bench.task("write-bassline@17") == v.task and v.task.id == "write-bassline@17"
    assert v.task.song == "gen-t1-17" and bench.song("gen-t1-17") == generate(17, 1).song
    start = start_song(v.task, bench=bench)
    assert start.track("Bass").clips == () and v.split == "train"
    symbols = [c.symbol for c in v.made.truth.chords_of(v.made.truth.section("Verse"))]
    roots = next(c for c in v.task.checks if c.id == "roots")
    assert list(roots.chords) == symbols and ", ".join(symbols) in v.task.instruction


@pytest.mark.parametrize("name", sorted(templates()))
@FEW
@given(seed=st.sampled_from(list(TRAIN_SEEDS)))
def test_every_rule_holds_on_train_variants(name, seed):
    failed = [(rule, msg) for rule, ok, msg, _ in check_variant(f"{name}@{seed}", trusted=True) if not ok]
    assert failed == []


@pytest.mark.parametrize("name", sorted(templates()))
def test_a_test_split_variant_holds_and_repeats_exactly(name):
    vid = f"{name}@1000"
    results = check_variant(vid, trusted=True)
    assert [(rule, msg) for rule, ok, msg, _ in results if not ok] == []
    first = results[0][3]
    again = variant_verdict(vid, "repeat", bundled_bench(), trusted=True, first=first)  # every family's repeat
    assert again.ok, again.message
    assert [c.value for c in again.result.checks] == [c.value for c in first.checks]


@pytest.mark.parametrize("seed", [17, 64, 1000])
@pytest.mark.parametrize("name", sorted(templates()))
def test_each_template_declares_what_its_builds_return(name, seed):
    """A run collects a variant's items from its template's declaration (no build): the build agrees."""
    template, v = templates()[name], variant(f"{name}@{seed}")
    assert tuple(m.name for m in v.near_misses) == template.misses
    assert v.task.family == template.family and v.task.is_audio == template.is_audio
    assert tuple(a.name for a in v.task.answer) == template.answer if template.is_audio else template.answer == ()


def test_the_rules_of_a_variant_are_listed_without_building_it():
    before = variant.cache_info().misses
    assert variant_rules("mix-darken-keys@55") == ["oracle", "baseline", "near:fader", "cheat:master-eq",
                                                   "cheat:verse-only", "cheat:chop-bars", "repeat"]
    assert variant_rules("write-bassline@1000")[2:4] == ["near:wrong-roots", "cheat:fifths-on-downbeats"]
    assert variant.cache_info().misses == before


def test_a_build_unlike_its_templates_declaration_is_refused(monkeypatch):
    import dataclasses

    from pytest_overdub.bench.templates import TEMPLATES

    real = TEMPLATES["mix-darken-keys"]
    monkeypatch.setitem(TEMPLATES, "mix-darken-keys", dataclasses.replace(real, misses=("fader", "cheat-verse-only")))
    with pytest.raises(TaskError, match=r"^template mix-darken-keys, seed 7: built near misses and cheats \[fader, "
                                        r"cheat-master-eq, cheat-verse-only, cheat-chop-bars\]; the template "
                                        r"declares \[fader, cheat-verse-only\]"):
        variant.__wrapped__("mix-darken-keys@7")
    monkeypatch.setitem(TEMPLATES, "mix-darken-keys", dataclasses.replace(real, family="mixdown"))
    with pytest.raises(TaskError, match="seed 7: built family 'mix'; the template declares 'mixdown'"):
        variant.__wrapped__("mix-darken-keys@7")
    monkeypatch.setitem(TEMPLATES, "mix-darken-keys", dataclasses.replace(real, answer=("mix.wav",)))
    with pytest.raises(TaskError, match=r"built answer files \[\]; the template declares \[mix.wav\]"):
        variant.__wrapped__("mix-darken-keys@7")


def test_start_and_score_take_a_variant_id(tmp_path, capsys):
    song, ops = tmp_path / "start.json", tmp_path / "ops.json"
    assert main(["start", "write-bassline@5", "--out", str(song)]) == 0
    data = json.loads(song.read_text(encoding="utf-8"))
    assert data["meta"]["task"] == "write-bassline@5" and data["id"] == "gen-t1-5"
    ops.write_text(json.dumps(variant("write-bassline@5").oracle.ops), encoding="utf-8")
    assert main(["score", "write-bassline@5", str(ops), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n", 1)[1])["score"] >= 0.9
    assert main(["score", "write-bassline@500", str(ops)]) == 2
    assert "not in a split" in capsys.readouterr().err


def test_list_variants_lists_every_train_variant(capsys):
    assert main(["list", "--variants", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [v["id"] for v in listed] == train_ids()
    assert {v["split"] for v in listed} == {"train"} and all(1 <= v["seed"] <= 99 for v in listed)


def test_a_task_file_cannot_claim_a_variant_id(tmp_path):
    from pytest_overdub.bench.tasks import load_task

    data = json.loads((bundled_bench().tasks_dir / "write-bassline.json").read_text(encoding="utf-8"))
    path = tmp_path / "write-bassline@3.json"
    path.write_text(json.dumps({**data, "id": "write-bassline@3"}), encoding="utf-8")
    with pytest.raises(TaskError, match="reserved for variant ids"):
        load_task(path)


def test_held_breakpoints_ramp_into_each_step():
    from pytest_overdub.bench.templates.base import held

    assert held([(0, 16, 0)], (16, 3), (32, 3)) == "0:0 15.95:0 16:3 32:3"
    assert held([(0, 4, 6), (4, 8, -60)], (8, 0)) == "0:6 3.95:6 4:-60 7.95:-60 8:0"
    assert held([(0, 16, 0.2)], (16, 1), (32, 1), ramp_beats=0.25) == "0:0.2 15.75:0.2 16:1 32:1"
