"""A plain (not editable) wheel carries the bench: build it, install it apart, score a task from outside.

The wheel is built from a copy of the checkout (so no ``build/`` is left behind) with
``pip wheel --no-deps --no-build-isolation`` (no network: setuptools and wheel come from this environment)
and installed with ``pip install --no-deps --target``. The installed copy is put first on ``PYTHONPATH`` of
child processes started in a temporary directory outside the checkout, so its dependencies come from this
environment (a venv with ``--system-site-packages`` would see the base interpreter's packages, not those of
a CI virtualenv). The test checks that the package and its bench data really come from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_overdub
from pytest_overdub.bench.tasks import bundled_bench, score_path

ROOT = Path(pytest_overdub.__file__).resolve().parent.parent
TASK = "mix-bass-under-kick"
COPY = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE",
        "pytest_overdub", "tasks", "songs", "oracles", "near_misses")

pytestmark = pytest.mark.slow


def _run(args: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ROOT / "setup.py").exists():
        pytest.skip("not a source checkout")
    pytest.importorskip("wheel", reason="building a wheel without isolation needs the wheel package")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in COPY:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
        elif path.exists():
            shutil.copy(path, src / name)
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                  "-w", str(tmp / "dist"), str(src)], cwd=tmp)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("pytest_overdub-*.whl")
    target = tmp / "site"
    inst = _run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                cwd=tmp)
    assert inst.returncode == 0, inst.stderr[-3000:]
    return target


def _env(target: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(target)
    return env


def test_wheel_carries_the_bench_and_scores_from_outside(installed, tmp_path):
    env = _env(installed)
    where = _run([sys.executable, "-c", "import pytest_overdub.bench.tasks as t; b = t.bundled_bench(); "
                  "print(t.__file__); print(b.root); print(len(b.task_ids()))"], cwd=tmp_path, env=env)
    module, root, n_tasks = where.stdout.split()
    assert Path(module).is_relative_to(installed)
    assert Path(root) == installed / "pytest_overdub" / "data"
    assert int(n_tasks) == len(bundled_bench().task_ids())
    for name in ("songs", "oracles", "near_misses"):
        assert sorted(p.name for p in (Path(root) / name).glob("*.json")) == \
            sorted(p.name for p in (ROOT / name).glob("*.json"))

    oracle = installed / "pytest_overdub" / "data" / "oracles" / f"{TASK}.json"
    want = score_path(bundled_bench().task(TASK), ROOT / "oracles" / f"{TASK}.json", bench=bundled_bench())
    scored = _run([sys.executable, "-m", "pytest_overdub.cli", "score", TASK, str(oracle), "--json"],
                  cwd=tmp_path, env=env)
    assert scored.returncode in (0, 1), scored.stderr
    assert json.loads(scored.stdout)["score"] == want.score

    # the plugin, from its installed entry point, with the bundled tasks (no tasks/ here)
    report = tmp_path / "report.json"
    run = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--overdub-submission={oracle}",
                "-k", TASK, f"--overdub-report={report}", "-q"], cwd=tmp_path, env=env)
    assert run.returncode in (0, 1), run.stdout[-3000:] + run.stderr[-3000:]
    data = json.loads(report.read_text())
    assert [t["id"] for t in data["tasks"]] == [TASK]
    assert data["tasks"][0]["score"] == want.score
