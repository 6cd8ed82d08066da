"""The plugin keeps pytest from assertion-rewriting the package's own modules (a cold-start cost).

An installed wheel makes pytest mark the whole ``pytest_overdub`` package for rewriting, because the
distribution declares a ``pytest11`` entry point. An editable install does not (its file list holds no
package), so the test builds the wheel's situation on purpose: a stand-in distribution on ``PYTHONPATH``
whose metadata declares a ``pytest11`` entry point and lists ``pytest_overdub/__init__.py`` among its
files, exactly what pytest reads. The inner run then shows which modules were rewritten.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import pytest_overdub

pytest_plugins = ["pytester"]

ROOT = Path(pytest_overdub.__file__).resolve().parent.parent
PLUGIN = () if any(ep.name == "overdub" for ep in entry_points(group="pytest11")) else ("-p", "pytest_overdub.plugin")

PROBE_TEST = '''
import overdub_probe
import pytest_overdub.song.timing as ours


def _rewritten(module):
    return type(module.__loader__).__name__ == "AssertionRewritingHook"


def test_probe():
    assert _rewritten(overdub_probe)  # the stand-in plugin: still rewritten, so the marking took place
    assert not _rewritten(ours)
    assert ours.__file__.startswith(%r)
'''


def test_package_modules_are_not_assertion_rewritten(pytester: pytest.Pytester, monkeypatch):
    site = pytester.mkdir("site")
    (site / "overdub_probe.py").write_text("", encoding="utf-8")
    info = site / "overdub_probe-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: overdub-probe\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[pytest11]\noverdub_probe = overdub_probe\n", encoding="utf-8")
    (info / "RECORD").write_text("overdub_probe.py,,\npytest_overdub/__init__.py,,\npytest_overdub/plugin.py,,\n"
                                 "overdub_probe-1.0.dist-info/RECORD,,\n", encoding="utf-8")
    pytester.makepyfile(test_probe=PROBE_TEST % str(ROOT / "pytest_overdub"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                                           "test_probe.py")
    result.assert_outcomes(passed=1)
