"""freeze_heap / thaw_heap: what the plugin and the command do so a scoring process ends quickly."""

import gc
import subprocess
import sys
from pathlib import Path

import pytest_overdub
from pytest_overdub import exiting

ROOT = Path(pytest_overdub.__file__).resolve().parent.parent


def test_freeze_moves_live_objects_out_of_collection_and_thaw_gives_them_back():
    assert gc.get_freeze_count() == 0
    keep = [[i] for i in range(1000)]
    try:
        exiting.freeze_heap()
        assert gc.get_freeze_count() >= len(keep)
    finally:
        exiting.thaw_heap()
    assert gc.get_freeze_count() == 0
    exiting.thaw_heap()  # nothing frozen by this module: a no-op, even if someone else froze objects


def test_freeze_at_exit_waits_for_the_interpreter_to_end():
    # atexit runs the last registered first: the probe registered before runs after freeze_heap
    code = ("import atexit, gc; atexit.register(lambda: print(gc.get_freeze_count() > 0)); "
            "from pytest_overdub import exiting; exiting.freeze_heap_at_exit(); exiting.freeze_heap_at_exit(); "
            "print(gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.stdout.split() == ["0", "True"]
