"""The plugin collects variants ``<task>@<seed>`` (the fixed train sample, ``--overdub-variants``) beside
the task files: scored on a folder of answers like any task, and held to the validity rules in the
self-check. The bench here is the one task mix-darken-keys; its 1-variant sample is mix-darken-keys@55."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_overdub.bench.variant_sample import ANSWERS_SAMPLE, SELF_CHECK_DRAW, drawn_ids, sample_ids
from pytest_overdub.bench.variants import variant

from benchdirs import copy_one_task_bench, run_quiet

pytest_plugins = ["pytester"]

TASK = "mix-darken-keys"
VID = sample_ids(1, [TASK])[0]


@pytest.fixture
def bench_dir(pytester: pytest.Pytester) -> Path:
    return copy_one_task_bench(pytester.path, TASK)


def test_a_submission_folder_answers_the_sampled_variants(pytester, bench_dir):
    answers = bench_dir / "answers"
    answers.mkdir()
    (answers / f"{VID}.json").write_text(json.dumps({"ops": variant(VID).oracle.ops}))
    report = bench_dir / "r.json"
    result = run_quiet(pytester, f"--overdub-submission={answers}", "--overdub-variants=1", f"--overdub-report={report}")
    result.assert_outcomes(passed=len(variant(VID).task.checks) + len(variant(VID).task.house_gates) + 1,
                           skipped=1)  # the published task has no answer in the folder
    tasks = {t["id"]: t for t in json.loads(report.read_text())["tasks"]}
    assert list(tasks) == [VID] and tasks[VID]["score"] >= 0.9


def test_the_default_sample_per_mode(pytester, bench_dir):
    """A folder of answers meets the fixed sample of 10 variants per template; one answer file none (it
    cannot answer a variant); the self-check its draw across templates; ``--overdub-variants`` overrides each."""
    answers = bench_dir / "answers"
    answers.mkdir()
    for vid in sample_ids(10, [TASK]):  # a variant without an answer file is skipped at collection
        (answers / f"{vid}.json").write_text(json.dumps({"ops": variant(vid).oracle.ops}))

    def sampled(*args: str) -> list[str]:
        lines = run_quiet(pytester, "--collect-only", "-q", *args).outlines
        return sorted({line.split("::")[1] for line in lines if "@" in line and "::" in line})

    assert ANSWERS_SAMPLE == 10
    assert sampled(f"--overdub-submission={answers}") == sorted(sample_ids(10, [TASK]))
    assert sampled(f"--overdub-submission={answers / f'{VID}.json'}") == []
    assert sampled() == sorted(drawn_ids(SELF_CHECK_DRAW, [TASK]))  # the draw, over this one template
    assert sampled(f"--overdub-submission={answers}", "--overdub-variants=2") == sorted(sample_ids(2, [TASK]))
    assert sampled(f"--overdub-submission={answers / f'{VID}.json'}", "--overdub-variants=1") == [VID]
    assert sampled(f"--overdub-submission={answers}", "--overdub-variants=0") == []


def test_the_self_check_holds_a_sampled_variant_to_the_rules(pytester, bench_dir):
    assert sum("@" in line for line in run_quiet(pytester, "--collect-only", "-q").outlines if "::oracle" in line) == \
        SELF_CHECK_DRAW  # the default draw, over this bench's one template (not the bundled bench's)
    listed = run_quiet(pytester, "--collect-only", "-q", "--overdub-variants=1").outlines
    assert f"tasks/{VID}.json::{VID}::oracle" in listed and f"tasks/{VID}.json::{VID}::repeat" in listed
    assert f"tasks/{VID}.json::{VID}::cheat-master-eq" in listed
    assert sum(f"{TASK}@" in line for line in run_quiet(pytester, "--collect-only", "-q", "--overdub-variants=3").outlines
               if "::oracle" in line) == 3
    result = run_quiet(pytester, "--overdub-variants=1", "-k", f"{TASK} and 55 and (oracle or master)")
    result.assert_outcomes(passed=2)
    bad = run_quiet(pytester, "--overdub-variants=lots")
    assert "--overdub-variants=lots: want a number of variants per template, 0-99, or all" in "\n".join(bad.errlines)


#: A conftest for the bench under test: every template build counted (the count printed at the end of the
#: run), and the build of mix-darken-keys@55 refused as a broken template's would be.
COUNTED_BUILDS = '''
import dataclasses

from pytest_overdub.bench.templates import TEMPLATES
from pytest_overdub.errors import TaskError

BUILT = []


def _counted(template):
    def build(made, variant_id):
        BUILT.append(variant_id)
        if variant_id == "mix-darken-keys@55":
            raise TaskError("mix-darken-keys@55: refused by the test's conftest")
        return template.build(made, variant_id)

    return dataclasses.replace(template, build=build)


for name, template in list(TEMPLATES.items()):
    TEMPLATES[name] = _counted(template)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"template builds: {len(BUILT)}")
'''


def test_collecting_the_self_checks_variants_builds_none(pytester, bench_dir):
    """The items and node ids come from the template (no build); a variant is built once, when its first
    item runs, and a build that fails fails that variant's items with its message, no other variant's."""
    (bench_dir / "conftest.py").write_text(COUNTED_BUILDS)
    listed = run_quiet(pytester, "--collect-only", "-q", "--overdub-variants=2").outlines
    assert "template builds: 0" in listed
    assert [line for line in listed if "mix-darken-keys@55.json" in line] == [
        f"tasks/mix-darken-keys@55.json::mix-darken-keys@55::{rule}"
        for rule in ("oracle", "baseline", "near-fader", "cheat-master-eq", "cheat-verse-only", "cheat-chop-bars",
                     "repeat")]
    assert "tasks/mix-darken-keys@34.json::mix-darken-keys@34::cheat-verse-only" in listed
    result = run_quiet(pytester, "--overdub-variants=2", "-k", "(55 or 34) and (oracle or verse-only)")
    result.assert_outcomes(passed=2, failed=2)
    out = "\n".join(result.outlines)
    for rule in ("oracle", "cheat:verse-only"):
        assert f"mix-darken-keys@55 {rule}: mix-darken-keys@55: refused by the test's conftest" in out
    assert "template builds: 2" in out  # @55 tried once (its error kept for its second item), @34 built once


def test_a_variant_without_an_answer_costs_no_build(pytester, bench_dir):
    """A folder of answers: a variant with no answer file is skipped unbuilt; one with an answer is built at
    collection (its items are its checks), and a build that fails is its score item's failure."""
    (bench_dir / "conftest.py").write_text(COUNTED_BUILDS)
    answers = bench_dir / "answers"
    answers.mkdir()
    (answers / "mix-darken-keys@55.json").write_text(json.dumps({"ops": []}))
    result = run_quiet(pytester, f"--overdub-submission={answers}", "--overdub-variants=2")
    result.assert_outcomes(failed=1, skipped=2)  # @55's score; the published task and @34 have no answer
    out = "\n".join(result.outlines)
    assert "mix-darken-keys@55.json::mix-darken-keys@55::score" in out and "refused by the test's conftest" in out
    assert "template builds: 1" in out
