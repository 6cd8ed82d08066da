"""The first compilation of the DSP loops in a scorer says so on stderr, once; a load from numba's cache,
and a library process, say nothing. Each case is a fresh interpreter with its own numba cache directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest_overdub
from pytest_overdub.dsp.jit import NOTICE

ROOT = Path(pytest_overdub.__file__).resolve().parent.parent

CODE = """
import sys, numpy as np
from pytest_overdub import runtime
if sys.argv[1] == "scorer":
    runtime.enter("test")
from pytest_overdub.dsp.compiled import all_finite
print(all_finite(np.ones((2, 8))), all_finite(np.array([1.0, np.nan])))
"""


def _run(mode: str, cache_dir: Path) -> tuple[str, str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", CODE, mode], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip(), out.stderr


def test_a_scorer_says_once_that_it_compiles_and_nothing_once_cached(tmp_path):
    first, err = _run("scorer", tmp_path)
    assert first == "True False"
    assert err.count(NOTICE) == 1, err
    again, err = _run("scorer", tmp_path)
    assert again == first and NOTICE not in err


def test_a_library_process_compiles_without_a_word(tmp_path):
    out, err = _run("library", tmp_path)
    assert out == "True False" and NOTICE not in err
