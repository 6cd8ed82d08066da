"""The scorer's malloc tuning (pytest_overdub.render.heap): freed blocks, however large, are reused in a
process that entered the scorer runtime, and a library render leaves malloc alone.

Each case runs in a fresh interpreter, so the tuning (a process-wide setting) is tested from a known start.
The figure counted is the number of minor page faults of ten rounds of two fresh arrays, each page touched
once, with numpy's huge-page advice off so that a fault is one 4 KB page: a fresh mapping per array with
glibc's defaults, only the first round's pages once the heap keeps what is freed.
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
from pytest_overdub import runtime
from pytest_overdub.render import render
from pytest_overdub.render.heap import tuned
np._core.multiarray._set_madvise_hugepage(False)
if sys.argv[2] == "scorer":
    runtime.enter("test")
render({"format": "overdub/0", "id": "tiny", "tempo": 120, "tracks": []})
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
mb = float(sys.argv[1])
f0 = faults()
for _ in range(10):
    a = np.empty(int(mb * 131072)); a[::512] = 1.0
    b = np.empty(int(mb * 131072)); b[::512] = 2.0
    del a, b
print(tuned(), faults() - f0)
"""

RELEASE = """
import numpy as np
from pytest_overdub import runtime
from pytest_overdub.render.heap import release_memory
runtime.enter("test")
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
a = np.ones(200 * 131072)  # 200 MB
del a
kept = rss_mb()
print(release_memory(), kept - rss_mb())
"""


def _run(script: str, *args: str, **env) -> tuple[bool, float]:
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=True,
                         env={**os.environ, **env}).stdout.split()
    return out[0] == "True", float(out[1])


@pytest.mark.parametrize("mb", [3, 48], ids=["3 MB", "48 MB (above glibc's largest mmap threshold)"])
def test_in_a_scorer_freed_blocks_are_reused_not_refaulted(mb):
    tuned, faults = _run(ROUNDS, str(mb), "scorer")
    plain, plain_faults = _run(ROUNDS, str(mb), "scorer", OVERDUB_MALLOC_TUNING="0")
    assert tuned and not plain
    pages = mb * 256  # 4 KB pages per array
    # with the defaults every array is a fresh mapping: 10 rounds x 2 arrays; tuned, about the first round
    assert plain_faults > 18 * pages
    assert faults < 4 * pages


def test_a_library_render_leaves_malloc_at_its_defaults():
    tuned, faults = _run(ROUNDS, "48", "library")
    assert not tuned
    assert faults > 18 * 48 * 256  # every array a fresh mapping, as with glibc's defaults


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads resident memory from /proc")
def test_release_memory_hands_the_kept_heap_back():
    released, freed_mb = _run(RELEASE)
    assert released
    assert freed_mb > 150  # of the 200 MB the tuned heap kept after the array was freed
