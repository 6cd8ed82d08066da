"""The self-check's default: a draw of K variant ids across every template, the same in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from pytest_overdub.bench.variant_sample import (SELF_CHECK_DRAW, Draw, default_count, drawn_ids, run_ids,
                                                 sample_ids, sample_seeds)
from pytest_overdub.bench.variants import TRAIN_SEEDS, templates


def test_the_self_check_draws_k_ids_across_templates_stably():
    assert default_count(self_check=True) == Draw(SELF_CHECK_DRAW)
    drawn = drawn_ids(SELF_CHECK_DRAW)
    assert len(drawn) == SELF_CHECK_DRAW == len(set(drawn)) and run_ids(Draw(SELF_CHECK_DRAW)) == drawn
    every = {f"{t}@{s}" for t in templates() for s in TRAIN_SEEDS}
    assert set(drawn) <= every
    # a larger draw holds every smaller one; a template's drawn ids are the first of its own fixed sample
    assert set(drawn) <= set(drawn_ids(SELF_CHECK_DRAW + 5))
    for t in {vid.split("@")[0] for vid in drawn_ids(40)}:
        mine = [int(v.split("@")[1]) for v in drawn_ids(40) if v.startswith(t + "@")]
        assert mine == sample_seeds(t, len(mine))
    # within a subset of templates the draw is over their ids only; 0 draws nothing
    assert drawn_ids(3, ["write-bassline"]) == sample_ids(3, ["write-bassline"]) and drawn_ids(0) == []
    # pinned: the same ids in every process and on every machine (a change here changes the self-check)
    assert SELF_CHECK_DRAW == 5 and drawn == ["mix-bass-under-kick@90", "transcribe-solo-hook@6",
                                              "write-counter-melody@17", "write-drum-groove@31",
                                              "write-harmonize-hook@94"]
    code = "from pytest_overdub.bench.variant_sample import drawn_ids as d; import json; print(json.dumps(d(12)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONHASHSEED="12345"))
    assert json.loads(out.stdout) == drawn_ids(12)
