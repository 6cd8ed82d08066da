"""Each layer knows only the layers to its left (docs/README.md, "The flow, one way").

    song  <  devices, dsp  <  render  <  measure, notes, generate  <  bench  <  studio  <  plugin, cli

``errors``, the package root (version strings) and ``devices.params`` (plain parameter tables) are shared
ground every layer may read. The ``overdub`` command's subcommand modules (``cli.COMMANDS``) belong to the
cli layer wherever they live. On top of the order: measure and notes never import render, bench or the
ops language (a meter takes an array, a reading takes notes). Inside the bench the flow is one way too:

    scoring  <  context  <  checks, probes  <  model  <  tasks and the rest

(a check kind's class computes its value with the scope and probe machinery, which never reads the check
models), so no bench module is in an import cycle. Imports are read with ``ast``, including the lazy ones
inside functions, so a late import cannot hide a wrong direction.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pytest_overdub

from freshimports import modules_loaded

PKG = Path(pytest_overdub.__file__).resolve().parent
RANK = {"song": 1, "devices": 2, "dsp": 2, "render": 3, "measure": 4, "notes": 4, "generate": 4, "bench": 5, "transcribe": 5, "studio": 6,
        "plugin": 7, "cli": 7}
SHARED = {"pytest_overdub", "pytest_overdub.errors", "pytest_overdub.devices.params"}
PURE_READERS = ("measure", "notes")
FORBIDDEN_FOR_READERS = ("pytest_overdub.render", "pytest_overdub.bench", "pytest_overdub.song.ops")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every pytest_overdub module ``path`` imports (relative imports resolved; ``from x import y`` gives x.y
    when y is a submodule, else x)."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = package[:len(package) - node.level + 1]
                base = ".".join(stem + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if (PKG.parent / Path(*sub.split("."))).with_suffix(".py").exists()
                          or (PKG.parent / Path(*sub.split("."))).is_dir() else base)
    return {m for m in found if m == "pytest_overdub" or m.startswith("pytest_overdub.")}


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in _modules()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root] & graph.keys())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w] & graph.keys()))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_bench_module_is_in_an_import_cycle():
    bench = [c for c in _cycles(_graph()) if any(m.startswith("pytest_overdub.bench.") for m in c)]
    assert bench == []


BENCH_RANK = {"scoring": 0, "context": 1, "device_checks": 1, "checks": 2, "probes": 2, "audio.readings": 2, "model": 3}


def test_the_check_machinery_never_reads_the_check_models():
    wrong = []
    for name, targets in _graph().items():
        mine = BENCH_RANK.get(name.removeprefix("pytest_overdub.bench."))
        if not name.startswith("pytest_overdub.bench.") or mine is None:
            continue
        for target in sorted(targets):
            theirs = BENCH_RANK.get(target.removeprefix("pytest_overdub.bench."), 9)
            if target.startswith("pytest_overdub.bench.") and theirs >= mine and target != name:
                wrong.append(f"{name} imports {target}")
    assert wrong == []


def _command_modules() -> set[str]:
    from pytest_overdub.cli import COMMANDS

    return {target.split(":")[0] for target, _ in COMMANDS.values()}


def _rank(module: str, commands: set[str]) -> int | None:
    if module in SHARED:
        return 0
    if module in commands:
        return RANK["cli"]
    parts = module.split(".")
    return RANK.get(parts[1]) if len(parts) > 1 else 0


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "data" not in p.relative_to(PKG).parts)


def test_the_resolver_reads_relative_and_lazy_imports():
    imports = _imports(PKG / "bench" / "validity.py")
    assert {"pytest_overdub.errors", "pytest_overdub.bench.tasks", "pytest_overdub.bench.context"} <= imports


def test_no_module_imports_a_layer_to_its_right():
    commands = _command_modules()
    wrong = []
    for path in _modules():
        name = _module_name(path)
        mine = _rank(name, commands)
        for target in sorted(_imports(path)):
            theirs = _rank(target, commands)
            if mine is not None and theirs is not None and theirs > mine:
                wrong.append(f"{name} (layer {mine}) imports {target} (layer {theirs})")
    assert wrong == []


def test_meters_and_note_readings_stay_pure():
    commands = _command_modules()
    wrong = []
    for path in _modules():
        name = _module_name(path)
        layer = name.split(".")[1] if "." in name else ""
        if layer not in PURE_READERS or name in commands:
            continue
        wrong += [f"{name} imports {t}" for t in sorted(_imports(path))
                  if any(t == f or t.startswith(f + ".") for f in FORBIDDEN_FOR_READERS)]
    assert wrong == []


@pytest.mark.parametrize("module", ["pytest_overdub", "pytest_overdub.plugin", "pytest_overdub.cli"])
def test_importing_the_plugin_loads_no_numpy_or_scipy(module):
    assert modules_loaded(f"import {module}", roots=("numpy", "scipy", "librosa", "numba")) == []
