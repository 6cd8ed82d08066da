"""The plugin collects an audio task's variants like a song task's: a submission folder answers a sampled
variant with its files in ``<folder>/<task>@<seed>/``, and the self-check holds it to the rules. The bench
here is the one audio task mixdown-clear-mud (its 1-variant sample, ``VID``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_overdub.bench.audio.answers import make_answer
from pytest_overdub.bench.tasks import bundled_bench
from pytest_overdub.bench.variant_sample import sample_ids
from pytest_overdub.bench.variants import variant

from benchdirs import copy_one_task_bench, run_quiet

pytest_plugins = ["pytester"]

TASK = "mixdown-clear-mud"
VID = sample_ids(1, [TASK])[0]


@pytest.fixture
def bench_dir(pytester: pytest.Pytester) -> Path:
    return copy_one_task_bench(pytester.path, TASK, alternatives=True)


def test_a_folder_answers_an_audio_variant_and_the_self_check_holds_it(pytester, bench_dir):
    v = variant(VID)
    answers = bench_dir / "answers"
    shutil.copytree(make_answer(v.task, v.oracle.make, bundled_bench()), answers / VID)
    report = bench_dir / "r.json"
    result = run_quiet(pytester, f"--overdub-submission={answers}", "--overdub-variants=1", f"--overdub-report={report}")
    result.assert_outcomes(passed=len(v.task.checks) + len(v.task.house_gates) + 1,
                           skipped=1)  # the published task has no answer in the folder
    tasks = {t["id"]: t for t in json.loads(report.read_text())["tasks"]}
    assert list(tasks) == [VID] and tasks[VID]["score"] >= 0.9
    seed = VID.split("@")[1]
    listed = run_quiet(pytester, "--collect-only", "-q", "--overdub-variants=1").outlines
    assert f"tasks/{VID}.json::{VID}::cheat-highpass" in listed
    checked = run_quiet(pytester, "--overdub-variants=1", "-k", f"{TASK} and {seed} and (oracle or baseline or highpass)")
    checked.assert_outcomes(passed=3)
