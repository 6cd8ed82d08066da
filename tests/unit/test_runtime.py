"""The scorer runtime owns the process-wide settings; the layers used as a library change nothing.

Each case runs in a fresh interpreter: the settings are process-wide, and this test process is itself a
scorer (the plugin entered the runtime when the session started).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_overdub
from pytest_overdub import runtime
from pytest_overdub.cli import main
from pytest_overdub.errors import OverdubError
from pytest_overdub.evaluate.workspace import RESERVED as AGENT_VARIABLES

ROOT = Path(pytest_overdub.__file__).resolve().parent.parent
TINY = ROOT / "tests" / "fixtures" / "tiny.json"

STATE = """
import gc, json, os, sys
import numpy as np
from pytest_overdub import runtime
from pytest_overdub.render import render
from pytest_overdub.render.heap import tuned
from pytest_overdub.render.stems import PROCESS_CACHE
from pytest_overdub.measure import measure
from pytest_overdub.song.model import load_song

def state():
    return {"gc_enabled": gc.isenabled(), "gc_frozen": gc.get_freeze_count(), "gc_threshold": gc.get_threshold(),
            "malloc_tuned": tuned(), "stems_kept": len(PROCESS_CACHE),
            "env": dict(os.environ), "runtime": runtime.owner()}

if sys.argv[2] == "scorer":
    runtime.enter("test")
before = state()
song = load_song(sys.argv[1])
for _ in range(2):
    r = render(song)
m = measure(r.mix, sr=r.sr)
print(json.dumps({"before": before, "after": state(), "lufs": m.lufs}))
"""


def _run(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", STATE, str(TINY), mode], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_render_and_measure_as_a_library_change_nothing_about_the_process():
    got = _run("library")
    assert got["after"] == got["before"]
    assert got["after"]["malloc_tuned"] is False and got["after"]["stems_kept"] == 0
    assert got["after"]["runtime"] is None and got["after"]["gc_frozen"] == 0
    assert got["lufs"] < -10  # something was rendered and measured


def test_a_scorer_keeps_its_stems_between_renders():
    got = _run("scorer")
    assert got["before"]["runtime"] == "test" and got["after"]["stems_kept"] > 0
    assert got["after"]["env"] == got["before"]["env"]


def test_end_freezes_the_heap_for_the_exit_and_the_next_enter_gives_it_back():
    code = ("import gc; from pytest_overdub import runtime; runtime.end(); a = gc.get_freeze_count(); "
            "runtime.enter('pytest'); runtime.end(); b = gc.get_freeze_count(); runtime.enter('pytest'); "
            "print(a, b > 0, gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.stdout.split() == ["0", "True", "0"], out.stderr


@pytest.mark.parametrize("name, value", [("OVERDUB_STEM_CACHE_MB", "lots"), ("OVERDUB_STEM_CACHE_MB", "-5"),
                                         ("OVERDUB_TRUST_KERNELS", "maybe"), ("OVERDUB_MALLOC_TUNING", "off")])
def test_a_bad_environment_switch_is_one_error_naming_it(name, value):
    with pytest.raises(OverdubError) as err:
        runtime.check_environment({name: value})
    assert str(err.value).startswith(f"environment variable {name}={value!r} is not allowed; use ")


@pytest.mark.parametrize("name, value", [("OVERDUB_STEM_CACHE_MB", "0"), ("OVERDUB_STEM_CACHE_MB", "512.5"),
                                         ("OVERDUB_TRUST_KERNELS", "True"), ("OVERDUB_TRUST_KERNELS", ""),
                                         ("OVERDUB_MALLOC_TUNING", "0")])
def test_allowed_switch_values_pass(name, value):
    runtime.check_environment({name: value})


def test_the_command_refuses_a_bad_switch_in_one_line(monkeypatch, capsys):
    monkeypatch.setenv("OVERDUB_STEM_CACHE_MB", "lots")
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err == ("overdub list: environment variable OVERDUB_STEM_CACHE_MB='lots' is not allowed; "
                   "use a number >= 0\n")


def test_every_switch_the_package_reads_is_listed():
    read = set()
    for path in (ROOT / "pytest_overdub").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "environ" in text or "getenv" in text:
            read |= set(re.findall(r"\bOVERDUB_[A-Z_]*[A-Z]", text))
    read -= set(AGENT_VARIABLES)  # what overdub eval sets for an agent; the package never reads them
    assert read and read <= set(runtime.ENV_SWITCHES), sorted(read - set(runtime.ENV_SWITCHES))
