"""The scorer's malloc tuning (pytest_overdub.render.heap): freed blocks of a few MB are reused.

Each case runs in a fresh interpreter, so the tuning (a process-wide setting) is tested from a known start.
The figure counted is the number of minor page faults of ten rounds of two fresh 3 MB arrays, each page
touched once: ~15 000 with glibc's defaults in a fresh process, under 1 000 once the heap keeps freed
blocks (measured on the development machine).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "confstr") or not os.confstr("CS_GNU_LIBC_VERSION"),
                                reason="the tuning is glibc's mallopt")

ROUNDS = """
import resource, sys
import numpy as np
from pytest_overdub.render import render
from pytest_overdub.render.heap import tune_malloc
render({"id": "tiny", "tempo": 120, "tracks": []})
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
f0 = faults()
for _ in range(10):
    a = np.empty(3 * 131072); a[::512] = 1.0
    b = np.empty(3 * 131072); b[::512] = 2.0
    del a, b
print(tune_malloc(), faults() - f0)
"""


def _run(**env) -> tuple[bool, int]:
    out = subprocess.run([sys.executable, "-c", ROUNDS], capture_output=True, text=True, check=True,
                         env={**os.environ, **env}).stdout.split()
    return out[0] == "True", int(out[1])


def test_after_a_render_freed_blocks_of_a_few_mb_are_reused_not_refaulted():
    tuned, faults = _run()
    plain, plain_faults = _run(OVERDUB_MALLOC_TUNING="0")
    assert tuned and not plain
    # 10 rounds x 2 arrays x 768 pages = 15 360 faults when every array is a fresh mapping
    assert faults < 3000 < plain_faults
