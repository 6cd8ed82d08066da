"""A task scored in two separate Python processes gives the same check values, to the last bit
(docs/scoring.md: "the same submission gives the same value for every check, in a new process").

The two processes differ in ``PYTHONHASHSEED`` (anything ordered by a set or dict of strings would
differ) and in the number of BLAS threads (OpenBLAS splits a long dot product across its threads, and
the sum's rounding then follows the machine's core count). The tasks read stereo correlations and
widths (``mix-chorus-lift``), a mid/side master's coherences (``master-mid-side``) and notes
(``transcribe-solo-hook``); the answers are their oracles.
"""

from __future__ import annotations

import os
import subprocess
import sys

CHILD = r'''
import json
from pytest_overdub import runtime
runtime.enter("test")
from pytest_overdub.bench import validity
from pytest_overdub.bench.tasks import bundled_bench

bench = bundled_bench()
out = []
for task_id in ("mix-chorus-lift", "master-mid-side", "transcribe-solo-hook"):
    result = validity.check_oracle(bench.task(task_id), bench).result
    out += [[task_id, c.id, repr(c.value)] for c in result.checks]
print(json.dumps(out))
'''


def _run(hash_seed: str, blas_threads: str) -> list:
    import json

    env = dict(os.environ, PYTHONHASHSEED=hash_seed, OPENBLAS_NUM_THREADS=blas_threads,
               OMP_NUM_THREADS=blas_threads, MKL_NUM_THREADS=blas_threads, OVERDUB_STEM_CACHE_MB="256")
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_two_processes_score_the_same_values():
    a, b = _run("1", "1"), _run("2", "2")
    assert len(a) > 20
    assert a == b
