"""Variants in runs: the fixed train sample, ``<task>@A-B`` ranges and splits in ``overdub eval``, a variant
scored end to end by a replay agent, the plugin collecting variants, and ``overdub run --variants``."""

from __future__ import annotations

import json

import pytest

from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.bench.variant_sample import expand_ids, sample_ids, sample_seeds, variant_count
from pytest_overdub.bench.variants import TRAIN_SEEDS, variant
from pytest_overdub.cli import main
from pytest_overdub.errors import OverdubError
from pytest_overdub.evaluate.runner import select_tasks

BENCH = bundled_bench()


def test_the_sample_is_a_fixed_prefix_of_every_train_seed():
    order = sample_seeds("write-bassline", None)
    assert sorted(order) == list(TRAIN_SEEDS)
    assert sample_seeds("write-bassline", 10) == order[:10]  # a larger sample holds every smaller one
    # pinned: everyone's sample is the same list; changing the rule changes every published sample figure
    assert sample_ids(3, ["write-bassline", "mix-darken-keys"]) == [
        "mix-darken-keys@55", "mix-darken-keys@34", "mix-darken-keys@2",
        "write-bassline@92", "write-bassline@96", "write-bassline@66"]
    assert variant_count("all", what="--variants") is None and variant_count("7", what="--variants") == 7
    with pytest.raises(OverdubError, match="--variants=100: want a number of variants per template, 0-99, or all"):
        variant_count("100", what="--variants")


def test_eval_selects_variant_ids_ranges_and_samples_within_the_split():
    assert expand_ids("write-bassline@1000-1002") == ["write-bassline@1000", "write-bassline@1001",
                                                      "write-bassline@1002"]
    with pytest.raises(OverdubError, match="not in a split"):
        expand_ids("write-bassline@95-100")
    assert select_tasks(BENCH, "write-bassline@1000-1001", split="test") == ("write-bassline@1000",
                                                                             "write-bassline@1001")
    with pytest.raises(OverdubError, match="write-bassline@1000 not in the train split"):
        select_tasks(BENCH, "write-bassline@17,write-bassline@1000", split="train")
    assert select_tasks(BENCH, "write-bassline", split="train", variants=2) == (
        "write-bassline", "write-bassline@92", "write-bassline@96")
    with pytest.raises(OverdubError, match="--variants samples the train split"):
        select_tasks(BENCH, "write-bassline", split="test", variants=2)


def test_eval_runs_the_sample_of_ten_by_default_on_the_bench_and_none_on_named_ids(tmp_path):
    from pytest_overdub.bench.variant_sample import eval_default_count
    from pytest_overdub.evaluate.cli import options
    from pytest_overdub.evaluate.runner import families

    def tasks(*argv: str) -> tuple[str, ...]:
        return options(["--agent-cmd", "true", "--agent-id", "a", "--out", str(tmp_path / "run"), *argv]).tasks

    family = tasks("--tasks", "writing")
    published = [t for t in family if "@" not in t]
    assert set(family) == set(published) | set(sample_ids(10, published)) and len(family) > len(published)
    assert {t.split("@")[0] for t in family if "@" in t} == {"write-bassline", "write-counter-melody",
                                                            "write-drum-groove", "write-harmonize-hook"}
    assert tasks("--tasks", "write-bassline") == ("write-bassline",)          # ids name the whole run
    assert tasks("--tasks", "write-bassline", "--variants", "1") == ("write-bassline", "write-bassline@92")
    assert tasks("--tasks", "writing", "--variants", "0") == tuple(published)
    # the test split is never sampled (a sample there would be an error): its ids are named
    assert eval_default_count("writing", split="test", families=families()) == 0
    assert eval_default_count("all", split="all", families=families()) == 10


def test_a_replayed_oracle_scores_a_test_variant_and_its_result_names_the_test_split(tmp_path, capsys):
    vid = "mix-darken-keys@1000"
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / f"{vid}.json").write_text(json.dumps({"ops": variant(vid).oracle.ops}))
    assert main(["eval", "--agent", f"replay:{answers}", "--tasks", vid, "--split", "test",
                 "--out", str(tmp_path / "run")]) == 0
    result = json.loads((tmp_path / "run" / vid / "0" / "result.json").read_text())
    assert (result["task"], result["split"], result["status"]) == (vid, "test", "scored")
    assert result["score"] >= 0.9


def _row(vid: str, **scores: float) -> dict:
    return {"task": vid, "family": "mix", "seconds": 2.0,
            "verdicts": [{"rule": r.replace("_", ":"), "ok": r != "oracle" or s >= 0.9, "message": f"m {s}",
                          "score": s} for r, s in scores.items()]}


def test_run_variants_marks_each_figure_against_its_rule():
    from pytest_overdub.bench.run import _variant_table

    rows = [_row("mix-darken-keys@2", oracle=1.0, baseline=0.1, near_fader=0.2, cheat_eq=0.45),
            _row("mix-darken-keys@34", oracle=0.85, baseline=0.0, near_fader=0.3, cheat_eq=0.1)]
    lines = _variant_table(rows).splitlines()
    assert lines[2].split() == ["mix-darken-keys", "2", "0.850", "FAIL", "0.925", "0.100", "ok", "0.300", "ok",
                                "0.450", "ok", "-", "2.0"]
    assert lines[3:] == ["failed:", "  mix-darken-keys@34 oracle: m 0.85"]


def test_overdub_run_variants_prints_one_row_per_template(capsys):
    assert main(["run", "--variants", "1", "-j", "1", "--no-repeat", "write-bassline"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["template", "variants", "oracle"]
    cells = out[2].split()
    assert cells[:2] == ["write-bassline", "1"] and cells[3] == cells[6] == cells[8] == cells[10] == "ok"
    assert float(cells[2]) >= 0.9 and float(cells[4]) == float(cells[2])  # one variant: min = mean
    assert out[-1].startswith("1 variants in ")


def test_a_studio_session_opens_on_a_test_variant():
    from pytest_overdub.studio.session import Studio

    studio = Studio.for_task("write-bassline@1003")
    assert studio.song.id == "gen-t1-1003" == variant("write-bassline@1003").task.song


def test_the_reports_reference_scores_a_variant_from_its_template(tmp_path):
    from pytest_overdub.evaluate.reference import bench_reference

    ref = bench_reference(tmp_path, ["mix-darken-keys@17", "no-such-task@3"])
    assert ref["no-such-task@3"] is None
    assert ref["mix-darken-keys@17"]["oracle"] >= 0.9 and ref["mix-darken-keys@17"]["baseline"] < 0.5
